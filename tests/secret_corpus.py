"""A corpus of fake credentials: every kind bare and in its usual context.

Values are generated deterministically (a ``random.Random`` seeded by the kind and the
variant), in the shape each provider documents, so nothing here is a real secret and the
corpus is the same on every run. ``secret`` is the part that must not survive redaction
(for a URL or a header: the password or token only, not the user or host).

Used by ``bench/bench_secrets.py`` (recall per kind, ours against detect-secrets) and by
the end-to-end test that plants every kind in every write path.
"""

from __future__ import annotations

import base64
import random
import string
from collections.abc import Callable
from dataclasses import dataclass

ALNUM = string.ascii_letters + string.digits
UPPER_NUM = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"


@dataclass(frozen=True)
class Sample:
    kind: str
    variant: str  # "bare" or "context"
    text: str
    secret: str


@dataclass(frozen=True)
class Kind:
    name: str
    value: Callable[[random.Random], str]  # the credential as a provider hands it out
    bare: Callable[[str], str]  # the credential standing alone (as pasted)
    context: Callable[[str], str]  # the credential in its usual surroundings
    secret: Callable[[str], str] = lambda value: value  # what must vanish


def _r(alphabet: str, size: int) -> Callable[[random.Random], str]:
    return lambda rng: "".join(rng.choice(alphabet) for _ in range(size))


def _cat(*parts: str | Callable[[random.Random], str]) -> Callable[[random.Random], str]:
    return lambda rng: "".join(part if isinstance(part, str) else part(rng) for part in parts)


def _password(rng: random.Random, size: int = 16) -> str:
    """A password with the punctuation that used to cut values short."""
    body = [rng.choice(ALNUM) for _ in range(size)]
    for mark in ",;)}":
        body.insert(rng.randrange(2, len(body)), mark)
    return "".join(body)


def _plain_password(rng: random.Random, size: int = 14) -> str:
    return "".join(rng.choice(ALNUM) for _ in range(size)) + rng.choice("!#%^*") + rng.choice(string.digits)


def _private_key(header: str) -> Callable[[random.Random], str]:
    def make(rng: random.Random) -> str:
        lines = ["".join(rng.choice(B64) for _ in range(64)) for _ in range(6)]
        return f"-----BEGIN {header}-----\n" + "\n".join(lines) + f"\n-----END {header}-----"

    return make


def _jwt(rng: random.Random) -> str:
    head = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').rstrip(b"=").decode()
    claims = f'{{"sub":"{rng.randrange(10**6)}","name":"user{rng.randrange(999)}","iat":1700000000}}'
    body = base64.urlsafe_b64encode(claims.encode()).rstrip(b"=").decode()
    sig = "".join(rng.choice(URLSAFE) for _ in range(43))
    return f"{head}.{body}.{sig}"


def _docker_auth(rng: random.Random) -> str:
    return base64.b64encode(f"deploy:{_plain_password(rng)}".encode()).decode()


def _basic(rng: random.Random) -> str:
    return base64.b64encode(f"admin:{_plain_password(rng)}".encode()).decode()


def _url_password(url: str) -> str:
    return url.split("://", 1)[1].rsplit("@", 1)[0].split(":", 1)[1]


KINDS: tuple[Kind, ...] = (
    Kind(
        "aws_access_key_id",
        _cat("AKIA", _r(UPPER_NUM, 16)),
        lambda v: v,
        lambda v: f"[default]\naws_access_key_id = {v}\nregion = eu-west-1",
    ),
    Kind(
        "aws_secret_access_key",
        _r(B64, 40),
        lambda v: f"AWS_SECRET_ACCESS_KEY={v}",
        lambda v: f"[default]\naws_access_key_id = AKIAEXAMPLEEXAMPLE00\naws_secret_access_key = {v}\n",
    ),
    Kind(
        "github_pat_classic",
        _cat("ghp_", _r(ALNUM, 36)),
        lambda v: v,
        lambda v: f"git clone https://x-access-token:{v}@github.com/acme/api.git",
    ),
    Kind(
        "github_pat_fine_grained",
        _cat("github_pat_", _r(ALNUM, 22), "_", _r(ALNUM, 59)),
        lambda v: v,
        lambda v: f"export GH_TOKEN={v}",
    ),
    Kind("github_oauth", _cat("gho_", _r(ALNUM, 36)), lambda v: v, lambda v: f'{{"oauth_token": "{v}"}}'),
    Kind(
        "github_app",
        _cat("ghs_", _r(ALNUM, 36)),
        lambda v: v,
        lambda v: f"curl -H 'Authorization: token {v}' https://api.github.com/repos/acme/api",
    ),
    Kind(
        "gitlab_pat",
        _cat("glpat-", _r(URLSAFE, 20)),
        lambda v: v,
        lambda v: f"git remote set-url origin https://oauth2:{v}@gitlab.com/acme/api.git",
    ),
    Kind(
        "gitlab_runner",
        _cat("glrt-", _r(URLSAFE, 20)),
        lambda v: v,
        lambda v: f'gitlab-runner register --url https://gitlab.com --token "{v}"',
    ),
    Kind(
        "slack_bot",
        _cat("xoxb-", _r(string.digits, 12), "-", _r(string.digits, 13), "-", _r(ALNUM, 24)),
        lambda v: v,
        lambda v: f"SLACK_BOT_TOKEN={v}",
    ),
    Kind(
        "slack_user",
        _cat(
            "xoxp-",
            _r(string.digits, 12),
            "-",
            _r(string.digits, 12),
            "-",
            _r(string.digits, 13),
            "-",
            _r(HEX, 32),
        ),
        lambda v: v,
        lambda v: f'slack = WebClient(token="{v}")',
    ),
    Kind(
        "slack_webhook",
        _cat(
            "https://hooks.slack.com/services/T", _r(UPPER_NUM, 8), "/B", _r(UPPER_NUM, 8), "/", _r(ALNUM, 24)
        ),
        lambda v: v,
        lambda v: f'curl -X POST -d \'{{"text":"deploy done"}}\' {v}',
        lambda v: v.rsplit("/", 1)[1],
    ),
    Kind(
        "discord_webhook",
        _cat("https://discord.com/api/webhooks/", _r(string.digits, 18), "/", _r(URLSAFE, 68)),
        lambda v: v,
        lambda v: f'WEBHOOK_URL = "{v}"',
        lambda v: v.rsplit("/", 1)[1],
    ),
    Kind(
        "discord_bot_token",
        _cat("M", _r(ALNUM, 23), ".", _r(URLSAFE, 6), ".", _r(URLSAFE, 27)),
        lambda v: v,
        lambda v: f"client.run('{v}')",
    ),
    Kind("stripe_secret", _cat("sk_live_", _r(ALNUM, 24)), lambda v: v, lambda v: f"stripe.api_key = '{v}'"),
    Kind("stripe_restricted", _cat("rk_live_", _r(ALNUM, 24)), lambda v: v, lambda v: f"STRIPE_KEY={v}"),
    Kind(
        "stripe_test",
        _cat("sk_test_", _r(ALNUM, 24)),
        lambda v: v,
        lambda v: f"curl https://api.stripe.com/v1/charges -u {v}:",
    ),
    Kind(
        "openai",
        _cat("sk-proj-", _r(URLSAFE, 48), "T3BlbkFJ", _r(URLSAFE, 48)),
        lambda v: v,
        lambda v: f"export OPENAI_API_KEY={v}",
    ),
    Kind(
        "anthropic",
        _cat("sk-ant-api03-", _r(URLSAFE, 93), "AA"),
        lambda v: v,
        lambda v: f'client = anthropic.Anthropic(api_key="{v}")',
    ),
    Kind(
        "google_api_key",
        _cat("AIza", _r(URLSAFE, 35)),
        lambda v: v,
        lambda v: f"https://maps.googleapis.com/maps/api/geocode/json?address=Paris&key={v}",
    ),
    Kind(
        "google_oauth_secret",
        _cat("GOCSPX-", _r(URLSAFE, 28)),
        lambda v: v,
        lambda v: f'{{"web": {{"client_id": "1234.apps.googleusercontent.com", "client_secret": "{v}"}}}}',
    ),
    Kind(
        "sendgrid",
        _cat("SG.", _r(URLSAFE, 22), ".", _r(URLSAFE, 43)),
        lambda v: v,
        lambda v: f"SENDGRID_API_KEY='{v}'",
    ),
    Kind("twilio_api_key", _cat("SK", _r(HEX, 32)), lambda v: v, lambda v: f"TWILIO_API_KEY={v}"),
    Kind(
        "mailchimp",
        _cat(_r(HEX, 32), "-us", _r(string.digits, 2)),
        lambda v: v,
        lambda v: f"mailchimp.set_config({{'api_key': '{v}', 'server': 'us12'}})",
    ),
    Kind("npm", _cat("npm_", _r(ALNUM, 36)), lambda v: v, lambda v: f"//registry.npmjs.org/:_authToken={v}"),
    Kind(
        "pypi",
        _cat("pypi-AgEIcHlwaS5vcmc", _r(URLSAFE, 70)),
        lambda v: v,
        lambda v: f"[pypi]\n  username = __token__\n  password = {v}\n",
    ),
    Kind(
        "huggingface", _cat("hf_", _r(ALNUM, 34)), lambda v: v, lambda v: f"huggingface-cli login --token {v}"
    ),
    Kind(
        "digitalocean",
        _cat("dop_v1_", _r(HEX, 64)),
        lambda v: v,
        lambda v: f"doctl auth init --access-token {v}",
    ),
    Kind(
        "telegram_bot",
        _cat(_r(string.digits, 10), ":AA", _r(URLSAFE, 33)),
        lambda v: v,
        lambda v: f"https://api.telegram.org/bot{v}/sendMessage?chat_id=42&text=hi",
    ),
    Kind(
        "datadog",
        _r(HEX, 32),
        lambda v: f"DD_API_KEY={v}",
        lambda v: f"datadog:\n  api_key: {v}\n  site: datadoghq.eu",
    ),
    Kind("jwt", _jwt, lambda v: v, lambda v: f'{{"access_token": "{v}", "expires_in": 3600}}'),
    Kind(
        "rsa_private_key",
        _private_key("RSA PRIVATE KEY"),
        lambda v: v,
        lambda v: f"Here is the deploy key:\n{v}\nSave it as id_rsa.",
    ),
    Kind(
        "openssh_private_key",
        _private_key("OPENSSH PRIVATE KEY"),
        lambda v: v,
        lambda v: f"$ cat ~/.ssh/id_ed25519\n{v}\n",
    ),
    Kind(
        "postgres_url",
        lambda rng: f"postgres://app:{_password(rng)}@db.internal:5432/app",
        lambda v: v,
        lambda v: f"DATABASE_URL={v}",
        _url_password,
    ),
    Kind(
        "mysql_url",
        lambda rng: f"mysql://root:{_plain_password(rng)}@127.0.0.1:3306/shop",
        lambda v: v,
        lambda v: f'engine = create_engine("{v.replace("mysql://", "mysql+pymysql://")}")',
        _url_password,
    ),
    Kind(
        "mongodb_url",
        lambda rng: f"mongodb+srv://admin:{_plain_password(rng)}@cluster0.ab1cd.mongodb.net/prod",
        lambda v: v,
        lambda v: f"MONGO_URI={v}?retryWrites=true",
        _url_password,
    ),
    Kind(
        "redis_url",
        lambda rng: f"redis://:{_plain_password(rng)}@cache.internal:6379/0",
        lambda v: v,
        lambda v: f"CELERY_BROKER_URL = '{v}'",
        _url_password,
    ),
    Kind(
        "https_userinfo",
        lambda rng: f"https://deploy:{_plain_password(rng)}@git.example.com/acme/api.git",
        lambda v: v,
        lambda v: f"git clone {v} api",
        _url_password,
    ),
    Kind(
        "authorization_basic",
        _basic,
        lambda v: f"Authorization: Basic {v}",
        lambda v: f"curl -H 'Authorization: Basic {v}' https://api.example.com/v1/items",
    ),
    Kind(
        "authorization_bearer",
        _r(URLSAFE, 40),
        lambda v: f"Authorization: Bearer {v}",
        lambda v: f'headers = {{"Authorization": "Bearer {v}"}}',
    ),
    Kind(
        "azure_storage",
        lambda rng: "".join(rng.choice(B64) for _ in range(86)) + "==",
        lambda v: f"AccountKey={v}",
        lambda v: (
            f"DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={v};EndpointSuffix=core.windows.net"
        ),
    ),
    Kind(
        "docker_auth",
        _docker_auth,
        lambda v: f'"auth": "{v}"',
        lambda v: f'{{\n  "auths": {{\n    "registry.example.com": {{\n      "auth": "{v}"\n    }}\n  }}\n}}',
    ),
    Kind(
        "django_secret_key",
        lambda rng: "django-insecure-" + "".join(rng.choice(ALNUM + "!@#%^&*(-_=+)") for _ in range(50)),
        lambda v: f"SECRET_KEY = '{v}'",
        lambda v: f"# settings.py\nDEBUG = False\nSECRET_KEY = '{v}'\nALLOWED_HOSTS = ['*']",
    ),
    Kind(
        "db_pass",
        _plain_password,
        lambda v: f"DB_PASS={v}",
        lambda v: f"DB_HOST=db\nDB_USER=app\nDB_PASS={v}\n",
    ),
    Kind(
        "password_punctuation",
        _password,
        lambda v: f"password={v}",
        lambda v: f"psql 'host=db user=app password={v}' -c 'select 1'",
    ),
    Kind(
        "mysql_cli_password",
        _plain_password,
        lambda v: f"mysql -p{v}",
        lambda v: f"mysql -u root -p{v} -h 127.0.0.1 shop < dump.sql",
    ),
    Kind(
        "json_password",
        _password,
        lambda v: f'"password": "{v}"',
        lambda v: f'{{"user": "app", "password": "{v}", "host": "db"}}',
    ),
    Kind(
        "yaml_password",
        _plain_password,
        lambda v: f"password: {v}",
        lambda v: f"spring:\n  datasource:\n    username: app\n    password: {v}\n",
    ),
    Kind(
        "pgpassword_env",
        _plain_password,
        lambda v: f"PGPASSWORD={v}",
        lambda v: f"PGPASSWORD={v} pg_dump -h db -U app app > app.sql",
    ),
    Kind(
        "curl_user",
        _plain_password,
        lambda v: f"-u admin:{v}",
        lambda v: f"curl -u admin:{v} https://jenkins.example.com/api/json",
    ),
    Kind("shopify", _cat("shpat_", _r(HEX, 32)), lambda v: v, lambda v: f"SHOPIFY_ACCESS_TOKEN={v}"),
    Kind(
        "square",
        _cat("EAAA", _r(URLSAFE, 60)),
        lambda v: v,
        lambda v: f'client = Client(access_token="{v}", environment="production")',
    ),
    Kind("artifactory", _cat("AKCp", _r(ALNUM, 69)), lambda v: v, lambda v: f"ARTIFACTORY_API_KEY={v}"),
    Kind(
        "atlassian",
        _cat("ATATT3xFfGF0", _r(URLSAFE, 170), "=", _r(HEX.upper(), 8)),
        lambda v: v,
        lambda v: f"curl -u me@example.com:{v} https://acme.atlassian.net/rest/api/3/myself",
    ),
    Kind("linear", _cat("lin_api_", _r(ALNUM, 40)), lambda v: v, lambda v: f"LINEAR_API_KEY={v}"),
    Kind(
        "vault",
        _cat("hvs.", _r(URLSAFE, 90)),
        lambda v: v,
        lambda v: f"VAULT_TOKEN={v} vault kv get secret/app",
    ),
    Kind("newrelic", _cat("NRAK-", _r(UPPER_NUM, 27)), lambda v: v, lambda v: f"NEW_RELIC_API_KEY={v}"),
    Kind(
        "grafana", _cat("glsa_", _r(ALNUM, 32), "_", _r(HEX, 8)), lambda v: v, lambda v: f"GRAFANA_TOKEN={v}"
    ),
    Kind(
        "age_secret_key",
        _cat("AGE-SECRET-KEY-1", _r("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)),
        lambda v: v,
        lambda v: f"# created: 2026-01-01\n# public key: age1xyz\n{v}\n",
    ),
    Kind(
        "postman", _cat("PMAK-", _r(HEX, 24), "-", _r(HEX, 34)), lambda v: v, lambda v: f"POSTMAN_API_KEY={v}"
    ),
    Kind(
        "heroku",
        lambda rng: "-".join("".join(rng.choice(HEX) for _ in range(n)) for n in (8, 4, 4, 4, 12)),
        lambda v: f"HEROKU_API_KEY={v}",
        lambda v: f"heroku config:set --app acme HEROKU_API_KEY={v}",
    ),
)


def samples() -> list[Sample]:
    """Every kind, bare and in context, with a value of its own for each (deterministic)."""
    out: list[Sample] = []
    for kind in KINDS:
        for variant, wrap in (("bare", kind.bare), ("context", kind.context)):
            value = kind.value(random.Random(f"{kind.name}/{variant}"))
            out.append(Sample(kind.name, variant, wrap(value), kind.secret(value)))
    return out

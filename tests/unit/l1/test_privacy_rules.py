"""The secret rules: every kind of the corpus, values to their real end, code left alone."""

from __future__ import annotations

import pytest

from memkeeper.core.redaction.redact import redact
from tests.secret_corpus import Sample, samples

CORPUS = samples()


@pytest.mark.parametrize("sample", CORPUS, ids=[f"{s.kind}-{s.variant}" for s in CORPUS])
def test_every_kind_is_redacted_bare_and_in_context(sample: Sample) -> None:
    out = redact(sample.text)
    assert sample.secret not in out and "[REDACTED:" in out
    assert redact(out) == out


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("password=hunter22", "password=[REDACTED:password]"),
        ("DB_PASSWORD = 'correct horse'", "DB_PASSWORD = '[REDACTED:password]'"),
        ('{"password": "p@ss w0rd"}', '{"password": "[REDACTED:password]"}'),
        ("secret: topsecretvalue", "secret: [REDACTED:secret]"),
        ("client_secret=abcdef123", "client_secret=[REDACTED:secret]"),
        ('api_key="abc123def"', 'api_key="[REDACTED:api_key]"'),
        ("export MY_API_KEY=zzzz9999", "export MY_API_KEY=[REDACTED:api_key]"),
        ("auth_token: tok_live_123", "auth_token: [REDACTED:token]"),
        (
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "aws_secret_access_key = [REDACTED:aws_secret_key]",
        ),
        ("Authorization: Bearer abcdefghijklmnop1234567890", "Authorization: Bearer [REDACTED:bearer]"),
        ("password=ab,c;d)e}f rest", "password=[REDACTED:password] rest"),
        ("DB_PASS=s3cr,et;x) next", "DB_PASS=[REDACTED:password] next"),
        ("postgres://app:p4ss,w;rd)x}@db:5432/app", "postgres://app:[REDACTED:url_password]@db:5432/app"),
        ("mysql -u root -pS3cr;et,x) db", "mysql -u root -p[REDACTED:mysql_password] db"),
    ],
)
def test_assignments_keep_the_key_name_and_values_end_where_they_really_end(text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "max_tokens=100 input_tokens: 25 output_tokens=7",
        "def login(password: str, token=None) -> bool:",
        "password = os.environ['DB_PASSWORD']",
        "api_key = getenv('KEY')",
        "tests passed; the secret sauce is patience",
        "skip the sk-short and ghp_short words",
        "token = line[start:pos]",
        "pwd = os.getcwd()",
        "cache_token = current_token",
        "self._pwd = pwd",
        "password = self.distribution.password",
        "ERRORTOKEN = token.ERRORTOKEN",
        "def read(self, name, pwd=None):",
        "{'token': 123, 'group': 1}",
        "with self.subTest(f'token {token:02x}'):",
        "def login(password: str, token: Token | None = None) -> bool:",
        "Password: enter it below",
        "http://user:password@example.com/",
        'api_key = "Bearer " + token',
        "max_tokens=100 input_tokens: 25",
        "at 2026-11-29T10:22:33 row 1234567:abcdefghijklmnopqrstuvwxyzabcdefghi",  # one case: not random
        "build 0123456:AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGhI",  # a leading zero: not a bot id
        "cache key-value pairs; monkey-0123456789abcdef0123456789abcdef",
    ],
)
def test_ordinary_text_code_and_placeholders_are_left_alone(text: str) -> None:
    assert redact(text) == text

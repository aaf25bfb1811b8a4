"""Words for ranked search: the query side of the word index, agreeing with how it was built.

The index is FTS5 with the ``porter unicode61`` tokenizer (C, fast to build): words are
runs of letters and digits (``snake_case`` splits, ``camelCase`` does not, so the text
indexed carries the parts of its camelCase words after it: see ``with_parts``), lowercased,
accents folded, Porter-stemmed. This module splits and stems the same way in Python
(snowball's Porter is the same algorithm), to weigh the query's words, score how much of
the query an entry holds and highlight it; it leaves English stop words out of the query
and adds the forms Porter keeps apart as ORed alternatives (``decided`` → also
``decision``; ``analysis``/``analyze``; a short table of irregular verbs). Words of other
scripts (Korean, Japanese) are kept as they are: the trigram channel finds them inside
longer words.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

#: Longer tokens (hashes, base64, minified code) are not words anyone types.
MAX_WORD_CHARS = 40
_MEMO_LIMIT = 400_000

STOP_WORDS = frozenset(
    """
a about above after again against all also am an and any are aren't as at be because been before being
below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down
during each few for from further had hadn't has hasn't have haven't having he her here hers herself him
himself his how i if in into is isn't it it's its itself just let let's me more most my myself no nor
not now of off on once only or other ought our ours ourselves out over own please same shall she should
shouldn't so some such than that that's the their theirs them themselves then there there's these they
this those through to too under until up us very was wasn't we were weren't what what's when where
where's which while who who's whom why why's will with won't would wouldn't you your yours yourself
yourselves s t d ll m re ve get got did done does doing thing things something anything way ever
""".split()
)

#: Irregular forms the stemmer cannot join with their base word.
IRREGULAR = {
    "broke": "break",
    "broken": "break",
    "wrote": "write",
    "written": "write",
    "rewrote": "rewrite",
    "rewritten": "rewrite",
    "ran": "run",
    "built": "build",
    "rebuilt": "rebuild",
    "found": "find",
    "made": "make",
    "went": "go",
    "gone": "go",
    "chose": "choose",
    "chosen": "choose",
    "took": "take",
    "taken": "take",
    "gave": "give",
    "given": "give",
    "began": "begin",
    "begun": "begin",
    "thought": "think",
    "brought": "bring",
    "bought": "buy",
    "caught": "catch",
    "taught": "teach",
    "sent": "send",
    "spent": "spend",
    "kept": "keep",
    "lost": "lose",
    "paid": "pay",
    "said": "say",
    "saw": "see",
    "seen": "see",
    "told": "tell",
    "understood": "understand",
    "fell": "fall",
    "fallen": "fall",
    "forgot": "forget",
    "forgotten": "forget",
    "hid": "hide",
    "hidden": "hide",
    "froze": "freeze",
    "frozen": "freeze",
    "threw": "throw",
    "thrown": "throw",
    "knew": "know",
    "known": "know",
    "shown": "show",
    "ate": "eat",
    "children": "child",
    "data": "data",
    "indices": "index",
    "indexes": "index",
}

#: Short forms people type for a word, in chat and in code, each asked for with its full
#: form and the other way round ("gf" finds "girlfriend", "database" finds "db"). Only words
#: whose short form means nothing else in ordinary text or code: not "py" or "js" (file names
#: would answer every question about the language), nor "var", "func", "args", "err", "lib",
#: "info" (keywords, names and paths of code and logs would answer every question with the word).
SHORT_FORMS = {
    "gf": "girlfriend",
    "bf": "boyfriend",
    "bday": "birthday",
    "pic": "picture",
    "pics": "pictures",
    "vid": "video",
    "vids": "videos",
    "convo": "conversation",
    "fav": "favorite",
    "fave": "favorite",
    "favourite": "favorite",
    "mom": "mother",
    "mum": "mother",
    "dad": "father",
    "bro": "brother",
    "sis": "sister",
    "grandma": "grandmother",
    "grandpa": "grandfather",
    "hubby": "husband",
    "doggo": "dog",
    "pup": "puppy",
    "pups": "puppies",
    "vacay": "vacation",
    "uni": "university",
    "db": "database",
    "repo": "repository",
    "repos": "repositories",
    "config": "configuration",
    "auth": "authentication",
    "env": "environment",
    "deps": "dependencies",
    "dep": "dependency",
    "dir": "directory",
    "dirs": "directories",
    "docs": "documentation",
    "impl": "implementation",
    "perf": "performance",
    "prod": "production",
    "k8s": "kubernetes",
}


def _both_ways(*tables: dict[str, str]) -> dict[str, tuple[str, ...]]:
    """Each word of ``tables`` with the words it stands for: its entry's value, then the keys
    whose value it is (table by table, in their order)."""
    other: dict[str, list[str]] = {}
    for table in tables:
        for form, base in table.items():
            other.setdefault(form, []).append(base)
        for form, base in table.items():
            other.setdefault(base, []).append(form)
    return {word: tuple(forms) for word, forms in other.items()}


#: A word's other forms from the two tables, both ways (built once: a query word is a look-up).
_OTHER_FORMS = _both_ways(IRREGULAR, SHORT_FORMS)

#: Surface endings that name the same thing (both ways): a query word with one ending also
#: asks for the word with the other (``decision`` → ``decide``), the stemmer joins the rest.
_VARIANTS: tuple[tuple[str, str], ...] = (
    ("ision", "ide"),  # decision/decide, division/divide, collision/collide
    ("usion", "ude"),  # inclusion/include, conclusion/conclude
    ("mission", "mit"),  # permission/permit, submission/submit
    ("ysis", "yze"),  # analysis/analyze
    ("ification", "ify"),  # verification/verify, notification/notify
    ("olution", "olve"),  # solution/solve, resolution/resolve
    ("ription", "ribe"),  # description/describe
    ("ailure", "ail"),  # failure/fail
    ("eletion", "elete"),  # deletion/delete
)

#: A word as FTS5's unicode61 tokenizer sees one: a run of letters and digits.
_WORD_RE = re.compile(r"[^\W_]+")
#: Where a camelCase word turns: a lowercase letter or digit before a capital
#: (``rotateMemory``), or an acronym before a capitalised word (``HTTPServer``).
#: (Written to start at the capital: the regex engine skips to capitals fast, 4x faster on prose.)
_CAMEL_RE = re.compile(r"[A-Z](?:(?<=[a-z0-9][A-Z])|(?<=[A-Z]{2})(?=[a-z]{2}))")
#: The parts of a camelCase word: an acronym before a capitalised word, a word, an acronym
#: (with its plural ``s``), digits.
_PART_RE = re.compile(r"[A-Z]{2,}(?=[A-Z][a-z]{2})|[A-Z]?[a-z]+|[A-Z]+[a-z]?|[0-9]+")
MAX_QUERY_WORDS = 32

_memo: dict[str, str] = {}
_parts_memo: dict[str, tuple[str, ...]] = {}  # a camelCase word's parts (code repeats its names)
_stemmer: Any = None


def _porter_stemmer() -> Any:
    """Snowball's original Porter algorithm (as FTS5's ``porter`` tokenizer applies it to the index)."""
    global _stemmer
    if _stemmer is None:
        from snowballstemmer.porter_stemmer import PorterStemmer  # type: ignore[import-untyped]

        _stemmer = PorterStemmer()
    return _stemmer


def porter(word: str) -> str:
    """Porter's stem of one lowercase word (as the index holds it)."""
    term = _memo.get(word)
    if term is None:
        if word.isascii() and word.isalpha():
            term = str((_stemmer or _porter_stemmer()).stemWord(word))
        else:
            term = word
        if len(_memo) >= _MEMO_LIMIT:
            _memo.clear()
        _memo[word] = term
    return term


def stem(word: str) -> str:
    """The term of one lowercase word; '' for a stop word."""
    return "" if word in STOP_WORDS else porter(word)


def variants(word: str) -> list[str]:
    """Other words a query word stands for: irregular forms, short forms and derivational pairs."""
    out = list(_OTHER_FORMS.get(word, ()))
    roots = [word]
    for suffix, repl in (
        ("s", ""),
        ("d", ""),
        ("ed", ""),
        ("ing", ""),
        ("ing", "e"),
        ("ied", "y"),
        ("ies", "y"),
    ):
        if word.endswith(suffix) and len(word) > len(suffix) + 3:
            roots.append(word[: -len(suffix)] + repl)
    for root in roots:
        for one, other in _VARIANTS:
            for a, b in ((one, other), (other, one)):
                if root.endswith(a) and len(root) > len(a):
                    out.append(root[: -len(a)] + b)
    return [w for w in dict.fromkeys(out) if w != word]


def plain_words(text: str) -> list[str]:
    """The words of ``text``, lowercased, as the index holds them (long tokens left out): a
    camelCase word is followed by its parts (``rotateMemory`` → rotatememory, rotate, memory).

    ``snake_case`` needs no help: the tokenizer splits at ``_`` and the phrase of its parts
    finds it whole.
    """
    if not _CAMEL_RE.search(text):
        return [w for w in _WORD_RE.findall(text.lower()) if len(w) <= MAX_WORD_CHARS]
    out: list[str] = []
    for word in _WORD_RE.findall(text):
        if len(word) > MAX_WORD_CHARS:
            continue
        out.append(word.lower())
        if _CAMEL_RE.search(word):
            out.extend(part.lower() for part in _PART_RE.findall(word))
    return out


def camel_parts(text: str) -> list[str]:
    """The parts of the camelCase words of ``text``, lowercased, each once (most texts have none).

    The words are found from their turns (one ``_CAMEL_RE`` pass over the text), not by
    asking the regex of every word: code holds many words and few of them camelCase. A turn
    lies inside its word on both counts (the classes around a turn are letters and digits).
    """
    parts: dict[str, None] = {}
    seen: set[str] = set()
    done = 0  # the end of the word of the last turn
    size = len(text)
    for turn in _CAMEL_RE.finditer(text):
        at = turn.start()
        if at < done:
            continue
        start, done = _word_at(text, at, size)
        word = text[start:done]
        if done - start <= MAX_WORD_CHARS and word not in seen:
            seen.add(word)
            of_word = _parts_memo.get(word)
            if of_word is None:
                if len(_parts_memo) >= _MEMO_LIMIT:
                    _parts_memo.clear()
                of_word = _parts_memo[word] = tuple(part.lower() for part in _PART_RE.findall(word))
            parts.update(dict.fromkeys(of_word))
    return list(parts)


def _word_at(text: str, at: int, size: int) -> tuple[int, int]:
    """(start, end) of the word holding ``text[at]`` (a letter), exact when the word has at
    most MAX_WORD_CHARS characters; a longer one comes out longer than that too."""
    low = max(0, at - MAX_WORD_CHARS)
    high = at + MAX_WORD_CHARS + 1
    for word in _WORD_RE.finditer(text, low, high):
        if word.end() > at:
            start, end = word.span()
            if end == high and high < size:  # cut by the window: read on to its real end
                end = _WORD_RE.match(text, at).end()  # type: ignore[union-attr]
            if start == low and low > 0:  # cut by the window: longer than MAX_WORD_CHARS
                start = low - 1
            return start, end
    return at, at + 1  # not reached: text[at] is a letter


#: has_turn's regex, and each byte as its class: a lowercase letter ``a``, a digit ``0``, a
#: capital ``A``, anything else a space (UTF-8's bytes of other characters too). Made on
#: first use: the search path never asks.
_turns: tuple[re.Pattern[bytes], bytes] | None = None


def has_turn(text: str) -> bool:
    """Whether ``_CAMEL_RE`` finds a turn in ``text``, asked of its UTF-8 with each byte as
    its class: the same answer (the regex's classes are ASCII, and no other character's
    bytes are ASCII), about twice as fast on prose, where the regex tries every capital; a
    build asks it of every block of L1 entries."""
    global _turns
    if _turns is None:
        _turns = (
            re.compile(rb"A(?:(?<=[a0]A)|(?<=AA)(?=aa))"),
            bytes(
                97 if 97 <= c <= 122 else 48 if 48 <= c <= 57 else 65 if 65 <= c <= 90 else 32
                for c in range(256)
            ),
        )
    pattern, classes = _turns
    return pattern.search(text.encode("utf-8", "surrogatepass").translate(classes)) is not None


def with_parts(text: str) -> str:
    """``text`` for the word index: the parts of its camelCase words after it, so that
    ``rotate memory`` finds ``rotateMemory`` (the whole word stays where it was)."""
    if not has_turn(text):
        return text
    parts = camel_parts(text)
    return f"{text}\n{' '.join(parts)}" if parts else text


def terms(text: str) -> list[str]:
    """The terms of ``text`` in order, stop words left out."""
    return [t for t in (stem(w) for w in plain_words(text)) if t]


def word_spans(text: str, stems: set[str]) -> list[tuple[int, int]]:
    """(start, end) of each word of ``text`` whose Porter stem is in ``stems``."""
    spans: list[tuple[int, int]] = []
    # A stem begins with its word's first letter (Porter only rewrites endings): the words of
    # other letters need no stemming, which is most of the time a first search spends here.
    firsts = {term[0] for term in stems if term}
    if not firsts:
        return spans
    for match in _WORD_RE.finditer(text):
        raw = match.group(0)
        if len(raw) <= MAX_WORD_CHARS:
            low = raw.lower()
            if low[0] in firsts and porter(low) in stems:
                spans.append((match.start(), match.end()))
    return spans


def edit_distance(a: str, b: str, cap: int = 3) -> int:
    """Edit distance with transpositions (``wrod`` → ``word`` is 1), stopping early at ``cap``."""
    if abs(len(a) - len(b)) >= cap:
        return cap
    before: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            best = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                best = min(best, before[j - 2] + 1)
            cur.append(best)
        if min(cur) >= cap:
            return cap
        before, prev = prev, cur
    return min(prev[-1], cap)

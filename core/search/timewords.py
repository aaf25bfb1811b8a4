"""Time words: the days a question names, and the days an entry speaks of, as day numbers.

A question that names a date ("on 7 July, 2023", "in August 2023", "in June", "last
year's") asks for what was said then; an entry says when things happened relative to its
own date ("yesterday", "last night", "last week", "last weekend", "last month", "last
year", "a few days ago"). Both become windows of days (``date.toordinal()`` numbers, as
:func:`.query.day_number` gives them), and :func:`in_window` tells whether an entry, by its
own date or by the days its words speak of, falls in the question's window (see
``scoring.DATE_BOOST``). A question asking when ("When did she move?", :func:`asks_when`)
is answered by an entry that says when (:func:`tells_when`: "last Friday", "a year ago",
"in May"), see ``scoring.WHEN_BOOST``. Plain Python, no datetime: the calendar arithmetic is
:func:`.query.day_number`'s.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .query import day_number

MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
#: English time words in ASCII: case-insensitive matching of ASCII alone compiles in a tenth of
#: the time (the full-date pattern took 6 ms with Unicode case folding, on every search's import).
_FLAGS = re.IGNORECASE | re.ASCII
_MONTH = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"((?:19|20)\d\d)"
#: What a text holds when it may name a date: a digit or the start of a month's name (most
#: questions hold neither: the patterns below are compiled only when one does, see _patterns).
#: (Asked of the lowercased text: a case-insensitive pattern at import cost a search process 2.5 ms.)
_MAYBE = re.compile(r"\d|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec")
#: The days before its own an entry's time words speak of: (pattern, days back from, days back to).
_RELATIVE_WORDS = (
    (r"\b(?:yesterday|last night)\b", 1, 1),
    (r"\b(?:a few|couple of|two|three|few) days ago\b", 5, 1),
    (r"\blast (?:week|weekend)\b|\ba week ago\b", 10, 1),
    (r"\b(?:two|2|a couple of) weeks ago\b", 18, 10),
    (r"\blast month\b|\ba month ago\b", 45, 15),
    (r"\blast year\b|\ba year ago\b", 540, 180),
)


@lru_cache(maxsize=1)
def _patterns() -> dict[str, re.Pattern[str]]:
    """The question's date patterns, compiled once when first needed."""
    return {
        # "7 July, 2023", "July 7, 2023", "7th of July 2023", "2023-07-07"
        "full": re.compile(
            rf"\b(?:{_DAY}(?:\s+of)?\s+{_MONTH},?\s+{_YEAR}|{_MONTH}\s+{_DAY},?\s+{_YEAR}|{_YEAR}-(\d\d)-(\d\d))\b",
            _FLAGS,
        ),
        "month_year": re.compile(rf"\b{_MONTH},?\s+{_YEAR}\b", _FLAGS),  # "July 2023"
        "month": re.compile(rf"\b(?:in|during|of|since|by)\s+{_MONTH}\b", _FLAGS),  # "in July" (any year)
        # the words before a date that make it a bound ("as of", "the week before", "since")
        "bound": re.compile(
            r"\b(?:(day|night|week|weekend|month)s?\s+)?(as of|by|until|till|before|prior to|since|after)"
            r"\s+(?:the\s+)?$",
            _FLAGS,
        ),
        "year": re.compile(
            rf"\b(?:in|during|of|since|by|before|prior to|after|until|till)\s+{_YEAR}\b", _FLAGS
        ),  # "in 2023", "till 2023"
    }


#: Words that place what an entry tells in time: relative days, weekdays, months, years.
_TELLS_WHEN = (
    r"\b(?:yesterday|today|tonight|tomorrow|last|next|ago|recently|earlier|since"
    r"|this (?:week|weekend|month|morning|evening|year)"
    r"|(?:\d+|an?|one|two|three|four|five|six|few|couple of|several|many) (?:year|month|week|day)s?"
    r"|(?:mon|tues|wednes|thurs|fri|satur|sun)day|" + "|".join(MONTHS) + r"|(?:19|20)\d\d)\b"
)
#: The openings of a question that asks when, or how long before or since: "When did …?",
#: "Which year …?", "In what month …?", "How long ago …?", "How many weeks passed between
#: …?" (its answer is a date or a span of time, told by a time word). "How long did it take?"
#: asks for a duration, not a time: not these.
_ASKS_WHEN = (
    r"\s*(?:when\b|(?:in |since )?(?:which|what) (?:year|month|day|date|time of year)\b"
    r"|how long (?:ago|since|has it been|had it been)\b|how many (?:years|months|weeks|days)\b)"
)


def asks_when(text: str) -> bool:
    """Whether a question asks when something happened, or how long ago."""
    return _asks_when().match(text) is not None


@lru_cache(maxsize=1)
def _asks_when() -> re.Pattern[str]:
    return re.compile(_ASKS_WHEN, _FLAGS)


@lru_cache(maxsize=1)
def _when_words() -> re.Pattern[str]:
    return re.compile(_TELLS_WHEN, _FLAGS)


def tells_when(body: str) -> bool:
    """Whether an entry says when what it tells happened (a time word: "last Friday", "in May")."""
    return _when_words().search(body) is not None


@lru_cache(maxsize=1)
def _relative() -> tuple[tuple[re.Pattern[str], int, int], ...]:
    return tuple((re.compile(p, _FLAGS), back, to) for p, back, to in _RELATIVE_WORDS)


#: Days after a named date still counted as "then": a thing done on the 7th is told of a few days later.
TOLD_WITHIN = 10

Window = tuple[int, int]  # first and last day, inclusive


def _month_number(name: str) -> int:
    return next(i for i, full in enumerate(MONTHS, 1) if full.startswith(name.lower()[:3]))


def _month_window(year: int, month: int) -> Window | None:
    first = day_number(f"{year:04d}-{month:02d}-01")
    nxt = day_number(f"{year + (month == 12):04d}-{month % 12 + 1:02d}-01")
    return None if first is None or nxt is None else (first, nxt - 1)


def question_window(text: str) -> tuple[Window | None, int | None]:
    """The days a question names, and a month named without a year (1-12), or (None, None).

    A full date gives that day to TOLD_WITHIN days after it; a month and year, the month (and
    TOLD_WITHIN days after); a year alone, the year. A date after "as of", "by", "before",
    "since" or "after" is a bound (see :func:`_bounded`): "How many dogs did she have as of
    June 2023?" asks for everything said up to its end."""
    if not _MAYBE.search(text.lower()):
        return None, None
    patterns = _patterns()
    found = patterns["full"].search(text)
    if found:
        g = found.groups()
        if g[0]:
            day, month, year = int(g[0]), _month_number(g[1]), int(g[2])
        elif g[3]:
            month, day, year = _month_number(g[3]), int(g[4]), int(g[5])
        else:
            year, month, day = int(g[6]), int(g[7]), int(g[8])
        first = day_number(f"{year:04d}-{month:02d}-{day:02d}")
        return (None if first is None else _bounded(text, found.start(), (first, first), TOLD_WITHIN)), None
    found = patterns["month_year"].search(text)
    if found:
        window = _month_window(int(found.group(2)), _month_number(found.group(1)))
        return (None if window is None else _bounded(text, found.start(), window, TOLD_WITHIN)), None
    found = patterns["year"].search(text)
    if found:
        window = _whole_year(int(found.group(1)))
        return (None if window is None else _bounded(text, found.start(1), window, 0)), None
    found = patterns["month"].search(text)
    if found:
        return None, _month_number(found.group(1))
    return None, None


_EVER = 10**7  # a day number after any date a store holds


def _bounded(text: str, at: int, named: Window, told: int) -> Window:
    """The days of a date named at ``at``: ``named`` and ``told`` days after it, or a bound
    when the words before it say so: "as of", "by", "until" it: up to its end; "before" it:
    up to its start ("the week before" it: the days just before it); "since" it: from its
    start; "after" it: from its end."""
    bound = _patterns()["bound"].search(text[max(0, at - 24) : at])
    if bound is None:
        return (named[0], named[1] + told)
    word = bound.group(2).lower()
    if word == "before" or word == "prior to":
        span = bound.group(1)
        if span:  # "the week before 4 May": the days just before it
            return (named[0] - (45 if span.lower() == "month" else TOLD_WITHIN), named[0])
        return (0, named[0])
    if word == "since":
        return (named[0], _EVER)
    if word == "after":
        return (named[1], _EVER)
    return (0, named[1])  # as of, by, until, till


def _whole_year(year: int) -> Window | None:
    first, last = day_number(f"{year:04d}-01-01"), day_number(f"{year:04d}-12-31")
    return None if first is None or last is None else (first, last)


def spoken_days(body: str, day: int) -> list[Window]:
    """The days an entry of ``day`` speaks of by its time words ("yesterday": the day before)."""
    return [(day - back, day - to) for pattern, back, to in _relative() if pattern.search(body)]


def month_of(day: int) -> int:
    """The month (1-12) of a day number (for a question naming a month without its year)."""
    # the year's first day from an estimate, then the month by its first day
    year = max(1, day * 400 // 146097)
    while (day_number(f"{year + 1:04d}-01-01") or 0) <= day:
        year += 1
    while (day_number(f"{year:04d}-01-01") or 0) > day:
        year -= 1
    month = 12
    while (day_number(f"{year:04d}-{month:02d}-01") or 0) > day:
        month -= 1
    return month


def in_window(window: Window | None, month: int | None, date: str | None, body: str) -> bool:
    """Whether an entry of ``date`` falls in the question's days, by its date or its time words."""
    day = day_number(date)
    if day is None:
        return False
    days = [(day, day), *spoken_days(body, day)]
    if window is not None:
        return any(a <= window[1] and b >= window[0] for a, b in days)
    if month is not None:
        return any(month_of(a) == month or month_of(b) == month for a, b in days)
    return False

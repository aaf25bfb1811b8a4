"""Terms read from an FTS5 index's pages: the same list fts5vocab gives, without walking postings."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from memkeeper.core.search import schema, suggest, terms
from memkeeper.core.search.words import porter

_LETTERS = "abcdefghijklmnopqrstuvwxyz0123456789"


def _db(tmp_path: Path, page: int = 64) -> sqlite3.Connection:
    conn = schema.connect(tmp_path / "t.sqlite3")
    schema.create_schema(conn)
    for table in ("words_l1", "fts_l1"):  # small pages: many of them, terms cut across pages
        conn.execute(f"INSERT INTO {table}({table}, rank) VALUES('pgsz', ?)", (page,))
    return conn


def _fill(conn: sqlite3.Connection, seed: int, segments: int = 4, rows: int = 300) -> None:
    rng = random.Random(seed)
    vocabulary = ["".join(rng.choice(_LETTERS) for _ in range(rng.randint(1, 12))) for _ in range(3000)]
    vocabulary += ["검색", "인덱스", "café", "naïve", "rotation", "rotations", "rotate", "seg", "segment"]
    rowid = 0
    for _segment in range(segments):  # one transaction each: several segments per table
        conn.execute("BEGIN")
        for _ in range(rows):
            rowid += 1
            text = " ".join(rng.choices(vocabulary, k=rng.randint(1, 40)))
            common = " ".join(["rotation"] * rng.randint(0, 30))  # long postings, over several pages
            conn.execute(
                "INSERT INTO words_l1(rowid, hi, lo) VALUES(?, ?, ?)",
                (rowid, text, common),
            )
            conn.execute("INSERT INTO fts_l1(rowid, body) VALUES(?, ?)", (rowid, text + " " + common))
        conn.execute("COMMIT")


def _vocab(conn: sqlite3.Connection, vocab: str, low: str, high: str) -> set[str]:
    rows = conn.execute(f"SELECT term FROM {vocab} WHERE term >= ? AND term < ?", (low, high))
    return {row[0] for row in rows}


@pytest.mark.parametrize("seed", [1, 2])
def test_terms_in_a_range_are_the_vocabulary_of_the_index(tmp_path: Path, seed: int) -> None:
    conn = _db(tmp_path)
    _fill(conn, seed)
    segments = conn.execute("SELECT count(DISTINCT segid) FROM words_l1_idx").fetchone()[0]
    assert segments > 1
    ranges = [("", "\U0010ffff"), ("a", "b"), ("ro", "rp"), ("rotation", "rotationz"), ("0", "1")]
    ranges += [("z", "zz"), ("검", "검\U0010ffff"), ("caf", "cag"), ("q", "q")]
    for table, vocab in (("words_l1", "wvocab_l1"), ("fts_l1", "vocab_l1")):
        for low, high in ranges:
            assert set(terms.between(conn, table, low, high, 10**6)) == _vocab(conn, vocab, low, high), (
                table,
                low,
            )


def test_a_common_term_has_larger_postings_than_a_rare_one(tmp_path: Path) -> None:
    conn = _db(tmp_path)
    _fill(conn, 3)
    conn.execute("INSERT INTO words_l1(rowid, hi, lo) VALUES(100000, 'rotund', '')")
    sizes = terms.between(conn, "words_l1", "rot", "rou")
    assert sizes[porter("rotation")] > 10 * sizes["rotund"]


def test_an_empty_index_has_no_terms(tmp_path: Path) -> None:
    conn = _db(tmp_path)
    assert terms.between(conn, "words_l1", "", "\U0010ffff") == {}
    assert terms.pages(conn, "words_l1", "a", "b") == []


def test_a_wide_range_is_cut_at_the_page_budget(tmp_path: Path) -> None:
    conn = _db(tmp_path)
    _fill(conn, 5)
    everything = terms.between(conn, "words_l1", "", "\U0010ffff", 10**6)
    first_pages = terms.between(conn, "words_l1", "", "\U0010ffff", 10)
    assert 0 < len(first_pages) < len(everything) and set(first_pages) <= set(everything)


def test_leaf_terms_of_a_truncated_page_are_none() -> None:
    assert terms.leaf_terms(b"") == [] and terms.leaf_terms(b"\x00\x04") == []


def test_close_terms_narrow_to_two_letters_when_the_first_letter_spans_many_pages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    conn = _db(tmp_path, 4050)  # FTS5's default page size
    _fill(conn, 4)
    wide = suggest._close_terms(conn, "words_l1", "rotet", 2)
    assert porter("rotation") in wide
    monkeypatch.setattr(suggest, "SUGGEST_PAGES", 1)
    narrow = suggest._close_terms(conn, "words_l1", "rotet", 2)
    assert porter("rotation") in narrow and all(t.startswith("ro") for t in narrow)
    assert not any(suggest._HEXLIKE.fullmatch(t) for t in wide)


@pytest.mark.slow  # over 10 s on two busy cores: left out of the quick subset
def test_the_day_number_is_datetimes_ordinal() -> None:
    """query.day_number counts days itself (no datetime import on the search path): the same
    number as ``date.fromisoformat(value[:10]).toordinal()``, and None where that raises."""
    from datetime import date, timedelta

    from memkeeper.core.search.query import day_number

    def reference(value: str | None) -> int | None:
        if not value or len(value) < 10:
            return None
        try:
            return date.fromisoformat(value[:10]).toordinal()
        except ValueError:
            return None

    day = date(1, 1, 1)
    while day < date(2401, 1, 1):
        assert day_number(day.isoformat() + "T10:00:00Z") == day.toordinal()
        day += timedelta(days=1)
    odd: list[str | None] = [
        "2024-02-30",
        "2023-02-29",
        "2100-02-29",
        "2000-02-29",
        "0000-01-01",
        "2024-13-01",
        "2024-00-10",
    ]
    odd += [
        "2024-01-00",
        "2024-04-31",
        "20240131",
        "2024-W05-3",
        "２０２４-01-01",
        "2024/01/01",
        "2024-+1-01",
    ]
    odd += ["", None, "2024-01-1 ", "abcdefghij", "9999-12-31"]
    for value in odd:
        assert day_number(value) == reference(value), value

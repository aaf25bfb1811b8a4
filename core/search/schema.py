"""The search database: its schema, opening it, and recovering from a bad one.

The database (``.search.sqlite3`` in the memory folder, hidden by its leading dot) is
derived data: it can be deleted at any time and is rebuilt from the files. Tables:

- ``sources``: one row per indexed file with its (size, mtime_ns), the byte offset read
  so far (L1 files are appended) and fingerprints that tell an append from a rewrite.
  Ids are never reused (AUTOINCREMENT), so index rows of a removed file stay dead.
- ``gone``: the ``sources`` rows of archive and L1 files that left (forgotten, renamed,
  gzipped), so a file that comes back under another name keeps its index rows.
- ``docs`` + ``fts_small``: the memory and L3 tiers, kept whole in ``docs`` (small,
  rewritten often); their index rows are deleted with the old text, kept in ``docs``.
- ``fts_l2`` / ``fts_l1``: contentless trigram indexes of the archives and L1 sessions.
  Their rowid is ``source id << 36 | byte offset``; the text is read back from the file,
  so the database stays smaller than the text it indexes.
- Every text (a block, a doc of ``fts_small``) is indexed with BLOCK_TAIL after it, so
  each of its characters and pairs of characters begins some trigram: a word of one or
  two characters is looked up as the trigrams it begins, listed by ``vocab_small``,
  ``vocab_l2`` and ``vocab_l1`` (fts5vocab views, no storage of their own).
- ``words_small`` / ``words_l2`` / ``words_l1``: the word indexes of ranked search, one
  row per entry (not per block), contentless, Porter-stemmed, with two columns: ``hi``
  (typed prompts, assistant text, summaries, memory) and ``lo`` (tool calls and output).
  A row's rowid is its doc's: the ``docs`` rowid, or ``source id << 36 | byte offset``
  of the section or L1 line. The text carries the parts of its camelCase words after it
  (``words.with_parts``). An entry's neighbours are not copied into its row: ranked
  search finds them at query time (``near``) from the rowids of ``words_l1_docsize``
  and ``prompts_l1``.
- ``prompts_l1``: the rowids of the typed prompts among the L1 entries (a plain table):
  the entries after a prompt, up to the next one, are its turn.
- ``titles_l1``: each L1 session's title, a word index of one row per file (rowid: the
  ``sources`` id), for ranked search to weigh a session's title with its entries.
- ``l1_days``: each L1 file's prompts and tool calls per day, one row per ``sources`` id
  (see ``l1days``), for the activity screen. Additive: made where missing, no version bump.
- ``l3_findings``: each L3 summary's decisions and open issues, one row per ``sources`` id
  (see ``l3findings``), for the activity screen. Additive like ``l1_days``.
- The trigram indexes hold each block's distinct whitespace-separated pieces once
  (``trigram_text``): exact search asks for the trigrams inside the pieces of its terms.

A database from another schema version is rebuilt (it holds nothing that is not in the
files); one SQLite reports as corrupt is moved aside to ``<name>.corrupt`` and rebuilt.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

SCHEMA_VERSION = 8
OFFSET_BITS = 36
OFFSET_MASK = (1 << OFFSET_BITS) - 1
BIG_FTS = {"l1": "fts_l1", "l2": "fts_l2"}
VOCAB = {"small": "vocab_small", "l1": "vocab_l1", "l2": "vocab_l2"}
#: The word indexes of ranked search, one per index above, and their vocabularies.
WORDS = {"small": "words_small", "l1": "words_l1", "l2": "words_l2"}
#: The tables of the small tier (memory, project and L3): their rows are deleted with their docs.
SMALL_TABLES = ("fts_small", WORDS["small"])
WORD_VOCAB = {"small": "wvocab_small", "l1": "wvocab_l1", "l2": "wvocab_l2"}
#: Session titles (``core.titles``) as a field of their own: one row per L1 file, its
#: rowid the file's ``sources`` id (a row of a file that left stays, dead, like its entries).
TITLES = "titles_l1"
#: The rowids of the typed prompts among the L1 entries (a row of a file that left stays, dead).
PROMPTS = "prompts_l1"
#: Prompts and tool calls per day of each L1 file (``l1days``): created where missing.
L1_DAYS = "l1_days"
L1_DAYS_DDL = f"CREATE TABLE IF NOT EXISTS {L1_DAYS}(src INTEGER PRIMARY KEY, days TEXT NOT NULL)"
#: The decisions and open issues of each L3 summary (``l3findings``): created where missing.
L3_FINDINGS = "l3_findings"
L3_FINDINGS_DDL = f"CREATE TABLE IF NOT EXISTS {L3_FINDINGS}(src INTEGER PRIMARY KEY, found TEXT NOT NULL)"
#: Columns of a word index, weighed by bm25() in this order (see query.FIELD_WEIGHTS).
WORD_COLUMNS = ("hi", "lo")
#: The columns (after the rowid) of the tables an archive or L1 file is written into.
BIG_COLUMNS = {
    **{table: ("body",) for table in BIG_FTS.values()},
    **{WORDS[tier]: WORD_COLUMNS for tier in ("l1", "l2")},
    TITLES: ("title",),
}
#: How much of the index a one-shot search maps into memory (SQLite caps it, at 2 GB by default):
#: see ``indexer.open_for_search``.
ONE_SHOT_MMAP_BYTES = 1 << 40
#: Appended to every indexed text: a query word never holds a newline (queries turn
#: whitespace and control characters into word breaks), so these trigrams only serve the
#: lookup of short words at the very end of a text.
BLOCK_TAIL = "\n\n"
#: ``meta`` key set while a bulk build's rows wait in its helper's scratch file (see side.py).
TAKE_PENDING = "side_pending"


def insert_sql(table: str) -> str:
    """The statement that adds a row (rowid first) to one of BIG_COLUMNS's tables."""
    columns = BIG_COLUMNS[table]
    return f"INSERT INTO {table}(rowid, {', '.join(columns)}) VALUES(?{', ?' * len(columns)})"


def live_only(conn: sqlite3.Connection, table: str) -> str:
    """What to AND to a MATCH of ``table`` so that it leaves out the rows of files that left.

    An archive's or L1 file's rows stay in its indexes, dead, when the file goes (its
    ``sources`` row is set aside in ``gone``): a search that asks SQLite for its best or
    newest N rows must not let them take the places of live ones. Empty when no file left
    (the usual case: no cost) or the table is of the small tier (its rows are deleted).
    """
    if table in SMALL_TABLES or conn.execute("SELECT 1 FROM gone LIMIT 1").fetchone() is None:
        return ""
    return f" AND (rowid >> {OFFSET_BITS}) NOT IN (SELECT id FROM gone)"


def trigram_text(text: str) -> str:
    """What the trigram index holds of a text: its distinct whitespace-separated pieces, lowercased.

    A query term is looked up piece by piece (its words between whitespace, see
    ``query.Query.pieces``), and every trigram inside a piece of the text, or a character or
    pair followed by two more, survives this: a block's words are each indexed once (text
    repeats a lot within 8 KB: the index writes about a third of the characters).
    """
    return " ".join(dict.fromkeys(text.lower().split())) + BLOCK_TAIL


#: The text is lowercased by Python before indexing (the same lower() the matching uses),
#: so the tokenizer keeps case: what the index may miss, the matcher cannot find either.
FTS_OPTIONS = "tokenize='trigram case_sensitive 1', content='', detail=none, columnsize=0"

#: Words, stemmed by Porter's algorithm, positions kept (phrases and adjacency), no text stored.
_WORD_OPTIONS = "tokenize='porter unicode61 remove_diacritics 2', content=''"

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sources(
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    rel TEXT NOT NULL UNIQUE,
    tier TEXT NOT NULL,
    kind TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    inode INTEGER NOT NULL DEFAULT 0,
    offset INTEGER NOT NULL DEFAULT 0,
    next_line INTEGER NOT NULL DEFAULT 1,
    open_tail INTEGER NOT NULL DEFAULT 0,
    head_fp BLOB,
    tail_fp BLOB,
    bytes INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS docs(
    rowid INTEGER PRIMARY KEY,
    src INTEGER NOT NULL,
    tier TEXT NOT NULL,
    type TEXT NOT NULL,
    loc TEXT NOT NULL,
    line INTEGER,
    date TEXT,
    title TEXT NOT NULL,
    body TEXT NOT NULL,
    session TEXT
);
CREATE INDEX IF NOT EXISTS docs_src ON docs(src);
CREATE TABLE IF NOT EXISTS gone(
    id INTEGER PRIMARY KEY,
    rel TEXT NOT NULL,
    tier TEXT NOT NULL,
    kind TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    inode INTEGER NOT NULL,
    offset INTEGER NOT NULL,
    next_line INTEGER NOT NULL,
    open_tail INTEGER NOT NULL,
    head_fp BLOB,
    tail_fp BLOB,
    bytes INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS gone_inode ON gone(inode);
CREATE INDEX IF NOT EXISTS gone_rel ON gone(rel);
CREATE VIRTUAL TABLE IF NOT EXISTS fts_small USING fts5(body, {FTS_OPTIONS});
CREATE VIRTUAL TABLE IF NOT EXISTS fts_l2 USING fts5(body, {FTS_OPTIONS});
CREATE VIRTUAL TABLE IF NOT EXISTS fts_l1 USING fts5(body, {FTS_OPTIONS});
CREATE VIRTUAL TABLE IF NOT EXISTS vocab_small USING fts5vocab(fts_small, row);
CREATE VIRTUAL TABLE IF NOT EXISTS vocab_l2 USING fts5vocab(fts_l2, row);
CREATE VIRTUAL TABLE IF NOT EXISTS vocab_l1 USING fts5vocab(fts_l1, row);
CREATE VIRTUAL TABLE IF NOT EXISTS words_small USING fts5(hi, lo, {_WORD_OPTIONS});
CREATE VIRTUAL TABLE IF NOT EXISTS words_l2 USING fts5(hi, lo, {_WORD_OPTIONS});
CREATE VIRTUAL TABLE IF NOT EXISTS words_l1 USING fts5(hi, lo, {_WORD_OPTIONS});
CREATE TABLE IF NOT EXISTS {PROMPTS}(id INTEGER PRIMARY KEY);
CREATE VIRTUAL TABLE IF NOT EXISTS titles_l1 USING fts5(title, {_WORD_OPTIONS});
CREATE VIRTUAL TABLE IF NOT EXISTS wvocab_small USING fts5vocab(words_small, row);
CREATE VIRTUAL TABLE IF NOT EXISTS wvocab_l2 USING fts5vocab(words_l2, row);
CREATE VIRTUAL TABLE IF NOT EXISTS wvocab_l1 USING fts5vocab(words_l1, row);
{L1_DAYS_DDL};
{L3_FINDINGS_DDL};
"""


class CorruptIndex(Exception):
    """SQLite says the database file is damaged or not a database."""


def is_corruption(exc: BaseException) -> bool:
    name = getattr(exc, "sqlite_errorname", "") or ""
    if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")):
        return True
    text = str(exc).lower()
    return "malformed" in text or "not a database" in text or "corrupt" in text


def is_busy(exc: BaseException) -> bool:
    name = getattr(exc, "sqlite_errorname", "") or ""
    return name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in str(exc).lower()


def connect(path: Path, timeout: float = 1.0) -> sqlite3.Connection:
    """Open (creating 0600) in autocommit mode; transactions are explicit."""
    new = not path.exists() or path.stat().st_size == 0
    if new:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        os.close(fd)
    conn = sqlite3.connect(str(path), timeout=timeout, isolation_level=None, check_same_thread=False)
    if new:  # only a new file can take it: free pages go back after a big change
        conn.execute("PRAGMA auto_vacuum=INCREMENTAL")
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA cache_size=-65536")
    conn.execute("PRAGMA temp_store=MEMORY")
    return conn


def connect_readonly(path: Path, timeout: float) -> sqlite3.Connection | None:
    """A read-only connection to an index of the current schema; None if absent, busy, foreign or corrupt.

    Nothing is created, repaired or written; a lock held past ``timeout`` seconds gives None.
    """
    if not path.is_file():
        return None
    uri = "file:" + str(path).replace("%", "%25").replace("?", "%3f").replace("#", "%23") + "?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=timeout, isolation_level=None, check_same_thread=False)
    except sqlite3.Error:
        return None
    try:
        conn.execute("PRAGMA query_only=1")
        if schema_version(conn) == SCHEMA_VERSION:
            return conn
    except sqlite3.Error:
        pass
    conn.close()
    return None


def schema_version(conn: sqlite3.Connection) -> int | None:
    try:
        row = conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return None
        raise
    try:
        return int(row[0]) if row else None
    except ValueError:
        return None


def create_schema(conn: sqlite3.Connection) -> None:
    conn.executescript(_SCHEMA)
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES('schema', ?)", (str(SCHEMA_VERSION),))


def open_index(path: Path, timeout: float = 1.0) -> tuple[sqlite3.Connection, list[str]]:
    """A connection to an index of the current schema, and notes on what was repaired.

    An empty or foreign-version database is recreated; a corrupt one is moved aside.
    A busy one raises ``sqlite3.OperationalError`` for the caller to fall back on a scan.
    """
    notes: list[str] = []
    for _attempt in range(2):
        try:
            conn = connect(path, timeout)
        except sqlite3.DatabaseError as exc:
            if is_busy(exc) or not is_corruption(exc):
                raise
            notes.append(move_aside(path))
            continue
        try:
            version = schema_version(conn)
            if version == SCHEMA_VERSION:
                # a table read (busy or damaged shows here), one b-tree seek: count(*) walked it
                # whole on every search (3 ms at 50,000 files)
                conn.execute("SELECT max(id) FROM sources").fetchone()
                return conn, notes
            if version is not None:
                notes.append(f"search index schema {version} replaced by {SCHEMA_VERSION} (rebuilt)")
            conn.close()
            remove_db(path)
            conn = connect(path, timeout)
            create_schema(conn)
            return conn, notes
        except sqlite3.DatabaseError as exc:
            conn.close()
            if is_busy(exc) or not is_corruption(exc):
                raise
            notes.append(move_aside(path))
    raise CorruptIndex(f"cannot create a search index at {path}")


def db_files(path: Path) -> list[Path]:
    return [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")]


def remove_db(path: Path) -> None:
    for file in db_files(path):
        try:
            file.unlink()
        except FileNotFoundError:
            pass


def move_aside(path: Path) -> str:
    """Keep the damaged database as ``<name>.corrupt`` (one copy, replaced) and start afresh."""
    target = path.with_name(path.name + ".corrupt")
    for file, dest in zip(db_files(path), db_files(target), strict=True):
        try:
            os.replace(file, dest)
        except FileNotFoundError:
            try:
                dest.unlink()
            except FileNotFoundError:
                pass
    return f"the search index was damaged: kept as {target.name} and rebuilt"

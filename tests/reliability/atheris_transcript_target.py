"""Coverage-guided fuzzing of the transcript parser and the L1 conversion (atheris / libFuzzer).

Run: ``python atheris_transcript_target.py [libFuzzer flags] [corpus dir]``. Any exception
escaping the parser, the event builder, the L1 entry builder or the privacy filter is a crash.
"""

from __future__ import annotations

import io
import sys

import atheris

with atheris.instrument_imports():
    from memkeeper.core.capture.l1_entries import dumps_entry, entry_from_event
    from memkeeper.core.capture.transcript import ParseStats, events_from_record, iter_lines
    from memkeeper.core.redaction.redact import redact


def test_one_input(data: bytes) -> None:
    stats = ParseStats()
    for end, record in iter_lines(io.BytesIO(data), 0, stats):
        assert end <= len(data)
        for event in events_from_record(record, end):
            entry = entry_from_event(event, event.ts or "2026-01-01T00:00:00.000Z", "fuzz-session")
            if entry is not None:
                dumps_entry(entry)
    assert stats.end_offset <= len(data)
    redact(data.decode("utf-8", "replace"))


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()

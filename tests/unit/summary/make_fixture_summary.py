"""Regenerate ``tests/fixtures/summaries/real_archive.summary.json`` from ``real_archive.md``.

Run after changing the extractive summarizer: ``python tests/unit/summary/make_fixture_summary.py``,
then read the result: the fixture is there to be read by a person, not only compared.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "summaries"
ARCHIVE_NAME = "memory_20260212_160500.md"


def generate() -> dict[str, object]:
    """The extractive summary of the fixture archive, made in a throwaway store."""
    os.environ["MEMKEEPER_NO_JOBS"] = "1"
    from memkeeper.core.store.paths import StorePaths, ensure_store
    from memkeeper.core.summaries.summary import generate_summary

    with tempfile.TemporaryDirectory() as tmp:
        paths = StorePaths(Path(tmp))
        ensure_store(paths)
        shutil.copyfile(FIXTURES / "real_archive.md", paths.archive(ARCHIVE_NAME))
        return generate_summary(paths, ARCHIVE_NAME, backend="extractive").to_json()


def main() -> None:
    data = generate()
    data["generatedAt"] = "2026-02-12T16:05:00.000Z"  # pinned: the fixture should not churn
    target = FIXTURES / "real_archive.summary.json"
    target.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", "utf-8")
    print(f"wrote {target}")


if __name__ == "__main__":
    main()

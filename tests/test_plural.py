"""One way to count papers in words, with thousands separators, everywhere: the CLI's
messages, the library's undo descriptions, the digest, the status line."""

from __future__ import annotations

import subprocess
import sys

import pytest

from abstract_reader import cli, plural
from abstract_reader.library import Library
from abstract_reader.status import count_part, orphans_part


@pytest.mark.parametrize(
    ("count", "said"),
    [(0, "0 papers"), (1, "1 paper"), (2, "2 papers"), (1234, "1,234 papers")],
)
def test_papers_phrase(count: int, said: str) -> None:
    assert plural.papers_phrase(count) == said


def test_count_phrase_takes_an_irregular_plural() -> None:
    assert plural.count_phrase(1, "entry", "entries") == "1 entry"
    assert plural.count_phrase(12_000, "entry", "entries") == "12,000 entries"


def test_one_helper() -> None:
    from abstract_reader.library import model
    from abstract_reader.tui.screens import pickers

    assert not hasattr(model, "papers_phrase") and not hasattr(cli, "_papers")
    assert pickers.papers_phrase is plural.papers_phrase


def test_the_library_counts_with_thousands_separators() -> None:
    """An undo description ("bookmark on 1234 papers" before)."""
    ids = [f"{n:016x}" for n in range(1234)]
    with Library(None) as library:
        library.set_bookmark(ids)
        library.add_tags(ids[:1], ["x"])
        assert library.undo() == "tag 'x' added to 1 paper"
        assert library.undo() == "bookmark on 1,234 papers"


def test_the_status_line_counts_the_same_way() -> None:
    assert count_part(0, 1, filtered=False, partial=False) == "1 paper"
    assert count_part(0, 12_345, filtered=False, partial=False) == "12,345 papers"
    assert orphans_part(1_500).startswith("1,500 saved papers not in these dumps")
    assert orphans_part(1).startswith("1 saved paper not in these dumps")


def test_the_cli_still_starts_without_the_library() -> None:
    code = (
        "import sys, abstract_reader.cli\n"
        "print(sorted(m for m in sys.modules if m.startswith('abstract_reader.library')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_digest_counts_the_same_way() -> None:
    from abstract_reader.digest import digest
    from abstract_reader.record import Record

    records = [
        Record(f"{n:016x}", f"Title {n}", False, "NeurIPS", 2026, abstract="A.")
        for n in range(1_001)
    ]
    assert digest(records, "text").splitlines()[0].endswith("1,001 papers")
    assert digest(records[:1], "markdown").startswith("# Reading digest: 1 paper\n")

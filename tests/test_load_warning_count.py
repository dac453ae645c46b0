""" "… and N more load warnings" counts what a user counts: every bad record of every metadata
file (-d) and every dump warning not listed above it, even where a file keeps only its first
`MAX_RECORD_PROBLEMS` records and one line counting the rest (it said 9 for a file of 30 bad
records: 20 kept + 1 counting line - 12 listed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from abstract_reader.corpus import (
    LOAD_PROBLEMS_SHOWN,
    MAX_RECORD_PROBLEMS,
    CorpusBuilder,
    listed_problems,
    more_problems,
)

from .conftest import SEEDS, cli, write_dump


def _jsonl(path: Path, bad: int) -> Path:
    """arXiv JSON Lines: one good record (not a dump paper), then ``bad`` lines not JSON."""
    good = {"id": "2601.00001", "title": "Elsewhere", "abstract": "A paper on other things."}
    lines = [json.dumps(good), *(f"{{oops {n}" for n in range(bad))]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _ris(path: Path, bad: int) -> Path:
    """RIS: ``bad`` records with no title, then a good one."""
    untitled = "TY  - JOUR\nAB  - An abstract with no title.\nER  - \n"
    good = "TY  - JOUR\nTI  - Titled\nAB  - A titled paper on other things.\nER  - \n"
    path.write_text(untitled * bad + good, encoding="utf-8")
    return path


def _more_line(stderr: str) -> str:
    [line] = [x for x in stderr.splitlines() if "more load" in x]
    return line


@pytest.mark.parametrize("bad", [MAX_RECORD_PROBLEMS + 1, 30, 1234])
def test_one_metadata_file(tmp_path: Path, bad: int) -> None:
    path = _jsonl(tmp_path / "bad.jsonl", bad)
    run = cli("list", "-d", str(path))
    assert run.returncode == 0, run.stderr
    lines = run.stderr.splitlines()
    assert sum("not valid JSON" in x for x in lines) == LOAD_PROBLEMS_SHOWN
    more = f"{bad - LOAD_PROBLEMS_SHOWN:,}"
    assert _more_line(run.stderr) == (
        f"abstract-reader: … and {more} more load warnings (-v lists them all)"
    )
    # -v lists them all: as many lines as the count said were left, plus those listed
    every = cli("list", "-v", "-d", str(path)).stderr
    assert every.count("not valid JSON") == bad


def test_several_metadata_files_and_a_dump(tmp_path: Path) -> None:
    """Two metadata files over the limit (JSON Lines, RIS) and a dump with one warning."""
    jsonl = _jsonl(tmp_path / "a.jsonl", 25)
    ris = _ris(tmp_path / "b.ris", 33)
    dump = tmp_path / "c.txt"
    dump.write_bytes(b"TestConf 2025 Papers\n\nA byte \xff here.\n")
    run = cli("list", "-d", str(jsonl), "-d", str(ris), "-d", str(dump))
    assert run.returncode == 0, run.stderr
    total = 25 + 33 + 1
    assert _more_line(run.stderr) == (
        f"abstract-reader: … and {total - LOAD_PROBLEMS_SHOWN} more load warnings"
        " (-v lists them all)"
    )
    assert run.stderr.splitlines()[-1] == "abstract-reader: 3 files loaded, 3 with warnings"
    every = cli("list", "-v", "-d", str(jsonl), "-d", str(ris), "-d", str(dump)).stderr
    assert len([x for x in every.splitlines() if "warning:" in x]) == total


def test_match_counts_a_file_loaded_with_d_the_same_way(tmp_path: Path) -> None:
    """`match` says the -d files' problems before matching, then the count, at the end."""
    bad = _jsonl(tmp_path / "bad.jsonl", 30)
    run = cli("match", "-d", str(SEEDS), "-d", str(bad), "--dry-run")
    assert run.returncode == 0, run.stderr
    assert _more_line(run.stderr) == (
        f"abstract-reader: … and {30 - LOAD_PROBLEMS_SHOWN} more load warnings (-v lists them all)"
    )


def test_the_count_of_a_builders_problems(tmp_path: Path) -> None:
    """What the reader's load notice counts (it shares `listed_problems`/`more_problems`)."""
    first = _jsonl(tmp_path / "a.jsonl", 40)
    second = _ris(tmp_path / "b.ris", 21)
    dump = write_dump(tmp_path / "c.txt", "A clean abstract about robust estimation.")
    builder = CorpusBuilder([first, second, dump])
    for path in builder.files:
        builder.add_file(path)
    errors = builder.finish().errors
    listed, left = listed_problems(errors)
    assert len(listed) == LOAD_PROBLEMS_SHOWN
    assert more_problems(left) == f"… and {40 + 21 - LOAD_PROBLEMS_SHOWN} more load warnings"

"""An arXiv JSON Lines file whose first line is not a record (cut short by a download, a stray
header) loads the rest: each bad line is one warning naming the file and line, under the
load-problems rule. A file with no record among its first lines is still not JSON Lines."""

from __future__ import annotations

import json
from pathlib import Path

from abstract_reader.corpus import Corpus
from abstract_reader.sources.arxiv import RECOGNISE_LINES

from .conftest import SEEDS, cli, paper_with


def _record(n: int, abstract: str | None = None) -> str:
    return json.dumps(
        {
            "id": f"2601.{n:05d}",
            "title": f"Good title {n}",
            "abstract": abstract or f"A good abstract about things, number {n}.",
        }
    )


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_bad_first_line_is_one_warning_and_the_rest_loads(tmp_path: Path) -> None:
    snap = _write(
        tmp_path / "snap.jsonl",
        ['{"id": "2601.00000", "title": "Cut sh', _record(1), "", _record(2)],
    )
    result = cli("list", "--json", "-d", str(snap))
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [
        f"abstract-reader: warning: {snap}: line 1: not valid JSON"
    ]
    titles = [json.loads(line)["title"] for line in result.stdout.splitlines()]
    assert titles == ["Good title 1", "Good title 2"]


def test_lines_that_are_json_but_no_record_before_the_first_one(tmp_path: Path) -> None:
    snap = _write(tmp_path / "snap.jsonl", ['{"format": "arxiv"}', "[1, 2]", _record(1)])
    result = cli("list", "-d", str(snap))
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [
        f"abstract-reader: warning: {snap}: line 1: no arXiv id",
        f"abstract-reader: warning: {snap}: line 2: not a JSON object",
        "abstract-reader: 1 file loaded, 1 with warnings",
    ]
    assert len(result.stdout.splitlines()) == 1


def test_many_bad_lines_first_follow_the_load_problems_rule(tmp_path: Path) -> None:
    bad = [f"{{oops {n}" for n in range(RECOGNISE_LINES - 1)]
    snap = _write(tmp_path / "snap.jsonl", [*bad, _record(1)])
    said = [
        f"abstract-reader: warning: {snap}: line {n}: not valid JSON"
        for n in range(1, RECOGNISE_LINES)
    ]
    result = cli("list", "-d", str(snap))
    assert result.returncode == 0 and len(result.stdout.splitlines()) == 1
    assert result.stderr.splitlines() == [
        *said[:12],
        f"abstract-reader: … and {len(said) - 12} more load warnings (-v lists them all)",
        "abstract-reader: 1 file loaded, 1 with warnings",
    ]
    verbose = cli("list", "-v", "-d", str(snap))
    assert verbose.stderr.splitlines() == [*said, "abstract-reader: 1 file loaded, 1 with warnings"]


def test_a_file_with_no_record_among_its_first_lines_is_not_json_lines(tmp_path: Path) -> None:
    bad = [f"{{oops {n}" for n in range(RECOGNISE_LINES)]
    snap = _write(tmp_path / "snap.jsonl", [*bad, _record(1)])
    result = cli("list", "-d", str(snap), "-d", str(SEEDS))
    assert result.returncode == 1 and len(result.stdout.splitlines()) == 55
    assert result.stderr.splitlines() == [
        f"abstract-reader: {snap}: not JSON Lines (line 1: Expecting property name enclosed "
        "in double quotes)"
    ]


def test_match_reads_the_rest_of_a_file_whose_first_line_is_bad(
    seeds: Corpus, tmp_path: Path
) -> None:
    rse = paper_with(seeds, "Robust Satisficing Ensemble (RSE)")
    snap = _write(tmp_path / "snap.jsonl", ["not json at all", _record(7, rse.abstract)])
    result = cli("match", str(snap), "--dry-run", "--json")
    assert result.returncode == 0, result.stderr
    assert f"abstract-reader: warning: {snap}: line 1: not valid JSON" in result.stderr
    mine = next(
        line for line in map(json.loads, result.stdout.splitlines()) if line["id"] == rse.id
    )
    assert mine["status"] == "matched"

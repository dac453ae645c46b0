"""Hostile inputs: files built to break the loaders (nesting a thousand deep, folders named
like dumps, FIFOs and devices, endless files, odd encodings). Each is one line naming the
file (and the record), and everything else loads; nothing hangs, nothing is read without
limit. Run as a user would, through the CLI, where the finding was seen there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from abstract_reader.corpus import load_corpus

from .conftest import SEEDS, cli

#: arrays nested this deep exhaust any recursion limit a parser may have
DEEP = 100_000
GOOD_RECORD = {"id": "2601.00001", "title": "Good title", "abstract": "A good abstract here."}


# -- nesting too deep (F3) -----------------------------------------------------------------------


def test_deeply_nested_json_is_one_line_and_the_rest_loads(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * DEEP + "]" * DEEP, encoding="utf-8")
    result = cli("list", "-d", str(SEEDS), "-d", str(deep), db=tmp_path / "l.db")
    assert result.returncode == 1  # a skipped input, after the good ones
    assert result.stderr.strip().splitlines() == [
        f"abstract-reader: {deep}: not valid JSON (nested too deeply)"
    ]
    assert len(result.stdout.splitlines()) == 55


def test_a_deeply_nested_json_line_is_one_warning_naming_it(tmp_path: Path) -> None:
    lines = tmp_path / "snap.jsonl"
    lines.write_text(
        json.dumps(GOOD_RECORD) + "\n" + "[" * DEEP + "]" * DEEP + "\n", encoding="utf-8"
    )
    result = cli("list", "--json", "-d", str(lines), db=tmp_path / "l.db")
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip().splitlines() == [
        f"abstract-reader: warning: {lines}: line 2: not valid JSON (nested too deeply)"
    ]
    (paper,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert paper["title"] == "Good title"
    # as the first line, the file is not JSON Lines at all: one line, skipped
    lines.write_text("[" * DEEP + "]" * DEEP + "\n", encoding="utf-8")
    result = cli("list", "-d", str(SEEDS), "-d", str(lines), db=tmp_path / "l.db")
    assert result.returncode == 1 and len(result.stdout.splitlines()) == 55
    assert result.stderr.strip().splitlines() == [
        f"abstract-reader: {lines}: not JSON Lines (line 1: nested too deeply)"
    ]


def test_match_on_a_deeply_nested_file_is_one_line(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * DEEP + "]" * DEEP, encoding="utf-8")
    result = cli("match", str(deep), "-d", str(SEEDS), "--dry-run", db=tmp_path / "l.db")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"abstract-reader: {deep}: not valid JSON (nested too deeply)"
    ]


def test_bibtex_braces_nested_too_deep_name_the_entry(tmp_path: Path) -> None:
    bib = tmp_path / "refs.bib"
    bib.write_text(
        "@article{good,\n title={Good},\n abstract={A good abstract about things.}\n}\n\n"
        "@string{deepstring={" + "{" * DEEP + "x" + "}" * DEEP + "}}\n\n"
        "@article{bad,\n title={" + "{" * DEEP + "x" + "}" * DEEP + "},\n"
        " abstract={Deep one}\n}\n",
        encoding="utf-8",
    )
    result = cli("list", "--json", "-d", str(bib), db=tmp_path / "l.db")
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip().splitlines() == [
        f"abstract-reader: warning: {bib}: entry 2 (deepstring, line 6):"
        " braces nested more than 100 deep",
        f"abstract-reader: warning: {bib}: entry 3 (bad, line 8): braces nested more than 100 deep",
        "abstract-reader: 1 file loaded, 1 with warnings",
    ]
    (paper,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert paper["title"] == "Good"


def test_bibtex_nesting_that_real_files_use_still_decodes(tmp_path: Path) -> None:
    bib = tmp_path / "refs.bib"
    bib.write_text(
        "@article{ok,\n title={" + "{" * 100 + "Deep \\'e" + "}" * 100 + "},\n"
        " abstract={Fine.}\n}\n",
        encoding="utf-8",
    )
    corpus = load_corpus([bib])
    assert not corpus.errors
    (paper,) = corpus.papers
    assert paper.title == "Deep é"


def test_a_fault_in_a_metadata_reader_skips_that_file_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever a parser raises (here: a RecursionError it did not catch) is that file's load
    error, named; the dumps load and the reader does not die."""
    from abstract_reader.sources import jsonsource

    def boom(path: Path) -> object:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(jsonsource, "read", boom)
    notes = tmp_path / "notes.json"
    notes.write_text("[]", encoding="utf-8")
    corpus = load_corpus([SEEDS, notes])
    assert len(corpus.papers) == 55
    (error,) = corpus.errors
    assert error.fatal and str(notes) in str(error)
    assert "could not be read (RecursionError: maximum recursion depth exceeded)" in str(error)

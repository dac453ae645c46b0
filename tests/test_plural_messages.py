"""Counts in messages read as a user expects, one and many alike: "1 byte sequence", not
"1 byte sequence(s)"; "1,234 load errors", not "1234 load errors" (`plural.count_phrase`
everywhere)."""

from __future__ import annotations

import json
from pathlib import Path

from abstract_reader.corpus import MAX_RECORD_PROBLEMS, Corpus, CorpusBuilder, LoadError
from abstract_reader.library import Library
from abstract_reader.session import Session

from .conftest import cli


def test_a_dumps_warnings_say_one_and_thousands(tmp_path: Path) -> None:
    one = tmp_path / "one.txt"
    one.write_bytes(b"TestConf 2025 Papers\n\nA byte \xff here and a NUL \x00 there.\n")
    many = tmp_path / "many.txt"
    many.write_bytes(b"TestConf 2025 Papers\n\n" + b"Bad \xff " * 1234 + b"NULs " + b"\x00" * 1500)
    run = cli("list", "-d", str(one), "-d", str(many))
    assert run.returncode == 0, run.stderr
    assert run.stderr.splitlines() == [
        f"abstract-reader: warning: {one}: 1 NUL byte dropped (first on line 3)",
        f"abstract-reader: warning: {one}: invalid UTF-8 on line 3"
        " (1 byte sequence shown as \ufffd)",
        f"abstract-reader: warning: {many}: 1,500 NUL bytes dropped (first on line 3)",
        f"abstract-reader: warning: {many}: invalid UTF-8 on line 3"
        " (1,234 byte sequences shown as \ufffd)",
        "abstract-reader: 2 files loaded, 2 with warnings",
    ]


def test_one_more_malformed_record(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    good = {"id": "2601.00001", "title": "Elsewhere", "abstract": "A paper on other things."}
    bad = [f"{{oops {n}" for n in range(MAX_RECORD_PROBLEMS + 1)]
    path.write_text("\n".join([json.dumps(good), *bad]) + "\n", encoding="utf-8")
    builder = CorpusBuilder([path])
    builder.add_file(path)
    last = builder.finish().errors[-1]
    assert last.message == "… and 1 more malformed record skipped"


def test_the_status_and_dialog_titles_count_with_thousands_separators(seeds: Corpus) -> None:
    failed = [LoadError(f"/gone/{n}.txt", "no such file or directory") for n in range(1234)]
    corpus = Corpus(papers=seeds.papers, errors=failed, files=list(seeds.files))
    session = Session(Library(None), corpus=corpus)
    session.marks = {f"{n:016x}" for n in range(1234)}
    parts = session.status_parts(shown=55, loaded=55, loading=False)
    assert "1,234 marked" in parts
    assert "⚠ 1,234 load errors" in parts
    assert session.describe(list(seeds.papers) * 30) == "1,650 marked papers"
    corpus.errors[1:] = []
    parts = session.status_parts(shown=55, loaded=55, loading=False)
    assert "⚠ 1 load error" in parts

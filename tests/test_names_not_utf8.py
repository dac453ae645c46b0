"""Names and arguments that are not UTF-8, or hold a newline: a dump's file name is whatever
bytes the web or a colleague's disk gave it, and an argument is whatever the shell passed.
Python keeps such bytes as lone surrogates (0x9b → U+DC9B); written out they are those bytes
again (0x9b is CSI, a control sequence's start) or fail to encode. Nothing of that may stop
the work or reach the terminal."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from abstract_reader.library import Library, LibraryError

from .conftest import SEEDS

DUMP = "NeurIPS 2026 Papers\n\nWe present a robust xylophone method.\n"


def run(*args: str | bytes, tmp_path: Path) -> subprocess.CompletedProcess[bytes]:
    """The CLI as a user runs it, on a library of its own; its output as bytes."""
    env = {
        **os.environ,
        "ABSTRACT_READER_DB": str(tmp_path / "lib.sqlite3"),
        "ABSTRACT_READER_CACHE": str(tmp_path / "cache"),
        "ABSTRACT_READER_CONFIG": str(tmp_path / "config.toml"),
    }
    return subprocess.run(
        [sys.executable, "-m", "abstract_reader", *args],
        capture_output=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        env=env,
    )


def folder_with(tmp_path: Path, name: bytes) -> Path:
    """A folder of the bundled dumps and one more dump named ``name`` (bytes)."""
    folder = tmp_path / "dumps"
    folder.mkdir()
    for seed in sorted(SEEDS.glob("*.txt"))[:1]:
        (folder / seed.name).write_bytes(seed.read_bytes())
    try:
        with open(os.path.join(os.fsencode(folder), name), "wb") as out:
            out.write(DUMP.encode())
    except OSError:  # a file system that refuses such names: nothing to check here
        pytest.skip("this file system refuses the name")
    return folder


def test_a_dump_named_in_latin_1_is_searched_listed_and_digested(tmp_path: Path) -> None:
    """`café.txt` saved in Latin-1: the search, `list -q`, `digest` and what-is-new keys
    took the name as text and stopped with an unexpected error (no result at all)."""
    folder = folder_with(tmp_path, b"caf\xe9.txt")
    found = run("list", "-d", str(folder), "-q", "robust xylophone", tmp_path=tmp_path)
    assert found.returncode == 0, found.stderr
    assert b"obust xylophone method" in found.stdout  # (its derived title)
    both = run("list", "-d", str(folder), "-q", "robust", tmp_path=tmp_path)
    assert both.returncode == 0 and len(both.stdout.splitlines()) > 1  # the other dump too
    digest = run("digest", "-d", str(folder), "-f", "text", tmp_path=tmp_path)
    assert digest.returncode == 0, digest.stderr
    assert b"robust xylophone" in digest.stdout


def test_a_control_byte_or_newline_in_a_name_reaches_no_output_raw(tmp_path: Path) -> None:
    """A name with 0x9b (CSI) and a newline: `show` prints it on one line, escaped (the
    newline let a name fake a `tags:` line), and no output holds the raw byte."""
    folder = folder_with(tmp_path, b"bad\x9b31m\ntags:      FAKE.txt")
    listed = run("list", "-d", str(folder), "-q", "xylophone", tmp_path=tmp_path)
    assert listed.returncode == 0, listed.stderr
    paper_id = listed.stdout.split()[0].decode()
    outputs = [
        run("show", "-d", str(folder), paper_id, tmp_path=tmp_path),
        run("list", "-d", str(folder), "--json", "-q", "xylophone", tmp_path=tmp_path),
        run("export", "-d", str(folder), "-f", "csv", "-q", "xylophone", tmp_path=tmp_path),
    ]
    for result in outputs:
        assert result.returncode == 0, result.stderr
        assert b"\x9b" not in result.stdout + result.stderr
    shown = outputs[0].stdout.decode()
    assert [line for line in shown.splitlines() if line.startswith("tags:")] == ["tags:      -"]
    (sources,) = [line for line in shown.splitlines() if line.startswith("sources:")]
    assert "FAKE.txt" in sources
    record = json.loads(outputs[1].stdout.splitlines()[0])
    assert "FAKE.txt" in record["sources"][0]["file"]


def test_arguments_not_utf8_are_stored_as_text_and_the_backup_still_works(
    tmp_path: Path,
) -> None:
    """An author, a note and a saved search given as bytes that are not UTF-8 are stored
    with U+FFFD for those bytes; `show` prints no raw byte, and `library export` (the
    user's backup) works after it (it failed on every run once such an author was stored)."""
    paper = run("list", "-d", str(SEEDS), tmp_path=tmp_path).stdout.split()[0].decode()
    bad = os.fsdecode(b"X\x9b2J")
    for args in (
        ("meta", paper, "--author", bad),
        ("note", paper, bad),
        ("searches", "--add", "mine", bad),
    ):
        result = run(*args, tmp_path=tmp_path)
        assert result.returncode == 0, (args, result.stderr)
        assert b"\x9b" not in result.stdout + result.stderr
    shown = run("show", paper, tmp_path=tmp_path)
    assert shown.returncode == 0 and b"\x9b" not in shown.stdout
    assert "X\ufffd2J" in shown.stdout.decode()
    backup = run("library", "export", str(tmp_path / "backup.json"), tmp_path=tmp_path)
    assert backup.returncode == 0, backup.stderr
    data = json.loads((tmp_path / "backup.json").read_text(encoding="utf-8"))
    assert "X\ufffd2J" in json.dumps(data, ensure_ascii=False)


def test_a_url_not_utf8_is_warned_about_as_the_byte_typed_and_as_saved(tmp_path: Path) -> None:
    """`meta --url` with the byte 0x9b: the warning named U+DC9B (the lone surrogate Python
    made of the byte), which is neither what was typed nor what the library keeps (U+FFFD).
    It names the byte as typed and what is saved; no raw byte reaches the terminal."""
    paper = run("list", "-d", str(SEEDS), tmp_path=tmp_path).stdout.split()[0].decode()
    result = run(
        "meta", paper, "--url", os.fsdecode(b"https://example.org/a\x9bb"), tmp_path=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert b"\x9b" not in result.stdout + result.stderr
    warning = result.stderr.decode().splitlines()[-1]
    assert warning == (
        "abstract-reader: warning: --url is saved, but the reader will not open it and"
        " citations leave it out: it contains a byte that is not UTF-8 (\\x9b), saved as \ufffd"
    )
    assert "url:      https://example.org/a\ufffdb" in result.stdout.decode().splitlines()


def test_an_import_holding_a_lone_surrogate_is_refused_whole(tmp_path: Path) -> None:
    """`"\\ud800"` is valid JSON but no text: the import says so and writes nothing (it
    ended in an unexpected error)."""
    paper = run("list", "-d", str(SEEDS), tmp_path=tmp_path).stdout.split()[0].decode()
    document = tmp_path / "in.json"
    document.write_text(
        '{"format": "abstract-reader-library", "version": 1, "papers": {"'
        + paper
        + '": {"tags": ["fine", "bad\\ud800"], "note": "a note"}}}',
        encoding="utf-8",
    )
    result = run("library", "import", str(document), tmp_path=tmp_path)
    assert result.returncode == 1
    message = result.stderr.decode()
    assert "not valid Unicode" in message and "Traceback" not in message
    assert len(message.strip().splitlines()) == 1
    with Library(tmp_path / "lib.sqlite3") as library:
        assert not library.snapshot.notes and not any(library.snapshot.tags.values())


def test_the_library_refuses_a_tag_with_bytes_not_utf8(tmp_path: Path) -> None:
    with Library(tmp_path / "lib.sqlite3") as library, pytest.raises(LibraryError, match="UTF-8"):
        library.add_tags(["0" * 16], [os.fsdecode(b"t\x9b")])

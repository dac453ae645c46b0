"""Hostile inputs: files built to break the loaders (nesting a thousand deep, folders named
like dumps, FIFOs and devices, endless files, odd encodings). Each is one line naming the
file (and the record), and everything else loads; nothing hangs, nothing is read without
limit. Run as a user would, through the CLI, where the finding was seen there."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from abstract_reader.corpus import load_corpus

from .conftest import SEEDS, cli, write_dump

#: arrays nested this deep exhaust any recursion limit a parser may have
DEEP = 100_000
GOOD_RECORD = {"id": "2601.00001", "title": "Good title", "abstract": "A good abstract here."}


# -- nesting too deep (F3) -----------------------------------------------------------------------


def test_deeply_nested_json_is_one_line_and_the_rest_loads(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * DEEP + "]" * DEEP, encoding="utf-8")
    result = cli("list", "-d", str(SEEDS), "-d", str(deep))
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
    result = cli("list", "--json", "-d", str(lines))
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip().splitlines() == [
        f"abstract-reader: warning: {lines}: line 2: not valid JSON (nested too deeply)"
    ]
    (paper,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert paper["title"] == "Good title"
    # as the first line, the file is not JSON Lines at all: one line, skipped
    lines.write_text("[" * DEEP + "]" * DEEP + "\n", encoding="utf-8")
    result = cli("list", "-d", str(SEEDS), "-d", str(lines))
    assert result.returncode == 1 and len(result.stdout.splitlines()) == 55
    assert result.stderr.strip().splitlines() == [
        f"abstract-reader: {lines}: not JSON Lines (line 1: nested too deeply)"
    ]


def test_match_on_a_deeply_nested_file_is_one_line(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * DEEP + "]" * DEEP, encoding="utf-8")
    result = cli("match", str(deep), "-d", str(SEEDS), "--dry-run")
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
    result = cli("list", "--json", "-d", str(bib))
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


# -- paths that are not regular files (F4) --------------------------------------------------------


def _python(*args: str) -> subprocess.CompletedProcess[str]:
    """``python ARGS`` (``-c CODE …``, ``-m abstract_reader …``), given a minute: a read that
    blocks (a FIFO with no writer) fails the test instead of hanging the suite."""
    return subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The CLI on the test's own library (``ABSTRACT_READER_DB``: there already)."""
    return _python("-m", "abstract_reader", *args)


def test_a_folder_named_like_a_dump_beside_a_large_one_is_one_line(tmp_path: Path) -> None:
    """Dumps of 4 MB or more are hashed for the parsed-corpus cache first: a folder named
    ``sub.txt`` among them failed the whole load there (IsADirectoryError)."""
    folder = tmp_path / "m2"
    folder.mkdir()
    (folder / "big.txt").write_text(  # (two abstracts: one over 4 MB would be cut)
        "NeurIPS 2026 Papers\n\nWe introduce "
        + "word " * 500_000
        + "\n\nWe study "
        + "word " * 500_000,
        encoding="utf-8",
    )
    (folder / "sub.txt").mkdir()
    for dump in SEEDS.glob("*.txt"):
        shutil.copy(dump, folder)
    result = cli("list", "-d", str(folder))
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"abstract-reader: {folder / 'sub.txt'}: is a directory, expected a dump file"
    ]
    assert len(result.stdout.splitlines()) == 57


def test_a_dump_without_blank_lines_is_cut_with_one_warning(tmp_path: Path) -> None:
    """A 200 MB dump with no blank line between its abstracts was one 200 MB "abstract"
    (1.2 GB peak in the CLI, 2.7 GB in the reader). A paragraph over 4 Mi characters is cut
    there, with one warning naming the file and the abstract; the rest loads."""
    dump = tmp_path / "run-on.txt"
    line = "we study robust estimation of means under heavy tails in high dimension\n"
    run_on = line * (4_300_000 // len(line))
    dump.write_text(f"NeurIPS 2026 Papers\n\nA short first abstract.\n\n{run_on}", encoding="utf-8")
    result = _cli("list", "--json", "-d", str(dump), "-d", str(SEEDS))
    assert result.returncode == 0, result.stderr
    assert result.stderr == (
        f"abstract-reader: warning: {dump}: abstract 2 is {len(run_on):,} characters long:"
        " cut to its first 4,194,304 (are the abstracts separated by blank lines?)\n"
    )
    papers = [json.loads(row) for row in result.stdout.splitlines()]
    assert len(papers) == 57
    cut = papers[1]["abstract"]
    assert 4_190_000 < len(cut) <= 4_194_304
    assert run_on.replace("\n", " ").startswith(cut + " ")  # (cut at a space)


@pytest.mark.parametrize(
    ("line", "papers"),
    [
        # a header padded past the limit: the header, whole (it said "abstract 0", then
        # "the header (line 3) is 4,300,019 characters long: cut", of trailing spaces)
        ("NeurIPS 2026 Papers{pad}", [("A short first abstract.", "NeurIPS", 2026)]),
        # words after the padding: they were cut off, the header "NeurIPS", no word said
        (
            "NeurIPS 2026 Papers{pad}and Workshops",
            [("A short first abstract.", "NeurIPS 2026 Papers and Workshops", 2026)],
        ),
        # an abstract after it with no blank line: the whole abstract was lost
        (
            "NeurIPS 2026 Papers{pad}We introduce a method. It works.",
            [
                ("NeurIPS 2026 Papers We introduce a method. It works.", None, None),
                ("A short first abstract.", None, None),
            ],
        ),
    ],
)
def test_a_line_padded_past_the_limit_keeps_its_words(
    tmp_path: Path, line: str, papers: list[tuple[str, str | None, int | None]]
) -> None:
    """A paragraph over `MAX_ABSTRACT_CHARS` characters was cut at that many characters,
    padding included: a first line padded with millions of spaces was cut inside them and
    taken as the header, and the words after the cut vanished. What is cut is words, so
    such a line loads as it would without the padding: no warning, nothing lost, the same
    papers (ids too) as the line unpadded."""
    padded, plain = tmp_path / "padded.txt", tmp_path / "plain.txt"
    for dump, pad in ((padded, " " * 4_300_000), (plain, " ")):
        dump.write_text(f"\n\n{line.format(pad=pad)}\n\nA short first abstract.\n")
    results = [_cli("list", "--json", "-d", str(dump)) for dump in (padded, plain)]
    shown = [[json.loads(row) for row in result.stdout.splitlines()] for result in results]
    assert [(p["abstract"], p["venue"], p["year"]) for p in shown[0]] == papers
    assert [p["id"] for p in shown[0]] == [p["id"] for p in shown[1]]
    assert [(r.returncode, r.stderr) for r in results] == [(0, ""), (0, "")]


def test_a_dump_of_too_many_paragraphs_keeps_the_first_with_one_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three million one-word paragraphs (a 29 MB file) were three million papers: 61 s and
    1 GB to list. The first `MAX_DUMP_ABSTRACTS` are kept, the rest skipped with a warning
    that says from which line; the next dump loads."""
    from abstract_reader import corpus as corpus_module

    monkeypatch.setattr(corpus_module, "MAX_DUMP_ABSTRACTS", 50)
    tiny = write_dump(tmp_path / "tiny.txt", *(f"w{n}" for n in range(80)))
    good = write_dump(tmp_path / "good.txt", "A real abstract on kernels.")
    loaded = load_corpus([tiny, good])
    assert [p.abstract for p in loaded.papers] == [
        *(f"w{n}" for n in range(50)),
        "A real abstract on kernels.",
    ]
    assert [str(e) for e in loaded.errors] == [
        f"{tiny}: more than 50 abstracts: the rest, from line 103, skipped"
    ]
    assert not loaded.fatal_errors


def test_a_dump_over_the_size_limit_is_refused_from_its_size(tmp_path: Path) -> None:
    """A sparse file that says 2 GB (or a disk image named .txt) was hashed for the corpus
    cache, then read whole: 50 GB took two minutes and ended in "unexpected error:
    MemoryError", with nothing loaded. It is refused from its size, in a folder too."""
    folder = tmp_path / "dumps"
    folder.mkdir()
    big = folder / "huge.txt"
    with open(big, "wb") as handle:
        handle.truncate(2 << 30)  # sparse: nothing written; the limit is 1 GB
    for named in (big, folder):
        result = _cli("list", "-d", str(SEEDS), "-d", str(named))
        assert result.returncode == 1
        assert result.stderr == (
            f"abstract-reader: {big}: too large (2,048 MB; a dump is read up to 1,024 MB:"
            " split it into smaller dumps); skipped\n"
        )
        assert len(result.stdout.splitlines()) == 55


@pytest.mark.skipif(not Path("/proc/self/io").exists(), reason="needs /proc/self/io")
def test_a_large_binary_dump_is_refused_without_being_read(tmp_path: Path) -> None:
    """A sparse 900 MB file named .txt (under the 1 GB limit) was hashed whole for the
    parsed-corpus cache (~1.6 s) before its first 8 KB refused it as binary. Its first 8 KB
    are read, it is refused with its one line, the good dumps load: the whole load reads a
    few MB (the process's own count of bytes read), not 900."""
    sparse = tmp_path / "disk.txt"
    with open(sparse, "wb") as handle:
        handle.truncate(900 << 20)
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from abstract_reader.corpus_cache import load_corpus_cached\n"
        "def read():\n"
        "    return int(Path('/proc/self/io').read_text().split('rchar: ')[1].split()[0])\n"
        "before = read()\n"
        "corpus = load_corpus_cached(sys.argv[1:3], Path(sys.argv[3]))\n"
        "print(read() - before, len(corpus), *corpus.errors, sep='\\n')\n"
    )
    result = _python("-c", code, str(SEEDS), str(sparse), str(tmp_path / "cache"))
    assert result.returncode == 0, result.stderr
    read, papers, *errors = result.stdout.splitlines()
    assert errors == [f"{sparse}: looks like a binary file, not a text dump; skipped"]
    assert int(papers) == 55
    assert int(read) < 64 << 20  # (900 MB before: hashed whole)
    # the CLI: its one line, exit 1, the good dumps listed
    listed = _cli("list", "-d", str(SEEDS), "-d", str(sparse))
    assert listed.returncode == 1
    assert listed.stderr == (
        f"abstract-reader: {sparse}: looks like a binary file, not a text dump; skipped\n"
    )
    assert len(listed.stdout.splitlines()) == 55


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_the_content_digest_of_what_is_not_a_file_is_none(tmp_path: Path) -> None:
    (tmp_path / "sub.txt").mkdir()
    os.mkfifo(tmp_path / "pipe.txt")
    code = (
        "import sys\n"
        "from abstract_reader.corpus_cache import content_digest\n"
        "print([content_digest(p) for p in sys.argv[1:]])\n"
    )
    result = _python("-c", code, str(tmp_path / "sub.txt"), str(tmp_path / "pipe.txt"), "/dev/null")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[None, None, None]"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("pipe.txt", "is a FIFO, not a regular file; skipped"),  # a dump
        ("notes.json", "is a FIFO, not a regular file"),  # a metadata file (the reader's, -d's)
    ],
)
def test_a_file_replaced_by_a_fifo_after_its_look_is_not_waited_for(
    tmp_path: Path, name: str, said: str
) -> None:
    """A path looked at (a regular file, as ``os.stat`` is made to say) and then opened:
    what is opened is judged again, so a FIFO put there meanwhile does not block the load."""
    fifo = tmp_path / name
    os.mkfifo(fifo)
    code = (
        "import os, sys\n"
        "from abstract_reader.corpus import load_corpus\n"
        "real, fifo, regular = os.stat, sys.argv[1], os.stat(sys.argv[2])\n"
        "os.stat = lambda p, *a, **k: regular if os.fspath(p) == fifo else real(p, *a, **k)\n"
        "print(*load_corpus([fifo]).errors)\n"
    )
    result = _python("-c", code, str(fifo), str(SEEDS / "000_3c75c79d335d4311.txt"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"{fifo}: {said}"


# -- FIFOs, devices and files too large to read whole (F5) -----------------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_library_import_refuses_a_fifo_and_a_device(tmp_path: Path) -> None:
    fifo = tmp_path / "f.json"
    os.mkfifo(fifo)  # a plain open waits for a writer: for ever
    result = _cli("library", "import", str(fifo))
    assert result.returncode == 1
    assert (
        result.stderr == f"abstract-reader: {fifo}: cannot read (is a FIFO, not a regular file)\n"
    )
    # a device (/dev/zero was read until memory ran out; /dev/null stands for it here)
    result = _cli("library", "import", "/dev/null")
    assert result.returncode == 1
    assert result.stderr == (
        "abstract-reader: /dev/null: cannot read (is a device, not a regular file)\n"
    )


def test_library_import_refuses_a_file_too_large_before_reading_it(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    with open(big, "wb") as handle:
        handle.truncate(300 << 20)  # sparse: nothing written, 300 MB said
    result = _cli("library", "import", str(big))
    assert result.returncode == 1
    assert result.stderr == (
        f"abstract-reader: {big}: cannot read"
        " (too large: over 256 MB, the limit for a file read whole)\n"
    )


def test_read_limited_reads_one_byte_past_the_limit_at_most() -> None:
    import io

    from abstract_reader.infile import TooLarge, read_limited

    assert read_limited(io.BytesIO(b"x" * 10), 10) == b"x" * 10
    stream = io.BytesIO(b"x" * 100)
    with pytest.raises(TooLarge, match="over 0 MB"):
        read_limited(stream, 10)
    assert stream.tell() == 11


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("name", ["f.json", "f.jsonl", "f.bib", "f.ris"])
def test_match_refuses_a_fifo(tmp_path: Path, name: str) -> None:
    fifo = tmp_path / name
    os.mkfifo(fifo)
    result = _cli("match", str(fifo), "-d", str(SEEDS), "--dry-run")
    assert result.returncode == 1
    assert result.stderr == f"abstract-reader: {fifo}: is a FIFO, not a regular file\n"


def test_match_refuses_a_link_to_a_device(tmp_path: Path) -> None:
    link = tmp_path / "z.json"
    link.symlink_to("/dev/null")  # /dev/zero in the report: read until memory ran out
    result = _cli("match", str(link), "-d", str(SEEDS), "--dry-run")
    assert result.returncode == 1
    assert result.stderr == f"abstract-reader: {link}: is a device, not a regular file\n"


def test_a_metadata_file_too_large_to_read_whole_is_one_line(tmp_path: Path) -> None:
    big = tmp_path / "notes.json"
    with open(big, "wb") as handle:
        handle.truncate(300 << 20)
    result = _cli("list", "-d", str(SEEDS), "-d", str(big))
    assert result.returncode == 1 and len(result.stdout.splitlines()) == 55
    assert result.stderr == (
        f"abstract-reader: {big}: too large: over 256 MB, the limit for a file read whole\n"
    )


def test_a_json_line_too_long_to_read_is_skipped_and_the_rest_loads(tmp_path: Path) -> None:
    lines = tmp_path / "snap.jsonl"
    with open(lines, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(GOOD_RECORD) + "\n")
        handle.write('{"id": "' + "x" * (17 << 20) + '"}\n')
        handle.write(json.dumps({**GOOD_RECORD, "id": "2", "abstract": "Another one."}) + "\n")
    result = _cli("list", "--json", "-d", str(lines))
    assert result.returncode == 0, result.stderr
    assert result.stderr == (
        f"abstract-reader: warning: {lines}: line 2: longer than 16 MB; not read\n"
    )
    assert len(result.stdout.splitlines()) == 2


# -- an output encoding without the characters (F7) -------------------------------------------------


def _output_in(encoding: str, *args: str) -> tuple[int, str, str]:
    result = subprocess.run(
        [sys.executable, "-m", "abstract_reader", *args],
        capture_output=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "PYTHONIOENCODING": encoding},
    )
    return result.returncode, result.stdout.decode(encoding), result.stderr.decode(encoding)


@pytest.mark.parametrize("encoding", ["latin-1", "ascii"])
def test_a_listing_degrades_in_an_encoding_without_its_characters(
    tmp_path: Path, encoding: str
) -> None:
    """PYTHONIOENCODING=latin-1 failed every listing ("unexpected error: UnicodeEncodeError"
    on the list's •): what the encoding lacks is written as \\uXXXX."""
    code, out, err = _output_in(encoding, "list", "-d", str(SEEDS))
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert len(lines) == 55 and all("   \\u2022  " in line for line in lines)


def test_json_stays_valid_json_in_an_encoding_without_its_characters(tmp_path: Path) -> None:
    dump = tmp_path / "odd.txt"
    dump.write_text("T\n\nWe study 😀 emoji, é accents and — dashes here.\n", encoding="utf-8")
    code, out, err = _output_in("ascii", "list", "--json", "-d", str(dump))
    assert code == 0 and err == ""
    assert out.isascii()
    (paper,) = [json.loads(line) for line in out.splitlines()]
    assert paper["abstract"] == "We study 😀 emoji, é accents and — dashes here."


# -- UTF-16 ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("codec", "bom"),
    [("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff"), ("utf-32-le", b"\xff\xfe\x00\x00")],
)
def test_a_dump_in_utf16_with_its_mark_loads_as_the_same_papers(
    tmp_path: Path, codec: str, bom: bytes
) -> None:
    """Notepad's "Unicode" is UTF-16 with a byte-order mark: it was "looks like a binary
    file, not a text dump"."""
    seed = SEEDS / "000_3c75c79d335d4311.txt"
    wide = tmp_path / seed.name  # the same name: the same sources
    wide.write_bytes(bom + seed.read_text(encoding="utf-8").encode(codec))
    loaded = load_corpus([wide])
    assert not loaded.errors
    assert list(loaded.papers) == list(load_corpus([seed]).papers)


def test_utf16_that_cannot_be_read_says_so(tmp_path: Path) -> None:
    broken = tmp_path / "broken.txt"
    broken.write_bytes(b"\xff\xfe" + "T\n\nAn abstract here.\n".encode("utf-16-le") + b"\x00\xd8")
    loaded = load_corpus([broken])
    (warning,) = loaded.errors
    assert not warning.fatal and "invalid UTF-16 (1 sequence shown as \ufffd)" in str(warning)
    (paper,) = loaded.papers
    assert paper.abstract.startswith("An abstract here.")
    unmarked = tmp_path / "unmarked.txt"
    unmarked.write_bytes("T\n\nAn abstract here.\n".encode("utf-16-le"))
    (error,) = load_corpus([unmarked]).errors
    assert error.fatal
    assert "looks like UTF-16 text without a byte-order mark; save it as UTF-8" in str(error)


@pytest.mark.parametrize("name", ["refs.bib", "notes.json", "refs.ris", "snap.jsonl"])
def test_metadata_in_utf16_says_to_save_it_as_utf8(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(b"\xff\xfe" + '{"id": "1"}\n'.encode("utf-16-le"))
    (error,) = load_corpus([path]).errors
    assert str(error) == (
        f"{path}: not UTF-8 text (UTF-16, by its byte-order mark: save it as UTF-8)"
    )

"""The scriptable CLI: every subcommand, exit codes, one-line errors."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from abstract_reader.corpus import LOAD_PROBLEMS_SHOWN, Corpus

from .conftest import SEEDS, cli, paper_with, write_dump


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "lib.sqlite3"


def test_version_and_help() -> None:
    version = cli("--version")
    assert version.returncode == 0 and version.stdout.startswith("abstract-reader ")
    helptext = cli("--help")
    assert helptext.returncode == 0
    for command in ("list", "show", "tag", "cite", "export", "library", "config", "completion"):
        assert command in helptext.stdout
    for variable in (
        "ABSTRACT_READER_DB",
        "ABSTRACT_READER_CACHE",
        "ABSTRACT_READER_CONFIG",
        "ABSTRACT_READER_OPENREVIEW_URL",
        "ABSTRACT_READER_ARXIV_URL",
        "VISUAL, EDITOR",
        "BROWSER",
    ):
        assert variable in helptext.stdout
    assert "examples:" in helptext.stdout and "exit codes:" in helptext.stdout
    assert "141" in helptext.stdout


def test_usage_errors_exit_2() -> None:
    result = cli("list", "--no-such-option")
    assert result.returncode == 2 and "error" in result.stderr
    assert cli("export").returncode == 2  # --format is required


@pytest.mark.parametrize(
    ("args", "command", "unknown"),
    [
        (("list", "--bogus"), "list", "--bogus"),
        (("config", "--bogus"), "config", "--bogus"),
        (("searches", "--bogus"), "searches", "--bogus"),
        (("list", "stray"), "list", "stray"),
        (("library", "export", "out.json", "--bogus"), "library export", "--bogus"),
        (("library", "--bogus", "export", "out.json"), "library", "--bogus"),
    ],
)
def test_an_unknown_argument_is_the_commands_own_usage_error(
    args: tuple[str, ...], command: str, unknown: str
) -> None:
    """As `list --sort foo` already was: the command's usage and name, not the top level's."""
    result = cli(*args)
    assert result.returncode == 2 and result.stdout == ""
    lines = result.stderr.splitlines()
    assert lines[0].startswith(f"usage: abstract-reader {command} [-h]")
    assert lines[-1] == f"abstract-reader {command}: error: unrecognized arguments: {unknown}"
    assert "COMMAND ..." not in result.stderr


def test_list_prints_55_papers(seeds: Corpus) -> None:
    result = cli("list")
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert len(lines) == 55
    rse = paper_with(seeds, "Robust Satisficing Ensemble (RSE)")
    assert any(line.startswith(rse.id[:12]) and rse.title in line for line in lines)


def test_list_json_fields(seeds: Corpus) -> None:
    result = cli("list", "--json")
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(rows) == 55
    for key in (
        "id",
        "title",
        "title_derived",
        "venue",
        "year",
        "sources",
        "abstract",
        "text",
        "tags",
        "bookmarked",
        "read",
        "note",
    ):
        assert key in rows[0]
    eas = paper_with(seeds, "As Embodied Agents System (EAS)")
    row = next(r for r in rows if r["id"] == eas.id)
    assert len(row["sources"]) == 2 and row["sources"][0]["file"].endswith(".txt")
    first = next(r for r in rows if "empirical sensitivity" in r["abstract"])
    assert "$\\hat \\mu$" in first["abstract"] and "μ̂" in first["text"]


def test_list_query_in_rank_order(seeds: Corpus) -> None:
    result = cli("list", "-q", "robst satisficing", "--json")
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert rows[0]["id"] == paper_with(seeds, "Robust Satisficing Ensemble (RSE)").id


def test_show_accepts_prefix_and_rejects_ambiguous(seeds: Corpus) -> None:
    rse = paper_with(seeds, "Robust Satisficing Ensemble (RSE)")
    shown = cli("show", rse.id[:7])
    assert shown.returncode == 0
    assert rse.title in shown.stdout and "derived title" in shown.stdout
    assert "Robust Satisficing Ensemble (RSE)" in shown.stdout
    unknown = cli("show", "ffffffffff")
    assert unknown.returncode == 1 and "no paper" in unknown.stderr
    # an ambiguous prefix: find two ids sharing their first 4 digits, else use a 4-digit one
    ids = sorted(p.id for p in seeds.papers)
    shared = next((a[:4] for a, b in itertools.pairwise(ids) if a[:4] == b[:4]), None)
    if shared:
        ambiguous = cli("show", shared)
        assert ambiguous.returncode == 1 and "ambiguous" in ambiguous.stderr


def test_show_renders_math() -> None:
    result = cli("show", "d059a4d9")
    assert "μ̂" in result.stdout and "ℓ₂" in result.stdout


def test_show_caps_huge_abstracts(tmp_path: Path) -> None:
    dump = write_dump(tmp_path / "big.txt", "word " * 30_000)
    result = cli("list", "-d", str(dump), "--json")
    paper_id = json.loads(result.stdout)["id"]
    shown = cli("show", paper_id, "-d", str(dump))
    assert "more characters" in shown.stdout
    assert len(shown.stdout) < 60_000


def test_show_names_ten_sources_of_a_paper_found_many_times(tmp_path: Path) -> None:
    """A dump repeating one abstract (a million times, in the attack that found it): `show`
    names the first ten places and counts the rest on its one line; --full names them all."""
    repeated = "A single abstract, repeated in the dump many times over."
    dump = write_dump(tmp_path / "many.txt", *[repeated] * 25, "Another abstract.")
    paper_id = cli("list", "-d", str(dump), "--json").stdout
    paper_id = json.loads(paper_id.splitlines()[0])["id"]
    shown = cli("show", paper_id, "-d", str(dump)).stdout
    [line] = [line for line in shown.splitlines() if line.startswith("sources:")]
    names = ", ".join(f"many.txt #{i}" for i in range(1, 11))
    assert line == f"sources:   {names}, … and 15 more (--full names them all)"
    full = cli("show", paper_id, "-d", str(dump), "--full").stdout
    [line] = [line for line in full.splitlines() if line.startswith("sources:")]
    assert line == "sources:   " + ", ".join(f"many.txt #{i}" for i in range(1, 26))


def test_tag_bookmark_read_note_meta_round_trip(seeds: Corpus, db: Path) -> None:
    rse = paper_with(seeds, "Robust Satisficing Ensemble (RSE)")
    assert cli("tag", rse.id[:8], "to read", "ensembles", db=db).returncode == 0
    assert cli("untag", rse.id[:8], "ensembles", db=db).returncode == 0
    assert cli("bookmark", rse.id[:8], db=db).returncode == 0
    assert cli("read", rse.id[:8], db=db).returncode == 0
    assert cli("note", rse.id[:8], "check section 4", db=db).returncode == 0
    assert cli("note", rse.id[:8], db=db).stdout.strip() == "check section 4"
    meta = cli(
        "meta",
        rse.id[:8],
        "--title",
        "Robust Satisficing Ensembles",
        "--author",
        "Ada Lovelace",
        "--author",
        "Alan Turing",
        "--year",
        "2026",
        db=db,
    )
    assert meta.returncode == 0 and "Ada Lovelace, Alan Turing" in meta.stdout
    rows = [json.loads(x) for x in cli("list", "--json", "--bookmarked", db=db).stdout.splitlines()]
    assert len(rows) == 1
    row = rows[0]
    assert row["tags"] == ["to read"] and row["bookmarked"] and row["read"]
    assert row["note"] == "check section 4"
    assert row["title"] == "Robust Satisficing Ensembles" and not row["title_derived"]
    assert len(cli("list", "--unread", db=db).stdout.splitlines()) == 54
    assert len(cli("list", "--tag", "TO READ", db=db).stdout.splitlines()) == 1
    assert cli("bookmark", rse.id[:8], "--off", db=db).returncode == 0
    assert cli("list", "--bookmarked", db=db).stdout == ""
    cleared = cli("meta", rse.id[:8], "--clear", db=db)
    assert "no metadata" in cleared.stdout


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ('https://example.org/a b"c<d>', "it contains a space or line break"),
        ("javascript:alert(1)", "only http and https links are opened, not javascript:"),
    ],
)
def test_meta_url_the_reader_would_refuse_is_saved_with_a_warning(
    seeds: Corpus, db: Path, url: str, why: str
) -> None:
    rse = paper_with(seeds, "Robust Satisficing Ensemble (RSE)")
    result = cli("meta", rse.id[:8], "--url", url, db=db)
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [
        f"abstract-reader: created a new library at {db}",  # (--db names a new file)
        "abstract-reader: warning: --url is saved, but the reader will not open it"
        f" and citations leave it out: {why}",
    ]
    assert cli("meta", rse.id[:8], db=db).stdout.startswith(f"url:      {url}")
    good = cli("meta", rse.id[:8], "--url", "https://example.org/paper", db=db)
    assert good.returncode == 0 and good.stderr == ""


def test_tags_lists_counts_and_orphans(seeds: Corpus, db: Path, tmp_path: Path) -> None:
    a, b = seeds.papers[0], seeds.papers[1]
    cli("tag", a.id, "x", db=db)
    cli("tag", b.id, "x", "y", db=db)
    out = cli("tags", db=db).stdout
    assert "2  x" in out and "1  y" in out
    cli("meta", b.id, "--title", "A Paper Known by Its Title", db=db)
    cli("bookmark", b.id, db=db)
    other = write_dump(tmp_path / "other.txt", "Only this paper is loaded now.")
    orphan = cli("tags", "-d", str(other), db=db)
    lines = orphan.stdout.splitlines()
    at = lines.index("2 papers with records are not in the loaded dumps:")
    # each named with what the library holds for it, to be known again
    assert sorted(lines[at + 1 :]) == sorted(
        [
            f"  {a.id}  tags: x",
            f"  {b.id}  “A Paper Known by Its Title” · tags: x, y · bookmarked",
        ]
    )
    one = tmp_path / "one.sqlite3"
    cli("tag", a.id, "x", db=one)
    lines = cli("tags", "-d", str(other), db=one).stdout.splitlines()
    assert "1 paper with records is not in the loaded dumps:" in lines


def test_writes_to_a_damaged_library_are_refused(seeds: Corpus, tmp_path: Path) -> None:
    db = tmp_path / "bad.sqlite3"
    db.write_bytes(b"garbage" * 500)
    result = cli("bookmark", seeds.papers[0].id, db=db)
    assert result.returncode == 1
    assert "read-only" in result.stderr
    assert db.read_bytes() == b"garbage" * 500


def test_export_formats_and_filters(seeds: Corpus, db: Path, tmp_path: Path) -> None:
    cli("bookmark", seeds.papers[0].id, seeds.papers[1].id, db=db)
    out = tmp_path / "list.bib"
    result = cli("export", "--format", "bibtex", "--bookmarked", "-o", str(out), db=db)
    assert result.returncode == 0 and out.read_text().count("@inproceedings") == 2
    again = cli("export", "--format", "bibtex", "-o", str(out), db=db)
    assert again.returncode == 1 and "--force" in again.stderr
    forced = cli(
        "export", "--format", "csl-json", "-q", "satisficing", "-o", str(out), "--force", db=db
    )
    assert forced.returncode == 0 and len(json.loads(out.read_text())) == 1
    assert forced.stderr.strip().endswith(f"Exported 1 paper to {out}"), forced.stderr
    for fmt in ("markdown", "csv", "jsonl"):
        assert cli("export", "--format", fmt, db=db).returncode == 0


def test_cite_prints_each_format(seeds: Corpus) -> None:
    rse = paper_with(seeds, "Robust Satisficing Ensemble (RSE)")
    for fmt, marker in (
        ("bibtex", "@inproceedings{"),
        ("text", "[abstract-reader:"),
        ("markdown", "- **"),
        ("csl-json", '"paper-conference"'),
    ):
        result = cli("cite", rse.id[:8], "--format", fmt)
        assert result.returncode == 0 and marker in result.stdout


def test_library_export_import(seeds: Corpus, db: Path, tmp_path: Path) -> None:
    cli("tag", seeds.papers[0].id, "keep", db=db)
    dump = tmp_path / "lib.json"
    assert cli("library", "export", str(dump), db=db).returncode == 0
    other = tmp_path / "other.sqlite3"
    assert cli("library", "import", str(dump), db=other).returncode == 0
    assert "keep" in cli("tags", db=other).stdout
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    result = cli("library", "import", str(bad), db=other)
    assert result.returncode == 1 and "not valid JSON" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_list_is_fast_path_without_textual() -> None:
    code = (
        "import sys; from abstract_reader.cli import main; main(['list']); "
        "assert 'textual' not in sys.modules, 'textual imported'"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_dump_folder_option() -> None:
    assert len(cli("list", "-d", str(SEEDS)).stdout.splitlines()) == 55


def test_tags_rename_and_delete(seeds: Corpus, db: Path) -> None:
    cli("tag", seeds.papers[0].id, "draft", db=db)
    cli("tag", seeds.papers[1].id, "draft", db=db)
    assert cli("tags", "--rename", "draft", "final", db=db).stdout.strip() == "2  final"
    assert cli("tags", "--delete", "final", db=db).stdout.strip() == ""
    missing = cli("tags", "--delete", "nope", db=db)  # nothing to do: said, not a failure
    assert missing.returncode == 0 and "no tag named 'nope'; nothing removed" in missing.stderr


def test_load_problems_are_counted_one_way(tmp_path: Path) -> None:
    good = write_dump(tmp_path / "good.txt", "A clean abstract about robust estimation.")
    warned = tmp_path / "warned.txt"
    warned.write_bytes(b"TestConf 2025 Papers\n\nAn abstract with a bad byte \xff in it.\n")
    missing = tmp_path / "missing.txt"
    result = cli("list", "-d", str(good), "-d", str(warned), "-d", str(missing))
    assert result.returncode == 1  # a path failed
    assert len(result.stdout.splitlines()) == 2  # both loadable files listed
    lines = result.stderr.splitlines()
    assert lines[-1] == "abstract-reader: 2 files loaded, 1 with warnings, 1 failed"
    assert any("warning: " in line and "warned.txt" in line for line in lines)
    only_warned = cli("list", "-d", str(good), "-d", str(warned))
    assert only_warned.returncode == 0
    assert len(only_warned.stderr.splitlines()) == 1 and "warning: " in only_warned.stderr
    clean = cli("list", "-d", str(good))
    assert clean.returncode == 0 and clean.stderr == ""


def test_a_folder_of_many_bad_files_lists_a_few_and_counts_the_rest(tmp_path: Path) -> None:
    """-d on a folder of 10,000 empty files printed 10,001 lines on stderr (the reader shows
    12 and a count): the first `LOAD_PROBLEMS_SHOWN`, one line counting the rest and saying
    how to see them, the summary; -v lists every one. Exit 1 either way (files failed)."""
    folder = tmp_path / "wrong"
    folder.mkdir()
    for n in range(40):
        (folder / f"e{n:02}.txt").write_bytes(b"")
    good = write_dump(tmp_path / "good.txt", "A clean abstract about robust estimation.")
    failed = [f"abstract-reader: {folder / f'e{n:02}.txt'}: empty file" for n in range(40)]
    summary = "abstract-reader: 1 file loaded, 40 failed"
    result = cli("list", "-d", str(folder), "-d", str(good))
    assert result.returncode == 1
    assert len(result.stdout.splitlines()) == 1  # the good file still listed
    assert result.stderr.splitlines() == [
        *failed[:LOAD_PROBLEMS_SHOWN],
        f"abstract-reader: … and {40 - LOAD_PROBLEMS_SHOWN} more load errors (-v lists them all)",
        summary,
    ]
    every = cli("list", "-v", "-d", str(folder), "-d", str(good))
    assert every.returncode == 1
    assert every.stderr.splitlines() == [*failed, summary]
    assert cli("list", "--verbose", "-d", str(folder)).stderr.splitlines()[:-1] == failed


def test_a_failed_file_is_listed_before_many_warnings(tmp_path: Path) -> None:
    """Warnings (a bad byte, NUL bytes) count in the same limit; a file that failed is
    listed even when more warnings than the limit come before it, in the files' order."""
    folder = tmp_path / "mixed"
    folder.mkdir()
    for n in range(20):
        (folder / f"w{n:02}.txt").write_bytes(b"TestConf 2025 Papers\n\nA byte \xff here.\n")
    (folder / "x.txt").write_bytes(b"TestConf 2025 Papers\n\nThree NULs \x00\x00\x00 here.\n")
    (folder / "z.txt").write_bytes(b"")
    result = cli("list", "-d", str(folder))
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    warned = [
        f"abstract-reader: warning: {folder / f'w{n:02}.txt'}: invalid UTF-8 on line 3"
        " (1 byte sequence shown as \ufffd)"
        for n in range(LOAD_PROBLEMS_SHOWN - 1)
    ]
    assert lines == [
        *warned,
        f"abstract-reader: {folder / 'z.txt'}: empty file",
        f"abstract-reader: … and {21 - len(warned)} more load warnings (-v lists them all)",
        "abstract-reader: 21 files loaded, 21 with warnings, 1 failed",
    ]
    every = cli("list", "-v", "-d", str(folder)).stderr.splitlines()
    assert len(every) == 23
    assert every[20] == (
        f"abstract-reader: warning: {folder / 'x.txt'}: 3 NUL bytes dropped (first on line 3)"
    )


def test_an_export_of_no_paper_leaves_the_file_alone(tmp_path: Path) -> None:
    """A query matching nothing would empty an existing export: refused, exit 1, one line."""
    out = tmp_path / "out.bib"
    out.write_bytes(b"@misc{mine, title={Kept}}\n")
    for force in ((), ("--force",)):
        result = cli("export", "-f", "bibtex", "-q", "zzzzqq", "-o", str(out), *force)
        assert result.returncode == 1, result.stderr
        assert result.stderr.strip().splitlines() == [
            f"abstract-reader: nothing to export: no paper matches; {out} not written"
        ]
        assert out.read_bytes() == b"@misc{mine, title={Kept}}\n"
    fresh = tmp_path / "new.bib"
    assert cli("export", "-f", "bibtex", "-q", "zzzzqq", "-o", str(fresh)).returncode == 1
    assert not fresh.exists()


@pytest.mark.parametrize("fmt", ["bibtex", "markdown", "csl-json", "csv", "jsonl"])
def test_an_export_of_no_paper_to_standard_output_is_the_same_refusal(fmt: str) -> None:
    """To standard output it printed a blank line (csv: a bare header), exit 0: now as -o."""
    for target in ((), ("-o", "-")):
        result = cli("export", "-f", fmt, "-q", "zzzzqq", *target)
        assert result.returncode == 1, result.stderr
        assert result.stdout == ""
        assert result.stderr.splitlines() == [
            "abstract-reader: nothing to export: no paper matches; nothing written"
        ]


@pytest.mark.parametrize(
    ("query", "why"),
    [
        ('"', "'\"' (a lone quote)"),
        ("is:foo", "'is:foo' (is: takes bookmarked, unread, read, tagged, noted, marked or new)"),
        ("!", "'!' (a ! with no word after it)"),
    ],
)
@pytest.mark.parametrize("command", ["list", "export", "digest"])
def test_a_malformed_query_says_what_is_wrong_and_where_the_language_is(
    command: str, query: str, why: str
) -> None:
    """It said "the query cannot use '\"'; nothing done (see `--help`)", and --help did not
    describe the language: now each part says why, and the command's --help has the language."""
    fmt = ("-f", "bibtex") if command == "export" else ()
    result = cli(command, *fmt, "-q", query)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [
        f"abstract-reader: the query cannot use {why}; nothing done (the query language: "
        f"abstract-reader {command} --help)"
    ]
    helptext = cli(command, "--help").stdout
    assert "the query language" in helptext and "is:STATE" in helptext
    assert "a usage error here" in helptext


def test_a_malformed_saved_search_says_what_is_wrong() -> None:
    result = cli("searches", "--add", "x", "robust !")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [
        "abstract-reader: the query cannot use '!' (a ! with no word after it); nothing saved "
        "(the query language: abstract-reader searches --help)"
    ]
    assert "the query language" in cli("searches", "--help").stdout


@pytest.mark.parametrize("query", ["is:bookmarkd", "robust is:nosuch"])
def test_a_query_with_a_bad_part_is_a_usage_error_not_every_paper(
    tmp_path: Path, query: str
) -> None:
    """A typo in a script's query must not export (or list) the whole library."""
    out = tmp_path / "out.bib"
    result = cli("export", "-f", "bibtex", "-q", query, "-o", str(out))
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "is:" in result.stderr
    assert not out.exists()
    listed = cli("list", "-q", query)
    assert listed.returncode == 2 and listed.stdout == ""


# ---------------------------------------------------------------------------------------
# A library someone named: made only in a folder that exists, and said when made
# ---------------------------------------------------------------------------------------


def test_db_in_a_missing_folder_is_one_line_and_creates_nothing(
    seeds: Corpus, tmp_path: Path
) -> None:
    """A mistyped --db must not start an empty library (the user's tags seem gone)."""
    rse = paper_with(seeds, "Robust Satisficing Ensemble (RSE)")
    db = tmp_path / "nonexistent" / "x.db"
    for args in (("tag", rse.id[:4], "x"), ("list",), ("searches",)):
        result = cli(*args, db=db)
        assert result.returncode == 1, args
        assert result.stdout == ""
        assert result.stderr.splitlines() == [
            f"abstract-reader: --db {db}: the folder {db.parent} does not exist; a new "
            "library is made only in an existing folder (nothing was created)"
        ]
    assert not db.parent.exists()
    (tmp_path / "file").write_text("")
    under_a_file = cli("list", db=tmp_path / "file" / "x.db")
    assert under_a_file.returncode == 1 and f"{tmp_path / 'file'} is not a folder" in (
        under_a_file.stderr
    )


def test_abstract_reader_db_in_a_missing_folder_is_one_line_and_creates_nothing(
    tmp_path: Path,
) -> None:
    db = tmp_path / "nonexistent" / "x.db"
    result = cli("list", env={**os.environ, "ABSTRACT_READER_DB": str(db)})
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.splitlines() == [
        f"abstract-reader: ABSTRACT_READER_DB={db}: the folder {db.parent} does not exist; a "
        "new library is made only in an existing folder (nothing was created)"
    ]
    assert not db.parent.exists()


def test_a_new_library_at_a_named_path_is_said_once(seeds: Corpus, tmp_path: Path) -> None:
    rse = paper_with(seeds, "Robust Satisficing Ensemble (RSE)")
    db = tmp_path / "new.db"
    made = cli("tag", rse.id[:4], "x", db=db)
    assert made.returncode == 0
    assert made.stdout == f"{rse.id[:12]}: x\n"
    assert made.stderr == f"abstract-reader: created a new library at {db}\n"
    again = cli("tag", rse.id[:4], "y", db=db)
    assert again.returncode == 0 and again.stderr == ""
    assert again.stdout == f"{rse.id[:12]}: x, y\n"
    env_db = tmp_path / "env.db"
    by_env = cli("list", env={**os.environ, "ABSTRACT_READER_DB": str(env_db)})
    assert by_env.returncode == 0 and len(by_env.stdout.splitlines()) == 55
    assert by_env.stderr == f"abstract-reader: created a new library at {env_db}\n"


def test_a_library_file_of_0_bytes_is_said_to_be_a_new_library(
    seeds: Corpus, tmp_path: Path
) -> None:
    """QA s17 #7: a library truncated to 0 bytes was used as a new one without a word, so its
    tags looked as if they had vanished; a missing path says so."""
    rse = paper_with(seeds, "Robust Satisficing Ensemble (RSE)")
    db = tmp_path / "zero.sqlite3"
    db.write_bytes(b"")
    made = cli("tag", rse.id[:4], "x", db=db)
    assert made.returncode == 0 and made.stdout == f"{rse.id[:12]}: x\n"
    assert made.stderr == f"abstract-reader: created a new library at {db}\n"
    again = cli("tag", rse.id[:4], "y", db=db)  # (a library now: nothing more to say)
    assert again.returncode == 0 and again.stderr == ""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="XDG_DATA_HOME: Linux")
def test_the_default_library_is_made_silently_folders_and_all(tmp_path: Path) -> None:
    """First use with no --db and no ABSTRACT_READER_DB: nothing to say."""
    env = {k: v for k, v in os.environ.items() if k != "ABSTRACT_READER_DB"}
    env["XDG_DATA_HOME"] = str(tmp_path / "data" / "home")  # platformdirs' user data dir
    result = cli("list", env=env)
    assert result.returncode == 0 and result.stderr == ""
    assert (tmp_path / "data" / "home" / "abstract-reader" / "library.sqlite3").is_file()


# ---------------------------------------------------------------------------------------
# Writes that lose something say so on stderr (an empty "$VAR" must not wipe a note unseen)
# ---------------------------------------------------------------------------------------


def test_clearing_or_replacing_a_note_says_what_it_was(seeds: Corpus) -> None:
    rse = paper_with(seeds, "Robust Satisficing Ensemble (RSE)")
    short = rse.id[:12]
    first = cli("note", rse.id[:4], "read §3\nthen the appendix")
    assert first.returncode == 0 and first.stdout == "" and first.stderr == ""  # nothing lost
    replaced = cli("note", rse.id[:4], "read §3")
    assert replaced.returncode == 0 and replaced.stdout == ""
    assert replaced.stderr == (
        f'abstract-reader: note replaced on {short}; it was "read §3\\nthen the appendix"\n'
    )
    same = cli("note", rse.id[:4], "read §3")
    assert same.returncode == 0 and same.stderr == ""
    cleared = cli("note", rse.id[:4], "")
    assert cleared.returncode == 0 and cleared.stdout == ""
    assert cleared.stderr == (
        f'abstract-reader: note cleared on {short}; it was "read §3" (the CLI has no undo; '
        f"`abstract-reader note {short} TEXT` sets it again)\n"
    )
    assert cli("note", rse.id[:4]).stdout == ""
    again = cli("note", rse.id[:4], "  ")
    assert again.returncode == 0
    assert again.stderr == f"abstract-reader: {short} had no note; nothing cleared\n"


def test_a_long_note_replaced_is_shown_by_its_start_and_length(seeds: Corpus) -> None:
    rse = paper_with(seeds, "Robust Satisficing Ensemble (RSE)")
    assert cli("note", rse.id[:4], "x" * 1000).returncode == 0
    cleared = cli("note", rse.id[:4], "")
    assert cleared.returncode == 0
    assert f'it was "{"x" * 200}…" (1,000 characters) (the CLI has no undo' in cleared.stderr
    assert len(cleared.stderr.splitlines()) == 1


def test_deleting_a_tag_says_from_how_many_papers(seeds: Corpus) -> None:
    rse = paper_with(seeds, "Robust Satisficing Ensemble (RSE)")
    eas = paper_with(seeds, "As Embodied Agents System (EAS)")
    assert cli("tag", rse.id[:8], "To Read", "kept").returncode == 0
    assert cli("tag", eas.id[:8], "to read").returncode == 0
    deleted = cli("tags", "--delete", "to read")
    assert deleted.returncode == 0
    assert deleted.stderr == "abstract-reader: tag 'To Read' removed from 2 papers\n"
    assert deleted.stdout == "     1  kept\n"


def test_deleting_or_replacing_a_saved_search_says_what_it_was() -> None:
    assert cli("searches", "--add", "reading", "robust").stderr == ""
    replaced = cli("searches", "--add", "reading", "robust is:unread", "--force")
    assert replaced.returncode == 0
    assert replaced.stderr == 'abstract-reader: @reading replaced; it was "robust"\n'
    deleted = cli("searches", "--delete", "reading")
    assert deleted.returncode == 0 and deleted.stdout == ""
    assert deleted.stderr == 'abstract-reader: @reading deleted; it was "robust is:unread"\n'


def test_db_and_dump_before_the_command_are_the_commands_own(tmp_path: Path) -> None:
    """The usage shows `[--db FILE]` before any word: `abstract-reader --db FILE list` was
    "argument COMMAND: invalid choice: 'FILE'"."""
    db = tmp_path / "lib.sqlite3"
    write_dump(tmp_path / "d.txt", "An abstract about robust estimation of means.")
    listed = cli("--db", str(db), "-d", str(tmp_path / "d.txt"), "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert f"created a new library at {db}" in listed.stderr  # the file named, used
    (pid,) = [json.loads(line)["id"] for line in listed.stdout.splitlines()]
    assert cli(f"--db={db}", "tag", pid, "mine", "-d", str(tmp_path / "d.txt")).returncode == 0
    mine = cli("--db", str(db), "list", "--tag", "mine", "-d", str(tmp_path / "d.txt"))
    assert mine.returncode == 0 and pid[:12] in mine.stdout
    exported = cli("--db", str(db), "library", "export", "-")
    assert exported.returncode == 0 and pid in exported.stdout


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (["--db", "x.db", "config"], "config opens no library: --db does not apply to it"),
        (["-d", "x.txt", "completion", "bash"], "completion reads no dumps"),
        (["--db", "a.db", "list", "--db", "b.db"], "--db given twice, with different files"),
    ],
)
def test_db_or_dump_before_a_command_that_cannot_use_it_is_a_usage_error(
    args: list[str], problem: str, tmp_path: Path
) -> None:
    result = cli(*args)
    assert result.returncode == 2
    assert problem in result.stderr and len(result.stderr.splitlines()) == 2  # usage, error
    assert not (tmp_path / "a.db").exists()


@pytest.mark.parametrize("command", [["show"], ["tag", "ID", "x"], ["note"], ["meta"], ["cite"]])
@pytest.mark.parametrize("bad", ["", "zzzz", "abc", "d059a4d9bc3bb9a0f", "#d059"])
def test_a_malformed_id_is_a_usage_error_quoting_it(command: list[str], bad: str, db: Path) -> None:
    """`show ''` was exit 1 with "abstract-reader: : not a paper id" (the id shown as
    nothing)."""
    args = [bad if part == "ID" else part for part in command] + (
        [bad] if len(command) == 1 else []
    )
    result = cli(*args, db=db)
    assert result.returncode == 2, result.stderr
    assert f"{bad!r} is not a paper id (ids are 16 hex digits" in result.stderr
    assert not db.exists()  # refused before the library is opened


def test_nothing_to_delete_is_said_and_not_a_failure(db: Path) -> None:
    """README: a write with nothing to do is exit 0, said on stderr — as `untag` was, while
    `tags --delete` and `searches --delete` of a missing name exited 1."""
    untag = cli("untag", "d059a4d9", "missing", db=db)
    assert untag.returncode == 0 and "had no tag 'missing'; nothing removed" in untag.stderr
    tag = cli("tags", "--delete", "nonexist", db=db)
    assert tag.returncode == 0 and "no tag named 'nonexist'; nothing removed" in tag.stderr
    assert cli("tag", "d059a4d9", "Ärger", db=db).returncode == 0
    other_case = cli("tags", "--delete", "äRGER", db=db)  # the library folds ASCII letters only
    assert other_case.returncode == 0 and "no tag named 'äRGER'" in other_case.stderr
    deleted = cli("tags", "--delete", "ÄRGER", db=db)
    assert deleted.returncode == 0 and "tag 'Ärger' removed from 1 paper" in deleted.stderr
    search = cli("searches", "--delete", "nonexist", db=db)
    assert search.returncode == 0
    assert "no saved search named 'nonexist'; nothing deleted" in search.stderr
    bad = cli("searches", "--delete", "b@d", db=db)  # not a name at all: usage
    assert bad.returncode == 2 and "'b@d': a saved search's name is" in bad.stderr


@pytest.mark.parametrize(
    ("option", "length", "what"),
    [
        ("--title", 100_000, "a title is at most 1,000"),
        ("--author", 301, "an author's name is at most 300"),
        ("--url", 2_001, "a URL is at most 2,000"),
        ("--doi", 301, "a DOI is at most 300"),
    ],
)
def test_meta_refuses_a_field_too_long_in_one_line(
    option: str, length: int, what: str, db: Path
) -> None:
    """`meta --title` took a 100,000-character title (tags are capped at 64)."""
    result = cli("meta", "d059a4d9", option, "x" * length, db=db)
    assert result.returncode == 2
    assert f"argument {option}: too long ({length:,} characters; {what})" in result.stderr
    assert not db.exists()  # refused before the library is opened


def test_meta_at_its_caps_is_kept_and_survives_an_export_and_import(
    db: Path, tmp_path: Path
) -> None:
    title, author = "T" * 1_000, "A" * 300
    assert cli("meta", "d059a4d9", "--title", title, "--author", author, db=db).returncode == 0
    exported = tmp_path / "export.json"
    assert cli("library", "export", str(exported), db=db).returncode == 0
    other = tmp_path / "other.sqlite3"
    imported = cli("library", "import", str(exported), db=other)
    assert imported.returncode == 0, imported.stderr
    shown = cli("meta", "d059a4d9", db=other).stdout
    assert title in shown and author in shown


@pytest.mark.parametrize(
    ("option", "value", "says"),
    [
        ("--doi", "banana", "'banana' is not a DOI (a DOI is 10.NNNN/…, such as 10.1145/3368089"),
        ("--doi", "10.12/x", "'10.12/x' is not a DOI"),
        ("--year", "99999", "'99999' is not a year (four digits, such as 2026"),
        ("--year", "-5", "'-5' is not a year (four digits"),
        ("--year", "0999", "'0999' is not a year"),
        ("--year", "banana", "'banana' is not a year"),
    ],
)
def test_meta_a_malformed_value_is_a_usage_error_naming_option_and_value(
    option: str, value: str, says: str, db: Path
) -> None:
    """`meta ID --doi banana` and `--year 99999` were failures (exit 1) found after opening
    the library; `--year banana` already was a usage error: all are, worded alike."""
    result = cli("meta", "d059a4d9", f"{option}={value}", db=db)
    assert result.returncode == 2, result.stderr
    last = result.stderr.splitlines()[-1]  # (after the command's usage, as argparse's)
    assert last.startswith(f"abstract-reader meta: error: argument {option}: {says}"), last
    assert not db.exists()  # refused before the library is opened


def test_meta_doi_and_year_are_set_normalised_and_cleared_with_empty(db: Path) -> None:
    set_ = cli(
        "meta", "d059a4d9", "--doi", "https://doi.org/10.1145/3368089", "--year", "2024", db=db
    )
    assert set_.returncode == 0, set_.stderr
    assert "doi:      10.1145/3368089" in set_.stdout and "year:     2024" in set_.stdout
    cleared = cli("meta", "d059a4d9", "--year", "", "--doi", "", db=db)
    assert cleared.returncode == 0, cleared.stderr
    assert cleared.stdout.strip() == "d059a4d9bc3b: no metadata overrides"


# ---------------------------------------------------------------------------------------
# --json for one paper and for the tags; an empty tag list is said
# ---------------------------------------------------------------------------------------


def test_show_json_is_the_paper_as_list_json_gives_it(seeds: Corpus, db: Path) -> None:
    """`show ID --json`: one JSON object, the same fields and values as the paper's
    `list --json` line (one serialiser for both)."""
    rse = paper_with(seeds, "Robust Satisficing Ensemble (RSE)")
    assert cli("tag", rse.id, "to read", db=db).returncode == 0
    assert cli("note", rse.id, "check the baseline", db=db).returncode == 0
    shown = cli("show", rse.id[:8], "--json", db=db)
    assert shown.returncode == 0 and shown.stderr == ""
    assert len(shown.stdout.splitlines()) == 1
    listed = [json.loads(line) for line in cli("list", "--json", db=db).stdout.splitlines()]
    row = json.loads(shown.stdout)
    assert row == next(r for r in listed if r["id"] == rse.id)
    assert row["tags"] == ["to read"] and row["note"] == "check the baseline"
    unknown = cli("show", "ffffffffff", "--json", db=db)
    assert unknown.returncode == 1 and unknown.stdout == ""


def test_tags_json_is_one_line_per_tag_as_the_other_json_outputs(seeds: Corpus, db: Path) -> None:
    """JSON Lines, as `list --json`, `searches --json` and `match --json`: one object a tag."""
    a, b = seeds.papers[0], seeds.papers[1]
    cli("tag", a.id, "x", db=db)
    cli("tag", b.id, "x", "Y", db=db)
    result = cli("tags", "--json", db=db)
    assert result.returncode == 0 and result.stderr == ""
    assert [json.loads(line) for line in result.stdout.splitlines()] == [
        {"tag": "x", "count": 2},
        {"tag": "Y", "count": 1},
    ]


def test_tags_json_names_papers_not_loaded_on_stderr_only(
    seeds: Corpus, db: Path, tmp_path: Path
) -> None:
    """The plain list's lines about records of unloaded papers would break JSON Lines."""
    cli("tag", seeds.papers[0].id, "x", db=db)
    other = write_dump(tmp_path / "other.txt", "Only this paper is loaded now.")
    result = cli("tags", "--json", "-d", str(other), db=db)
    assert result.returncode == 0
    assert [json.loads(line) for line in result.stdout.splitlines()] == [{"tag": "x", "count": 1}]
    assert result.stderr.splitlines() == [
        "1 paper with records is not in the loaded dumps (tags without --json lists it)"
    ]


@pytest.mark.parametrize("json_flag", [(), ("--json",)])
def test_tags_of_a_library_with_none_says_so_on_stderr(
    db: Path, json_flag: tuple[str, ...]
) -> None:
    """It printed nothing at all, exit 0: a user could not tell an empty list from a
    failure. Standard output stays empty, for scripts."""
    result = cli("tags", *json_flag, db=db)
    assert result.returncode == 0
    assert result.stdout == ""
    assert result.stderr.splitlines()[-1:] == [
        "no tags yet (tag a paper: abstract-reader tag ID NAME)"
    ]


# ---------------------------------------------------------------------------------------
# is:marked: the reader's marks; the CLI has none
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("query", ["is:marked", "robust !is:marked", "robust | is:marked"])
@pytest.mark.parametrize("command", ["list", "export", "digest"])
def test_is_marked_is_refused_by_the_cli_as_a_part_it_cannot_use(
    command: str, query: str, tmp_path: Path
) -> None:
    """`list -q is:marked` printed nothing, exit 0, as if no paper were marked: marks live
    only in a running reader. Said as the CLI says any part it cannot use (exit 2)."""
    out = tmp_path / "out"
    fmt = ("-f", "bibtex") if command == "export" else ()
    target = ("-o", str(out)) if command != "list" else ()
    result = cli(command, *fmt, "-q", query, *target)
    assert result.returncode == 2, result.stderr
    assert result.stdout == "" and not out.exists()
    part = "!is:marked" if "!" in query else "is:marked"
    assert result.stderr.splitlines() == [
        f"abstract-reader: the query cannot use {part!r} (marks are the reader's; the CLI has "
        f"none); nothing done (the query language: abstract-reader {command} --help)"
    ]


def test_is_marked_is_named_with_the_other_parts_the_cli_cannot_use() -> None:
    result = cli("list", "-q", "is:marked is:nosuch like:is:marked")
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "abstract-reader: the query cannot use 'is:nosuch' (is: takes bookmarked, unread, "
        "read, tagged, noted, marked or new), 'is:marked' (marks are the reader's; the CLI "
        "has none), 'like:is:marked' (marks are the reader's; the CLI has none); nothing "
        "done (the query language: abstract-reader list --help)"
    ]


def test_a_saved_search_with_is_marked_is_saved_for_the_reader(db: Path) -> None:
    """The reader has marks: saving the query is fine; running it in the CLI is refused."""
    saved = cli("searches", "--add", "picked", "is:marked robust", db=db)
    assert saved.returncode == 0, saved.stderr
    result = cli("list", "-q", "@picked", db=db)
    assert result.returncode == 2 and "'is:marked' (marks are the reader's" in result.stderr

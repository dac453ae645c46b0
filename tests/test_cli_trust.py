"""What the CLI says it did is what it did: counts of what changed, nothing-to-do said (exit
0), a malformed value on the command line a usage error (exit 2), the same notes with
--json as without, and `library import` naming every value it kept over the file's."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from abstract_reader.corpus import Corpus
from abstract_reader.library import Library, Metadata
from abstract_reader.metadata import PROVENANCE_PREFIX, Provenance

from .conftest import cli

A, B = "d059a4d9bc3bb9a0", "8060c62c9769b50e"  # two papers of the bundled dumps


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "lib.sqlite3"
    Library(path, backups=False).close()  # (made here: no "created a new library" line)
    return path


def test_unbookmarking_a_paper_not_bookmarked_says_so_and_counts_nothing(db: Path) -> None:
    """`bookmark ID --off` of a paper not bookmarked printed "1 paper unbookmarked"."""
    result = cli("bookmark", A, "--off", db=db)
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert result.stderr == "abstract-reader: d059a4d9bc3b was not bookmarked; nothing changed\n"


def test_bookmark_counts_only_the_papers_that_changed_each_once(db: Path) -> None:
    assert cli("bookmark", A, db=db).stdout == "1 paper bookmarked\n"
    again = cli("bookmark", A, B, A, A[:8], db=db)  # A named three times, already bookmarked
    assert again.returncode == 0, again.stderr
    assert again.stdout == "1 paper bookmarked\n"
    assert again.stderr == (
        "abstract-reader: d059a4d9bc3b was already bookmarked; the rest bookmarked\n"
    )
    both = cli("bookmark", A, B, "--off", db=db)
    assert (both.stdout, both.stderr) == ("2 papers unbookmarked\n", "")
    with Library(db, backups=False) as lib:
        assert lib.snapshot.bookmarks == {}


def test_read_and_unread_count_what_changed(db: Path) -> None:
    assert cli("read", A, A, db=db).stdout == "1 paper marked read\n"  # (once, not "2 papers")
    again = cli("read", A, db=db)
    assert (again.returncode, again.stdout) == (0, "")
    assert again.stderr == "abstract-reader: d059a4d9bc3b was already read; nothing changed\n"
    assert cli("read", A, "--off", db=db).stdout == "1 paper marked unread\n"
    unread = cli("read", A, B, "--off", db=db)
    assert (unread.returncode, unread.stdout) == (0, "")
    assert unread.stderr == (
        "abstract-reader: d059a4d9bc3b, 8060c62c9769 were already unread; nothing changed\n"
    )


def test_many_papers_unchanged_are_one_line_naming_twelve(seeds: Corpus, db: Path) -> None:
    ids = [p.id for p in seeds.papers][:15]
    result = cli("bookmark", "--off", *ids, db=db)
    assert result.returncode == 0 and result.stdout == ""
    named = ", ".join(pid[:12] for pid in ids[:12])
    assert result.stderr == (
        f"abstract-reader: {named} and 3 other papers were not bookmarked; nothing changed\n"
    )


def test_tag_already_on_the_paper_is_said_and_a_bad_tag_is_a_usage_error(db: Path) -> None:
    assert cli("tag", A, "x", db=db).stderr == ""
    again = cli("tag", A, "X", "y", db=db)  # (the library's tag names ignore ASCII case)
    assert again.returncode == 0 and again.stdout == "d059a4d9bc3b: x, y\n"
    assert again.stderr == "abstract-reader: d059a4d9bc3b already had tag 'X'; the rest added\n"
    for command in ("tag", "untag"):
        bad = cli(command, A, "ok", "", db=db)  # as `--tag ''`: a usage error, nothing done
        assert bad.returncode == 2
        assert bad.stderr.splitlines()[-1] == (
            f"abstract-reader {command}: error: argument TAG: a tag cannot be empty"
        )
    with Library(db, backups=False) as lib:
        assert lib.snapshot.tags[A] == ["x", "y"]


def test_a_second_paper_id_given_to_tag_is_refused_not_made_a_tag(db: Path) -> None:
    """`tag A B x` reads as "tag A and B with x"; it tagged A with "B" and "x"."""
    for command in ("tag", "untag"):
        result = cli(command, A, B[:8], "x", db=db)
        assert result.returncode == 2 and result.stdout == ""
        assert result.stderr.splitlines()[-1] == (
            f"abstract-reader: '{B[:8]}' is the id of a loaded paper ({B[:12]}), not a tag: "
            f"{command} takes one paper, then its tags ({command} ID1 TAG, then {command} ID2 "
            "TAG); nothing changed"
        )
    with Library(db, backups=False) as lib:
        assert A not in lib.snapshot.tags
    # hex that names no loaded paper, or too short to be taken for an id, is a tag
    assert cli("tag", A, "deadbeef", "2026", db=db).stdout == "d059a4d9bc3b: 2026, deadbeef\n"


def test_untag_of_a_tag_differing_beyond_ascii_case_says_nothing_removed(db: Path) -> None:
    """The library folds ASCII letters only: 'äRGER' is not the tag 'Ärger', and untag
    removed nothing without a word."""
    assert cli("tag", A, "Ärger", db=db).returncode == 0
    result = cli("untag", A, "äRGER", db=db)
    assert result.returncode == 0 and result.stdout == "d059a4d9bc3b: Ärger\n"
    assert result.stderr == "abstract-reader: d059a4d9bc3b had no tag 'äRGER'; nothing removed\n"


def test_tags_rename_of_a_missing_tag_is_said_as_delete_is(db: Path) -> None:
    result = cli("tags", "--rename", "nosuch", "other", db=db)
    assert result.returncode == 0, result.stderr
    assert result.stderr == "abstract-reader: no tag named 'nosuch'; nothing renamed\n"
    empty = cli("tags", "--rename", "nosuch", "", db=db)
    assert empty.returncode == 2
    assert empty.stderr.splitlines()[-1] == (
        "abstract-reader tags: error: argument --rename: a tag cannot be empty"
    )
    merge = cli("tags", "--merge", db=db)  # did nothing, silently, exit 0
    assert merge.returncode == 2 and merge.stdout == ""
    assert "--merge goes with --rename OLD NEW" in merge.stderr


def test_digest_since_a_malformed_date_is_a_usage_error(db: Path) -> None:
    result = cli("digest", "--since", "2026-13-01", db=db)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.splitlines()[-1] == (
        "abstract-reader digest: error: argument --since: '2026-13-01' is not a date "
        "(YYYY-MM-DD, such as 2026-01-31)"
    )


def test_json_output_gets_the_same_notes_on_stderr(db: Path) -> None:
    text = cli("list", "-q", f"like:{A}", "--bookmarked", db=db)
    as_json = cli("list", "-q", f"like:{A}", "--bookmarked", "--json", db=db)
    assert text.stdout == as_json.stdout == ""  # (nothing bookmarked)
    assert text.stderr == as_json.stderr
    assert text.stderr.startswith("0 papers, ranked like ")  # the papers listed, not 54
    searches = cli("searches", db=db), cli("searches", "--json", db=db)
    assert searches[0].stderr == searches[1].stderr != ""


def test_a_url_without_a_scheme_is_refused_in_words_that_read(db: Path) -> None:
    result = cli("meta", A, "--url", "example.org", db=db)
    assert result.returncode == 0
    assert result.stderr.endswith(
        "citations leave it out: it has no scheme (only http:// and https:// links are opened)\n"
    )


# -- library import: match's record of a paper kept over the file's is said ----------------------


def _provenance(record: str, venue: str) -> str:
    return Provenance("openreview", record, "notes.json", 97.0, venue).to_json()


def _import(tmp_path: Path, db: Path, *args: str, settings: dict[str, str]) -> str:
    path = tmp_path / "import.json"
    doc = {"format": "abstract-reader-library", "version": 2, "papers": {}, "settings": settings}
    path.write_text(json.dumps(doc), encoding="utf-8")
    result = cli("library", "import", *args, str(path), db=db)
    assert result.returncode == 0, result.stderr
    return result.stderr


def test_import_says_a_match_record_it_kept_and_not_the_same_one(tmp_path: Path, db: Path) -> None:
    """A paper's `provenance:` setting (where match found it: its venue) was kept silently."""
    with Library(db, backups=False) as lib:
        lib.set_setting(PROVENANCE_PREFIX + A, _provenance("mine", "NeurIPS 2025"))
        lib.set_setting(PROVENANCE_PREFIX + B, _provenance("same", "ICML 2024"))
        lib.set_metadata(B, Metadata(title="Mine"))
    same = json.dumps(json.loads(_provenance("same", "ICML 2024")), indent=1, sort_keys=True)
    stderr = _import(
        tmp_path,
        db,
        settings={
            PROVENANCE_PREFIX + A: _provenance("theirs", "ICLR 2026"),
            PROVENANCE_PREFIX + B: same,  # the same record, written otherwise: nothing to say
        },
    )
    assert stderr.splitlines() == [
        'abstract-reader: d059a4d9bc3b kept its match record "openreview record mine in '
        'notes.json (matched, score 97), venue NeurIPS 2025" (the file\'s: "openreview record '
        'theirs in notes.json (matched, score 97), venue ICLR 2026")',
        "Merged records of 0 papers from " + str(tmp_path / "import.json") + "; where 1 paper had"
        " other values in the file, this library's were kept (listed above)",
    ]
    with Library(db, backups=False) as lib:
        kept = Provenance.from_json(lib.snapshot.settings[PROVENANCE_PREFIX + A])
        assert kept is not None and kept.record == "mine"


def test_import_lists_twelve_match_records_kept_then_counts_unless_verbose(
    tmp_path: Path, db: Path
) -> None:
    ids = [f"{n:016x}" for n in range(1, 15)]
    with Library(db, backups=False) as lib:
        for pid in ids:
            lib.set_setting(PROVENANCE_PREFIX + pid, _provenance("mine", "NeurIPS 2025"))
    theirs = {PROVENANCE_PREFIX + pid: _provenance("theirs", "ICLR 2026") for pid in ids}
    stderr = _import(tmp_path, db, settings=theirs)
    assert sum("kept its match record" in line for line in stderr.splitlines()) == 12
    assert "… and 2 more (-v lists every paper)" in stderr
    verbose = _import(tmp_path, db, "-v", settings=theirs)
    assert sum("kept its match record" in line for line in verbose.splitlines()) == 14


def test_cite_of_a_paper_named_twice_cites_it_once(db: Path) -> None:
    """`cite A A` printed two entries with one BibTeX key (BibTeX rejects the file)."""
    result = cli("cite", A, A[:8], "-f", "bibtex", db=db)
    assert result.returncode == 0, result.stderr
    assert sum(line.startswith("@") for line in result.stdout.splitlines()) == 1


def test_reading_an_unloaded_paper_does_not_claim_a_record_is_kept(db: Path) -> None:
    unloaded = "f" * 16
    for args in (("note", unloaded), ("meta", unloaded)):
        result = cli(*args, db=db)
        assert result.returncode == 0
        assert result.stderr == f"abstract-reader: warning: {unloaded} is not in the loaded dumps\n"
    written = cli("meta", unloaded, "--year", "2020", db=db)
    assert written.stderr == (
        f"abstract-reader: warning: {unloaded} is not in the loaded dumps; the record is kept"
        " anyway\n"
    )


def test_import_run_twice_says_nothing_was_new(tmp_path: Path, db: Path) -> None:
    """A second import of one file said "Merged records of 2 papers" as the first did."""
    with Library(db, backups=False) as lib:
        lib.set_bookmark([A, B])
    exported = tmp_path / "export.json"
    assert cli("library", "export", str(exported), db=db).returncode == 0
    other = tmp_path / "other.sqlite3"
    Library(other, backups=False).close()
    with Library(other, backups=False) as lib:
        lib.set_bookmark([A])
    first = cli("library", "import", str(exported), db=other)
    assert first.stderr == (
        f"Merged records of 2 papers from {exported} (1 changed here, the rest had nothing new)\n"
    )
    again = cli("library", "import", str(exported), db=other)
    assert again.returncode == 0
    assert again.stderr == (
        f"Merged records of 2 papers from {exported} (nothing new: this library had all of them)\n"
    )


def test_saving_a_search_as_it_is_saved_says_nothing_changed(db: Path) -> None:
    assert cli("searches", "--add", "r", "robust", db=db).stderr == ""
    again = cli("searches", "--add", "r", "robust", db=db)
    assert again.returncode == 0 and again.stdout == "@r  robust\n"
    assert again.stderr == 'abstract-reader: @r is already saved as "robust"; nothing changed\n'


def test_a_saved_search_is_named_with_or_without_its_at(db: Path) -> None:
    """`searches --delete @r` (as `-q @r` names it) was a usage error: "'@r': a saved
    search's name is letters, digits, '-' and '_'"."""
    assert cli("searches", "--add", "@r", "robust", db=db).stdout == "@r  robust\n"
    deleted = cli("searches", "--delete", "@r", db=db)
    assert deleted.returncode == 0
    assert deleted.stderr.startswith('abstract-reader: @r deleted; it was "robust"')


@pytest.mark.parametrize(
    "args",
    [
        ("bookmark", A, "--db", ""),
        ("--db", "", "bookmark", A),
        ("bookmark", A, "-d", ""),
        ("list", "-d", "", "--db", "LIB"),
    ],
)
def test_an_empty_db_or_dump_is_a_usage_error_not_the_default(
    args: tuple[str, ...], db: Path, tmp_path: Path
) -> None:
    """`--db "$UNSET"` wrote to the default library, `-d "$UNSET"` read the current folder's
    *.txt files (or said ": directory has no *.txt dumps")."""
    result = cli(*(str(db) if a == "LIB" else a for a in args))
    assert result.returncode == 2 and result.stdout == ""
    option = "--db" if "--db" in args and args[args.index("--db") + 1] == "" else "-d/--dump"
    assert result.stderr.splitlines()[-1].endswith(
        f"error: argument {option}: '' is not a file name (leave the option out for the default)"
    )
    with Library(Path(os.environ["ABSTRACT_READER_DB"]), backups=False) as lib:
        assert lib.snapshot.bookmarks == {}

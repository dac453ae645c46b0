"""Tags and years through the real CLI, as a user finds them: a year set with ``meta`` is the
year ``year:`` filters on, a tag with a ``"`` can be filtered on, a reversed year range means
the same years, ``--tag`` takes ``#tag`` as ``tag`` does, and ``untag`` of a tag the paper
did not have says so."""

from __future__ import annotations

from pathlib import Path

import pytest

from abstract_reader.corpus import Corpus

from .conftest import cli, paper_with


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "lib.sqlite3"


def _ids(stdout: str) -> list[str]:
    return [line.split()[0] for line in stdout.splitlines()]


def test_year_filters_on_the_year_set_in_the_library(seeds: Corpus, db: Path) -> None:
    rse = paper_with(seeds, "Robust Satisficing Ensemble (RSE)")
    assert cli("meta", rse.id[:8], "--year", "2025", db=db).returncode == 0
    shown = cli("list", "-q", "year:2025", db=db)
    assert shown.returncode == 0 and _ids(shown.stdout) == [rse.id[:12]]
    assert "NeurIPS 2025" in shown.stdout
    others = cli("list", "-q", "year:2026", db=db)
    assert len(others.stdout.splitlines()) == 54 and rse.id[:12] not in others.stdout
    assert _ids(cli("list", "-q", "year:2024-2025", db=db).stdout) == [rse.id[:12]]
    by_year = _ids(cli("list", "--sort", "year", db=db).stdout)  # (as the order already did)
    assert by_year[-1] == rse.id[:12]
    assert len(cli("list", "-q", "!year:2026", db=db).stdout.splitlines()) == 1
    # cleared: the dump's year again
    assert cli("meta", rse.id[:8], "--clear", db=db).returncode == 0
    assert cli("list", "-q", "year:2025", db=db).stdout == ""
    assert len(cli("list", "-q", "year:2026", db=db).stdout.splitlines()) == 55


def test_a_reversed_year_range_means_the_same_years(db: Path) -> None:
    forward = cli("list", "-q", "year:2024-2026", db=db)
    backward = cli("list", "-q", "year:2026-2024", db=db)
    assert backward.returncode == 0 and backward.stderr == ""
    assert len(backward.stdout.splitlines()) == 55 and backward.stdout == forward.stdout


@pytest.mark.parametrize("query", ['#"a\\"b"', '#a"b', '#"A\\"B"'])
def test_a_tag_with_a_quote_can_be_filtered_on(seeds: Corpus, db: Path, query: str) -> None:
    rse = paper_with(seeds, "Robust Satisficing Ensemble (RSE)")
    assert cli("tag", rse.id[:8], 'a"b', db=db).returncode == 0
    found = cli("list", "-q", query, db=db)
    assert (found.returncode, found.stderr) == (0, "")
    assert _ids(found.stdout) == [rse.id[:12]]


def test_a_quoted_tag_with_a_quote_and_a_space(seeds: Corpus, db: Path) -> None:
    rse = paper_with(seeds, "Robust Satisficing Ensemble (RSE)")
    assert cli("tag", rse.id[:8], 'say "hi" now', "back\\slash", db=db).returncode == 0
    assert _ids(cli("list", "-q", '#"say \\"hi\\" now"', db=db).stdout) == [rse.id[:12]]
    assert _ids(cli("list", "-q", '#"back\\\\slash"', db=db).stdout) == [rse.id[:12]]
    assert _ids(cli("list", "-q", "#back\\slash", db=db).stdout) == [rse.id[:12]]


@pytest.mark.parametrize("given", ["#hash", "hash", "HASH", "# hash"])
def test_list_tag_takes_the_hash_as_tag_does(seeds: Corpus, db: Path, given: str) -> None:
    rse = paper_with(seeds, "Robust Satisficing Ensemble (RSE)")
    tagged = cli("tag", rse.id[:8], "#hash", db=db)
    assert tagged.returncode == 0 and tagged.stdout.strip().endswith(": hash")
    found = cli("list", "--tag", given, db=db)
    assert found.returncode == 0 and _ids(found.stdout) == [rse.id[:12]]


def test_list_tag_that_cannot_be_a_tag_is_a_usage_error(db: Path) -> None:
    result = cli("list", "--tag", "#", db=db)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.splitlines()[-1] == (
        "abstract-reader list: error: argument --tag: a tag cannot be empty"
    )


def test_untag_of_a_tag_the_paper_did_not_have_says_so(seeds: Corpus, db: Path) -> None:
    rse = paper_with(seeds, "Robust Satisficing Ensemble (RSE)")
    short = rse.id[:12]
    assert cli("tag", rse.id[:8], "kept", "gone", db=db).returncode == 0
    result = cli("untag", rse.id[:8], "nonexistent", db=db)
    assert result.returncode == 0  # nothing to do is no failure
    assert result.stderr == f"abstract-reader: {short} had no tag 'nonexistent'; nothing removed\n"
    assert result.stdout == f"{short}: gone, kept\n"
    both = cli("untag", rse.id[:8], "gone", "#nope", "Other", db=db)
    assert both.returncode == 0 and both.stdout == f"{short}: kept\n"
    assert both.stderr == (
        f"abstract-reader: {short} had no tags 'nope', 'Other'; the rest removed\n"
    )
    quiet = cli("untag", rse.id[:8], "KEPT", db=db)  # had it (tags ignore case): no line
    assert (quiet.returncode, quiet.stderr, quiet.stdout) == (0, "", f"{short}: (no tags)\n")


def test_the_query_help_names_the_escapes() -> None:
    helptext = cli("list", "--help").stdout
    assert 'papers with the tag (in quotes, \\" is a " and \\\\ a \\)' in helptext


def test_a_tag_no_paper_has_is_said_on_stderr_with_the_nearest_names(
    seeds: Corpus, db: Path
) -> None:
    """QA (s17, 13): ``list -q '#readng'`` and ``list --tag nonexist`` printed nothing with no
    word why; ``list -q 'like:#nosuch'`` listed every paper."""
    rse = paper_with(seeds, "Robust Satisficing Ensemble (RSE)")
    assert cli("tag", rse.id[:8], "reading", db=db).returncode == 0
    for args in (["-q", "#readng"], ["--tag", "readng"], ["--tag", "#readng"]):
        typo = cli("list", *args, db=db)
        assert typo.returncode == 0 and typo.stdout == "", args
        assert "no paper is tagged #readng (did you mean #reading?)" in typo.stderr, args
    like = cli("list", "-q", "like:#nosuch", db=db)
    assert like.returncode == 0 and like.stdout == ""  # not every paper, ranked by nothing
    assert "no paper is tagged #nosuch (tags: #reading)" in like.stderr
    assert "ranked like" not in like.stderr
    export = cli("export", "--format", "csv", "-q", "#readng", db=db)
    assert export.returncode == 1 and "#readng (did you mean #reading?)" in export.stderr
    # a tag papers have: nothing said
    found = cli("list", "--tag", "reading", db=db)
    assert _ids(found.stdout) == [rse.id[:12]] and "tagged" not in found.stderr

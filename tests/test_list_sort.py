"""`list --sort`: the reader's orders (sorting.sort_order) from the command line."""

from __future__ import annotations

from pathlib import Path

from abstract_reader.corpus import Corpus
from abstract_reader.sorting import SORTS

from .conftest import cli


def _ids(*args: str, db: Path) -> list[str]:
    result = cli("list", *args, db=db)
    assert result.returncode == 0, result.stderr
    return [line.split()[0] for line in result.stdout.splitlines()]


def test_help_lists_every_order() -> None:
    helptext = cli("list", "--help").stdout
    for name in SORTS:
        assert name in helptext
    bad = cli("list", "--sort", "nope")
    assert bad.returncode == 2 and "invalid choice: 'nope'" in bad.stderr


def test_each_order(tmp_path: Path, seeds: Corpus) -> None:
    db = tmp_path / "lib.sqlite3"
    dump_order = [p.short_id for p in seeds.papers]
    assert _ids(db=db) == dump_order == _ids("--sort", "relevance", db=db)
    assert _ids("--sort", "dump", db=db) == dump_order
    titles = _ids("--sort", "title", db=db)
    by_title = sorted(seeds.papers, key=lambda p: p.title.casefold())
    assert titles == [p.short_id for p in by_title]
    # recent: most recently tagged or bookmarked first, then the others in dump order
    first, second = seeds.papers[10], seeds.papers[3]
    assert cli("bookmark", first.id, db=db).returncode == 0
    assert cli("tag", second.id, "later", db=db).returncode == 0
    bookmarked = _ids("--sort", "recent", db=db)
    rest = [i for i in dump_order if i not in (first.short_id, second.short_id)]
    assert bookmarked == [second.short_id, first.short_id, *rest]
    # unread first: the read ones last, each group in dump order
    assert cli("read", seeds.papers[0].id, seeds.papers[1].id, db=db).returncode == 0
    assert _ids("--sort", "unread", db=db) == dump_order[2:] + dump_order[:2]
    # year, newest first: the seeds share one year, so the dump order is kept
    assert _ids("--sort", "year", db=db) == dump_order


def test_sort_applies_to_a_query(tmp_path: Path) -> None:
    db = tmp_path / "lib.sqlite3"
    ranked = _ids("-q", "robust", db=db)
    assert len(ranked) > 3
    in_dump_order = _ids("-q", "robust", "--sort", "dump", db=db)
    assert sorted(ranked) == sorted(in_dump_order) and ranked != in_dump_order
    dump = _ids(db=db)
    assert in_dump_order == [i for i in dump if i in set(ranked)]

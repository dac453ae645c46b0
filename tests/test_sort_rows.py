"""`sorting.sort_rows` (the reader's orders from the table's columns, no Paper per row) puts
papers exactly where `sort_order` (from Papers, the effective metadata) puts them."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from abstract_reader.corpus import Corpus
from abstract_reader.library import Library
from abstract_reader.library.model import Metadata
from abstract_reader.sorting import SORTS, sort_order, sort_rows


@pytest.fixture
def library(tmp_path: Path, seeds: Corpus) -> Library:
    lib = Library(tmp_path / "lib.sqlite3")
    papers = seeds.papers
    lib.set_metadata(papers[7].id, Metadata(title="aaa first by a real title", year=2031))
    lib.set_metadata(papers[20].id, Metadata(year=1999))
    lib.set_metadata(papers[30].id, Metadata(title="Zz last"))
    # sorted as shown, "AAB second": BibTeX's braces are not part of the title
    lib.set_metadata(papers[15].id, Metadata(title="{AAB} second, braces dropped"))
    lib.set_bookmark([papers[5].id])
    lib.add_tags([papers[12].id, papers[40].id], ["later"])
    lib.set_bookmark([papers[40].id])
    lib.set_read([papers[0].id, papers[33].id, papers[12].id])
    return lib


@pytest.mark.parametrize("sort", list(SORTS))
def test_rows_order_is_the_papers_order(sort: str, seeds: Corpus, library: Library) -> None:
    snapshot = library.snapshot
    table = seeds.papers
    everything = np.arange(len(table))
    papers = list(table)
    assert sort_rows(sort, everything, snapshot, table).tolist() == sort_order(
        sort, papers, snapshot, seeds
    )
    # a result's rows: some papers, in another order; many of the table's or a few (the
    # orders take other paths for a few rows among many)
    for step in (2, 11):
        rows = list(range(0, len(table), step))
        random.Random(4).shuffle(rows)
        subset = [table[r] for r in rows]
        assert sort_rows(sort, np.array(rows), snapshot, table).tolist() == sort_order(
            sort, subset, snapshot, seeds
        ), f"every {step}th paper"


def test_real_titles_and_years_move_papers(seeds: Corpus, library: Library) -> None:
    snapshot = library.snapshot
    table = seeds.papers
    everything = np.arange(len(table))
    by_title = sort_rows("title", everything, snapshot, table).tolist()
    assert by_title[:2] == [7, 15] and by_title[-1] == 30
    by_year = sort_rows("year", everything, snapshot, table).tolist()
    assert by_year[0] == 7 and by_year[-1] == 20
    unread = sort_rows("unread", everything, snapshot, table).tolist()
    assert unread[-3:] == [0, 12, 33]
    recent = sort_rows("recent", everything, snapshot, table).tolist()
    assert recent[:3] == [40, 12, 5]  # newest first: 40 was tagged and then bookmarked


def test_dump_order_of_a_result(seeds: Corpus) -> None:
    rows = np.array([9, 3, 50, 1])
    order = sort_rows("dump", rows, Library(None).snapshot, seeds.papers)
    assert rows[order].tolist() == [1, 3, 9, 50]


def test_rows_for_ids(seeds: Corpus) -> None:
    table = seeds.papers
    ids = [table[4].id, "0123456789abcdef", "not an id", table[0].id]
    assert table.rows_for(ids).tolist() == [4, -1, -1, 0]


def test_a_paper_for_a_listing_is_the_paper_without_its_abstract(seeds: Corpus) -> None:
    import dataclasses

    table = seeds.papers
    for row in (0, 3, len(table) - 1):
        assert table.without_abstract(row) == dataclasses.replace(table[row], abstract="")
    with pytest.raises(IndexError):
        table.without_abstract(len(table))


def test_ids_are_found_in_a_large_table_and_only_they() -> None:
    from abstract_reader.paper import Source
    from abstract_reader.papertable import PaperTable, RowBatch, id_of

    rng = random.Random(7)
    keys = [rng.getrandbits(64) for _ in range(12_000)]
    table = PaperTable()
    for first in range(0, len(keys), 5000):
        batch = RowBatch()
        for key in keys[first : first + 5000]:
            batch.add(key, f"abstract {key}", "title", Source("a.txt", 1))
        table.extend(batch)
        # found after each batch (the index merges the new rows on the next look-up)
        assert table.find(keys[first]) == first
    assert [table.find(k) for k in keys[::97]] == list(range(0, len(keys), 97))
    low = keys[5] & (2**24 - 1)
    twins = [(k << 24 | low) & (2**64 - 1) for k in range(1, 50)]  # a present key's low bits
    assert all(table.find(k) == -1 for k in twins if k not in set(keys))
    assert table.find(rng.getrandbits(64)) == -1
    assert table.index_of(id_of(keys[11_999])) == 11_999


def test_the_title_order_sorts_as_the_titles_do(tmp_path: Path) -> None:
    """The reader's title order (ranks made once, real titles placed among them) puts every
    set of rows where sorting their titles does: titles that fold alike keep the rows' order,
    real titles equal to a dump's, between two, before all and after all, braced ones."""
    from abstract_reader.paper import Source
    from abstract_reader.papertable import PaperTable, RowBatch
    from abstract_reader.sorting import TitleOrder

    rng = random.Random(11)
    words = ["Alpha", "alpha", "beta", "Beta", "{G}amma", "gamma", "delta", "Ωmega", "élan"]
    table = PaperTable()
    batch = RowBatch()
    for i in range(400):
        title = " ".join(rng.choice(words) for _ in range(rng.randint(1, 2)))
        batch.add(rng.getrandbits(64), f"abstract {i}", title, Source("a.txt", i + 1))
    table.extend(batch)
    lib = Library(tmp_path / "lib.sqlite3")
    real = ["alpha", "ALPHA BETA", "alphaa", "a", "zzz", "{Beta} gamma", "beta gamma", "delta"]
    real += ["aa", "alphab", "zzzz"]  # two in one gap: ordered among themselves
    for k, row in enumerate(rng.sample(range(len(table)), 40)):
        lib.set_metadata(table.id(row), Metadata(title=real[k % len(real)]))
    snapshot = lib.snapshot
    titles = TitleOrder(table)
    assert titles.current(table, len(table))
    # a few rows (their ranks sorted) and many (the whole order walked)
    for size in [0, 1, 5, 20, *(rng.randint(25, len(table)) for _ in range(16))]:
        rows = np.array(rng.sample(range(len(table)), size), np.int64)
        plain = sort_rows("title", rows, snapshot, table).tolist()
        assert sort_rows("title", rows, snapshot, table, titles).tolist() == plain
    table.set_title(3, "changed")  # the table's titles changed: it is out of date
    assert not titles.current(table, len(table))


@pytest.mark.parametrize("run_max", [4, 4096])
def test_titles_are_sorted_as_python_sorts_them_whatever_their_first_bytes(
    run_max: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The title order's sort (numpy on 8 bytes at a time, Python on short runs of keys
    with the same bytes) gives Python's stable sort of the strings, and their dense ranks:
    short titles, titles equal to 8 or 16 bytes and differing after, a character cut by
    the 8th byte, equal titles (in row order), NULs beside ends."""
    from abstract_reader import sorting
    from abstract_reader.sorting import _title_ranks

    monkeypatch.setattr(sorting, "_RUN_SORT_MAX", run_max)  # 4: every depth is taken
    rng = random.Random(5)
    pieces = ["a", "ab", "abcdefgh", "abcdefghi", "é", "ωμέγα", "漢字", " ", "z", "🙂", "ÿ"]
    keys = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 4))) for _ in range(3000)]
    keys += ["abcdefgh", "abcdefgh", "", "abcdefg", "abcdefgé", "abcdefgf"]
    keys += ["abcdefgh\0", "abcdefgh\0\0", "abcdefgh"] * 3
    order, rank = _title_ranks(keys)
    assert order.tolist() == sorted(range(len(keys)), key=keys.__getitem__)
    # ranks: equal keys share one, a greater key has the next
    distinct = sorted(set(keys))
    assert rank.tolist() == [distinct.index(k) for k in keys]
    assert [a.tolist() for a in _title_ranks([])] == [[], []]

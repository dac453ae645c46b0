"""`Session.sync_metadata` gives the index the titles, years and venues that changed, not every
matched paper's after each change: at 100,000 matched papers the whole walk took ~5 s per
metadata change (an id look-up each, three times). What the index holds must stay what a
fresh full set gives, whatever the change and whoever made it."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from abstract_reader.corpus import Corpus
from abstract_reader.library import Library, Metadata
from abstract_reader.metadata import (
    PROVENANCE_PREFIX,
    Provenance,
    title_overrides,
    venue_overrides,
    year_overrides,
)
from abstract_reader.papertable import PaperTable
from abstract_reader.search import SearchIndex
from abstract_reader.session import Session


def _provenance(venue: str | None, record: str = "r") -> str:
    return Provenance("arxiv", record, "refs.jsonl", 100.0, venue).to_json()


def _match_all(library: Library, ids: list[str]) -> None:
    """Every paper matched, as `match` writes it: metadata, then provenance (its venue)."""
    for n, pid in enumerate(ids):
        library.set_metadata(pid, Metadata(title=f"Matched title {n}", year=2000 + n % 7))
        library.set_setting(PROVENANCE_PREFIX + pid, _provenance(f"Venue {n % 3}", f"r{n}"))


def _session(seeds: Corpus, db: Path) -> Session:
    session = Session(Library(db), corpus=seeds)
    session.index = SearchIndex(seeds)
    session.refresh()
    session.sync_metadata()
    return session


def _overrides(index: SearchIndex) -> tuple[Any, Any, Any]:
    """What ``title:``, ``year:`` and ``venue:`` read, by row."""
    venues = index._venue_overrides
    venue_of = (
        {} if venues is None else dict(zip(venues[0].tolist(), venues[1].tolist(), strict=True))
    )
    names = [] if venues is None else venues[2]
    years = index._year_overrides
    year_of = {} if years is None else dict(zip(years[0].tolist(), years[1].tolist(), strict=True))
    return (
        dict(index._title_overrides),
        year_of,
        {row: names[code] for row, code in venue_of.items()},
    )


def _fresh(seeds: Corpus, library: Library) -> tuple[Any, Any, Any]:
    snapshot = library.snapshot
    index = SearchIndex(seeds)
    index.set_title_overrides(title_overrides(snapshot))
    index.set_year_overrides(year_overrides(snapshot))
    index.set_venue_overrides(venue_overrides(snapshot))
    return _overrides(index)


def test_one_change_looks_up_only_its_paper(
    seeds: Corpus, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "lib.sqlite3"
    ids = [p.id for p in seeds.papers]
    with Library(db) as other:
        _match_all(other, ids)
    session = _session(seeds, db)
    looked_up: list[str] = []
    real_index_of, real_rows_for = PaperTable.index_of, PaperTable.rows_for

    def index_of(self: PaperTable, paper_id: str) -> int:
        looked_up.append(paper_id)
        return real_index_of(self, paper_id)

    def rows_for(self: PaperTable, paper_ids: Any) -> Any:
        looked_up.extend(paper_ids)
        return real_rows_for(self, paper_ids)

    monkeypatch.setattr(PaperTable, "index_of", index_of)
    monkeypatch.setattr(PaperTable, "rows_for", rows_for)
    session.library.set_metadata(ids[3], Metadata(title="Edited here", year=1999))
    assert "meta" in session.refresh()  # (refresh syncs the index)
    assert set(looked_up) == {ids[3]}  # (before: every matched paper's, three times)
    assert session.index is not None
    assert [h.paper.id for h in session.index.search("year:1999")] == [ids[3]]
    assert [h.paper.id for h in session.index.search("title:edited")] == [ids[3]]


def test_the_index_follows_every_kind_of_change(seeds: Corpus, tmp_path: Path) -> None:
    db = tmp_path / "lib.sqlite3"
    ids = [p.id for p in seeds.papers]
    with Library(db) as other:
        _match_all(other, ids[:40])
    session = _session(seeds, db)
    mine = session.library
    assert session.index is not None
    assert _overrides(session.index) == _fresh(seeds, mine)
    assert len(_overrides(session.index)[2]) == 40

    def check() -> None:
        session.refresh()
        assert session.index is not None
        assert _overrides(session.index) == _fresh(seeds, mine)

    mine.set_metadata(ids[0], Metadata(title="Mine", year=1990))  # own edit
    check()
    mine.set_metadata(ids[1], Metadata(authors=("A. Person",)))  # title and year dropped
    check()
    mine.set_metadata(ids[2], Metadata())  # cleared
    check()
    mine.undo()  # back
    check()
    mine.set_metadata(ids[8], Metadata(title="First of two"))  # two writes, one sync
    mine.set_metadata(ids[9], Metadata(title="Second of two"))
    check()
    mine.add_tags(ids[:5], ["x"])  # not metadata: nothing to give
    check()
    with Library(db) as other:  # another process: metadata, a new match, a venue gone
        other.set_metadata(ids[45], Metadata(title="Theirs", year=2024))
        other.set_metadata(ids[4], Metadata(title="Also theirs"))
        other.set_setting(PROVENANCE_PREFIX + ids[46], _provenance("NewVenue"))
        other.set_setting(PROVENANCE_PREFIX + ids[5], _provenance(None))
    check()
    assert [h.paper.id for h in session.index.search("venue:newvenue")] == [ids[46]]
    conn = sqlite3.connect(db)  # another tool, unlogged: the library is read again whole
    with conn:
        conn.execute("UPDATE metadata SET year = 1980 WHERE paper_id = ?", (ids[6],))
        conn.execute("DELETE FROM settings WHERE key = ?", (PROVENANCE_PREFIX + ids[7],))
        conn.execute("DELETE FROM metadata WHERE paper_id = ?", (ids[10],))
    conn.close()
    check()
    assert [h.paper.id for h in session.index.search("year:1980")] == [ids[6]]
    session.index = SearchIndex(seeds)  # a new index (the reader's, once built): all of it
    session.sync_metadata()
    assert _overrides(session.index) == _fresh(seeds, mine)
    session.index.set_year_overrides({})  # someone else set them: given all again
    session.sync_metadata()
    assert _overrides(session.index) == _fresh(seeds, mine)


def test_an_index_primed_in_its_thread_then_handed_over_holds_what_a_fresh_set_gives(
    seeds: Corpus, tmp_path: Path
) -> None:
    """The index is given the library's titles, years and venues in the thread that built
    it (`prime_metadata`: ~1 s at 50,000 matched papers, which the UI thread spent at the
    hand-over, holding up the keys typed then). Whatever another process changed between
    then and the hand-over — a title, a year, a venue, a paper's metadata cleared — is
    given to it by the hand-over's `sync_metadata`."""
    db = tmp_path / "lib.sqlite3"
    ids = [p.id for p in seeds.papers]
    with Library(db) as other:
        _match_all(other, ids[:30])
    session = Session(Library(db), corpus=seeds)
    index = SearchIndex(seeds)
    session.prime_metadata(index)  # (the index thread: session.index is still None)
    assert _overrides(index) == _fresh(seeds, session.library)
    with Library(db) as other:  # another process, before the hand-over
        other.set_metadata(ids[0], Metadata(title="Zanzibar primed late", year=1999))
        other.set_metadata(ids[1], Metadata())
        other.set_setting(PROVENANCE_PREFIX + ids[2], _provenance("Venue late"))
        _match_all(other, ids[40:42])
    session.refresh()  # (the reader's poll: no index yet, nothing given to it)
    session.index = index  # the hand-over
    session.sync_metadata()
    assert _overrides(index) == _fresh(seeds, session.library)
    assert [h.paper.id for h in index.search("title:zanzibar")] == [ids[0]]
    assert "Zanzibar primed late" in index.title_of(seeds.papers.rows_for([ids[0]]).tolist()[0])

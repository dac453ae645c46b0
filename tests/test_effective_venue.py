"""``venue:`` filters on the venue a paper shows: the one ``match`` found (kept with its
provenance) over the paper's own — in the index, in the CLI's ``list -q``, and in the
reader's session, which re-runs a ``venue:`` query when another process matches papers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from abstract_reader.corpus import Corpus
from abstract_reader.library import Library, Metadata, Snapshot
from abstract_reader.metadata import (
    PROVENANCE_PREFIX,
    Provenance,
    VenueOverrides,
    venue_overrides,
)
from abstract_reader.search import SearchIndex, parse_query
from abstract_reader.session import Session, query_dependencies

from .conftest import cli, paper_with

VENUE = "Journal of Robust Things"


def _provenance(venue: str | None, record: str = "rse") -> str:
    return Provenance("csl-json", record, "refs.json", 100.0, venue).to_json()


@pytest.fixture(scope="module")
def index(seeds: Corpus) -> SearchIndex:
    return SearchIndex(seeds)


def _ids(found: object) -> list[str]:
    return [hit.paper.id for hit in found]  # type: ignore[attr-defined]


def test_the_venues_match_found_are_the_venues_venue_filters_on(
    index: SearchIndex, seeds: Corpus
) -> None:
    first, second, third = (p.id for p in seeds.papers[:3])
    snapshot = Snapshot(
        settings={
            PROVENANCE_PREFIX + first: _provenance(VENUE),
            PROVENANCE_PREFIX + second: _provenance(None),  # no venue: its own stays
            PROVENANCE_PREFIX + third: "{not json",  # unreadable: its own stays
            "theme": "dark",
        }
    )
    assert venue_overrides(snapshot) == {first: VENUE}
    index.set_venue_overrides(venue_overrides(snapshot))
    try:
        assert _ids(index.search("venue:journal")) == [first]
        assert _ids(index.search("venue:JOURNAL")) == [first]  # (case-insensitive, as before)
        assert _ids(index.search("!venue:neurips")) == [first]
        assert len(index.search("venue:neurips")) == 54
        assert second in _ids(index.search("venue:neurips"))
        assert len(index.search("venue:journal | venue:neurips")) == 55
    finally:
        index.set_venue_overrides({})
    assert len(index.search("venue:neurips")) == 55
    assert len(index.search("venue:journal")) == 0


def test_a_provenance_is_parsed_again_only_when_it_changed(
    seeds: Corpus, monkeypatch: pytest.MonkeyPatch
) -> None:
    pid = seeds.papers[0].id
    overrides = VenueOverrides()
    parsed: list[str] = []
    real = Provenance.from_json

    def counting(raw: str) -> Provenance | None:
        parsed.append(raw)
        return real(raw)

    monkeypatch.setattr(Provenance, "from_json", staticmethod(counting))
    first = Snapshot(settings={PROVENANCE_PREFIX + pid: _provenance(VENUE)})
    assert overrides(first) == {pid: VENUE}
    assert overrides(Snapshot(settings=dict(first.settings))) == {pid: VENUE}
    assert len(parsed) == 1
    changed = Snapshot(settings={PROVENANCE_PREFIX + pid: _provenance("ICML", "other")})
    assert overrides(changed) == {pid: "ICML"}
    assert overrides(Snapshot()) == {}
    assert len(parsed) == 2


@pytest.mark.parametrize("query", ["venue:neurips", "!venue:icml", "robust | venue:icml"])
def test_a_query_on_venues_depends_on_the_metadata(query: str) -> None:
    assert "meta" in query_dependencies(parse_query(query))


def _match_like(library: Library, paper_id: str, venue: str) -> None:
    """What `match` writes for a matched paper: its metadata, then its provenance."""
    library.set_metadata(paper_id, Metadata(title="Robust Things"))
    library.set_setting(PROVENANCE_PREFIX + paper_id, _provenance(venue))


def _session(seeds: Corpus, db: Path, query: str) -> Session:
    session = Session(Library(db), corpus=seeds)
    session.index = SearchIndex(seeds)
    session.refresh()
    session.sync_metadata()  # (as the reader does when its index is ready)
    session.set_query(query)
    return session


def _shown(session: Session, query: str) -> list[str]:
    assert session.index is not None
    return _ids(session.index.search(query, session.library_view()))


def test_a_venue_matched_by_another_process_re_filters_the_session(
    seeds: Corpus, tmp_path: Path
) -> None:
    db = tmp_path / "lib.sqlite3"
    session = _session(seeds, db, "venue:journal")
    assert _shown(session, "venue:journal") == []
    paper = seeds.papers[7]
    with Library(db) as other:  # `abstract-reader match refs.json`
        _match_like(other, paper.id, VENUE)
    changed = session.refresh()
    assert session.is_stale(changed)
    assert _shown(session, "venue:journal") == [paper.id]
    assert paper.id not in _shown(session, "venue:neurips")
    assert session.metadata(paper).venue == VENUE  # (what the row shows, as before)


def test_a_provenance_written_after_a_refresh_still_re_filters(
    seeds: Corpus, tmp_path: Path
) -> None:
    """`match` writes the metadata (a logged change), then the provenance (a setting, not
    logged): a refresh between the two must not leave the venue behind."""
    db = tmp_path / "lib.sqlite3"
    session = _session(seeds, db, "venue:journal")
    paper = seeds.papers[3]
    with Library(db) as other:
        other.set_metadata(paper.id, Metadata(title="Robust Things"))
        assert "meta" in session.refresh()
        assert _shown(session, "venue:journal") == []
        other.set_setting(PROVENANCE_PREFIX + paper.id, _provenance(VENUE))
    changed = session.refresh()
    assert "meta" in changed and session.is_stale(changed)
    assert _shown(session, "venue:journal") == [paper.id]


def test_list_filters_on_the_venue_match_wrote(seeds: Corpus, tmp_path: Path) -> None:
    rse = paper_with(seeds, "Robust Satisficing Ensemble (RSE)")
    refs = tmp_path / "refs.json"
    refs.write_text(
        json.dumps(
            [
                {
                    "id": "rse",
                    "type": "article-journal",
                    "title": "Robust Satisficing Ensembles",
                    "container-title": VENUE,
                    "issued": {"date-parts": [[2026]]},
                    "abstract": rse.abstract,
                }
            ]
        ),
        encoding="utf-8",
    )
    db = tmp_path / "lib.sqlite3"
    matched = cli("match", str(refs), db=db)
    assert matched.returncode == 0, matched.stderr
    assert f"{VENUE} 2026" in cli("show", rse.id[:8], db=db).stdout
    found = cli("list", "-q", "venue:journal", db=db)
    assert (found.returncode, found.stderr) == (0, "")
    assert [line.split()[0] for line in found.stdout.splitlines()] == [rse.id[:12]]
    others = cli("list", "-q", "venue:neurips", db=db).stdout.splitlines()
    assert len(others) == 54 and not any(line.startswith(rse.id[:12]) for line in others)

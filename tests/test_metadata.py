"""The effective-metadata rule (one home: ``metadata.py``), DOIs, ``meta --doi`` checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from abstract_reader.corpus import Corpus, Paper
from abstract_reader.library import Library, Metadata
from abstract_reader.metadata import (
    PROVENANCE_PREFIX,
    Provenance,
    arxiv_id_from_url,
    effective,
    effective_metadata,
    normalise_doi,
    set_by_hand,
    venue_year,
)

from .conftest import cli


def _paper(**kw: object) -> Paper:
    base: dict[str, object] = {"id": "ab" * 8, "abstract": "We study x.", "title": "Study of x"}
    base.update(kw)
    return Paper(**base)  # type: ignore[arg-type]


def test_layers_hand_over_record_over_derived() -> None:
    derived = _paper(venue="NeurIPS", year=2026)
    eff = effective_metadata(derived, None)
    assert (eff.title, eff.title_derived, eff.origin) == ("Study of x", True, "derived")
    recorded = _paper(title="Real Title", title_derived=False, authors=("Ada Lovelace",), year=2025)
    eff = effective_metadata(recorded, None)
    assert (eff.title, eff.title_derived, eff.origin, eff.year) == (
        "Real Title",
        False,
        "record",
        2025,
    )
    # the library wins field by field; what it does not set falls through
    eff = effective_metadata(recorded, Metadata(title="Hand Title"))
    assert (eff.title, eff.authors, eff.year, eff.origin) == (
        "Hand Title",
        ("Ada Lovelace",),
        2025,
        "hand",
    )


def test_matched_metadata_is_told_apart_from_hand_edits() -> None:
    meta = Metadata(title="T", authors=("A B",), url="https://arxiv.org/abs/2401.01234v2")
    prov = Provenance("arxiv", "2401.01234", primary_class="cs.LG", written=meta.as_dict())
    assert not set_by_hand(meta, prov)
    eff = effective_metadata(_paper(), meta, prov)
    assert eff.origin == "match" and eff.provenance == prov
    assert eff.eprint == "2401.01234" and eff.primary_class == "cs.LG"
    edited = Metadata(title="T (edited)", authors=meta.authors, url=meta.url)
    assert set_by_hand(edited, prov)
    assert effective_metadata(_paper(), edited, prov).origin == "hand"


def test_provenance_round_trips_through_the_library(tmp_path: Path) -> None:
    library = Library(tmp_path / "lib.sqlite3")
    paper = _paper()
    meta = Metadata(title="Matched")
    library.set_metadata(paper.id, meta)
    prov = Provenance("openreview", "abc123", "cache.json", 97.5, "NeurIPS 2025 poster")
    full = Provenance(
        prov.source, prov.record, prov.location, prov.score, prov.venue, None, meta.as_dict()
    )
    library.set_setting(PROVENANCE_PREFIX + paper.id, full.to_json())
    reopened = Library(tmp_path / "lib.sqlite3")
    eff = effective(paper, reopened.snapshot)
    assert eff.origin == "match" and eff.venue == "NeurIPS 2025 poster"
    assert eff.provenance is not None and eff.provenance.record == "abc123"


@pytest.mark.parametrize(
    ("raw", "doi"),
    [
        ("10.1145/3292500.3330701", "10.1145/3292500.3330701"),
        ("https://doi.org/10.48550/arXiv.2401.01234", "10.48550/arXiv.2401.01234"),
        ("doi:10.1000/xyz(1)", "10.1000/xyz(1)"),
        ("  DOI: 10.1000/abc ", "10.1000/abc"),
        ("http://dx.doi.org/10.1000/abc", "10.1000/abc"),
    ],
)
def test_doi_normalised(raw: str, doi: str) -> None:
    assert normalise_doi(raw) == doi


@pytest.mark.parametrize("raw", ["banana", "10.1/x", "https://example.org/10.1000/x", ""])
def test_doi_rejected(raw: str) -> None:
    with pytest.raises(ValueError):
        normalise_doi(raw)


def test_arxiv_ids_from_urls() -> None:
    assert arxiv_id_from_url("https://arxiv.org/abs/2401.01234v3") == "2401.01234"
    assert arxiv_id_from_url("http://arxiv.org/abs/hep-th/9901001") == "hep-th/9901001"
    assert arxiv_id_from_url("https://openreview.net/forum?id=x") is None


def test_meta_doi_banana_is_an_error_and_writes_nothing(seeds: Corpus, tmp_path: Path) -> None:
    db = tmp_path / "lib.sqlite3"
    pid = seeds.papers[0].id
    bad = cli("meta", pid[:8], "--doi", "banana", db=db)
    assert bad.returncode == 2  # a malformed value on the command line: a usage error
    errors = [line for line in bad.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1 and "'banana' is not a DOI" in errors[0]
    assert "doi" not in cli("meta", pid[:8], db=db).stdout  # nothing written
    good = cli("meta", pid[:8], "--doi", "https://doi.org/10.1000/Xy.1", db=db)
    assert good.returncode == 0, good.stderr
    assert "doi:      10.1000/Xy.1" in good.stdout
    shown = cli("show", pid[:8], db=db)
    assert "metadata:  set by hand" in shown.stdout


@pytest.mark.parametrize(
    ("venue", "year", "shown"),
    [
        ("NeurIPS 2026 poster", 2026, "NeurIPS 2026 poster"),  # never the year twice
        ("NeurIPS 2025 poster", 2026, "NeurIPS 2025 poster"),  # nor a second year
        ("NeurIPS poster", 2026, "NeurIPS 2026 poster"),  # a track after the year
        ("EMNLP Findings", 2024, "EMNLP 2024 Findings"),
        ("NeurIPS Datasets and Benchmarks Track", 2025, "NeurIPS 2025 Datasets and Benchmarks Track"),
        ("Advances in Neural Information Processing Systems", 2026,
         "Advances in Neural Information Processing Systems 2026"),
        ("ICLR", 2026, "ICLR 2026"),
        (None, 2026, "2026"),
        ("My Reading List", None, "My Reading List"),
        (None, None, ""),
    ],
)  # fmt: skip
def test_venue_and_year_read_as_one_name(venue: str | None, year: int | None, shown: str) -> None:
    assert venue_year(venue, year) == shown

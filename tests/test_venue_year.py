"""A paper's venue and year are one fact from one source (QA s17 #3): an arXiv record of a
NeurIPS 2026 dump paper, posted in 2025, must not make it "NeurIPS 2025" — not when the
snapshot is loaded beside the dumps, not when `match` writes it — and must not drop it from
``year:2026``. A record that names its own venue brings its own year with it."""

from __future__ import annotations

import json
import re
from pathlib import Path

from abstract_reader.corpus import Corpus

from .conftest import SEEDS, cli


def _plain(seeds: Corpus) -> list[str]:
    """Abstracts of seed papers with no LaTeX, emphasis or braces (simple to restate)."""
    return [p.abstract for p in seeds.papers if not re.search(r"[$\\{}%*_]", p.abstract)]


def _arxiv_line(arxiv_id: str, title: str, abstract: str, *, journal: str | None = None) -> str:
    """One record of the arXiv metadata snapshot, first posted in 2025."""
    return json.dumps(
        {
            "id": arxiv_id,
            "authors": "Ada Lovelace and Alan Turing",
            "title": title,
            "journal-ref": journal,
            "doi": None,
            "categories": "cs.LG",
            "abstract": abstract,
            "versions": [{"version": "v1", "created": "Mon, 6 Jan 2025 18:00:00 GMT"}],
        }
    )


def _snapshot(path: Path, seeds: Corpus, *, journal: str | None = None) -> tuple[Path, str, str]:
    """A snapshot with one seed paper's abstract as it is (the same paper by its id) and
    another's hard-wrapped with its spaces doubled (the same paper after normalisation);
    returns the file and the two papers' ids."""
    first, second = _plain(seeds)[:2]
    wrapped = "\n  ".join(second.split(" ")).replace(". ", ".  ")
    path.write_text(
        _arxiv_line("2501.01234", "Spiking Things", first, journal=journal)
        + "\n"
        + _arxiv_line("2501.05678", "Wrapped Things", "  " + wrapped + "\n", journal=journal)
        + "\n",
        encoding="utf-8",
    )
    ids = [p.id for p in seeds.papers if p.abstract in (first, second)]
    return path, ids[0], ids[1]


def _listed(*args: str, db: Path) -> dict[str, dict[str, object]]:
    run = cli("list", "--json", *args, db=db)
    assert run.returncode == 0, run.stderr
    return {p["id"]: p for p in map(json.loads, run.stdout.splitlines())}


def test_an_arxiv_record_loaded_beside_the_dumps_keeps_the_dump_year(
    seeds: Corpus, tmp_path: Path
) -> None:
    snap, exact, wrapped = _snapshot(tmp_path / "snap.jsonl", seeds)
    db = tmp_path / "lib.db"
    papers = _listed("-d", str(SEEDS), "-d", str(snap), db=db)
    assert len(papers) == 55  # both records are dump papers
    for pid, title, eprint in (
        (exact, "Spiking", "2501.01234"),
        (wrapped, "Wrapped", "2501.05678"),
    ):
        paper = papers[pid]
        assert str(paper["title"]).startswith(title) and paper["eprint"] == eprint
        assert (paper["venue"], paper["year"]) == ("NeurIPS", 2026)
    year_2026 = _listed("-d", str(SEEDS), "-d", str(snap), "-q", "year:2026 venue:neurips", db=db)
    assert exact in year_2026 and wrapped in year_2026 and len(year_2026) == 55
    cited = cli("cite", exact, "-d", str(SEEDS), "-d", str(snap), db=db)
    assert cited.returncode == 0, cited.stderr
    assert re.search(r"booktitle\s+= \{.*NeurIPS", cited.stdout)
    assert re.search(r"year\s+= \{2026\}", cited.stdout)
    assert re.search(r"eprint\s+= \{2501\.01234\}", cited.stdout)  # arXiv is still cited


def test_match_with_an_arxiv_record_writes_no_year_beside_the_dump_venue(
    seeds: Corpus, tmp_path: Path
) -> None:
    snap, exact, wrapped = _snapshot(tmp_path / "snap.jsonl", seeds)
    db = tmp_path / "lib.db"
    run = cli("match", str(snap), db=db)
    assert run.returncode == 0, run.stderr
    assert "2 matched (2 written" in run.stdout
    papers = _listed(db=db)  # the bundled dumps alone: the library's metadata shows
    for pid in (exact, wrapped):
        assert papers[pid]["title_derived"] is False
        assert (papers[pid]["venue"], papers[pid]["year"]) == ("NeurIPS", 2026)
    shown = cli("show", exact, db=db)
    assert "venue:     NeurIPS 2026" in shown.stdout
    assert len(_listed("-q", "year:2026", db=db)) == 55
    cited = cli("cite", exact, "--format", "text", db=db)
    assert "(2026)" in cited.stdout and "2025" not in cited.stdout.replace("2501.01234", "")
    again = cli("match", str(snap), db=db)
    assert "2 matched (0 written, 2 already there)" in again.stdout


def test_a_record_with_its_own_venue_brings_its_own_year(seeds: Corpus, tmp_path: Path) -> None:
    snap, exact, wrapped = _snapshot(tmp_path / "snap.jsonl", seeds, journal="ICML 2025")
    db = tmp_path / "lib.db"
    loaded = _listed("-d", str(SEEDS), "-d", str(snap), db=db)
    assert (loaded[exact]["venue"], loaded[exact]["year"]) == ("ICML 2025", 2025)
    assert (loaded[wrapped]["venue"], loaded[wrapped]["year"]) == ("ICML 2025", 2025)
    assert cli("match", str(snap), db=db).returncode == 0
    matched = _listed(db=db)
    assert (matched[exact]["venue"], matched[exact]["year"]) == ("ICML 2025", 2025)


def test_an_arxiv_record_alone_is_cited_with_its_posting_year(tmp_path: Path) -> None:
    """No dump venue to keep: the arXiv year is the paper's (an arXiv-only citation)."""
    snap = tmp_path / "alone.jsonl"
    snap.write_text(
        _arxiv_line("2501.00001", "Alone", "A record whose paper is in no dump loaded here.")
        + "\n",
        encoding="utf-8",
    )
    papers = _listed("-d", str(snap), db=tmp_path / "lib.db")
    (paper,) = papers.values()
    assert (paper["venue"], paper["year"]) == (None, 2025)


def test_venue_neurips_finds_a_paper_matched_to_neurips_long_name(
    seeds: Corpus, tmp_path: Path
) -> None:
    """A Zotero export's booktitle "Advances in Neural Information Processing Systems" is
    the venue `match` stores: ``venue:neurips`` still finds the paper (QA s17 #4b)."""
    first = _plain(seeds)[0]
    pid = next(p.id for p in seeds.papers if p.abstract == first)
    bib = tmp_path / "zotero.bib"
    bib.write_text(
        "@inproceedings{lovelace2026things,\n  title = {Real Things},\n"
        "  author = {Lovelace, Ada},\n"
        "  booktitle = {Advances in Neural Information Processing Systems},\n"
        "  year = {2026},\n  abstract = {" + first + "}\n}\n",
        encoding="utf-8",
    )
    db = tmp_path / "lib.db"
    assert cli("match", str(bib), db=db).returncode == 0
    assert _listed(db=db)[pid]["venue"] == "Advances in Neural Information Processing Systems"
    found = _listed("-q", "venue:neurips", db=db)
    assert pid in found and len(found) == 55
    assert pid in _listed("-q", "venue:advances", db=db)  # its own name still finds it
    assert pid not in _listed("-q", "venue:icml", db=db)
    assert pid in _listed("-q", "year:2026 venue:neur", db=db)


def test_meta_venue_sets_and_clears_the_venue_match_then_keeps(
    seeds: Corpus, tmp_path: Path
) -> None:
    """`meta --venue` corrects a venue (QA s17 #4: only `--clear` of everything was left);
    `match` keeps it as set by hand unless forced; `--venue ''` clears it."""
    snap, exact, _wrapped = _snapshot(tmp_path / "snap.jsonl", seeds, journal="ICML 2025")
    db = tmp_path / "lib.db"
    assert cli("match", str(snap), db=db).returncode == 0
    assert _listed(db=db)[exact]["venue"] == "ICML 2025"
    set_it = cli("meta", exact, "--venue", "NeurIPS", db=db)
    assert set_it.returncode == 0, set_it.stderr
    assert "venue:    NeurIPS" in set_it.stdout
    kept = cli("match", str(snap), db=db)  # the venue alone is set by hand: kept
    assert "1 kept (set by hand" in kept.stdout and _listed(db=db)[exact]["venue"] == "NeurIPS"
    assert cli("meta", exact, "--year", "2026", db=db).returncode == 0
    assert (_listed(db=db)[exact]["venue"], _listed(db=db)[exact]["year"]) == ("NeurIPS", 2026)
    assert exact in _listed("-q", "venue:neurips year:2026", db=db)
    assert "Neural Information" in cli("cite", exact, db=db).stdout
    again = cli("match", str(snap), db=db)
    assert "kept (set by hand" in again.stdout
    assert _listed(db=db)[exact]["venue"] == "NeurIPS"
    cleared = cli("meta", exact, "--venue", "", db=db)
    assert cleared.returncode == 0 and "venue:" not in cleared.stdout
    assert _listed(db=db)[exact]["venue"] == "ICML 2025"  # match's shows again
    assert cli("meta", exact, "--venue", "Mine", db=db).returncode == 0
    assert cli("meta", exact, "--clear", db=db).returncode == 0
    assert _listed(db=db)[exact]["venue"] == "ICML 2025"  # --clear clears it too
    unmatched = next(p.id for p in seeds.papers if p.id not in (exact, _wrapped))
    assert cli("meta", unmatched, "--venue", "COLT", db=db).returncode == 0
    shown = cli("show", unmatched, db=db).stdout
    assert "venue:     COLT 2026" in shown and "metadata:  set by hand" in shown

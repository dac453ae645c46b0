"""The benchmark of a library after `match` runs end to end on a tiny corpus and prints every
row (no figure is asserted: how fast is the benchmark's business, not a test's)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from abstract_reader.corpus import load_corpus
from abstract_reader.library import Library
from abstract_reader.metadata import PROVENANCE_PREFIX, provenance, set_by_hand

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"
TINY = 120  #: papers in the tiny corpus (a few repeated across its dumps, as in the big ones)

#: what the brief of the benchmark asks for, each a row of its table (key: its JSON name)
ROWS = {
    "tag": "a tag added and removed",
    "bookmark": "a bookmark toggled",
    "edit_refresh": "a metadata edit",
    "edit_sync": "… of which `sync_metadata`",
    "other_setting": "another process's setting seen by `refresh`",
    "other_match": "another process's `match` of 1 paper seen by `refresh`",
    "other_match_sync": "… of which `sync_metadata`",
    "key_p50": "p50",
    "key_p95": "a filter key, p95",
    "title_start": "`^word` (title start",
    "phrase": '`"of the"` (phrase)',
    "table_first": "the title word table rebuilt",
    "table_again": "the table kept",
}


def run(*argv: str | Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *(str(a) for a in argv)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        cwd=ROOT,
    )


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of corpora holding a tiny one (DATA/120), as benchmarks/data holds the big
    ones; made by make_corpus.py (deterministic)."""
    folder = tmp_path_factory.mktemp("data")
    done = run(BENCH / "make_corpus.py", str(TINY), "--out", folder / str(TINY), "--per-file", 40)
    assert done.returncode == 0, done.stderr
    return folder


@pytest.fixture(scope="module")
def measured(data: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """bench_library.py run on the tiny corpus, twice per row, keeping its library."""
    out = tmp_path_factory.mktemp("out")
    done = run(
        BENCH / "bench_library.py",
        "--dumps",
        data / str(TINY),
        "--runs",
        "2",
        "--json",
        out / "raw.json",
        "--keep",
        out / "kept.sqlite3",
    )
    assert done.returncode == 0, done.stderr
    return {
        "stdout": done.stdout,
        "raw": json.loads((out / "raw.json").read_text()),
        "kept": out / "kept.sqlite3",
    }


def table_rows(stdout: str) -> dict[str, list[str]]:
    """The Markdown table's rows: label → its cells."""
    rows = {}
    for line in stdout.splitlines():
        if line.startswith("| ") and not line.startswith(("| measured", "|---")):
            cells = [c.strip() for c in line.strip("|").split(" | ")]
            rows[cells[0]] = cells[1:]
    return rows


def test_every_row_is_printed_with_wall_and_cpu_time(measured: dict[str, Any]) -> None:
    stdout = measured["stdout"]
    first = stdout.splitlines()[0]
    assert "cores" in first and "Python" in first and "GB RAM" in first  # the machine, first
    rows = table_rows(stdout)
    raw = {r["key"]: r for r in measured["raw"]["rows"]}
    for key, words in ROWS.items():
        assert key in raw, key
        label = raw[key]["label"]
        assert words in label, (key, label)
        wall, cpu = rows[label]
        # a median and, over two runs, its range: "12.3 ms (10.1–14.5)"
        assert re.fullmatch(r"[\d,.]+ ms \([\d,.]+–[\d,.]+\)", wall), (label, wall)
        assert re.fullmatch(r"[\d,.]+ ms \([\d,.]+–[\d,.]+\)", cpu), (label, cpu)
        samples = 4 if key == "bookmark" else 2  # (on and off, each run)
        assert len(raw[key]["wall_ms"]) == len(raw[key]["cpu_ms"]) == samples, key


def test_half_the_papers_are_matched_in_the_library(measured: dict[str, Any], data: Path) -> None:
    """The library the benchmark measured holds matches as `match` writes them: half the
    papers with a real title, year and provenance (not "set by hand"), some with a venue."""
    corpus = load_corpus([data / str(TINY)])
    half = len(corpus.papers) // 2
    raw = measured["raw"]
    assert raw["papers"] == len(corpus.papers) and raw["matched"] == half
    library = Library(measured["kept"], backups=False)
    try:
        snap = library.snapshot
        ids = set(corpus.papers.ids())
        assert len(snap.metadata) == half and set(snap.metadata) <= ids
        sources = set()
        for pid, meta in snap.metadata.items():
            prov = provenance(snap, pid)
            assert prov is not None and not set_by_hand(meta, prov)
            assert meta.title and meta.authors
            # (an arXiv record's posting year is not put beside the dump's venue)
            assert meta.year or prov.source == "arxiv"
            assert meta.title != corpus.papers[corpus.index_of(pid)].title  # a real one
            sources.add(prov.source)
        assert sources == {"openreview", "arxiv", "bibtex"}
        assert len([k for k in snap.settings if k.startswith(PROVENANCE_PREFIX)]) == half
    finally:
        library.close()


def test_match_and_import_write_the_same_library(data: Path, tmp_path: Path) -> None:
    """`--via match` (match.write) and `--via import` (library import) make one library."""
    made = {}
    for via in ("match", "import"):
        done = run(
            BENCH / "bench_library.py",
            "--dumps",
            data / str(TINY),
            "--runs",
            "1",
            "--via",
            via,
            "--keep",
            tmp_path / f"{via}.sqlite3",
        )
        assert done.returncode == 0, done.stderr
        library = Library(tmp_path / f"{via}.sqlite3", backups=False)
        snap = library.snapshot
        made[via] = (snap.metadata, snap.settings)
        library.close()
    assert made["match"] == made["import"]
    assert len(made["match"][0]) == len(load_corpus([data / str(TINY)]).papers) // 2


def test_bench_all_adds_the_library_rows_to_its_table(data: Path) -> None:
    """`bench_all.py --library` runs bench_library.py per size and adds its rows."""
    done = run(
        BENCH / "bench_all.py",
        "--no-pty",
        "--no-api",
        "--sizes",
        "",
        "--library",
        "--library-sizes",
        str(TINY),
        "--library-runs",
        "1",
        "--library-data",
        data,
    )
    assert done.returncode == 0, done.stderr
    rows = table_rows(done.stdout)
    for words in ROWS.values():
        found = [name for name in rows if name.startswith("library with") and words in name]
        assert found, words
        (cell,) = rows[found[0]][:1]
        assert re.fullmatch(r"[\d,.]+ ms( \([\d,.]+–[\d,.]+\))?, CPU [\d,.]+ ms", cell), (
            found[0],
            cell,
        )

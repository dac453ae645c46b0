"""A library after `match`: the paths a user waits on once most papers have real metadata.

    python benchmarks/bench_library.py [--size 100000 [--data DIR] | --dumps PATH...]
        [--matched N] [--runs 5] [--via import|match] [--keep FILE] [--json FILE]

`bench_all.py` (and the README's table) starts every run from an empty library. A user who
ran `match` (or `library import`) has tens of thousands of papers with real titles, years,
venues and provenances in it, and the paths below read or follow all of them. This script:

1. loads the corpus (``--size N``: ``benchmarks/data/N`` or ``DIR/N``, made by
   make_corpus.py when missing; or ``--dumps``), builds its index (not timed: bench_all times that);
2. writes a library in which ``--matched`` papers (default: half the corpus, chosen by a
   seeded generator, spread over the dumps) have a real title (words of their own abstract),
   authors, a year, a URL, a DOI for some, and the provenance ``match`` stores (OpenReview
   with its venue, arXiv with its primary class, BibTeX): planned by ``match.outcomes`` from
   one matched record per paper, then written as ``library import`` writes (``--via
   import``, the default: one transaction) or as ``match`` writes (``--via match``:
   ``match.write``, two transactions per paper — slow at 100k). The same for a given corpus;
3. measures in-process, ``--runs`` times each (the rows alternate within a run), wall and
   CPU time (the process's, every thread):

   - the library opened (its snapshot read) and the index given every real title, year and
     venue (`Session.sync_metadata` once the index is ready, as the reader's start does);
   - a tag added and removed, a bookmark toggled: the write(s) and the reader's `refresh`
     after each (as the reader's own writes do);
   - a metadata edit (`e`: the title, checked against what was stored): its `refresh`, and
     the `sync_metadata` inside it;
   - another process's setting (another reader moving to a paper) seen by `refresh`; another
     process's `match` of one more paper seen by `refresh` and its `sync_metadata` (another
     connection to the file: what SQLite shows this one is what another process's write
     shows it);
   - a filter key: each query of bench_search.py typed key by key, as the reader runs a key
     (the query set, `SearchIndex.search` with the library's state, the order, and the
     50 rows a screen draws with their titles and venues); p50 and p95 of each run's keys;
   - a ``^word`` title query (the most common first word of the real titles) and the
     quoted phrase ``"of the"``, the search caches cleared before each (the session's first
     ``^word`` on its own row: it finds the first word of every paper's title, once);
   - the title word table rebuilt after one title changes: the first search of a title
     word after one own metadata edit (it rebuilds the table of the real titles' words),
     against the same search once more with the word caches cleared (the table kept).

Prints the machine first (as bench_all does), then medians (min–max) over the runs.
``--keep FILE`` keeps the library made (bench_pty's ``--library`` starts the reader on one);
``--json FILE`` writes every sample. Nothing here is a test: it prints figures.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from abstract_reader import match  # noqa: E402
from abstract_reader.corpus import Corpus, load_corpus  # noqa: E402
from abstract_reader.library import Library, Metadata, Snapshot  # noqa: E402
from abstract_reader.library.interchange import EXPORT_FORMAT, EXPORT_VERSION  # noqa: E402
from abstract_reader.metadata import (  # noqa: E402
    PROVENANCE_PREFIX,
    Provenance,
    provenance,
    set_by_hand,
)
from abstract_reader.search import SearchIndex  # noqa: E402
from abstract_reader.session import Session  # noqa: E402
from abstract_reader.sources import MetaRecord  # noqa: E402
from abstract_reader.text.titles import shown_title  # noqa: E402

PHRASE = '"of the"'
SEED = 14  #: issue #14; the same library for the same corpus
ROWS_DRAWN = 50  #: the rows a screen draws after a key
FALLBACK_QUERIES = ["robust", "robst estimation", "gausian mean", "graph neural"]

# -- the library: what `match` would have found ----------------------------------------------

FIRST = [
    "Ana", "Wei", "Jonas", "Priya", "Mateo", "Yuki", "Olga", "Kwame", "Lena", "Ravi",
    "Sofia", "Tomás", "Mei", "Lukas", "Amara", "Chen", "Ines", "Omar", "Hana", "Felix",
]  # fmt: skip
LAST = [
    "Müller", "Zhang", "Garcia", "Okafor", "Novak", "Sato", "Kumar", "Rossi", "Nguyen",
    "Larsen", "Haddad", "Kowalski", "Silva", "Park", "Ivanova", "Dubois", "Mensah", "Chen",
    "Schmidt", "Tanaka",
]  # fmt: skip
CONFERENCES = ["NeurIPS", "ICML", "ICLR", "AISTATS", "COLT", "UAI", "TMLR"]
ARXIV_CLASSES = ["cs.LG", "stat.ML", "cs.CV", "cs.CL", "cs.AI", "math.OC"]
STOP = frozenset(
    [
        "that",
        "this",
        "with",
        "from",
        "their",
        "these",
        "which",
        "have",
        "been",
        "using",
        "into",
        "than",
        "also",
        "more",
        "such",
        "each",
        "when",
        "where",
        "while",
        "both",
        "between",
        "over",
        "under",
        "only",
        "well",
        "show",
        "shows",
        "given",
        "most",
        "many",
        "other",
        "them",
        "they",
        "then",
        "there",
        "here",
        "what",
        "whose",
        "very",
        "much",
        "some",
        "upon",
        "about",
        "across",
    ]
)  # fmt: skip
TEMPLATES = [
    "{A} {B} for {C} {D}",
    "{A} {B}: {C} {D} with {E} {F}",
    "On the {A} of {B} {C}",
    "Towards {A} {B} {C}",
    "{A} and {B} in {C} {D} {E}",
    "Learning {A} {B} via {C} {D}",
    "The {A} of the {B} {C}",
    "{A}: {B} {C} for {D} {E}",
    "When Is {A} {B}? {C} {D}",
    "{A} {B} {C} Revisited",
]


def content_words(abstract: str) -> list[str]:
    """The abstract's words a title would be made of (4+ letters, no glue words), in order,
    each once."""
    import re

    seen: dict[str, None] = {}
    for word in re.findall(r"[A-Za-z]{4,}", abstract):
        low = word.lower()
        if low not in STOP:
            seen.setdefault(low, None)
    return list(seen)


def plan(corpus: Corpus, matched: int, seed: int = SEED) -> list[match.Outcome]:
    """``matched`` papers (spread over the corpus by a seeded generator) each matched to one
    record, as `match.outcomes` plans it: what `match` would write. Deterministic."""
    import numpy as np

    n = len(corpus.papers)
    matched = max(0, min(matched, n))
    rng = np.random.default_rng(seed)
    rows = np.sort(rng.choice(n, size=matched, replace=False)).tolist() if matched else []
    return plan_rows(corpus, rows, rng)


def plan_rows(corpus: Corpus, rows: Sequence[int], rng: Any) -> list[match.Outcome]:
    """These papers matched, each to one record made up from its abstract (a title of its
    words, authors, a year; an OpenReview, arXiv or BibTeX record, with what each gives),
    planned by `match.outcomes` against an empty library."""
    table = corpus.papers
    verdicts: dict[str, match.Verdict] = {}
    papers = []
    for k, row in enumerate(rows):
        paper = table[row]
        words = content_words(paper.abstract) or ["untitled", "paper"]
        picks = [words[int(i)] for i in rng.integers(0, len(words), 6)]
        caps = [w.capitalize() for w in picks]
        title = TEMPLATES[k % len(TEMPLATES)].format(**dict(zip("ABCDEF", caps, strict=True)))
        authors = tuple(
            f"{FIRST[int(a)]} {LAST[int(b)]}"
            for a, b in zip(
                rng.integers(0, len(FIRST), 6), rng.integers(0, len(LAST), 6), strict=True
            )
        )[: 1 + int(rng.integers(0, 6))]
        year = 2015 + int(rng.integers(0, 12))
        kind = k % 10
        if kind < 5:  # OpenReview: a conference's notes, with its venue
            conf = CONFERENCES[int(rng.integers(0, len(CONFERENCES)))]
            forum = "".join(chr(97 + int(c)) for c in rng.integers(0, 26, 10))
            rec = MetaRecord(
                "openreview", forum, f"net/openreview/{conf}.cc_{year}_Conference.json", k + 1,
                title=title, authors=authors, year=year, venue=f"{conf} {year}",
                url=f"https://openreview.net/forum?id={forum}",
            )  # fmt: skip
        elif kind < 8:  # arXiv: no venue, a primary class, the arXiv DOI
            arxiv_id = f"{year % 100:02d}{1 + row % 12:02d}.{row % 100_000:05d}"
            rec = MetaRecord(
                "arxiv", arxiv_id, "arxiv-metadata-oai-snapshot.json", k + 1,
                title=title, authors=authors, year=year,
                url=f"https://arxiv.org/abs/{arxiv_id}", doi=f"10.48550/arXiv.{arxiv_id}",
                eprint=arxiv_id,
                primary_class=ARXIV_CLASSES[int(rng.integers(0, len(ARXIV_CLASSES)))],
            )  # fmt: skip
        else:  # a Zotero BibTeX export
            conf = CONFERENCES[int(rng.integers(0, len(CONFERENCES)))]
            key = f"{authors[0].split()[-1].lower()}{year}{picks[0]}{row}"
            rec = MetaRecord(
                "bibtex", key, "zotero.bib", k + 1, title=title, authors=authors, year=year,
                venue=conf, doi=f"10.5555/{3_000_000 + row}",
            )  # fmt: skip
        score = float(80 + int(rng.integers(0, 21)))
        verdicts[paper.id] = match.Verdict(paper.id, "matched", [match.Candidate(rec, score)])
        papers.append(paper)
    return match.outcomes(papers, verdicts, Snapshot(), [])


def export_of(planned: Sequence[match.Outcome]) -> dict[str, Any]:
    """The planned matches as a library export (``library export``'s format): each paper's
    metadata, and its provenance with what was written, as `match.write` stores them."""
    papers: dict[str, Any] = {}
    settings: dict[str, str] = {}
    for outcome in planned:
        if outcome.meta is None or outcome.prov is None:
            continue
        pid = outcome.paper.id
        written = outcome.meta.as_dict()
        papers[pid] = {"metadata": written}
        prov = outcome.prov
        full = Provenance(
            prov.source, prov.record, prov.location, prov.score, prov.venue,
            prov.primary_class, written=written,
        )  # fmt: skip
        settings[PROVENANCE_PREFIX + pid] = full.to_json()
    return {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "papers": papers,
        "settings": settings,
    }


def build_library(path: Path, planned: Sequence[match.Outcome], via: str = "import") -> float:
    """Write the planned matches into a new library at ``path``, through `library import`'s
    code (``import``) or `match`'s (``match``); the seconds it took."""
    started = time.perf_counter()
    library = Library(path, backups=False)
    try:
        if via == "match":
            match.write(library, planned)
        else:
            library.import_data(export_of(planned))
    finally:
        library.close()
    return time.perf_counter() - started


def matched_papers(library: Library) -> int:
    """Papers whose metadata is exactly what `match` wrote (a check that the library holds
    matches, not titles set by hand)."""
    snap = library.snapshot
    return sum(
        1
        for pid, meta in snap.metadata.items()
        if not set_by_hand(meta, provenance(snap, pid)) and not meta.empty
    )


def copy_library(source: Path, target: Path) -> None:
    """A consistent copy of a library file (SQLite's backup: no half-written pages)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with (
        contextlib.closing(sqlite3.connect(source)) as src,
        contextlib.closing(sqlite3.connect(target)) as dst,
    ):
        src.backup(dst)


def prepare(paths: Sequence[Path], target: Path, matched: int | None = None) -> dict[str, Any]:
    """A matched library for these dumps at ``target`` (for bench_pty's ``--library``):
    what was made."""
    corpus = load_corpus([str(p) for p in paths])
    count = len(corpus.papers) // 2 if matched is None else matched
    planned = plan(corpus, count)
    seconds = build_library(target, planned)
    return {"papers": len(corpus.papers), "matched": count, "build_s": seconds}


#: the rows, in the order printed: key → what was measured
LABELS = {
    "open": "the library opened (its snapshot read)",
    "sync_all": "the index given every real title, year and venue (`sync_metadata`, start)",
    "tag": "a tag added and removed (2 writes, the reader's `refresh` after each)",
    "bookmark": "a bookmark toggled (1 write + `refresh`)",
    "edit_refresh": "a metadata edit (`e`, the title): the `refresh` after it",
    "edit_sync": "… of which `sync_metadata`",
    "other_setting": "another process's setting seen by `refresh`",
    "other_match": "another process's `match` of 1 paper seen by `refresh`",
    "other_match_sync": "… of which `sync_metadata`",
    "key_p50": "a filter key (bench_search's queries, key by key, 50 rows drawn), p50",
    "key_p95": "a filter key, p95",
    "title_start_first": "`^word`, the session's first (each paper's first title word found)",
    "title_start": "`^word` (title start; the real titles' commonest first word), cold",
    "phrase": f"`{PHRASE}` (phrase), cold",
    "table_first": "that word after 1 title changed (the title word table rebuilt), cold",
    "table_again": "that word again, cold (the table kept)",
}


# -- measuring ---------------------------------------------------------------------------------


@dataclass
class Row:
    """One measured row: wall and CPU milliseconds per sample."""

    key: str
    label: str
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)


class Timer:
    """Rows of samples, in the order first measured."""

    def __init__(self) -> None:
        self.rows: dict[str, Row] = {}

    def row(self, key: str) -> Row:
        return self.rows.setdefault(key, Row(key, LABELS[key]))

    @contextlib.contextmanager
    def time(self, key: str) -> Iterator[None]:
        row = self.row(key)
        wall, cpu = time.perf_counter(), time.process_time()
        yield
        row.wall.append(1000 * (time.perf_counter() - wall))
        row.cpu.append(1000 * (time.process_time() - cpu))

    def add(self, key: str, wall_ms: float, cpu_ms: float) -> None:
        row = self.row(key)
        row.wall.append(wall_ms)
        row.cpu.append(cpu_ms)


class TimedSession(Session):
    """The reader's Session, its `sync_metadata` timed (inside `refresh`, as it runs)."""

    synced: list[tuple[float, float]]

    def sync_metadata(self) -> None:
        wall, cpu = time.perf_counter(), time.process_time()
        super().sync_metadata()
        if not hasattr(self, "synced"):
            self.synced = []
        self.synced.append(
            (1000 * (time.perf_counter() - wall), 1000 * (time.process_time() - cpu))
        )

    def last_sync(self) -> tuple[float, float]:
        """The latest `sync_metadata` (zeros: it did not run since the last look)."""
        done = getattr(self, "synced", [])
        self.synced = []
        return done[-1] if done else (0.0, 0.0)


def percentile(values: Sequence[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def key_typed(session: Session, text: str) -> int:
    """What the reader does for a key in the filter, without the screen: the query set,
    searched with the library's state, taken, ordered, and the rows of a screen made (their
    titles, venues and matched spans). The rows' count."""
    session.set_query(text)
    index = session.index
    assert index is not None
    result = index.search(session.search_text, session.library_view())
    session.take_result(result)
    loaded = len(session.corpus.papers)
    session.apply_sort(loaded)
    count = session.row_count(loaded)
    for i in range(min(ROWS_DRAWN, count)):
        paper = session.brief_at(i)
        meta = session.metadata(paper)
        title = shown_title(meta.title)
        _ = meta.venue_label
        if session.result is not None:
            session.result.matcher.spans(title)
    return count


def first_title_word(library: Library) -> str:
    """The most common first word of the library's real titles (ties: the first in order)."""
    import re

    firsts: Counter[str] = Counter()
    for meta in library.snapshot.metadata.values():
        found = re.match(r"[A-Za-z]+", meta.title or "")
        if found:
            firsts[found.group().lower()] += 1
    return firsts.most_common(1)[0][0] if firsts else "robust"


def measure(
    *,
    corpus: Corpus,
    index: SearchIndex,
    path: Path,
    planned: Sequence[match.Outcome],
    runs: int,
    queries: Sequence[str],
    log: Callable[[str], None],
) -> tuple[Timer, dict[str, Any]]:
    timer = Timer()
    info: dict[str, Any] = {}
    for _ in range(runs):  # the library opened, the index given every override (untimed GC)
        gc.collect()
        with timer.time("open"):
            opened = Library(path, backups=False)
        fresh = Session(opened, corpus=corpus, index=index)  # (a new reader: all of them)
        with timer.time("sync_all"):
            fresh.sync_metadata()
        opened.close()

    library = Library(path, backups=False)
    other = Library(path, backups=False)  #: another process's connection to the file
    session = TimedSession(library, corpus=corpus, index=index)
    session.sync_metadata()
    session.refresh()
    info["matched_in_library"] = matched_papers(library)
    word = first_title_word(library)
    info["title_start_query"] = f"^{word}"
    table = corpus.papers
    matched_ids = [o.paper.id for o in planned]
    matched_set = set(matched_ids)
    unmatched = [r for r in range(len(table)) if table.id(r) not in matched_set]
    if not matched_ids or not unmatched:
        raise SystemExit("the corpus needs matched and unmatched papers (see --matched)")
    # the papers another process matches, one a run (records made as for the library's)
    import numpy as np

    rows = [unmatched[(run * 104_729) % len(unmatched)] for run in range(runs)]
    extra = plan_rows(corpus, rows, np.random.default_rng(SEED + 1))

    index.clear_query_caches()  # the first `^word` finds every derived title's first word, once
    with timer.time("title_start_first"):
        key_typed(session, f"^{word}")

    for run in range(runs):
        pid = matched_ids[(run * 7919) % len(matched_ids)]
        gc.collect()
        # a tag added and removed (two writes, each with the reader's refresh after it)
        with timer.time("tag"):
            library.add_tags([pid], ["bench-library"])
            session.refresh()
            library.remove_tags([pid], ["bench-library"])
            session.refresh()
        for on in (True, False):  # a bookmark toggled on, then off: two samples
            with timer.time("bookmark"):
                library.set_bookmark([pid], on)
                session.refresh()

        # a metadata edit (`e`: the title; checked against what was stored, as the editor)
        stored = library.snapshot.metadata[pid]
        edited = Metadata(
            f"Edited title {run}", stored.authors, stored.url, stored.doi, stored.year
        )
        library.set_metadata(pid, edited, expected=stored)
        session.last_sync()
        with timer.time("edit_refresh"):
            session.refresh()
        timer.add("edit_sync", *session.last_sync())

        # another process's setting (another reader on another paper)
        other.set_setting("paper", matched_ids[(run * 31 + 1) % len(matched_ids)])
        with timer.time("other_setting"):
            session.refresh()

        # another process's `match` of one more paper
        target = extra[run]
        match.write(other, [target])
        session.last_sync()
        with timer.time("other_match"):
            session.refresh()
        timer.add("other_match_sync", *session.last_sync())
        if target.paper.id not in library.snapshot.metadata:
            raise SystemExit("another process's match was not seen by refresh")

        # a filter key, over bench_search's queries typed key by key (a new session each)
        keys_wall: list[float] = []
        keys_cpu: list[float] = []
        for query in queries:
            index.clear_query_caches()
            for end in range(1, len(query) + 1):
                wall, cpu = time.perf_counter(), time.process_time()
                key_typed(session, query[:end])
                keys_wall.append(1000 * (time.perf_counter() - wall))
                keys_cpu.append(1000 * (time.process_time() - cpu))
        timer.add("key_p50", percentile(keys_wall, 50), percentile(keys_cpu, 50))
        timer.add("key_p95", percentile(keys_wall, 95), percentile(keys_cpu, 95))
        info["keys_per_run"] = len(keys_wall)

        # `^word` and a phrase, cold search caches
        index.clear_query_caches()
        with timer.time("title_start"):
            hits = key_typed(session, f"^{word}")
        info["title_start_hits"] = hits
        index.clear_query_caches()
        with timer.time("phrase"):
            hits = key_typed(session, PHRASE)
        info["phrase_hits"] = hits

        # the title word table: one title changed, then the first search of a title word
        stored = library.snapshot.metadata[pid]
        retitled = Metadata(
            f"Retitled {word} {run}", stored.authors, stored.url, stored.doi, stored.year
        )
        library.set_metadata(pid, retitled, expected=stored)
        session.refresh()
        index.clear_query_caches()
        with timer.time("table_first"):
            key_typed(session, word)
        index.clear_query_caches()
        with timer.time("table_again"):
            key_typed(session, word)
        log(f"  run {run + 1}/{runs} done")
    session.set_query("")
    other.close()
    library.close()
    return timer, info


# -- the report --------------------------------------------------------------------------------


def spread(values: Sequence[float]) -> str:
    """'median (min–max)' in ms; '–' when there is nothing."""
    if not values:
        return "–"
    digits = 1 if statistics.median(values) < 100 else 0
    text = f"{statistics.median(values):,.{digits}f} ms"
    if len(values) > 1:
        text += f" ({min(values):,.{digits}f}–{max(values):,.{digits}f})"
    return text


def in_order(timer: Timer) -> list[Row]:
    """The rows measured, in the order of `LABELS`."""
    return [timer.rows[key] for key in LABELS if key in timer.rows]


def report(timer: Timer) -> list[str]:
    lines = ["| measured: median (min–max) | wall | CPU |", "|---|---|---|"]
    for row in in_order(timer):
        lines.append(f"| {row.label} | {spread(row.wall)} | {spread(row.cpu)} |")
    return lines


DATA = ROOT / "benchmarks" / "data"


def corpus_paths(size: int, data: Path = DATA) -> list[Path]:
    """The benchmark corpus of ``size`` papers (DATA/SIZE, made when missing)."""
    folder = data / str(size)
    if not folder.is_dir() or not any(folder.glob("*.txt")):
        from make_corpus import make

        make(size, folder, 5000)
    return sorted(folder.glob("*.txt"))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--size", type=int, default=100_000, help="the corpus DATA/SIZE")
    parser.add_argument(
        "--data", type=Path, default=DATA, help="where the corpora are (default benchmarks/data)"
    )
    parser.add_argument("--dumps", nargs="+", type=Path, help="these dumps instead of --size")
    parser.add_argument("--matched", type=int, help="papers with real metadata (default half)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--via", choices=("import", "match"), default="import")
    parser.add_argument("--keep", type=Path, help="keep the library made at this path")
    parser.add_argument("--json", type=Path, help="write every sample here")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")

    from bench_all import load, machine  # (bench_all imports pyte: only when run)

    info = machine()
    info["load_before"] = load()
    print(
        f"{info['date_utc']} · commit {info['commit']} · {info.get('cpu', '?')}, "
        f"{info['cores']} cores ({info['cores_usable']} usable), {info.get('ram_gb', '?')} GB"
        f" RAM · Python {info['python']} · numpy {info.get('numpy', '?')} · rapidfuzz "
        f"{info.get('rapidfuzz', '?')}\nload average before: {info['load_before']}",
        flush=True,
    )
    started = time.perf_counter()

    def log(line: str) -> None:
        print(f"[{time.perf_counter() - started:5.0f} s]{line}", flush=True)

    paths = [Path(p) for p in args.dumps] if args.dumps else corpus_paths(args.size, args.data)
    corpus = load_corpus([str(p) for p in paths])
    n = len(corpus.papers)
    count = n // 2 if args.matched is None else args.matched
    if not 0 < count < n:
        parser.error(f"--matched must be between 1 and {n - 1:,} (the corpus has {n:,} papers)")
    t = time.perf_counter()
    index = SearchIndex(corpus)
    prepare_masks = getattr(index, "prepare_prefix_masks", None)
    if prepare_masks is not None:  # as the reader does once the index is ready
        prepare_masks()
    log(f" {n:,} papers loaded and indexed ({time.perf_counter() - t:.1f} s, not measured)")
    try:
        from bench_search import QUERIES as queries
    except ImportError:
        queries = FALLBACK_QUERIES

    with tempfile.TemporaryDirectory(prefix="bench-library-") as tmp:
        path = Path(tmp) / "library.sqlite3"
        t = time.perf_counter()
        planned = plan(corpus, count)
        plan_s = time.perf_counter() - t
        build_s = build_library(path, planned, args.via)
        size_mb = path.stat().st_size / 1e6
        log(
            f" library of {count:,} matched papers planned in {plan_s:.1f} s, written through"
            f" {'`match`' if args.via == 'match' else '`library import`'}'s code in "
            f"{build_s:.1f} s ({size_mb:.1f} MB)"
        )
        if args.keep:
            copy_library(path, args.keep)
        timer, found = measure(
            corpus=corpus,
            index=index,
            path=path,
            planned=planned,
            runs=args.runs,
            queries=queries,
            log=log,
        )
    info["load_after"] = load()
    print()
    print(
        f"{n:,} papers, {count:,} matched ({found['matched_in_library']:,} in the library as"
        f" `match` writes them: checked); {args.runs} run(s); filter keys: "
        f"{found.get('keys_per_run', 0)} per run ({len(queries)} queries of bench_search.py);"
        f" `{found['title_start_query']}` {found['title_start_hits']:,} hits, `{PHRASE}` "
        f"{found['phrase_hits']:,} hits; load average {info['load_before']} before, "
        f"{info['load_after']} after; {(time.perf_counter() - started) / 60:.1f} min"
    )
    print()
    print("\n".join(report(timer)))
    if args.json:
        raw = {
            "machine": info,
            "papers": n,
            "matched": count,
            "via": args.via,
            "plan_s": plan_s,
            "build_s": build_s,
            "library_mb": size_mb,
            "found": found,
            "rows": [
                {"key": r.key, "label": r.label, "wall_ms": r.wall, "cpu_ms": r.cpu}
                for r in in_order(timer)
            ],
        }
        args.json.write_text(json.dumps(raw, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Every row of issue #14's table, in one run: the README's performance table and raw samples.

    python benchmarks/bench_all.py [--runs 5] [--sizes 55,10000,100000] [--million]
        [--million-runs 1] [--api-runs N] [--library [--library-pty]] [--out bench.json]
        [--md table.md]

What a person sees (bench_pty.py: the installed reader in a real 140×40 pty, its screen
rendered by pyte), at each size, cold (fresh library and caches) and warm (the caches of that
cold run), runs alternating with a bare Textual app at 55: first rows, first abstract text,
all loaded, fully indexed, the echo of keys typed while loading/indexing (p95), last key →
filtered list, `m` → the like list, and memory sampled every 10 ms of the reader and of the
reader with its tokenising helper, per phase.

Through the public API (each run a fresh process, at 100k and 1M): the index build, cold;
per-keystroke search p95 over the queries of bench_search.py typed key by key (search + the
50 rows a screen draws); the phrase `"of the"`, cold (empty word/phrase caches) and warm.

A library after `match` (``--library``, at ``--library-sizes``, default 10k and 100k; each
size a fresh process of bench_library.py with ``--library-runs`` runs): half the papers with
real titles, years, venues and provenances, then in-process, wall and CPU: the library
opened, every override given to the index, a tag added and removed, a bookmark toggled, a
metadata edit's refresh and `sync_metadata`, another process's setting and `match` of one
paper seen by `refresh`, filter keys p50/p95 with the real titles, ``^word``, the phrase, the
title word table rebuilt after one title changed. ``--library-pty`` also starts the reader
in the pty on such a library (first rows, fully indexed, last key → filtered list, cold and
warm; ``--library-runs`` runs).

Prints the machine (CPU, cores, RAM, Python, Textual, load average before and after), the
commit and the date, then a Markdown table (rows: the issue's; columns: the sizes and the
target) with medians (min–max), and the memory per phase. ``--out`` writes every raw sample
as JSON. 1M (behind ``--million``) needs ~8–10 GB of RAM and ~10 minutes a run.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_pty  # noqa: E402

PHRASE = '"of the"'
#: rough seconds per run on a quiet 2-core machine (pty cold + warm, + bare app at 55;
#: api: a fresh process loading the corpus and building the index), for the estimate
EST_PTY = {55: 6, 10_000: 16, 100_000: 45, 1_000_000: 400}
EST_SETUP = {55: 3, 10_000: 5, 100_000: 30, 1_000_000: 300}
EST_API = {100_000: 15, 1_000_000: 200}
#: bench_library.py: setup (corpus, index, library written) and each run
EST_LIB_SETUP = {10_000: 5, 100_000: 30}
EST_LIB_RUN = {10_000: 2, 100_000: 15}


# -- the public API, in a fresh process -------------------------------------------------------
def api_child(size: int) -> None:
    """One run: the corpus parsed (not timed), then the
    index build cold (timed), per-keystroke search, the phrase; one JSON line."""
    sys.path.insert(0, str(ROOT / "src"))
    from abstract_reader.corpus import load_corpus
    from abstract_reader.search import SearchIndex

    try:  # the queries of the `query` engineer's benchmark, when it has them
        from bench_search import QUERIES as queries
    except ImportError:
        queries = ["robust", "robst estimation", "gausian mean", "graph neural"]
    paths, _ = bench_pty.corpus_for(size)
    corpus = load_corpus([str(p) for p in paths])  # parsed, as in a cold start
    import numpy  # noqa: F401  (imports are not the build)
    import rapidfuzz  # noqa: F401

    def cpu() -> float:
        own = resource.getrusage(resource.RUSAGE_SELF)
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime

    out: dict[str, Any] = {"papers": len(corpus.papers)}
    cpu0, t = cpu(), time.perf_counter()
    index = SearchIndex(corpus)  # no cache folder: built
    out["build_s"] = time.perf_counter() - t
    out["build_cpu_s"] = cpu() - cpu0

    # the reader makes the short prefixes' masks in the background once the index is
    # ready (`similar.prepare`): measured as in that steady state, not while they are made
    prepare = getattr(index, "prepare_prefix_masks", None)
    if prepare is not None:
        prepare()

    def clear() -> None:  # every query as in a new session (the masks made ahead stay)
        clear_caches = getattr(index, "clear_query_caches", None)
        if clear_caches is not None:
            clear_caches()
            return
        for name in ("_word_cache", "_phrase_cache"):
            cache_ = getattr(index, name, None)
            if cache_ is not None:
                cache_.clear()

    keys: list[float] = []
    for query in queries:
        clear()
        for end in range(1, len(query) + 1):
            t = time.perf_counter()
            result = index.search(query[:end])
            for i in range(min(50, len(result))):  # the rows a screen draws
                result.paper_at(i)
            keys.append(1000 * (time.perf_counter() - t))
    out["keystroke_ms"] = keys
    clear()
    t = time.perf_counter()
    result = index.search(PHRASE)
    out["phrase_cold_ms"] = 1000 * (time.perf_counter() - t)
    t = time.perf_counter()
    result = index.search(PHRASE)
    out["phrase_warm_ms"] = 1000 * (time.perf_counter() - t)
    out["phrase_hits"] = len(result)
    out["phrase_notes"] = list(getattr(result, "notes", ()))
    out["self_peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out))


def run_api(size: int, runs: int, log: Callable[[str], None]) -> list[dict[str, Any]]:
    """``runs`` fresh processes;
    the peak RSS of each, with its helper processes, sampled from here every 10 ms."""
    results = []
    for n in range(runs):
        with tempfile.TemporaryFile("w+") as out:
            child = subprocess.Popen(
                [sys.executable, __file__, "--api-child", str(size)],
                stdout=out,
                stderr=subprocess.PIPE,
                text=True,
            )
            peak = 0
            while child.poll() is None:
                peak = max(peak, bench_pty.tree_rss_kb(child.pid))
                time.sleep(0.01)
            err = child.stderr.read() if child.stderr else ""
            out.seek(0)
            lines = out.read().strip().splitlines()
            if child.returncode != 0 or not lines:
                row: dict[str, Any] = {"error": (err.strip().splitlines() or ["failed"])[-1]}
            else:
                row = json.loads(lines[-1])
                row["tree_peak_mb"] = peak / 1024
        results.append(row)
        log(
            f"  {size:,} api run {n + 1}/{runs}: "
            + (
                row["error"]
                if "error" in row
                else f"index build {row['build_s']:.2f} s, keystroke p95 "
                f"{p95(row['keystroke_ms']):.1f} ms, {PHRASE} {row['phrase_cold_ms']:.0f} ms"
            )
        )
    return results


# -- a library after `match` (bench_library.py, a fresh process per size) ---------------------
def run_library(
    size: int, runs: int, log: Callable[[str], None], data: Path | None = None
) -> dict[str, Any]:
    """bench_library.py at ``size`` with ``runs`` runs (the corpus in ``data``/SIZE, default
    benchmarks/data): its JSON (rows of samples), or ``{"error": …}``."""
    with tempfile.TemporaryDirectory(prefix=f"bench-library-{size}-") as tmp:
        out = Path(tmp) / "library.json"
        done = subprocess.run(
            [
                sys.executable,
                str(ROOT / "benchmarks" / "bench_library.py"),
                "--size",
                str(size),
                "--runs",
                str(runs),
                "--json",
                str(out),
                *(["--data", str(data)] if data is not None else []),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0 or not out.exists():
            problem = (done.stderr.strip().splitlines() or ["failed"])[-1]
            log(f"  {size:,} library: {problem}")
            return {"error": problem}
        result: dict[str, Any] = json.loads(out.read_text())
    rows = {r["key"]: r for r in result["rows"]}

    def med(key: str) -> str:
        return f"{statistics.median(rows[key]['wall_ms']):.1f} ms" if key in rows else "–"

    log(
        f"  {size:,} library ({result['matched']:,} matched, written in "
        f"{result['build_s']:.1f} s): key p95 {med('key_p95')}, tag {med('tag')}, "
        f"other's match {med('other_match')}, title table {med('table_first')}"
    )
    return result


# -- figures ----------------------------------------------------------------------------------
def p95(values: Sequence[float]) -> float:
    return bench_pty.p95(list(values))


def spread(values: Sequence[float], unit: str, digits: int | None = None) -> str:
    """'median unit (min–max)'; '–' when there is nothing."""
    vals = [v for v in values if not math.isnan(v)]
    if not vals:
        return "–"
    if digits is None:
        digits = 0 if unit in ("ms", "MB") else 2
    med = statistics.median(vals)
    if unit == "MB" and med >= 1024:
        vals = [v / 1024 for v in vals]
        med, unit, digits = med / 1024, "GB", 1
    sep = "" if unit == "×" else " "
    text = f"{med:,.{digits}f}{sep}{unit}"
    if len(vals) > 1:
        text += f" ({min(vals):,.{digits}f}–{max(vals):,.{digits}f})"
    return text


def of(rows: list[dict[str, Any]], key: str) -> list[float]:
    return [float(r[key]) for r in rows if key in r]


def pair(result: dict[str, Any] | None, key: str, unit: str) -> str:
    """'cold / warm' of a pty figure."""
    if result is None:
        return ""
    return f"{spread(of(result['cold'], key), unit)} / {spread(of(result['warm'], key), unit)}"


def plural(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def size_label(size: int) -> str:
    named = {55: "55 (bundled)", 1_000_000: "1M"}
    return named.get(size, f"{size // 1000}k" if size % 1000 == 0 else f"{size:,}")


def table(
    pty: dict[int, dict[str, Any]],
    api: dict[int, list[dict[str, Any]]],
    lib: dict[int, dict[str, Any]] | None = None,
    pty_lib: dict[int, dict[str, Any]] | None = None,
) -> list[str]:
    """The Markdown table; ``lib``: bench_library.py's results, ``pty_lib``: the pty runs
    on such a library (rows of their own, after the issue's)."""
    lib = lib or {}
    pty_lib = pty_lib or {}
    sizes = sorted(set(pty) | set(api) | set(lib) | set(pty_lib))
    head = "| measured: median (min–max) | " + " | ".join(size_label(s) for s in sizes)
    lines = [head + " | target |", "|---" * (len(sizes) + 2) + "|"]

    def row(name: str, cell: Callable[[int], str], target: str) -> None:
        cells = [cell(s) for s in sizes]
        if any(cells):  # (a row of no size measured, e.g. the pty's with --no-pty: left out)
            lines.append(f"| {name} | " + " | ".join(cells) + f" | {target} |")

    def echo(s: int) -> str:
        r = pty.get(s)
        if r is None:
            return ""
        parts = []
        for kind in ("cold", "warm"):  # all the keys of all runs; the runs' own p95 range
            keys = [k for x in r[kind] for k in x.get("echo_ms", [])]
            runs = of(r[kind], "echo_p95_ms")
            parts.append(
                f"{p95(keys):.0f} ms [{plural(len(keys), 'key')}, runs {min(runs):.0f}–{max(runs):.0f}]"
                if keys
                else "– [0 keys]"
            )
        return " / ".join(parts)

    def bare(s: int) -> str:
        r = pty.get(s)
        if r is None or not r["bare"]:
            return ""
        out = []
        for key in ("first_rows", "first_text"):  # per run: reader (warm) / bare of that run
            ratios = [w[key] / b for w, b in zip(r["warm"], r["bare"], strict=False) if key in w]
            out.append(spread(ratios, "×"))
        return f"bare {spread(r['bare'], 's')}: {out[0]} rows, {out[1]} text"

    def api_cell(
        key: str, how: Callable[[dict[str, Any]], float], unit: str
    ) -> Callable[[int], str]:
        def cell(s: int) -> str:
            rows = [r for r in api.get(s, []) if key in r]
            return spread([how(r) for r in rows], unit, 1 if unit == "ms" else None) if rows else ""

        return cell

    row(
        "peak RSS, reader alone, cold / warm",
        lambda s: pair(pty.get(s), "rss_peak_mb", "MB"),
        "≤ 350 MB at 100k, ≤ 2 GB at 1M",
    )
    row(
        "peak RSS, reader + tokenising helper, cold / warm",
        lambda s: pair(pty.get(s), "rss_tree_peak_mb", "MB"),
        "",
    )
    row(
        "first rows, cold / warm",
        lambda s: pair(pty.get(s), "first_rows", "s"),
        "≤ 1 s both; warm never slower",
    )
    row("first abstract text, cold / warm", lambda s: pair(pty.get(s), "first_text", "s"), "")
    row(
        "start → fully indexed, cold / warm",
        lambda s: pair(pty.get(s), "indexed", "s"),
        "1M: ≤ 60 s cold, ≤ 3 s warm",
    )
    row("echo of a key typed while loading/indexing, p95, cold / warm", echo, "≤ 50 ms")
    row(
        "last key → filtered list on screen, cold / warm",
        lambda s: pair(pty.get(s), "last_key_ms", "ms"),
        "≤ 20 ms",
    )
    row(
        "last key → the list's first paper in the paper pane too, cold / warm",
        lambda s: pair(pty.get(s), "last_key_paper_ms", "ms"),
        "",
    )
    row(
        "last key → that frame's bytes on the pty (before pyte parses them), cold / warm",
        lambda s: pair(pty.get(s), "last_key_bytes_ms", "ms"),
        "",
    )
    row(
        "per-keystroke search p95 (public API)",
        api_cell("keystroke_ms", lambda r: p95(r["keystroke_ms"]), "ms"),
        "≤ 3 ms at 100k, ≤ 16 ms at 1M",
    )
    row(
        'phrase query `"of the"`, cold caches (public API)',
        api_cell("phrase_cold_ms", lambda r: r["phrase_cold_ms"], "ms"),
        "≤ 50 ms at 100k",
    )
    row(
        "index build, cold (public API, in-process)",
        api_cell("build_s", lambda r: r["build_s"], "s"),
        "≤ 3 s at 100k",
    )
    row("vs a bare Textual app: start → first rows / first text (warm)", bare, "≤ 1.3× both")
    row(
        "`m` → like list on screen, cold / warm",
        lambda s: pair(pty.get(s), "like_ms", "ms"),
        "",
    )
    matched = "library with ½ the papers matched"
    for key, name in (
        ("first_rows", "first rows"),
        ("indexed", "start → fully indexed"),
        ("last_key_ms", "last key → filtered list on screen"),
    ):
        if pty_lib:
            unit = "ms" if key.endswith("_ms") else "s"
            row(
                f"{matched}: {name}, cold / warm",
                lambda s, key=key, unit=unit: pair(pty_lib.get(s), key, unit),  # type: ignore[misc]
                "",
            )
    labels: dict[str, str] = {}  # every row of any size, in the order measured
    for result in lib.values():
        for r in result.get("rows", []):
            labels.setdefault(r["key"], r["label"])

    def lib_cell(s: int, key: str) -> str:
        result = lib.get(s)
        if result is None:
            return ""
        if "error" in result:
            return "failed"
        found = [r for r in result["rows"] if r["key"] == key]
        if not found:
            return "–"
        cpu = statistics.median(found[0]["cpu_ms"])
        return f"{spread(found[0]['wall_ms'], 'ms', 1)}, CPU {cpu:,.1f} ms"

    for key, label in labels.items():
        row(f"{matched}: {label}", lambda s, key=key: lib_cell(s, key), "")  # type: ignore[misc]
    return lines


def phase_table(result: dict[str, Any]) -> list[str]:
    """Per phase (from the previous mark to this one; in the order they ended): when it
    ended, the peak RSS of the reader and of the reader with its helper sampled in it, and
    the reader's VmHWM at its end (exact, so a spike between samples shows there); medians
    over the runs. A Markdown table."""
    lines = [
        f"| {size_label(result['size'])}: phase, ends when … | cold: ends at | reader peak |"
        " with helper | VmHWM | warm: ends at | reader peak | with helper | VmHWM |",
        "|---" * 9 + "|",
    ]

    def ends(name: str) -> float:  # the phases in the order they ended (cold runs first)
        for kind in ("cold", "warm"):
            times = [r["phases"][name]["to_s"] for r in result[kind] if name in r.get("phases", {})]
            if times:
                return statistics.median(times)
        return math.inf

    names = sorted([*bench_pty.PHASES, "end"], key=ends)
    for name in names:
        cells = []
        for kind in ("cold", "warm"):
            rows = [r["phases"][name] for r in result[kind] if name in r.get("phases", {})]
            if not rows:
                cells.append("– | | |")
                continue
            cells.append(
                f"{statistics.median(x['to_s'] for x in rows):.2f} s | "
                f"{statistics.median(x['rss_mb'] for x in rows):,.0f} MB | "
                f"{statistics.median(x['tree_mb'] for x in rows):,.0f} MB | "
                f"{statistics.median(x['hwm_mb'] for x in rows):,.0f} MB"
            )
        lines.append(f"| {PHASE_NAMES.get(name, name)} | {cells[0]} | {cells[1]} |")
    return lines


PHASE_NAMES = {
    "first_rows": "→ first rows",
    "first_text": "→ first abstract text",
    "loaded": "→ all loaded",
    "indexed": "→ fully indexed",
    "last_key": "→ last key's list shown",
    "like": "→ like list (similarity model)",
    "cached": "→ caches written",
    "end": "→ end (SIGTERM)",
}


# -- the machine ------------------------------------------------------------------------------
def machine() -> dict[str, Any]:
    info: dict[str, Any] = {
        "date_utc": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cores": os.cpu_count(),
        "cores_usable": len(os.sched_getaffinity(0)),
    }
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                info["ram_gb"] = round(int(line.split()[1]) / 1024**2, 1)
    except OSError:
        pass
    from importlib.metadata import version

    for package in ("textual", "pyte", "numpy", "rapidfuzz"):
        try:
            info[package] = version(package)
        except Exception:  # a version we cannot tell is left out
            continue

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=False
        )
        return done.stdout.strip()

    info["commit"] = git("rev-parse", "--short", "HEAD")
    if git("status", "--porcelain", "--untracked-files=no", "src"):
        info["commit"] += " (src modified)"
    return info


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    if "--api-child" in sys.argv:
        at = sys.argv.index("--api-child")
        api_child(int(sys.argv[at + 1]))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per size (default 5)")
    parser.add_argument("--sizes", default="55,10000,100000")
    parser.add_argument("--million", action="store_true", help="also 1,000,000 (~8–10 GB)")
    parser.add_argument("--million-runs", type=int, default=1)
    parser.add_argument("--api-runs", type=int, help="public-API runs per size (default --runs)")
    parser.add_argument(
        "--api-sizes", help="sizes measured through the public API (default: those ≥ 100,000)"
    )
    parser.add_argument("--no-pty", action="store_true", help="the public-API figures only")
    parser.add_argument("--no-api", action="store_true", help="the pty figures only")
    parser.add_argument(
        "--library",
        action="store_true",
        help="also a library with half the papers matched (bench_library.py)",
    )
    parser.add_argument("--library-sizes", default="10000,100000")
    parser.add_argument("--library-runs", type=int, help="runs per size (default --runs)")
    parser.add_argument(
        "--library-data", type=Path, help="the library phase's corpora: DIR/SIZE (not the pty's)"
    )
    parser.add_argument(
        "--library-pty",
        action="store_true",
        help="with --library: the reader in the pty on that library too",
    )
    parser.add_argument("--out", type=Path, help="write every raw sample here (JSON)")
    parser.add_argument("--md", type=Path, help="write the Markdown table here too")
    args = parser.parse_args()
    bench_pty.check_install()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    if args.million:
        sizes.append(1_000_000)
    api_runs = args.api_runs if args.api_runs is not None else args.runs

    def runs_for(size: int) -> int:
        return args.million_runs if size >= 1_000_000 else args.runs

    def api_runs_for(size: int) -> int:
        return args.million_runs if size >= 1_000_000 else api_runs

    if args.api_sizes:
        sizes += [int(s) for s in args.api_sizes.split(",") if s and int(s) not in sizes]
        api_sizes = [int(s) for s in args.api_sizes.split(",") if s]
    else:
        api_sizes = [s for s in sizes if s >= 100_000]
    if args.no_api:
        api_sizes = []
    pty_sizes = [] if args.no_pty else [int(s) for s in args.sizes.split(",") if s]
    if args.million and not args.no_pty:
        pty_sizes.append(1_000_000)
    lib_sizes = [int(s) for s in args.library_sizes.split(",") if s] if args.library else []
    lib_runs = args.library_runs if args.library_runs is not None else args.runs
    pty_lib_sizes = lib_sizes if args.library_pty else []
    info = machine()
    info["load_before"] = load()
    info["command"] = " ".join(["python", "benchmarks/bench_all.py", *sys.argv[1:]])
    estimate = sum(EST_SETUP.get(s, 30) + runs_for(s) * EST_PTY.get(s, 60) for s in pty_sizes)
    estimate += sum(api_runs_for(s) * EST_API.get(s, 30) for s in api_sizes)
    estimate += sum(EST_LIB_SETUP.get(s, 60) + lib_runs * EST_LIB_RUN.get(s, 30) for s in lib_sizes)
    estimate += sum(EST_SETUP.get(s, 30) + lib_runs * EST_PTY.get(s, 60) for s in pty_lib_sizes)
    print(
        f"{info['date_utc']} · commit {info['commit']} · {info.get('cpu', '?')}, "
        f"{info['cores']} cores ({info['cores_usable']} usable), {info.get('ram_gb', '?')} GB RAM"
        f" · Python {info['python']} · Textual {info.get('textual', '?')} · pty "
        f"{bench_pty.COLS}×{bench_pty.ROWS}\nload average before: {info['load_before']}"
        f"\nsizes {', '.join(f'{s:,}' for s in pty_sizes) or 'none'} in the pty: {args.runs} runs each"
        + (f" (1M: {args.million_runs})" if args.million else "")
        + f"; public API at {', '.join(f'{s:,}' for s in api_sizes) or 'no size'}"
        + (
            f"; a library with half the papers matched at {', '.join(f'{s:,}' for s in lib_sizes)}"
            f" ({plural(lib_runs, 'run')}{', in the pty too' if pty_lib_sizes else ''})"
            if lib_sizes
            else ""
        )
        + f"\nestimate on a quiet 2-core machine: ~{estimate / 60:.0f} min",
        flush=True,
    )
    started = time.perf_counter()

    def log(line: str) -> None:
        print(f"[{time.perf_counter() - started:5.0f} s]{line}", flush=True)

    pty: dict[int, dict[str, Any]] = {}
    api: dict[int, list[dict[str, Any]]] = {}
    took: dict[str, float] = {}
    for size in sizes:
        with tempfile.TemporaryDirectory(prefix=f"bench-all-{size}-") as tmp:
            t = time.perf_counter()
            if size in pty_sizes:
                pty[size] = bench_pty.run_size(
                    size, runs_for(size), Path(tmp), bench_pty.QUERIES, log
                )
            if size in api_sizes:
                api[size] = run_api(size, api_runs_for(size), log)
            took[str(size)] = time.perf_counter() - t
    lib: dict[int, dict[str, Any]] = {}
    pty_lib: dict[int, dict[str, Any]] = {}
    for size in lib_sizes:
        t = time.perf_counter()
        lib[size] = run_library(size, lib_runs, log, args.library_data)
        if size in pty_lib_sizes:
            with tempfile.TemporaryDirectory(prefix=f"bench-all-library-{size}-") as tmp:
                pty_lib[size] = bench_pty.run_size(
                    size, lib_runs, Path(tmp), bench_pty.QUERIES, log, library=True
                )
        took[f"library {size}"] = time.perf_counter() - t
    info["load_after"] = load()
    info["seconds"] = time.perf_counter() - started
    info["seconds_per_size"] = took

    lines = table(pty, api, lib, pty_lib)
    print()
    print(
        f"Measured {info['date_utc']}, commit {info['commit']}, on {info.get('cpu', '?')} "
        f"({info['cores']} cores, {info.get('ram_gb', '?')} GB RAM), Python {info['python']}, "
        f"Textual {info.get('textual', '?')}; load average {info['load_before']} before, "
        f"{info['load_after']} after; `{info['command']}`: "
        + ", ".join(
            [
                (
                    f"{size_label(s)} {plural(runs_for(s), 'run')}"
                    if s in pty_sizes
                    else f"{size_label(s)} {plural(api_runs_for(s), 'API run')}"
                )
                for s in sizes
            ]
            + [
                f"library with ½ matched {size_label(s)} {plural(lib_runs, 'run')}"
                + (" (and in the pty)" if s in pty_lib_sizes else "")
                for s in lib_sizes
            ]
        )
        + f" ({info['seconds'] / 60:.1f} min). Cold = a fresh library and cache folder; warm ="
        " the caches of that cold run. Echo: p95 of the keys typed while busy in all runs [their"
        " number, the range of each run's p95]."
    )
    print()
    print("\n".join(lines))
    for size in sorted(pty):
        print()
        print("\n".join(phase_table(pty[size])))
        queries = pty[size]
        before, after = queries["counts"]
        for kind in ("cold", "warm"):  # the echo split by what the status said
            split = []
            for phase in ("loading", "indexing"):
                lags = [
                    lag
                    for r in pty[size][kind]
                    for lag, when in zip(
                        r.get("echo_ms", []), r.get("echo_phase", []), strict=False
                    )
                    if when == phase
                ]
                if lags:
                    split.append(f"while {phase} {p95(lags):.0f} ms [{plural(len(lags), 'key')}]")
            on_pty = [lag for r in pty[size][kind] for lag in r.get("echo_bytes_ms", [])]
            if on_pty:  # when the bytes of the frame that showed each key were on the pty
                split.append(f"their frames on the pty {p95(on_pty):.0f} ms")
            if split:
                print(f"  {kind}: key echo p95 " + ", ".join(split))
        print(
            f"  last key: of {queries['query']!r} ({before:,} → {after:,} papers); first text:"
            f" {queries['word']!r} drawn in the paper pane"
        )
        for kind in ("cold", "warm"):
            for problem in sorted({r["error"] for r in pty[size][kind] if "error" in r}):
                print(f"  {kind} run failed: {problem}")
            redone = [
                what
                for what, key in (("dumps parsed", "parsed"), ("index built", "built"))
                if kind == "warm" and any(r.get(key) for r in pty[size][kind])
            ]
            if redone:  # a warm run that did not use the caches of its cold run
                print(f"  warm runs where the status showed: {', '.join(redone)} (no cache?)")
            if any(r.get("caches_missing") for r in pty[size][kind]):
                print(f"  {kind}: the caches were not written within 300 s of the like list")
    for size, rows in sorted(api.items()):
        good = [r for r in rows if "error" not in r]
        if good:
            print(
                f"\n{size_label(size)} public API ({plural(len(good), 'run')}): build CPU "
                f"{spread(of(good, 'build_cpu_s'), 's')}, peak with helper "
                f"{spread(of(good, 'tree_peak_mb'), 'MB')}; {PHRASE} warm "
                f"{spread(of(good, 'phrase_warm_ms'), 'ms', 1)}, {good[-1]['phrase_hits']:,} hits"
                + (f" ({'; '.join(good[-1]['phrase_notes'])})" if good[-1]["phrase_notes"] else "")
                + f"; keystrokes: {len(good[-1]['keystroke_ms'])} per run"
            )
        for problem in sorted({r["error"] for r in rows if "error" in r}):
            print(f"  api run failed: {problem}")
    print(
        "\nNot measured: the peers (arXiv-digest reader, coBib) of the issue's first paragraph;"
        " a cold OS page cache (the dumps are read once before the runs)."
    )
    if args.md:
        args.md.write_text("\n".join(lines) + "\n")
    if args.out:
        raw = {
            "machine": info,
            "pty": {str(s): r for s, r in pty.items()},
            "api": {str(s): r for s, r in api.items()},
            "library": {str(s): r for s, r in lib.items()},
            "pty_library": {str(s): r for s, r in pty_lib.items()},
        }
        args.out.write_text(json.dumps(raw, indent=1, default=str))
        print(f"raw samples: {args.out}")


if __name__ == "__main__":
    main()

"""Streaming an arXiv-snapshot-like JSON Lines file past the matcher. Prints records/s.

    python benchmarks/bench_match.py [--records N] [--papers M]

Writes N synthetic arXiv records (random prose from the bundled abstracts' vocabulary, hard-
wrapped like the snapshot; every 1000th a real abstract, lightly edited) and matches the
bundled papers (or M synthetic ones) against them, reading the file a line at a time as
`match` does. The real snapshot has ~3M records: multiply.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from abstract_reader.corpus import load_corpus  # noqa: E402
from abstract_reader.match import Matcher  # noqa: E402
from abstract_reader.sources import MetaRecord, read_records  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--papers", type=int, default=0, help="synthetic papers (0: seeds)")
    args = parser.parse_args()
    seeds = load_corpus([ROOT / "seeds"]).papers
    words = " ".join(p.abstract for p in seeds).split()
    rng = random.Random(1)
    papers = [(p.id, p.abstract) for p in seeds]
    for n in range(args.papers):
        papers.append((f"s{n}", " ".join(rng.choices(words, k=180))))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "snapshot.jsonl"
        with open(path, "w", encoding="utf-8") as out:
            for n in range(args.records):
                if n % 1000 == 0:
                    text = seeds[(n // 1000) % len(seeds)].abstract
                else:
                    text = " ".join(rng.choices(words, k=rng.randint(80, 250)))
                abstract = "  " + "\n  ".join(textwrap.wrap(text, 76)) + "\n"
                out.write(
                    json.dumps(
                        {
                            "id": f"2601.{n:05d}",
                            "title": f"Paper {n}",
                            "abstract": abstract,
                            "authors_parsed": [["Lovelace", "Ada", ""]],
                            "categories": "cs.LG",
                            "versions": [
                                {"version": "v1", "created": "Mon, 5 Jan 2026 00:00:00 GMT"}
                            ],
                        }
                    )
                    + "\n"
                )
        size = path.stat().st_size
        start = time.perf_counter()
        matcher = Matcher(papers)
        built = time.perf_counter() - start
        for item in read_records(path):
            if isinstance(item, MetaRecord):
                matcher.feed(item)
        elapsed = time.perf_counter() - start
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        matched = sum(v.status == "matched" for v in matcher.verdicts())
    rate = args.records / elapsed
    print(f"{args.records:,} records ({size / 1e6:.0f} MB) against {len(papers):,} papers")
    print(f"  index {built:.2f} s, total {elapsed:.1f} s: {rate:,.0f} records/s")
    print(f"  scored in full: {matcher.scored:,}; matched papers: {matched}")
    print(f"  peak RSS {peak / 1e6:.0f} MB (streamed: independent of the file size)")
    print(f"  3M records (the real snapshot) ≈ {3_000_000 / rate / 60:.0f} min")


if __name__ == "__main__":
    main()

"""The reader's export (E) and `export -o` on a large view: records, formatting, writing.

    python benchmarks/bench_export.py benchmarks/data/10000 [--repeat 3]

Times each phase of ``cite.export_to_file`` (what the export dialog runs in its thread) for
every export format, on the papers of the given dumps (make_corpus.py writes them). Prints
the median and min–max of the repeats, in seconds. The machine's load matters: say it.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from abstract_reader.cite import export_to_file, format_records, record
from abstract_reader.corpus import CorpusBuilder
from abstract_reader.formats import EXPORT_FORMATS
from abstract_reader.library import Library


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("dumps", nargs="+")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    builder = CorpusBuilder(args.dumps)
    for path in builder.files:
        builder.add_file(path)
    builder.finish()
    papers = list(builder.corpus.papers)
    with tempfile.TemporaryDirectory() as tmp:
        library = Library(Path(tmp) / "lib.sqlite3")
        snapshot = library.snapshot

        def timed(what: str, run: object) -> None:
            times = []
            for _ in range(args.repeat):
                start = time.perf_counter()
                run()  # type: ignore[operator]
                times.append(time.perf_counter() - start)
            print(
                f"{what:<28} {len(papers):>7} papers  median {statistics.median(times):6.2f} s"
                f"  ({min(times):.2f}–{max(times):.2f})"
            )

        timed("records", lambda: [record(p, snapshot) for p in papers])
        records = [record(p, snapshot) for p in papers]
        for fmt in EXPORT_FORMATS:
            timed(f"format {fmt}", lambda fmt=fmt: format_records(records, fmt))
        target = Path(tmp) / "out.bib"
        timed(
            "records+bibtex+write",
            lambda: export_to_file(
                [record(p, snapshot) for p in papers],
                "bibtex",
                target,
                force=True,
                with_abstract=False,
            ),
        )


if __name__ == "__main__":
    main()

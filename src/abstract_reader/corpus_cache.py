"""A cache of parsed corpora, so that reopening large unchanged dumps skips parsing.

Keyed like the search index: the package version, this format, and every dump's path, size
and modification time. Stored as ``.npz`` arrays and JSON (never pickle); anything that does
not check out — a missing field, a count that does not add up — is ignored and the dumps are
parsed again. Small corpora are not cached: parsing them is as fast as reading a cache.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from . import __version__
from .corpus import Corpus, CorpusBuilder, LoadError, Paper, Source
from .paths import files_key
from .sources import is_metadata_file

if TYPE_CHECKING:  # numpy is imported only when a cache is read or written (large corpora)
    import numpy as np

CORPUS_FORMAT = 1
MIN_BYTES = 4 << 20  #: corpora smaller than this are parsed every time
_KEEP = 3  #: cached corpora kept (each about the size of its dumps)


def key_for(files: Sequence[Path]) -> str | None:
    """The corpus cache's key: the dumps' paths, sizes and mtimes, this format and version."""
    return files_key(f"{__version__}/{CORPUS_FORMAT}", files)


def _blob(texts: Iterable[str]) -> np.ndarray:
    import numpy as np

    # NUL never occurs in sanitised text (it becomes U+2400), so it can separate the texts
    return np.frombuffer("\0".join(texts).encode("utf-8"), dtype=np.uint8)


def _texts(blob: np.ndarray, count: int) -> list[str]:
    texts = bytes(blob.tobytes()).decode("utf-8").split("\0") if count else []
    if len(texts) != count:
        raise ValueError("count mismatch")
    return texts


def save(cache_dir: Path, key: str, corpus: Corpus, file_errors: Sequence[LoadError]) -> None:
    """Write the parsed corpus (atomically); failing to write a cache is not an error."""
    import numpy as np

    papers = corpus.papers
    meta = {
        "format": CORPUS_FORMAT,
        "count": len(papers),
        "files": corpus.files,
        "venues": [p.venue for p in papers],
        "years": [p.year for p in papers],
        "sources": [[[s.file, s.index] for s in p.sources] for p in papers],
        "errors": [[e.path, e.message, e.fatal] for e in file_errors],
    }
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        tmp = cache_dir / f".{key}.{os.getpid()}.tmp.npz"
        with open(tmp, "wb") as handle:
            np.savez(
                handle,
                ids=np.array([p.id for p in papers], dtype="S16"),
                abstracts=_blob(p.abstract for p in papers),
                titles=_blob(p.title for p in papers),
                meta=_blob([json.dumps(meta)]),
            )
        os.replace(tmp, cache_dir / f"{key}.npz")
        entries = sorted(cache_dir.glob("*.npz"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in entries[_KEEP:]:
            old.unlink(missing_ok=True)
    except OSError:
        pass


def load(cache_dir: Path, key: str) -> tuple[list[Paper], list[LoadError], list[str]] | None:
    """(papers, per-file errors, loaded files) from the cache, or None when it cannot be
    trusted."""
    path = cache_dir / f"{key}.npz"
    if not path.is_file():
        return None
    import numpy as np

    try:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(_texts(data["meta"], 1)[0])
            count = int(meta["count"])
            if meta["format"] != CORPUS_FORMAT:
                return None
            ids = [raw.decode("ascii") for raw in data["ids"].tolist()]
            abstracts = _texts(data["abstracts"], count)
            titles = _texts(data["titles"], count)
        venues, years, sources = meta["venues"], meta["years"], meta["sources"]
        if not len(ids) == len(venues) == len(years) == len(sources) == count:
            return None
        papers = [
            Paper(
                id=ids[i],
                abstract=abstracts[i],
                title=titles[i],
                venue=venues[i],
                year=years[i],
                sources=[Source(str(f), int(n)) for f, n in sources[i]],
            )
            for i in range(count)
        ]
        errors = [LoadError(str(p), str(m), bool(f)) for p, m, f in meta["errors"]]
        return papers, errors, [str(f) for f in meta["files"]]
    except Exception:  # a damaged or foreign file: parse the dumps again
        return None


def load_corpus_cached(
    paths: Iterable[str | os.PathLike[str]] | None,
    cache_dir: Path,
    min_bytes: int = MIN_BYTES,
) -> Corpus:
    """``load_corpus``, from the cache when the same dumps were parsed before."""
    builder = CorpusBuilder(paths)
    corpus = builder.corpus
    total = sum(_size(p) for p in builder.files)
    # only dumps are cached: metadata records carry fields this format does not keep
    dumps_only = not any(is_metadata_file(p) for p in builder.files)
    key = key_for(builder.files) if total >= min_bytes and dumps_only else None
    if key is not None:
        cached = load(cache_dir, key)
        if cached is not None:
            papers, file_errors, files = cached
            adopt(corpus, papers, file_errors, files)
            return corpus
    first_file_error = len(corpus.errors)
    for path in builder.files:
        builder.add_file(path)
    builder.finish()
    if key is not None:
        save(cache_dir, key, corpus, corpus.errors[first_file_error:])
    return corpus


def adopt(corpus: Corpus, papers: list[Paper], errors: list[LoadError], files: list[str]) -> None:
    """Fill ``corpus`` with papers read from the cache."""
    corpus.papers.extend(papers)
    corpus.errors.extend(errors)
    corpus.files.extend(files)
    corpus._by_id.update((p.id, p) for p in papers)


def _size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0

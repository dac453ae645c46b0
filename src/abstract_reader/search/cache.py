"""The on-disk index cache: flat numpy arrays in an ``.npz`` (never pickle)."""

from __future__ import annotations

import os
import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..corpus import Corpus
from .postings import _FieldIndex

INDEX_FORMAT = 5


def cache_key_for(files: Sequence[str]) -> str | None:
    """The index cache's key: the dumps' paths, sizes and mtimes, and this format."""
    from ..paths import files_key

    return files_key(f"format={INDEX_FORMAT}", files)


def _ids_digest(corpus: Corpus) -> int:
    crc = 0
    for paper in corpus.papers:
        crc = zlib.crc32(paper.id.encode() + paper.title.encode(), crc)
    return crc


def save_cache(
    cache_dir: Path, key: str, corpus: Corpus, text: _FieldIndex, titles: _FieldIndex
) -> None:
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        arrays = {**text.arrays("text"), **titles.arrays("title")}
        arrays["meta"] = np.array([INDEX_FORMAT, len(corpus.papers), _ids_digest(corpus)], np.int64)
        tmp = cache_dir / f".{key}.{os.getpid()}.tmp.npz"
        with open(tmp, "wb") as handle:
            np.savez(handle, **arrays)  # type: ignore[arg-type]
        os.replace(tmp, cache_dir / f"{key}.npz")
        entries = sorted(cache_dir.glob("*.npz"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in entries[4:]:  # the newest four indexes
            old.unlink(missing_ok=True)
    except OSError:
        pass  # a cache is an optimisation: failing to write it is not an error


def load_cache(
    cache_dir: Path | None, key: str | None, corpus: Corpus
) -> tuple[_FieldIndex, _FieldIndex] | None:
    if cache_dir is None or key is None:
        return None
    path = cache_dir / f"{key}.npz"
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as npz:
            data = {name: npz[name] for name in npz.files}
        meta = data["meta"]
        if list(meta) != [INDEX_FORMAT, len(corpus.papers), _ids_digest(corpus)]:
            return None
        text = _FieldIndex.from_arrays(data, "text")
        titles = _FieldIndex.from_arrays(data, "title")
        for p in (text.folded, text.cased, titles.folded, titles.cased):
            if p.docs.size and int(p.docs.max()) >= len(corpus.papers):
                return None
        return text, titles
    except Exception:  # corrupt or foreign file: rebuild, never trust it
        return None


def default_cache_dir() -> Path:
    from ..paths import cache_dir

    return cache_dir() / "index"

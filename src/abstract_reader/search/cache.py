"""The on-disk index cache: flat numpy arrays in an ``.npz`` (never pickle).

Keyed by the dumps' paths, sizes and mtimes, and bound to the corpus it indexes: the
cache records a BLAKE2 digest of every paper's id and title in corpus order, and the ids
are those of the abstracts as parsed (the corpus cache derives them again). Every array is
checked as untrusted input (`_FieldIndex.from_arrays`): a cache that does not check out is
rebuilt, so crafted offsets or orders give an error nobody sees, never wrong results.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..cachefile import open_npz, write_atomically
from ..corpus import Corpus
from .postings import _FieldIndex

INDEX_FORMAT = 6
_KEEP = 4  #: the newest indexes kept


def cache_key_for(files: Sequence[str]) -> str | None:
    """The index cache's key: the dumps' paths, sizes and mtimes, and this format."""
    from ..paths import files_key

    return files_key(f"format={INDEX_FORMAT}", files)


def corpus_digest(corpus: Corpus) -> np.ndarray:
    """16 bytes that change with any paper's id, title or position."""
    digest = hashlib.blake2b(digest_size=16)
    for paper_id, title in zip(corpus.papers.ids(), corpus.papers.titles(), strict=True):
        digest.update(f"{paper_id}\0{title}\0".encode())
    return np.frombuffer(digest.digest(), np.uint8)


def save_cache(
    cache_dir: Path, key: str, corpus: Corpus, text: _FieldIndex, titles: _FieldIndex
) -> None:
    """Write the index (atomically); failing to write a cache is not an error."""
    arrays = {**text.arrays("text"), **titles.arrays("title")}
    arrays["meta"] = np.array([INDEX_FORMAT, len(corpus.papers)], np.int64)
    arrays["corpus"] = corpus_digest(corpus)
    write_atomically(
        cache_dir,
        f"{key}.npz",
        lambda handle: np.savez(handle, **arrays),  # type: ignore[arg-type]
        keep=_KEEP,
    )


def load_cache(
    cache_dir: Path | None, key: str | None, corpus: Corpus
) -> tuple[_FieldIndex, _FieldIndex] | None:
    if cache_dir is None or key is None:
        return None
    npz = open_npz(cache_dir / f"{key}.npz")
    if npz is None:
        return None
    try:
        with npz:
            data = {name: npz[name] for name in npz.files}
        meta = data["meta"]
        n = len(corpus.papers)
        if meta.dtype != np.int64 or meta.tolist() != [INDEX_FORMAT, n]:
            return None
        stored = data["corpus"]
        if stored.dtype != np.uint8 or stored.tobytes() != corpus_digest(corpus).tobytes():
            return None
        return _FieldIndex.from_arrays(data, "text", n), _FieldIndex.from_arrays(data, "title", n)
    except Exception:  # corrupt or foreign file: rebuild, never trust it
        return None


def default_cache_dir() -> Path:
    from ..paths import cache_dir

    return cache_dir() / "index"

"""A cache of parsed corpora, so that reopening large unchanged dumps skips parsing.

The cache can never change what the user sees:

- It is keyed by the dumps' *contents* (SHA-256 of every file, hashed before parsing: about
  1 ms per MB, against 50 ms per MB to parse), besides their paths, this format and the
  package version. A dump edited with its size and mtime kept gets another key.
- What a cache file yields is checked as if it were untrusted input: every id is derived
  again from its abstract, every text must already be sanitised, every number and file name
  must be one the dumps could have given. Anything that does not check out — a missing
  field, a count that does not add up — and the dumps are parsed again.
- ``.npz`` arrays and JSON, never pickle; written to a fresh ``mkstemp`` file in the cache
  folder (``O_EXCL``: no link followed) and renamed into place; read only from a regular
  file (never a FIFO or device, never through a symlink).

Small corpora are not cached: parsing them is as fast as reading a cache.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import __version__
from .cachefile import open_npz, write_atomically
from .corpus import ID_LENGTH, Corpus, CorpusBuilder, LoadError, Source, paper_key
from .papertable import PaperTable, RowBatch
from .paths import files_key
from .sources import is_metadata_file
from .text.sanitise import _SANITISE_TABLE, sanitise

if TYPE_CHECKING:  # numpy is imported only when a cache is read or written (large corpora)
    import numpy as np

CORPUS_FORMAT = 2
MIN_BYTES = 4 << 20  #: corpora smaller than this are parsed every time
_KEEP = 3  #: cached corpora kept (each about the size of its dumps)


def key_for(files: Sequence[Path]) -> str | None:
    """The corpus cache's key: the dumps' contents, paths, sizes and mtimes, this format and
    version; None when a file cannot be read. Call it *before* parsing: a dump that changes
    while it is parsed then gets a key that its next reading no longer matches."""
    digests = []
    for path in files:
        digest = content_digest(path)
        if digest is None:
            return None
        digests.append(digest)
    return files_key(f"{__version__}/{CORPUS_FORMAT}/{','.join(digests)}", files)


def content_digest(path: Path) -> str | None:
    """SHA-256 of a regular file's bytes (hardware-accelerated on most CPUs: several times
    faster than BLAKE2 here), None for anything else."""
    import hashlib
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            return hashlib.file_digest(handle, "sha256").hexdigest()
        except OSError:
            return None


def _blob(texts: Iterable[str]) -> np.ndarray:
    import numpy as np

    # NUL never occurs in sanitised text (it becomes U+2400), so it can separate the texts
    return np.frombuffer("\0".join(texts).encode("utf-8"), dtype=np.uint8)


def _texts(blob: np.ndarray, count: int) -> list[str]:
    """The texts of a blob, checked: all must be sanitised (as parsing leaves them), so no
    control or bidi character can reach the terminal from a cache. Decoded a few MB at a
    time (cut at separators), so that no second copy of the whole blob is ever made."""
    import numpy as np

    if blob.dtype != np.uint8 or blob.ndim != 1:
        raise ValueError("not a text blob")
    if not count:
        if blob.size:
            raise ValueError("count mismatch")
        return []
    ends = np.flatnonzero(blob == 0)
    if ends.size != count - 1:
        raise ValueError("count mismatch")
    texts: list[str] = []
    start = 0
    step = max(1, (count * (4 << 20)) // max(1, blob.size))  # texts per ~4 MB
    for first in range(0, count, step):
        last = min(count, first + step)
        stop = int(ends[last - 1]) if last < count else blob.size
        chunk = str(blob[start:stop].data, "utf-8")
        if _UNSAFE_RE.search(chunk) is not None:
            raise ValueError("text that was not sanitised")
        texts.extend(chunk.split("\0"))
        start = stop + 1
    if len(texts) != count:
        raise ValueError("count mismatch")
    return texts


def _unsafe_pattern() -> re.Pattern[str]:
    """Any character that `sanitise` replaces, but NUL (the texts' separator)."""
    table = "".join(chr(c) for c in _SANITISE_TABLE if c and chr(c) != sanitise(chr(c)))
    return re.compile(f"[{re.escape(table)}]")


_UNSAFE_RE = _unsafe_pattern()
_ODD_SPACE_RE = re.compile(r"[^\S \0]")  # whitespace other than a plain space


def save(cache_dir: Path, key: str, corpus: Corpus, file_errors: Sequence[LoadError]) -> None:
    """Write the parsed corpus (atomically); failing to write a cache is not an error.

    Flat arrays, no per-paper JSON: ids are not stored (they are derived again from the
    abstracts on reading), venues and source files are codes into short name lists."""
    import numpy as np

    table = corpus.papers
    count = len(table)
    venue_names = sorted(table.venue_names)
    venue_code = np.array(
        [venue_names.index(v) for v in table.venue_names] + [-1], np.int32
    )  # old code → sorted code; -1 stays -1
    file_names = sorted(table.file_names)
    first_files = np.array([file_names.index(f) for f in table.file_names] or [0], np.int32)
    more = table.more_sources
    counts = np.ones(count, np.int64)
    for row, extra in more.items():
        counts[row] += len(extra)
    source_offsets = np.zeros(count + 1, np.int64)
    np.cumsum(counts, out=source_offsets[1:])
    total = int(source_offsets[-1])
    firsts_file = first_files[table._column("files", "int32")] if count else np.zeros(0, np.int32)
    firsts_index = table._column("indexes", "int64")
    source_files = np.zeros(total, np.int32)
    source_index = np.zeros(total, np.int64)
    source_files[source_offsets[:-1]] = firsts_file
    source_index[source_offsets[:-1]] = firsts_index
    for row, extra in more.items():
        at = int(source_offsets[row]) + 1
        for k, s in enumerate(extra):
            source_files[at + k] = file_names.index(s.file)
            source_index[at + k] = s.index
    meta = {
        "format": CORPUS_FORMAT,
        "count": count,
        "files": corpus.files,
        "venues": venue_names,
        "source_files": file_names,
        "errors": [[e.path, e.message, e.fatal] for e in file_errors],
    }
    write_atomically(
        cache_dir,
        f"{key}.npz",
        lambda handle: np.savez(
            handle,
            abstracts=_blob(table.iter_abstracts()),
            titles=_blob(table.titles()),
            venues=venue_code[table.venue_codes()],
            years=table.years().astype(np.int32),
            source_offsets=source_offsets,
            source_files=source_files,
            source_index=source_index,
            meta=_blob([json.dumps(meta)]),
        ),
        keep=_KEEP,
    )


def load(
    cache_dir: Path, key: str, files: Sequence[Path] | None = None
) -> tuple[PaperTable, list[LoadError], list[str]] | None:
    """(papers, per-file errors, loaded files) from the cache, or None when it cannot be
    trusted. ``files``: the dumps asked for (file names in the cache must be among them)."""
    data = open_npz(cache_dir / f"{key}.npz")
    if data is None:
        return None
    try:
        with data:
            return _read(data, files)
    except Exception:  # a damaged or foreign file: parse the dumps again
        return None


def _read(
    data: Any, files: Sequence[Path] | None
) -> tuple[PaperTable, list[LoadError], list[str]] | None:
    import hashlib

    import numpy as np

    meta = json.loads(_texts(data["meta"], 1)[0])
    count = meta["count"]
    if meta["format"] != CORPUS_FORMAT or type(count) is not int or count < 0:
        return None
    abstracts = _texts(data["abstracts"], count)
    titles = _texts(data["titles"], count)
    venue_names, file_names = meta["venues"], meta["source_files"]
    loaded = meta["files"]
    strings = [*venue_names, *file_names, *loaded]
    if not all(isinstance(v, str) and _clean(v) for v in strings):
        return None
    allowed = {str(f) for f in files} if files is not None else set(loaded)
    if any(f not in allowed for f in loaded):
        return None
    if not set(file_names) <= {sanitise(Path(f).name) for f in loaded}:
        return None
    errors = [LoadError(p, m, f) for p, m, f in meta["errors"]]
    if any(
        e.path not in allowed or not _clean(e.message) or type(e.fatal) is not bool for e in errors
    ):
        return None
    venues, years = data["venues"], data["years"]
    offsets, source_files, source_index = (
        data["source_offsets"],
        data["source_files"],
        data["source_index"],
    )
    expected = (
        (venues, np.int32, count),
        (years, np.int32, count),
        (offsets, np.int64, count + 1),
        (source_files, np.int32, None),
        (source_index, np.int64, None),
    )
    for array, dtype, size in expected:
        if array.dtype != dtype or array.ndim != 1 or (size is not None and array.size != size):
            return None
    n_sources = source_files.size
    if (
        source_index.size != n_sources
        or offsets[0] != 0
        or offsets[-1] != n_sources
        or np.any(np.diff(offsets) < 1)  # every paper comes from somewhere
        or (venues.size and (venues.min() < -1 or venues.max() >= len(venue_names)))
        or np.any((years != 0) & ((years < 1900) | (years > 2099)))
        or (n_sources and (source_files.min() < 0 or source_files.max() >= len(file_names)))
        or (n_sources and source_index.min() < 1)
    ):
        return None
    # ids: derived again, the same way as parsing (`corpus.paper_key`), never read
    blake2b = hashlib.blake2b
    from_bytes = int.from_bytes
    keys = []
    for abstract in abstracts:
        if not abstract:
            return None
        if (
            "  " in abstract
            or abstract[0] == " "
            or abstract[-1] == " "
            # other whitespace: in ASCII only tab and newline pass `_UNSAFE_RE` (isascii is
            # a flag test, `in` a memchr; the regex only for the rare non-ASCII abstract)
            or ("\t" in abstract or "\n" in abstract)
            or (not abstract.isascii() and _ODD_SPACE_RE.search(abstract) is not None)
        ):
            keys.append(paper_key(abstract))
        else:
            digest = blake2b(abstract.encode("utf-8"), digest_size=ID_LENGTH // 2).digest()
            keys.append(from_bytes(digest, "big"))
    if len(set(keys)) != count:
        return None
    venue_list = [None if c < 0 else venue_names[c] for c in venues.tolist()]
    year_list = years.tolist()
    offset_list = offsets.tolist()
    all_sources = [
        Source(file_names[f], n)
        for f, n in zip(source_files.tolist(), source_index.tolist(), strict=True)
    ]
    rows = RowBatch()
    for i in range(count):
        rows.add(
            keys[i],
            abstracts[i],
            titles[i],
            all_sources[offset_list[i]],
            venue=venue_list[i],
            year=year_list[i] or None,
        )
        rows.more.extend((i, s) for s in all_sources[offset_list[i] + 1 : offset_list[i + 1]])
    del abstracts, titles
    table = PaperTable()
    for first in range(0, count, 5000):  # chunks of the loading batches' size
        part = RowBatch()
        for i in range(first, min(count, first + 5000)):
            part.add(
                rows.keys[i],
                rows.abstracts[i],
                rows.titles[i],
                rows.sources[i],
                venue=rows.venues[i],
                year=rows.years[i],
            )
        table.extend(part)
    for i, source in rows.more:
        table.add_source(i, source)
    return table, errors, [str(f) for f in loaded]


def _clean(text: object) -> bool:
    """Text as parsing leaves it: sanitised (no control or bidi character)."""
    return isinstance(text, str) and _UNSAFE_RE.search(text) is None and "\0" not in text


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
        cached = load(cache_dir, key, builder.files)
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


def adopt(corpus: Corpus, papers: PaperTable, errors: list[LoadError], files: list[str]) -> None:
    """Fill ``corpus`` with papers read from the cache."""
    corpus.papers = papers
    corpus.errors.extend(errors)
    corpus.files.extend(files)


def _size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0

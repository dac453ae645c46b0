"""The on-disk index cache: one file of flat arrays, memory-mapped on reading (never pickle).

Keyed by the dumps' paths, sizes and mtimes, and bound to the corpus it indexes: the
cache records a BLAKE2 digest of every paper's id and title in corpus order, and the ids
are those of the abstracts as parsed (the corpus cache derives them again). Every array is
checked as untrusted input (`_FieldIndex.from_arrays`): a cache that does not check out is
rebuilt, so crafted offsets or orders give an error nobody sees, never wrong results.

The file (``<key>.idx``): a header — ``MAGIC``, then little-endian int64 format, papers and
number of sections, the 16-byte corpus digest, then per section its name (32 bytes), dtype
(8 bytes, e.g. ``<u4``), byte offset and length in items — and the sections, each starting
at a multiple of 64 bytes. The arrays are read-only views of the mapping: opening a cache
costs the checks' page faults, not a copy of every array.
"""

from __future__ import annotations

import hashlib
import struct
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    import mmap

from ..cachefile import (
    drop_pages,
    open_mapped_stat,
    read_small,
    record_holds,
    secret,
    stat_data,
    write_atomically,
    write_record,
)
from ..corpus import Corpus
from .postings import Vocabulary, _FieldIndex, _Postings

INDEX_FORMAT = 7
_KEEP = 4  #: the newest indexes kept
MAGIC = b"ARINDEX\0"
_HEAD = struct.Struct("<8s3q16s")
_SECTION = struct.Struct("<32s8sqq")
_ALIGN = 64
#: every section, with its exact dtype
SECTIONS = {
    f"{field}_{vocab}_{part}": dtype
    for field in ("text", "title")
    for vocab in ("folded", "cased")
    for part, dtype in (("words", "|u1"), ("offsets", "<i8"), ("docs", "<u4"))
}
SUFFIX = ".idx"
#: the record that a file's arrays checked out (`_record`)
CHECKED_SUFFIX = ".checked"
#: a file changed less than this before its checks began is not recorded (a write in the
#: same clock tick could keep its ctime: see `corpus_cache._RACY_NS`)
_RACY_NS = 2_000_000_000


def cache_key_for(files: Sequence[str]) -> str | None:
    """The index cache's key: the dumps' paths, sizes and mtimes, and this format."""
    from ..paths import files_key

    return files_key(f"format={INDEX_FORMAT}", files)


def corpus_digest(corpus: Corpus) -> bytes:
    """16 bytes that change with any paper's id, title or position: BLAKE2 of the three
    streams of the table's columns — the ids' 64-bit keys, the titles' UTF-8 bytes and each
    title's length — hashed chunk by chunk as they are stored (no string per paper: a
    million papers cost a pass over ~70 MB in C, not a Python loop)."""
    keys, titles, lengths = (hashlib.blake2b(digest_size=16) for _ in range(3))
    n = 0
    for chunk_keys, pieces, chunk_lengths in corpus.papers.id_title_chunks():
        n += chunk_keys.size
        keys.update(chunk_keys.astype("<u8", copy=False).data)
        lengths.update(chunk_lengths.astype("<i8", copy=False).data)
        for piece in pieces:
            titles.update(piece)
    digest = hashlib.blake2b(n.to_bytes(8, "little"), digest_size=16)
    for part in (keys, titles, lengths):
        digest.update(part.digest())
    return digest.digest()


#: Bytes written between two calls of a save's ``pause`` (a few ms of writing).
WRITE_PIECE = 8 << 20


def _write(
    handle: BinaryIO,
    n: int,
    digest: bytes,
    arrays: dict[str, npt.NDArray[np.generic]],
    pause: Callable[[], object] | None = None,
) -> None:
    """The file's header, then each array aligned, written `WRITE_PIECE` bytes at a time
    with ``pause()`` between the pieces (the reader waits there while a query is typed)."""
    header_size = _HEAD.size + _SECTION.size * len(arrays)
    at = -(-header_size // _ALIGN) * _ALIGN
    table = []
    for name, array in arrays.items():
        table.append(_SECTION.pack(name.encode(), array.dtype.str.encode(), at, array.size))
        at += -(-array.nbytes // _ALIGN) * _ALIGN
    handle.write(_HEAD.pack(MAGIC, INDEX_FORMAT, n, len(arrays), digest) + b"".join(table))
    written = header_size
    for array in arrays.values():
        handle.write(b"\0" * (-written % _ALIGN))
        written += -written % _ALIGN
        data = np.ascontiguousarray(array).data.cast("B")
        for at in range(0, len(data), WRITE_PIECE):
            if pause is not None:
                pause()
            handle.write(data[at : at + WRITE_PIECE])
        written += array.nbytes


def save_cache(
    cache_dir: Path,
    key: str,
    corpus: Corpus,
    text: _FieldIndex,
    titles: _FieldIndex,
    *,
    pause: Callable[[], object] | None = None,
) -> None:
    """Write the index (atomically); failing to write a cache is not an error. ``pause``
    is called between pieces of the writing (see `_write`)."""
    arrays = {**text.arrays("text"), **titles.arrays("title")}
    digest = corpus_digest(corpus)
    n = len(corpus.papers)
    if write_atomically(
        cache_dir,
        f"{key}{SUFFIX}",
        lambda handle: _write(handle, n, digest, arrays, pause),
        keep=_KEEP,
    ):
        for old in cache_dir.glob("*.npz"):  # the format before this one: never read again
            if old.is_file() and not old.is_symlink():
                old.unlink(missing_ok=True)


def _secret(cache_dir: Path) -> bytes | None:
    """The user's secret for the caches: the corpus cache's (`cachefile.secret`), in the
    folder beside this one as the reader lays them out (``…/index``, ``…/corpus``); None
    elsewhere: every index file is then checked in full, every time."""
    return secret(cache_dir.with_name("corpus"), create=False)


def _record_mac(secret_key: bytes, n: int, file_stat: list[int]) -> bytes:
    """The MAC of an index file's record: its stat data and the papers it was checked for."""
    import hmac
    import json

    data = MAGIC + b"checked" + struct.pack("<qq", INDEX_FORMAT, n) + json.dumps(file_stat).encode()
    return hmac.new(secret_key, data, "sha256").digest()


def _recorded(path: Path, n: int, file_stat: list[int]) -> bool:
    """Did this very file (its stat data: see `corpus_cache`'s records) check out before,
    for ``n`` papers, by a record made with the user's secret?"""
    secret_key = _secret(path.parent)
    return secret_key is not None and record_holds(
        read_small(path.with_suffix(CHECKED_SUFFIX)),
        _record_mac(secret_key, n, file_stat),
        file_stat,
    )


def _record(path: Path, n: int, file_stat: list[int], opened_ns: int) -> bool:
    """Record that the file at ``path`` checked out for ``n`` papers: only if its stat data
    is still ``file_stat`` and its last change came `_RACY_NS` before its checks began
    (``opened_ns``); with the user's secret. False when nothing was recorded."""
    secret_key = _secret(path.parent)
    return secret_key is not None and write_record(
        path,
        path.with_suffix(CHECKED_SUFFIX).name,
        _record_mac(secret_key, n, file_stat),
        file_stat=file_stat,
        opened_ns=opened_ns,
        racy_ns=_RACY_NS,
        keep=_KEEP,
    )


def _sections(mapped: memoryview, n: int) -> tuple[bytes, dict[str, npt.NDArray[np.generic]]]:
    """(the corpus digest, the arrays) of a mapped cache file (ValueError unless every
    section is there once, with its dtype, aligned and inside the file)."""
    magic, version, papers, count, digest = _HEAD.unpack_from(mapped, 0)
    if magic != MAGIC or version != INDEX_FORMAT or papers != n or count != len(SECTIONS):
        raise ValueError("not an index cache of this format for this corpus")
    arrays: dict[str, npt.NDArray[np.generic]] = {}
    for i in range(count):
        raw_name, raw_dtype, offset, length = _SECTION.unpack_from(
            mapped, _HEAD.size + i * _SECTION.size
        )
        name = raw_name.rstrip(b"\0").decode("ascii")
        dtype = raw_dtype.rstrip(b"\0").decode("ascii")
        if SECTIONS.get(name) != dtype or name in arrays:
            raise ValueError("unknown, repeated or mistyped section")
        itemsize = np.dtype(dtype).itemsize
        if offset % _ALIGN or offset < _HEAD.size or length < 0:
            raise ValueError("misplaced section")
        if offset + length * itemsize > len(mapped):
            raise ValueError("section beyond the end of the file")
        arrays[name] = np.frombuffer(mapped, np.dtype(dtype), length, offset)
    return bytes(digest), arrays


#: (digest, abstracts' index, titles' index, mapping) of a file whose arrays were checked
_Checked = tuple[bytes, _FieldIndex, _FieldIndex, "mmap.mmap"]


def _check_file(path: Path, n: int) -> _Checked | None:
    """The index cache at ``path`` mapped and every array checked for a corpus of ``n``
    papers (all but its binding to the corpus: the digest is returned); None if there is
    none or it does not check out."""
    import time

    opened_ns = time.time_ns()
    found = open_mapped_stat(path)
    if found is None:
        return None
    mapped, st = found
    file_stat = stat_data(st)
    try:
        digest, data = _sections(memoryview(mapped), n)
        if _recorded(path, n, file_stat):  # these very arrays checked out before
            return (digest, _unchecked(data, "text"), _unchecked(data, "title"), mapped)
        fields = _FieldIndex.from_arrays(data, "text", n), _FieldIndex.from_arrays(data, "title", n)
    except Exception:  # corrupt or foreign file: rebuild, never trust it
        return None
    # the checks touched every page: they leave the resident set (a search faults back in
    # what it reads, from the page cache) — at 1M the file is ~660 MB
    drop_pages(mapped)
    _record(path, n, file_stat, opened_ns)
    return (digest, *fields, mapped)


def _unchecked(data: dict[str, npt.NDArray[np.generic]], prefix: str) -> _FieldIndex:
    """`_FieldIndex.from_arrays` of arrays that checked out before (`_recorded`): the same
    index, without its passes over every posting (~0.3-0.5 CPU s at 1M)."""
    parts = []
    for name in ("folded", "cased"):
        words = Vocabulary(data[f"{prefix}_{name}_words"].tobytes())
        offsets = np.asarray(data[f"{prefix}_{name}_offsets"], np.int64)
        docs = np.asarray(data[f"{prefix}_{name}_docs"], np.uint32)
        parts.append(_Postings(words, offsets, docs))
    return _FieldIndex(parts[0], parts[1])


class _Ahead:
    """A check of an index cache file begun before its corpus was all there."""

    def __init__(self, path: Path, n: int) -> None:
        self.path, self.n = path, n
        self.done = threading.Event()
        self.result: _Checked | None = None


_ahead_lock = threading.Lock()
_ahead: list[_Ahead] = []  #: the latest check begun by `check_ahead` and not yet used


def check_ahead(cache_dir: Path, files: Sequence[str], n: int) -> None:
    """Check the index cache of these dumps for a corpus of ``n`` papers now (call it on a
    thread of its own), so that `load_cache` later only binds it to the corpus (its digest):
    a warm start checks the index's arrays while the corpus cache's chunks are checked and
    the dumps hashed, not after. Only the arrays' checks are done early; `load_cache` still
    refuses the file unless its digest is the corpus's, as it always did."""
    key = cache_key_for(files)
    if key is None:
        return
    ahead = _Ahead(cache_dir / f"{key}{SUFFIX}", n)
    with _ahead_lock:
        _ahead[:] = [ahead]
    try:
        ahead.result = _check_file(ahead.path, n)
    finally:
        ahead.done.set()


def _take_ahead(path: Path, n: int) -> _Ahead | None:
    """The check of ``path`` for ``n`` papers begun by `check_ahead`, if any (once)."""
    with _ahead_lock:
        ahead = _ahead.pop() if _ahead else None
    if ahead is None or ahead.path != path or ahead.n != n:
        return None
    return ahead


def load_cache(
    cache_dir: Path | None, key: str | None, corpus: Corpus
) -> tuple[_FieldIndex, _FieldIndex, mmap.mmap] | None:
    """(abstracts' index, titles' index, the mapping they read) from the cache, checked
    (its arrays perhaps already by `check_ahead`), and of these papers."""
    if cache_dir is None or key is None:
        return None
    n = len(corpus.papers)
    path = cache_dir / f"{key}{SUFFIX}"
    ahead = _take_ahead(path, n)
    checked = None
    if ahead is not None:
        ahead.done.wait()
        checked = ahead.result
    if checked is None:  # (begun early but found nothing: the file may be there by now)
        checked = _check_file(path, n)
    if checked is None:
        return None
    digest, text, titles, mapped = checked
    try:
        if digest != corpus_digest(corpus):
            return None  # an index of other papers: rebuilt
    except Exception:
        return None
    return text, titles, mapped


def default_cache_dir() -> Path:
    from ..paths import cache_dir

    return cache_dir() / "index"

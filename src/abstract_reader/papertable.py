"""The corpus's papers as columns, not as a Python object per paper.

A `PaperTable` is a ``Sequence[Paper]``: ``table[i]`` builds the `Paper` (the public value
type) on demand from columns, and keeps the last few hundred it built. The columns come in
*chunks*, one per loading batch (so appending never copies what is there) or one per
checked slice of a memory-mapped corpus cache:

- abstracts and titles: UTF-8 bytes with ``int64`` offsets (a title set later, by
  `disambiguate` or a metadata record, is kept aside in a small dict);
- the id: its 64 bits as a ``uint64`` key (16 hex digits; hex order is key order);
- ``title_derived`` one byte, venue a code into a short list of names, year (0: none);
- the first source: a file code and a position; the rare further sources and the rare
  metadata fields (authors, URL, DOI, …, of papers from metadata records) in side dicts.

In-memory chunks use the stdlib ``array`` (numpy is not imported for a small corpus before
the first frame); chunks from a cache file are numpy views of the mapped file. Ids are
looked up in an index of the keys sorted (a list and `bisect` while the table is small,
numpy `searchsorted` from a few thousand rows on), merged with each new chunk on the next
look-up. Every change after loading goes through a method of the table, never through a
`Paper` it returned (those are copies).
"""

from __future__ import annotations

import bisect
import contextlib
import mmap
import os
import re
import threading
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from .paper import Paper, Source
from .text.sanitise import sanitise

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from .sources import MetaRecord

KEY_BITS = 64
_LRU = 512  #: Papers kept once built (the list redraws the same rows again and again)
_NUMPY_FROM = 4096  #: rows from which the id index is a numpy array
#: a look-up of one id merges the rows not in the id index yet into it only up to this many;
#: more are scanned (at a warm start of a million papers the first look-up of the current
#: paper merged half of them: ~0.4 s of the UI thread; `PaperTable.index_ids` merges them on
#: the loading thread)
_SCAN_ROWS = 20_000
_ID_RE = re.compile(r"[0-9a-f]{16}")

#: the rare fields: authors, url, doi, eprint, primary_class, record
_Meta = tuple[tuple[str, ...], str | None, str | None, str | None, str | None, str | None]
_NO_META: _Meta = ((), None, None, None, None, None)


def key_of(paper_id: str) -> int | None:
    """The 64-bit key of a paper id (16 lower-case hex digits), None for anything else."""
    if len(paper_id) != 16 or _ID_RE.fullmatch(paper_id) is None:
        return None
    return int(paper_id, 16)


def id_of(key: int) -> str:
    return f"{key:016x}"


class Chunk:
    """Consecutive rows' columns. ``abstracts``/``titles`` are byte buffers; their offsets
    (``n + 1`` of them) point into those buffers, not necessarily from 0 (a chunk of a
    mapped cache shares the whole file's buffer)."""

    __slots__ = (
        "abstract_offsets",
        "abstracts",
        "derived",
        "files",
        "indexes",
        "keys",
        "n",
        "title_offsets",
        "titles",
        "venues",
        "years",
    )

    def __init__(
        self,
        *,
        abstracts: Any,
        abstract_offsets: Any,
        titles: Any,
        title_offsets: Any,
        derived: Any,
        keys: Any,
        venues: Any,
        years: Any,
        files: Any,
        indexes: Any,
    ) -> None:
        self.n = len(keys)
        self.abstracts = abstracts
        self.abstract_offsets = abstract_offsets
        self.titles = titles
        self.title_offsets = title_offsets
        self.derived = derived
        self.keys = keys
        self.venues = venues
        self.years = years
        self.files = files
        self.indexes = indexes


@dataclass(slots=True)
class RowBatch:
    """New rows gathered while loading, appended to the table at once (`PaperTable.extend`)."""

    keys: list[int] = field(default_factory=list)
    abstracts: list[str] = field(default_factory=list)
    titles: list[str] = field(default_factory=list)
    derived: list[bool] = field(default_factory=list)
    venues: list[str | None] = field(default_factory=list)
    years: list[int | None] = field(default_factory=list)
    sources: list[Source] = field(default_factory=list)
    meta: dict[int, _Meta] = field(default_factory=dict)  #: position in the batch → fields
    more: list[tuple[int, Source]] = field(default_factory=list)  #: further sources
    positions: dict[int, int] = field(default_factory=dict)  #: key → position in the batch

    def __len__(self) -> int:
        return len(self.keys)

    def add(
        self,
        key: int,
        abstract: str,
        title: str,
        source: Source,
        *,
        derived: bool = True,
        venue: str | None = None,
        year: int | None = None,
        meta: _Meta | None = None,
    ) -> None:
        self.positions[key] = len(self.keys)
        if meta is not None and meta != _NO_META:
            self.meta[len(self.keys)] = meta
        self.keys.append(key)
        self.abstracts.append(abstract)
        self.titles.append(title)
        self.derived.append(derived)
        self.venues.append(venue)
        self.years.append(year)
        self.sources.append(source)


def _text_column(texts: Iterable[str]) -> tuple[bytes, array[int]]:
    encoded = [t.encode("utf-8") for t in texts]
    offsets = array("q", [0])
    total = 0
    for piece in encoded:
        total += len(piece)
        offsets.append(total)
    return b"".join(encoded), offsets


class _Spill:
    """Where a table's abstracts go once a batch is appended: an unlinked temporary file,
    each chunk's bytes written page-aligned and mapped read-only. The text then sits in the
    page cache (clean once written back: the kernel can reclaim it), not in the process's
    anonymous memory; a page enters the resident set when read and leaves it again with
    `drop` (reading a whole corpus — the index build, the corpus cache save — costs a
    chunk's pages, not the corpus's). Nobody else holds the file: it has no name, so no
    other process can open it to change a text after it was parsed."""

    def __init__(self, folder: Path) -> None:
        import tempfile
        import weakref

        fd, name = tempfile.mkstemp(prefix=".spill-", dir=folder)
        with contextlib.suppress(OSError):
            os.unlink(name)  # no name: nobody else opens it; its space is freed with us
        self.fd = fd
        weakref.finalize(self, os.close, fd)  # (the maps hold the file on their own)
        self.size = 0
        self.maps: dict[int, mmap.mmap] = {}  #: id → map, for `owns`

    def put(self, blob: bytes) -> mmap.mmap:
        """Write ``blob`` at the file's next page and map it (OSError: nothing mapped)."""
        fd = self.fd
        at = self.size
        view = memoryview(blob)
        done = 0
        while done < len(view):
            done += os.pwrite(fd, view[done:], at + done)
        mapped = mmap.mmap(fd, len(blob), access=mmap.ACCESS_READ, offset=at)
        self.size = -(-(at + len(blob)) // mmap.ALLOCATIONGRANULARITY) * mmap.ALLOCATIONGRANULARITY
        self.maps[id(mapped)] = mapped
        return mapped

    def owns(self, buffer: object) -> bool:
        return self.maps.get(id(buffer)) is buffer

    @staticmethod
    def drop(mapped: mmap.mmap) -> None:
        advice = getattr(mmap, "MADV_DONTNEED", None)
        if advice is not None:
            with contextlib.suppress(OSError, ValueError):
                mapped.madvise(advice)


_SEEN_BITS = 1 << 24  #: the numpy index's filter: one bit per 24-bit slot of the keys (2 MB)


class _IdIndex:
    """The rows sorted by id key: ``keys`` ascending, ``rows`` their positions. In numpy
    mode ``seen`` has the bit of each key's low 24 bits set: a key whose bit is clear is not
    loaded, answered without a search (loading a million papers asks once per paper, and
    all but the repeats are new; ids are hashes, so the bits are uniform: ~6% of new keys
    at 1M still need the search)."""

    __slots__ = ("keys", "numpy", "rows", "seen", "upto")

    def __init__(self) -> None:
        self.keys: Any = []
        self.rows: Any = []
        self.upto = 0  #: rows [0, upto) are in the index
        self.numpy = False
        self.seen = bytearray()

    def merge(self, table: PaperTable, n: int | None = None) -> None:
        """Rows up to ``n`` (default: all) in the index."""
        n = len(table) if n is None else n
        if self.upto >= n:
            return
        if not self.numpy and n >= _NUMPY_FROM:
            import numpy as np

            self.keys = np.asarray(self.keys, np.uint64)
            self.rows = np.asarray(self.rows, np.int64)
            self.seen = bytearray(_SEEN_BITS // 8)
            self._see(self.keys)
            self.numpy = True
        if self.numpy:
            import numpy as np

            new = table.keys(self.upto, n)
            self._see(new)
            order = np.argsort(new, kind="stable")
            sorted_new = new[order]
            where = np.searchsorted(self.keys, sorted_new)
            self.keys = np.insert(self.keys, where, sorted_new)
            self.rows = np.insert(self.rows, where, order.astype(np.int64) + self.upto)
        else:
            for row in range(self.upto, n):
                key = table.key(row)
                at = bisect.bisect_left(self.keys, key)
                self.keys.insert(at, key)
                self.rows.insert(at, row)
        self.upto = n

    def copy(self) -> _IdIndex:
        """A copy whose `merge` leaves this one as it is (numpy's insert makes new arrays),
        so that look-ups go on in this one while the copy merges."""
        fresh = _IdIndex()
        fresh.numpy, fresh.upto = self.numpy, self.upto
        if self.numpy:
            fresh.keys, fresh.rows = self.keys, self.rows
        else:  # (fewer than `_NUMPY_FROM` rows)
            fresh.keys, fresh.rows = list(self.keys), list(self.rows)
        fresh.seen = bytearray(self.seen)
        return fresh

    def _see(self, keys: Any) -> None:
        import numpy as np

        slots = np.asarray(keys, np.uint64) & np.uint64(_SEEN_BITS - 1)
        masks = np.left_shift(np.uint8(1), (slots & np.uint64(7)).astype(np.uint8))
        np.bitwise_or.at(np.frombuffer(self.seen, np.uint8), slots >> np.uint64(3), masks)

    def find(self, key: int) -> int:
        keys = self.keys
        at: int
        if self.numpy:
            slot = key & (_SEEN_BITS - 1)
            if not self.seen[slot >> 3] >> (slot & 7) & 1:
                return -1
            import numpy as np

            at = int(np.searchsorted(keys, np.uint64(key)))
        else:
            at = bisect.bisect_left(keys, key)
        if at < len(keys) and int(keys[at]) == key:
            return int(self.rows[at])
        return -1

    def any_of(self, keys: Any) -> bool:
        if not self.numpy:
            return any(self.find(int(k)) >= 0 for k in keys.tolist())
        import numpy as np

        if not len(self.keys):
            return False
        at = np.minimum(np.searchsorted(self.keys, keys), len(self.keys) - 1)
        return bool(np.any(self.keys[at] == keys))

    def rows_of(self, keys: list[int]) -> list[int]:
        """The rows of these keys that are loaded (in no particular order)."""
        if not self.numpy or len(keys) < 64:
            return [row for row in map(self.find, keys) if row >= 0]
        import numpy as np

        if not len(self.keys):
            return []
        wanted = np.fromiter(keys, np.uint64, len(keys))
        at = np.minimum(np.searchsorted(self.keys, wanted), len(self.keys) - 1)
        return [int(r) for r in self.rows[at[self.keys[at] == wanted]].tolist()]

    def between(self, lo: int, hi: int) -> list[int]:
        """Rows whose key is in [lo, hi), in key order (hi may be 2**64)."""
        keys = self.keys
        if self.numpy:
            import numpy as np

            a = int(np.searchsorted(keys, np.uint64(lo)))
            b = len(keys) if hi >= 1 << KEY_BITS else int(np.searchsorted(keys, np.uint64(hi)))
            return [int(r) for r in self.rows[a:b].tolist()]
        a = bisect.bisect_left(keys, lo)
        b = bisect.bisect_left(keys, hi)
        return list(self.rows[a:b])


class PaperTable(Sequence[Paper]):
    """The papers of a corpus, in corpus order (see the module's docstring)."""

    def __init__(self, papers: Iterable[Paper] = ()) -> None:
        self._chunks: list[Chunk] = []
        self._starts: list[int] = []
        self._n = 0
        self._title_over: dict[int, str] = {}
        #: counts the changes of titles already in the table (`set_title`, `drop`): an
        #: order by title made for an earlier count is out of date (`sorting.TitleOrder`)
        self.title_version = 0
        self._meta: dict[int, _Meta] = {}
        self._more: dict[int, list[Source]] = {}
        self.venue_names: list[str] = []
        self._venue_codes: dict[str, int] = {}
        self.file_names: list[str] = []
        self._file_codes: dict[str, int] = {}
        self._built: dict[int, Paper] = {}
        self._index = _IdIndex()
        self._lock = threading.Lock()
        self._spill: _Spill | None = None
        batch = RowBatch()
        for p in papers:  # (a repeated paper is kept: a crafted cache in a test has one)
            key = key_of(p.id)
            if key is None:
                raise ValueError(f"{p.id!r}: not a paper id")
            batch.add(
                key,
                p.abstract,
                p.title,
                p.sources[0],
                derived=p.title_derived,
                venue=p.venue,
                year=p.year,
                meta=(p.authors, p.url, p.doi, p.eprint, p.primary_class, p.record),
            )
            pos = len(batch) - 1
            batch.more.extend((pos, s) for s in p.sources[1:])
        if len(batch):
            self.extend(batch)

    # -- the sequence ---------------------------------------------------------------------
    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, i: int) -> Paper: ...
    @overload
    def __getitem__(self, i: slice) -> list[Paper]: ...
    def __getitem__(self, i: int | slice) -> Paper | list[Paper]:
        if isinstance(i, slice):
            return [self._paper(j) for j in range(*i.indices(self._n))]
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError("paper index out of range")
        return self._paper(i)

    def __iter__(self) -> Iterator[Paper]:
        for i in range(self._n):
            yield self._paper(i)

    def __repr__(self) -> str:
        return f"<PaperTable of {self._n} papers>"

    def _paper(self, i: int) -> Paper:
        built = self._built
        paper = built.get(i)
        if paper is not None:
            return paper
        paper = self._build(i, abstract=True)
        if len(built) >= _LRU:
            built.pop(next(iter(built), -1), None)
        built[i] = paper
        return paper

    def without_abstract(self, i: int) -> Paper:
        """Row ``i``'s `Paper` with an empty abstract (not kept): for a listing of a million
        papers that shows titles, without decoding (or paging in) every abstract."""
        if not 0 <= i < self._n:
            raise IndexError("paper index out of range")
        return self._build(i, abstract=False)

    def _build(self, i: int, *, abstract: bool) -> Paper:
        chunk, j = self._locate(i)
        more = self._more.get(i)
        sources = [Source(self.file_names[int(chunk.files[j])], int(chunk.indexes[j]))]
        if more:
            sources.extend(more)
        code = int(chunk.venues[j])
        authors, url, doi, eprint, primary_class, record = self._meta.get(i, _NO_META)
        return Paper(
            id=id_of(int(chunk.keys[j])),
            abstract=self._text(chunk.abstracts, chunk.abstract_offsets, j) if abstract else "",
            title=self._title(chunk, i, j),
            title_derived=bool(chunk.derived[j]),
            venue=None if code < 0 else self.venue_names[code],
            year=int(chunk.years[j]) or None,
            sources=sources,
            authors=authors,
            url=url,
            doi=doi,
            eprint=eprint,
            primary_class=primary_class,
            record=record,
        )

    def _locate(self, i: int) -> tuple[Chunk, int]:
        k = bisect.bisect_right(self._starts, i) - 1
        return self._chunks[k], i - self._starts[k]

    @staticmethod
    def _text(data: Any, offsets: Any, j: int) -> str:
        """One text, sanitised again if it has anything but printable characters (texts
        are sanitised at ingest and checked when a cache is read; but a mapped cache file
        could be written into after its check: this costs one C scan of the text)."""
        text = str(memoryview(data)[int(offsets[j]) : int(offsets[j + 1])], "utf-8")
        return text if text.isprintable() else sanitise(text)

    @staticmethod
    def _raw_text(data: Any, offsets: Any, j: int) -> str:
        return str(memoryview(data)[int(offsets[j]) : int(offsets[j + 1])], "utf-8")

    def _title(self, chunk: Chunk, i: int, j: int) -> str:
        over = self._title_over.get(i)
        return over if over is not None else self._text(chunk.titles, chunk.title_offsets, j)

    def _changed(self, i: int) -> None:
        self._built.pop(i, None)

    # -- single fields (no Paper built) ---------------------------------------------------
    def key(self, i: int) -> int:
        chunk, j = self._locate(i)
        return int(chunk.keys[j])

    def id(self, i: int) -> str:
        return id_of(self.key(i))

    def abstract(self, i: int) -> str:
        chunk, j = self._locate(i)
        return self._text(chunk.abstracts, chunk.abstract_offsets, j)

    def title(self, i: int) -> str:
        chunk, j = self._locate(i)
        return self._title(chunk, i, j)

    def is_derived(self, i: int) -> bool:
        chunk, j = self._locate(i)
        return bool(chunk.derived[j])

    def record(self, i: int) -> str | None:
        return self._meta.get(i, _NO_META)[5]

    def source_count(self, i: int) -> int:
        return 1 + len(self._more.get(i, ()))

    # -- whole columns --------------------------------------------------------------------
    def keys(self, start: int = 0, stop: int | None = None) -> npt.NDArray[np.uint64]:
        """The id keys of rows [start, stop) as a ``uint64`` array (a copy)."""
        return self._column("keys", "uint64", start, stop)

    def ids(self) -> list[str]:
        """Every paper's id, in corpus order."""
        return [id_of(k) for k in self._values("keys")]

    def derived_rows(self) -> list[int]:
        """The rows whose title is derived."""
        return [i for i, flag in enumerate(self._values("derived")) if flag]

    def _values(self, name: str) -> Iterator[int]:
        """A column's values as Python ints (no numpy needed: small corpora load before the
        first frame, numpy after it)."""
        for chunk in self._chunks:
            column = getattr(chunk, name)
            yield from column.tolist() if hasattr(column, "tolist") else column

    def iter_abstracts(self) -> Iterator[str]:
        """Every abstract, in corpus order; a spilled chunk's pages leave the resident set
        once its texts are read (a pass over the corpus costs one chunk of pages)."""
        text = self._text
        spill = self._spill
        for chunk in self._chunks:
            data, offsets = chunk.abstracts, chunk.abstract_offsets
            for j in range(chunk.n):
                yield text(data, offsets, j)
            if spill is not None and spill.owns(data):
                spill.drop(data)

    def abstracts(self) -> TextColumn:
        """The abstracts as a sequence of strings, decoded when read."""
        return TextColumn(self, title=False)

    def titles(
        self, *, raw: bool = False, between: Callable[[], object] | None = None
    ) -> list[str]:
        """Every paper's title (derived or real), in corpus order. ``raw``: as stored, not
        sanitised again (for writing a cache, whose reading checks them). ``between`` is
        called after each chunk (a worker's check that it may go on: it may raise)."""
        out: list[str] = []
        text = self._raw_text if raw else self._text
        over = self._title_over
        for start, chunk in zip(self._starts, self._chunks, strict=True):
            data, offsets = chunk.titles, chunk.title_offsets
            out.extend(text(data, offsets, j) for j in range(chunk.n))
            if over:
                for i in range(start, start + chunk.n):
                    if i in over:
                        out[i] = over[i]
            if between is not None:
                between()
        return out

    def id_title_chunks(
        self,
    ) -> Iterator[tuple[npt.NDArray[np.uint64], list[Any], npt.NDArray[np.int64]]]:
        """Per chunk, without decoding a title: (the id keys, the titles' UTF-8 bytes as
        pieces whose concatenation is every title in row order — titles set later spliced
        in —, each title's length in bytes). The concatenation over the chunks does not
        depend on how the rows are chunked: a table read from the corpus cache gives the
        same bytes as the table that was saved."""
        import numpy as np

        over = self._title_over
        marked = sorted(over)
        at = 0
        for start, chunk in zip(self._starts, self._chunks, strict=True):
            keys = np.asarray(chunk.keys, np.uint64)
            offsets = np.asarray(chunk.title_offsets, np.int64)
            lengths = np.diff(offsets)
            data = memoryview(chunk.titles)
            pieces: list[Any] = []
            begin = int(offsets[0])
            stop = start + chunk.n
            while at < len(marked) and marked[at] < stop:
                row = marked[at]
                at += 1
                if row < start:
                    continue
                j = row - start
                pieces.append(data[begin : int(offsets[j])])
                title = over[row].encode("utf-8")
                pieces.append(title)
                lengths[j] = len(title)
                begin = int(offsets[j + 1])
            pieces.append(data[begin : int(offsets[-1])])
            yield keys, pieces, lengths

    def derived(self) -> npt.NDArray[np.bool_]:
        return self._column("derived", "uint8").astype(bool)

    def venue_codes(self) -> npt.NDArray[np.int32]:
        """Each paper's venue as an index into ``venue_names`` (-1: none)."""
        return self._column("venues", "int32")

    def years(self) -> npt.NDArray[np.int64]:
        """Each paper's year (0: none)."""
        return self._column("years", "int64")

    def rows_only_from(self, files: set[str]) -> list[int]:
        """Rows all of whose sources are in ``files`` (file names, as in `Source.file`)."""
        import numpy as np

        codes = np.array([n in files for n in self.file_names] or [False], bool)
        ok = codes[self._column("files", "int32")] if self._n else np.zeros(0, bool)
        for row, more in self._more.items():
            if ok[row] and not all(s.file in files for s in more):
                ok[row] = False
        return [int(r) for r in np.flatnonzero(ok).tolist()]

    def _column(
        self, name: str, dtype: str, start: int = 0, stop: int | None = None
    ) -> npt.NDArray[Any]:
        import numpy as np

        stop = self._n if stop is None else stop
        parts = []
        for first, chunk in zip(self._starts, self._chunks, strict=True):
            a, b = max(start, first), min(stop, first + chunk.n)
            if a < b:
                parts.append(np.asarray(getattr(chunk, name)[a - first : b - first], dtype))
        if not parts:
            return np.zeros(0, dtype)
        return np.concatenate(parts) if len(parts) > 1 else np.array(parts[0], dtype)

    @property
    def chunks(self) -> list[Chunk]:
        return self._chunks

    @property
    def title_overrides(self) -> dict[int, str]:
        return self._title_over

    @property
    def more_sources(self) -> dict[int, list[Source]]:
        return self._more

    @property
    def has_meta(self) -> bool:
        return bool(self._meta)

    # -- looking up ids ---------------------------------------------------------------------
    def find(self, key: int) -> int:
        """The row of an id key, -1 if it is not loaded. Rows not in the id index yet are
        merged into it first, unless there are many (`_SCAN_ROWS`): then they are scanned
        (ids are unique in a table: a key found in the index is the answer)."""
        with self._lock:
            index = self._index
            if self._n - index.upto <= _SCAN_ROWS:
                index.merge(self)
                return index.find(key)
            row = index.find(key)
            return row if row >= 0 else self._scan(key, index.upto)

    def _scan(self, key: int, start: int) -> int:
        """The first row from ``start`` on with this id key, -1 if none: one numpy
        comparison per chunk."""
        import numpy as np

        wanted = np.uint64(key)
        first_chunk = max(0, bisect.bisect_right(self._starts, start) - 1)
        for k in range(first_chunk, len(self._chunks)):
            first, chunk = self._starts[k], self._chunks[k]
            skip = max(0, start - first)
            hits = np.flatnonzero(np.asarray(chunk.keys, np.uint64)[skip:] == wanted)
            if hits.size:
                return first + skip + int(hits[0])
        return -1

    def find_many(self, keys: list[int]) -> list[int]:
        """The row of each id key, in the order given (-1: not loaded), as `find` gives
        them, in one look-up: a batch of new papers asks at once while loading."""
        if len(keys) < 64 or self._n < _NUMPY_FROM:
            return [self.find(key) for key in keys]
        import numpy as np

        with self._lock:
            index = self._index
            if self._n - index.upto > _SCAN_ROWS:  # (never while loading: see `find`)
                return [self.find(key) for key in keys]
            index.merge(self)
            if not index.numpy:
                return [index.find(key) for key in keys]
            wanted = np.fromiter(keys, np.uint64, len(keys))
            sorted_keys = index.keys
            if not len(sorted_keys):
                return [-1] * len(keys)
            at = np.minimum(np.searchsorted(sorted_keys, wanted), len(sorted_keys) - 1)
            rows = np.where(sorted_keys[at] == wanted, index.rows[at], -1)
            return [int(r) for r in rows.tolist()]

    def index_ids(self) -> None:
        """Bring the id index up to date with every row, from the calling thread (one that
        loads rows: see `find`). Built beside the index in use and swapped in: look-ups
        meanwhile do not wait for it."""
        with self._lock:
            index, n = self._index, self._n
            if n - index.upto <= _SCAN_ROWS:
                index.merge(self)
                return
            fresh = index.copy()
            fresh_from = index.upto
        fresh.merge(self, n)
        with self._lock:  # unless the table was emptied or the index merged meanwhile
            if self._index is index and index.upto == fresh_from:
                self._index = fresh

    def any_of(self, keys: npt.NDArray[np.uint64]) -> bool:
        """Is any of these keys loaded already?"""
        if not self._n:
            return False
        with self._lock:
            self._index.merge(self)
            return self._index.any_of(keys)

    def rows_of(self, paper_ids: Iterable[str]) -> list[int]:
        """The rows of the ids that are loaded (others are left out), in no particular
        order: one vectorised look-up, for the thousands of ids of a tag or of read marks."""
        keys = [key for key in map(key_of, paper_ids) if key is not None]
        if not keys or not self._n:
            return []
        with self._lock:
            self._index.merge(self)
            return self._index.rows_of(keys)

    def rows_for(self, paper_ids: Sequence[str]) -> npt.NDArray[np.int64]:
        """The row of each id, in the order given (-1: not loaded): one vectorised look-up
        for a whole list of ids (sorting the papers of a result by the corpus order)."""
        import numpy as np

        keys = [key_of(p) for p in paper_ids]
        out = np.full(len(keys), -1, np.int64)
        valid = [i for i, k in enumerate(keys) if k is not None]
        if not valid or not self._n:
            return out
        with self._lock:
            self._index.merge(self)
            index = self._index
            if not index.numpy:
                for i in valid:
                    out[i] = index.find(keys[i])  # type: ignore[arg-type]
                return out
            wanted = np.fromiter((keys[i] for i in valid), np.uint64, len(valid))
            at = np.minimum(np.searchsorted(index.keys, wanted), len(index.keys) - 1)
            found = index.keys[at] == wanted
            out[np.asarray(valid, np.int64)[found]] = index.rows[at[found]]
        return out

    def index_of(self, paper_id: str) -> int:
        key = key_of(paper_id)
        row = -1 if key is None else self.find(key)
        if row < 0:
            raise KeyError(paper_id)
        return row

    def get(self, paper_id: str) -> Paper | None:
        key = key_of(paper_id)
        row = -1 if key is None else self.find(key)
        return None if row < 0 else self._paper(row)

    def with_prefix(self, prefix: str) -> list[int]:
        """Rows whose id starts with ``prefix`` (hex digits), sorted by id."""
        if not prefix or len(prefix) > 16 or re.fullmatch(r"[0-9a-f]+", prefix) is None:
            return []
        shift = 4 * (16 - len(prefix))
        lo = int(prefix, 16) << shift
        with self._lock:
            self._index.merge(self)
            return self._index.between(lo, lo + (1 << shift))

    # -- loading --------------------------------------------------------------------------
    def _venue_code(self, venue: str | None) -> int:
        if venue is None:
            return -1
        code = self._venue_codes.get(venue)
        if code is None:
            code = self._venue_codes[venue] = len(self.venue_names)
            self.venue_names.append(venue)
        return code

    def _file_code(self, name: str) -> int:
        code = self._file_codes.get(name)
        if code is None:
            code = self._file_codes[name] = len(self.file_names)
            self.file_names.append(name)
        return code

    def extend(self, batch: RowBatch) -> int:
        """Append a batch of new rows (keys not loaded yet); returns the first one's row."""
        first = self._n
        if not len(batch):
            return first
        abstracts: Any
        abstracts, abstract_offsets = _text_column(batch.abstracts)
        if self._spill is not None and abstracts:
            try:
                abstracts = self._spill.put(abstracts)
            except (OSError, ValueError):  # a full disk, …: kept in memory from now on
                self._spill = None
        titles, title_offsets = _text_column(batch.titles)
        chunk = Chunk(
            abstracts=abstracts,
            abstract_offsets=abstract_offsets,
            titles=titles,
            title_offsets=title_offsets,
            derived=bytearray(batch.derived),
            keys=array("Q", batch.keys),
            venues=array("i", [self._venue_code(v) for v in batch.venues]),
            years=array("q", [y or 0 for y in batch.years]),
            files=array("i", [self._file_code(s.file) for s in batch.sources]),
            indexes=array("q", [s.index for s in batch.sources]),
        )
        for pos, meta in batch.meta.items():
            self._meta[first + pos] = meta
        for pos, source in batch.more:
            self._more.setdefault(first + pos, []).append(source)
        self.append_chunk(chunk)
        return first

    def spill_into(self, folder: Path) -> bool:
        """From now on, keep appended abstracts in an unlinked file in ``folder`` (mapped;
        see `_Spill`), not in memory. False (and nothing changes) if no file can be made
        there. Use a folder on a disk: in a RAM file system (tmpfs) it would save nothing."""
        if not hasattr(os, "pwrite"):  # (POSIX only)
            return False
        try:
            folder.mkdir(parents=True, exist_ok=True)
            self._spill = _Spill(folder)
        except OSError:
            return False
        return True

    def release_pages(self) -> None:
        """Spilled abstracts read so far (by a save, a search's phrase checks) leave the
        resident set; they stay in the page cache and come back when read again."""
        spill = self._spill
        if spill is not None:
            for mapped in list(spill.maps.values()):
                spill.drop(mapped)

    def append_chunk(self, chunk: Chunk) -> None:
        """Publish a chunk (readers in other threads see it whole or not at all)."""
        self._chunks.append(chunk)
        self._starts.append(self._n)
        self._n += chunk.n

    def set_names(self, venues: list[str], files: list[str]) -> None:
        """The venue and file names that mapped chunks' codes index (an empty table only)."""
        assert not self._n
        self.venue_names = list(venues)
        self._venue_codes = {v: i for i, v in enumerate(venues)}
        self.file_names = list(files)
        self._file_codes = {f: i for i, f in enumerate(files)}

    # -- changes at load (never through a Paper) ------------------------------------------
    def add_source(self, i: int, source: Source) -> None:
        self._more.setdefault(i, []).append(source)
        self._changed(i)

    def set_title(self, i: int, title: str) -> None:
        self._title_over[i] = title
        self.title_version += 1
        self._changed(i)

    def _set(self, name: str, i: int, value: int) -> None:
        chunk, j = self._locate(i)
        column = getattr(chunk, name)
        if getattr(column, "flags", None) is not None and not column.flags.writeable:
            import numpy as np

            column = np.array(column)  # a mapped cache's column: copied once
            setattr(chunk, name, column)
        column[j] = value
        self._changed(i)

    def adopt(self, i: int, rec: MetaRecord) -> None:
        """The paper takes the record's metadata (its title is then real, not derived)."""
        if rec.title:
            self.set_title(i, rec.title)
        self._set("derived", i, 0)
        self._take_venue_year(i, rec.venue, rec.year)
        self._meta[i] = (rec.authors, rec.url, rec.doi, rec.eprint, rec.primary_class, rec.label)
        self._changed(i)

    def _take_venue_year(self, i: int, venue: str | None, year: int | None) -> None:
        """Row ``i`` takes a record's venue and year as one pair, or keeps its own
        (`metadata.paired_venue_year`): never a dump's venue with an arXiv posting's year."""
        from .metadata import paired_venue_year

        chunk, j = self._locate(i)
        code = int(chunk.venues[j])
        own_venue = None if code < 0 else self.venue_names[code]
        own_year = int(chunk.years[j]) or None
        new_venue, new_year = paired_venue_year(own_venue, own_year, venue, year)
        if (new_venue, new_year) != (own_venue, own_year):
            self._set("venues", i, self._venue_code(new_venue))
            self._set("years", i, new_year or 0)

    def merge_into(self, target: int, other: int) -> None:
        """``target`` takes ``other``'s metadata (title, authors, year, venue, …) and
        sources (`CorpusBuilder` then drops ``other``)."""
        paper = self._paper(other)
        self.set_title(target, paper.title)
        self._set("derived", target, 0)
        self._take_venue_year(target, paper.venue, paper.year)
        self._meta[target] = self._meta.get(other, _NO_META)
        self._more.setdefault(target, []).extend(paper.sources)
        self._changed(target)

    def drop(self, rows: set[int]) -> None:
        """Remove rows (rare: records merged into dump papers); the others keep their order."""
        kept = [p for i, p in enumerate(self) if i not in rows]
        fresh = PaperTable(kept)
        self._n = 0  # first: a reader in another thread sees no rows, then the new ones
        self._chunks, self._starts = fresh._chunks, fresh._starts
        self._n = fresh._n
        self._title_over, self._meta, self._more = fresh._title_over, fresh._meta, fresh._more
        self.title_version += 1
        self.venue_names, self._venue_codes = fresh.venue_names, fresh._venue_codes
        self.file_names, self._file_codes = fresh.file_names, fresh._file_codes
        self._built = {}
        with self._lock:
            self._index = _IdIndex()

    def clear(self) -> None:
        self.drop(set(range(self._n)))

    def abstract_bytes(self, start: int, stop: int) -> list[tuple[Any, Any]] | None:
        """Abstracts ``[start, stop)`` as the UTF-8 bytes kept, not decoded (the index
        build reads them so): ``(buffer, offsets)`` pieces, text ``j`` of a piece being
        ``buffer[offsets[j]:offsets[j + 1]]``; a buffer is the same object for as long
        as its rows do not move. None unless every one of them was parsed here into this
        table's spill file (sanitised at ingest, in a file nobody else can open): any
        other text is read through `abstract`, which checks it again."""
        stop = min(stop, self._n)  # (raised after a chunk is published: never ahead)
        chunks, starts, spill = self._chunks, self._starts, self._spill
        out: list[tuple[Any, Any]] = []
        k = bisect.bisect_right(starts, start) - 1
        while start < stop:
            chunk, first = chunks[k], starts[k]
            if spill is None or not spill.owns(chunk.abstracts):
                return None
            a, b = start - first, min(stop - first, chunk.n)
            out.append((chunk.abstracts, chunk.abstract_offsets[a : b + 1]))
            start = first + b
            k += 1
        return out


class TextColumn(Sequence[str]):
    """A table's abstracts (or titles) as strings, decoded when read."""

    def __init__(self, table: PaperTable, *, title: bool) -> None:
        self._table = table
        self._n = len(table)
        self._get = table.title if title else table.abstract

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> list[str]: ...
    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            start, stop, step = i.indices(self._n)
            if step == 1:
                return list(self._iter(start, stop))
            return [self._get(j) for j in range(start, stop, step)]
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError("index out of range")
        return self._get(i)

    def __iter__(self) -> Iterator[str]:
        return self._iter(0, self._n)

    def _iter(self, start: int, stop: int) -> Iterator[str]:
        get = self._get
        for j in range(start, stop):
            yield get(j)


def as_table(papers: Sequence[Paper] | PaperTable) -> PaperTable:
    return papers if isinstance(papers, PaperTable) else PaperTable(papers)

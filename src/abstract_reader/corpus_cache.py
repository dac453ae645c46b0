"""A cache of parsed corpora, so that reopening large unchanged dumps skips parsing.

The cache can never change what the user sees:

- It is keyed by the dumps' *contents* (SHA-256 of every file: about 1 ms per MB, against
  50 ms per MB to parse), besides their paths, this format, the package version and the
  parsing code itself (`parser_fingerprint`: parsing changed without a new version — its
  papers or its warnings' words — is another key). A dump edited with its size and mtime
  kept gets another key. The key is also in the file's header: a cache renamed to another
  key is refused.
- First rows do not wait for that hashing (`open_for`, `PendingKey`: ~1 s at a million
  abstracts). A warm start finds its cache by the dumps' stat data — size, mtime, ctime,
  inode, device, recorded in the authenticated header when the key was hashed; ctime is
  set by the kernel on every write and cannot be set back — and shows rows while the key
  is hashed on a thread; the rows are final only once the key agrees (`Opened.confirm`),
  else cleared and the dumps parsed. A cold start with no cache of these files parses at
  once, hashing meanwhile; the cache is saved only if the dumps' stat data did not change
  from before the hashing to after the parsing (so the key is of what was parsed). Dumps
  written in the last 2 s (stat data too coarse to tell) are hashed first, as before.
- A cache we wrote is *authenticated*: with the user's secret (`cachefile.secret`: 32
  random bytes in ``cache.key`` beside the cache files, mode 0600, made on the first save)
  the header carries an HMAC-SHA256 of the key, the header itself and the further sources,
  and each chunk of 5,000 papers one of its texts' bytes, their offsets, its ids' keys and
  numbers, bound to the header's MAC and the chunk's place. A chunk whose MAC holds is
  what our parser gave for these dumps: it is published as it is (its ids are the stored
  ones), with no decode, scan or id derived again (at 1M papers ~1 CPU s of hashing that
  releases the GIL, against ~10 s holding it). A MAC that does not hold (another secret,
  a changed byte, chunks moved, no MAC) → `CacheRefused`: the dumps are parsed.
- A file whose every chunk MAC held once is *recorded* (`Opened.record`: ``<key>.checked``
  beside it, its stat data — size, mtime, ctime, inode, device — with a MAC of the secret
  bound to its header's): a later start whose file has that stat data publishes its
  chunks without hashing their texts again (`Opened.vouched`; ~0.9 CPU s at a million
  papers). A write to the file gives it another ctime, another file in its place another
  inode: its MACs are checked then, as before. A file changed less than `_RACY_NS` before
  its checks began is not recorded (a write in the same clock tick could keep its ctime;
  one later would not). The cold start that saves a cache checks it again from the file
  and records it in the background (`save_and_vouch`), so the very next start need not;
  the dumps' content key is hashed every time all the same (the proof that the cache is
  of these dumps).
- Without a secret (it cannot be read or made, or the file could be another's: see
  `cachefile.secret`) a cache is read as untrusted input, as before: every id is derived
  again from its abstract, every text must already be sanitised, every number and file
  name must be one the dumps could have given. That proves less: it keeps control
  characters from the terminal and every text under its own id, but a cache edited by
  someone who can write the user's files could show other (clean) text.
- Who can read the secret can forge caches; who can read the user's files owns them
  already. It lives beside the cache (not in the data folder: it authenticates nothing
  else, is remade when the cache folder is emptied, and is never in a backup of the
  library). An attacker who can write the cache folder but is not the user cannot plant
  a secret: it must be a regular file of this user that nobody else can read or write.
- One flat file, never pickle: a JSON header and aligned arrays, *memory-mapped* on
  reading, so the table's columns are views of the file (a warm start costs page faults,
  not a copy). Written to a fresh ``mkstemp`` file in the cache folder (``O_EXCL``: no link
  followed) and renamed into place; read only from a regular file (never a FIFO or
  device, never through a symlink).
- What must be checked before rows show (numbers, codes, offsets) is checked at once with
  numpy; the rest a chunk at a time (`Opened.publish`), each chunk published to the table
  as it passes, so the first rows show as soon as the first chunk has passed. A chunk that
  fails → `CacheRefused`: the caller clears what it showed and parses the dumps.
- The mapping can change under us only if someone writes into the cache file itself (we
  only ever replace it): every text a `PaperTable` gives is sanitised again when it is not
  all printable (one C scan), so not even that can send a control character to the
  terminal.

Small corpora are not cached: parsing them is as fast as reading a cache.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import os
import re
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from . import __version__
from .cachefile import (
    drop_pages,
    open_mapped_stat,
    read_small,
    record_holds,
    secret,
    stat_data,
    write_atomically,
    write_record,
)
from .corpus import (
    BINARY_SAMPLE,
    ID_LENGTH,
    MAX_RECORD_PROBLEMS,
    Corpus,
    CorpusBuilder,
    LoadError,
    Source,
    not_text,
    paper_key,
)
from .infile import is_metadata_file
from .papertable import PaperTable
from .paths import files_key
from .text.sanitise import _SANITISE_TABLE, sanitise

CORPUS_FORMAT = 4
MAGIC = b"ARCORPUS"
SUFFIX = ".corpus"
#: the record that a cache file's every chunk MAC held (`Opened.record`)
CHECKED_SUFFIX = ".checked"
CHUNK = 5000  #: papers checked and published at a time
_ALIGN = 64
MIN_BYTES = 4 << 20  #: corpora smaller than this are parsed every time
_KEEP = 3  #: cached corpora kept (each about the size of its dumps)


#: The modules whose code makes what a cache keeps (papers, ids, titles, load warnings)
#: and how: every module of the package that parsing dumps and caching them imports (a test
#: holds this list to that), a package by all its modules.
PARSER_MODULES = (
    "__init__",
    "cachefile",
    "corpus",
    "corpus_cache",
    "infile",
    "paper",
    "papertable",
    "paths",
    "plural",
    "text",
)


@functools.cache
def parser_fingerprint() -> str:
    """A digest of the source of `PARSER_MODULES`, in every cache's key and header: a cache
    written by other parsing code — its papers or its warnings' words changed, the package's
    version not — is never used (a warm start showed the old text). The code itself, not a
    format number someone must remember to bump; ~250 KB read and hashed once a process
    (well under a millisecond), only when a cache is looked for. A module whose source
    cannot be read (an install without .py files) counts by its name: the key is then
    what it was before, the package version and `CORPUS_FORMAT`."""
    import hashlib

    package = Path(__file__).resolve().parent
    digest = hashlib.blake2b(digest_size=16)
    for name in PARSER_MODULES:
        folder = package / name
        paths = sorted(folder.glob("*.py")) if folder.is_dir() else [package / f"{name}.py"]
        for path in paths:
            digest.update(f"{path.relative_to(package).as_posix()}\0".encode())
            try:
                digest.update(path.read_bytes())
            except OSError:
                digest.update(b"(unreadable)")
            digest.update(b"\0")
    return digest.hexdigest()


def _salt(digests: Iterable[object]) -> str:
    """What a key hashes besides the dumps' paths and stat data: the dumps' contents, this
    format, the package version and the parsing code (`parser_fingerprint`)."""
    listed = ",".join(map(str, digests))
    return f"{__version__}/{CORPUS_FORMAT}/{parser_fingerprint()}/{listed}"


def key_for(files: Sequence[Path], *, threads: int | None = None) -> str | None:
    """The corpus cache's key: the dumps' contents, paths, sizes and mtimes, this format,
    version and parsing code; None when a file cannot be read. Call it *before* parsing: a
    dump that changes while it is parsed then gets a key that its next reading no longer
    matches. Hashed on ``threads`` threads (default: as many as cores)."""
    digests = _content_digests(files, threads)
    if digests is None:
        return None
    return files_key(_salt(digests), files)


def _content_digests(files: Sequence[Path], threads: int | None = None) -> list[str] | None:
    """`content_digest` of each file, in order, None if any is None. On ``threads`` threads,
    by default as many as cores (SHA-256 releases the GIL on large reads): at 1M papers the
    dumps are 1.3 GB."""
    workers = min(len(files), threads or os.cpu_count() or 1, 8)
    if workers < 2:
        digests = [content_digest(path) for path in files]
    else:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(workers, thread_name_prefix="digest") as pool:
            digests = list(pool.map(content_digest, files))
    return None if any(d is None for d in digests) else [d for d in digests if d is not None]


_READ_BYTES = 4 << 20


def content_digest(path: Path) -> str | None:
    """SHA-256 of a regular file's bytes (hardware-accelerated on most CPUs: several times
    faster than BLAKE2 here), None for anything else.

    A file that parsing refuses from its first bytes as not text (`corpus.not_text`: a
    disk image, a sparse file named .txt) is not read further: what it gives (that one load
    error) depends on those bytes alone, so they are its digest, marked as such. A 900 MB
    sparse file cost ~1.6 s of hashing before being refused; now one 8 KB read."""
    import hashlib
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        regular = stat.S_ISREG(os.fstat(fd).st_mode)
    except OSError:
        regular = False
    if not regular:  # (before os.fdopen, which raises IsADirectoryError for a folder)
        os.close(fd)
        return None
    with os.fdopen(fd, "rb", buffering=0) as handle:
        try:
            # (the bytes that say whether it is text: the same digest as hashing it whole)
            head = bytearray()
            while len(head) < BINARY_SAMPLE and (piece := handle.read(BINARY_SAMPLE - len(head))):
                head += piece
            digest = hashlib.sha256(head)
            if not_text(bytes(head)):
                return f"not-text:{digest.hexdigest()}"
            # 4 MB reads, not `hashlib.file_digest`'s 256 KB: each read and update releases
            # the GIL, and taking it back 16 times as often slowed whatever the other
            # threads were doing (a warm start publishes rows while this hashes)
            buffer = bytearray(_READ_BYTES)
            view = memoryview(buffer)
            while size := handle.readinto(buffer):
                digest.update(view[:size])
            return digest.hexdigest()
        except OSError:
            return None


#: a file changed less than this before its stat data was taken might change again with the
#: same ctime (timestamps are coarser than writes): its stat data proves nothing (git's
#: "racily clean" entries)
_RACY_NS = 2_000_000_000


def dump_stats(files: Sequence[Path]) -> list[list[object]] | None:
    """Each file's path and stat data (size, mtime, ctime, inode, device), None if any
    cannot be stat'ed. ctime is set by the kernel on every write, rename, chmod or utime
    (no program can set it back): equal stat data is the same file, unwritten since."""
    out: list[list[object]] = []
    for path in files:
        try:
            st = os.stat(path)
        except OSError:
            return None
        out.append([str(path), st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev])
    return out


class PendingKey:
    """The dumps' content key (`key_for`), hashed on a thread from its making, so that
    neither a warm start (whose cache is found by the dumps' stat data) nor a cold one
    (which has no cache to find) waits for it before its first rows. `result` is the key
    only if the dumps' stat data did not change from before the hashing until then — so it
    is the key of what was parsed or shown meanwhile.

    A dump written less than `_RACY_NS` before could be written again with the same stat
    data: then the key is hashed here, before anything is parsed, as it always was (a dump
    that changes while it is parsed then gets a key that its next reading no longer
    matches), and ``stats`` is None (no cache is found by it)."""

    def __init__(self, files: Sequence[Path]) -> None:
        import threading
        import time

        self.files = list(files)
        now = time.time_ns()
        stats = dump_stats(self.files)
        racy = stats is None or any(int(str(s[3])) > now - _RACY_NS for s in stats)
        #: the stat data before hashing, None if it proves nothing
        self.stats = None if racy else stats
        self._key: str | None = None
        self._thread: threading.Thread | None = None
        #: the files' digests as they are hashed (by `_hash_files`, on any thread)
        self._digests: list[str | None] = [None] * len(self.files)
        self._next = 0  #: the next file to hash
        self._left = len(self.files)  #: files not hashed yet
        self._lock = threading.Lock()
        self._hashed = threading.Event()
        if not self._left:
            self._hashed.set()
        if racy:
            self._key = key_for(self.files)
        else:
            self._thread = threading.Thread(target=self._run, name="content-key", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        # one thread: this runs beside a warm start's chunk checks or a cold start's parse,
        # and the reader's UI thread; with a thread per core as well, three hashing threads
        # shared two cores with the one that echoes keys. Whoever waits for the key helps
        # (`result`): a warm start whose chunks need no MAC (`Opened.vouched`) is done
        # publishing long before the ~0.8 CPU s of SHA-256 of a million abstracts' dumps.
        self._hash_files()

    def _hash_files(self) -> None:
        """Hash the files nobody has taken yet, one at a time, until none is left."""
        files = self.files
        while True:
            with self._lock:
                i = self._next
                if i >= len(files):
                    return
                self._next += 1
            digest = content_digest(files[i])
            with self._lock:
                self._digests[i] = digest
                self._left -= 1
                if not self._left:
                    self._hashed.set()

    def result(self) -> str | None:
        """The content key (helps hash it, waits for it); None if it was hashed meanwhile
        and the dumps' stat data changed since."""
        if self._thread is None:
            return self._key
        self._hash_files()
        self._hashed.wait()
        if dump_stats(self.files) != self.stats:
            return None
        digests = self._digests
        if any(d is None for d in digests):
            return None  # (a file could not be read)
        return files_key(_salt(digests), self.files)


class CacheRefused(Exception):
    """Part of a cache file did not check out: parse the dumps."""


def _unsafe_pattern() -> re.Pattern[str]:
    """Any character that `sanitise` replaces."""
    table = "".join(chr(c) for c in _SANITISE_TABLE if chr(c) != sanitise(chr(c)))
    return re.compile(f"[{re.escape(table)}]")


_UNSAFE_RE = _unsafe_pattern()
_ODD_SPACE_RE = re.compile(r"[^\S ]")  # whitespace other than a plain space

#: the sections of a cache file: dtype, and the count they must have (n: papers, m: the
#: further sources, None: any)
_SECTIONS: dict[str, tuple[str, str | None]] = {
    "abstracts": ("|u1", None),
    "abstract_offsets": ("<i8", "n+1"),
    "titles": ("|u1", None),
    "title_offsets": ("<i8", "n+1"),
    "venues": ("<i4", "n"),
    "years": ("<i4", "n"),
    "files": ("<i4", "n"),
    "indexes": ("<i8", "n"),
    "more_rows": ("<i8", "m"),
    "more_files": ("<i4", "m"),
    "more_indexes": ("<i8", "m"),
    "sums": ("<u4", "c"),  #: CRC-32 of each chunk's abstracts and titles
    "keys": ("<u8", "n"),  #: the ids' keys, as parsing derived them
    "macs": ("|u1", "c*32"),  #: each chunk's MAC (`_chunk_mac`)
}
_TEXTS = ("abstracts", "titles")
_MAC_SIZE = 32
#: magic, the header's size, its CRC-32, 4 bytes to spare, the header's MAC (`_head_mac`)
_HEAD = len(MAGIC) + 16 + _MAC_SIZE
#: what each chunk's MAC covers besides its texts: its rows of these sections
_CHUNK_NUMBERS = ("keys", "venues", "years", "files", "indexes")


def save(
    cache_dir: Path, key: str | PendingKey, corpus: Corpus, file_errors: Sequence[LoadError]
) -> bool:
    """Write the parsed corpus (atomically); failing to write a cache is not an error."""
    return _save(cache_dir, key, corpus, file_errors) is not None


def save_and_vouch(
    cache_dir: Path,
    key: str | PendingKey,
    corpus: Corpus,
    file_errors: Sequence[LoadError],
    after: threading.Event | None = None,
) -> bool:
    """`save`, then — on a daemon thread of low priority, so that quitting never waits for
    it — every chunk's MAC checked once more from the file written and the file recorded
    (`Opened.record`) once `_RACY_NS` have passed since it was written: the next start,
    however soon, then need not hash its texts again. ``after``: the checks wait for it
    (the reader's background work — the similarity model — is done: the checks' pages and
    arrays are not resident beside it, the peak of a cold session)."""
    written = _save(cache_dir, key, corpus, file_errors)
    if written is None:
        return False
    threading.Thread(
        target=_vouch, args=(cache_dir, written, after), name="corpus-vouch", daemon=True
    ).start()
    return True


def _vouch(cache_dir: Path, key: str, after: threading.Event | None = None) -> bool:
    """Check every chunk's MAC of the cache file of ``key`` and record it (`Opened.record`):
    False if it did not check out or nothing was recorded."""
    import time

    if after is not None:
        after.wait()
    from .priority import lower_this_thread

    lower_this_thread()
    secret_key = secret(cache_dir, create=False)
    found = open_mapped_stat(cache_dir / f"{key}{SUFFIX}")
    if secret_key is None or found is None:
        return False
    mapped, st = found
    # its bytes are read from when its last change is `_RACY_NS` old (see `Opened.record`)
    time.sleep(max(0.0, (st.st_ctime_ns + _RACY_NS - time.time_ns()) / 1e9))
    try:
        opened = Opened(mapped, None, key, secret_key, file_stat=stat_data(st))
        opened.check_all()
    except Exception:  # (damaged since written: the next start refuses it)
        return False
    return opened.record(cache_dir)


def _save(
    cache_dir: Path, key: str | PendingKey, corpus: Corpus, file_errors: Sequence[LoadError]
) -> str | None:
    """`save`: the key written, or None.

    Straight from the table's columns: its abstracts' bytes are written as they are, chunk
    by chunk (no joined copy), with the ids' keys (believed on reading only where a chunk's
    MAC holds) and the MACs of the user's secret, made here if there is none yet. Call it
    only with what parsing gave (the MACs vouch for it).

    The abstracts are read three times (their CRCs, their MACs, the write): the pages of
    a spilled table (mapped: `PaperTable.spill_into`) leave the resident set again after
    each chunk of each pass, so the save costs a chunk's pages, not the corpus's (at
    100,000 papers the passes made ~110 MB resident at once, at a million 1.3 GB)."""
    import numpy as np

    stats = None
    if isinstance(key, PendingKey):  # hashed while parsing: only if the dumps stayed put
        stats = key.stats
        resolved = key.result()
        if resolved is None:
            return None
        key = resolved
    table = corpus.papers
    count = len(table)
    more_rows: list[int] = []
    more_files: list[int] = []
    more_indexes: list[int] = []
    file_code = {name: i for i, name in enumerate(table.file_names)}
    for row in sorted(table.more_sources):
        for source in table.more_sources[row]:
            more_rows.append(row)
            more_files.append(file_code.setdefault(source.file, len(file_code)))
            more_indexes.append(source.index)
    file_names = list(file_code)
    # the titles' bytes as the table holds them (titles set later spliced in), joined once:
    # no string per paper (decoding and encoding a million titles held the GIL ~1 s)
    title_pieces: list[Any] = []
    title_lengths: list[Any] = [np.zeros(1, np.int64)]
    for _keys, pieces, lengths in table.id_title_chunks():
        title_pieces += pieces
        title_lengths.append(lengths)
    title_blob = b"".join(title_pieces)
    del title_pieces
    title_offsets = np.cumsum(np.concatenate(title_lengths), dtype=np.int64)
    titles_at = memoryview(title_blob)
    abstract_parts: list[tuple[Any, int, int]] = []  # (buffer, start, stop) per chunk
    abstract_offsets = np.zeros(count + 1, np.int64)
    at = 0
    row = 0
    for chunk in table.chunks:
        offsets = np.asarray(chunk.abstract_offsets, np.int64)
        start, stop = int(offsets[0]), int(offsets[-1])
        abstract_offsets[row + 1 : row + chunk.n + 1] = offsets[1:] - start + at
        abstract_parts.append((chunk.abstracts, start, stop))
        at += stop - start
        row += chunk.n
    arrays: dict[str, Any] = {
        "abstract_offsets": abstract_offsets,
        "title_offsets": title_offsets,
        "venues": table.venue_codes().astype("<i4"),
        "years": table.years().astype("<i4"),
        "files": table._column("files", "int32").astype("<i4"),
        "indexes": table._column("indexes", "int64").astype("<i8"),
        "more_rows": np.array(more_rows, "<i8"),
        "more_files": np.array(more_files, "<i4"),
        "more_indexes": np.array(more_indexes, "<i8"),
        "keys": table.keys().astype("<u8"),
    }
    import zlib

    sums = []
    chunk_abstracts: list[list[memoryview]] = []  #: per chunk: pieces of the table's buffers
    chunk_spans: list[list[tuple[Any, int, int]]] = []  #: and where they are: (buffer, start, stop)
    for first in range(0, count, CHUNK):
        last = min(count, first + CHUNK)
        crc = 0
        pieces = []
        spans = []
        a, b = int(abstract_offsets[first]), int(abstract_offsets[last])
        for buffer, start, stop in abstract_parts:  # the chunk's bytes, across parts
            size = stop - start
            lo, hi = max(a, 0), min(b, size)
            if lo < hi:
                pieces.append(memoryview(buffer)[start + lo : start + hi])
                crc = zlib.crc32(pieces[-1], crc)
                spans.append((buffer, start + lo, start + hi))
                _drop_read(buffer, start + lo, start + hi)
            a, b = a - size, b - size
        sums.append(zlib.crc32(titles_at[title_offsets[first] : title_offsets[last]], crc))
        chunk_abstracts.append(pieces)
        chunk_spans.append(spans)
    arrays["sums"] = np.array(sums, "<u4")
    sizes = {"abstracts": at, "titles": int(title_offsets[-1]), "macs": len(sums) * _MAC_SIZE}
    sections: dict[str, list[object]] = {}
    meta = {
        "format": CORPUS_FORMAT,
        "parser": parser_fingerprint(),  #: found by stat data (`open_for`): not another's
        "key": key,  #: which dumps (a file renamed to another key is not believed)
        "stats": stats,  #: their stat data when hashed (`open_for`), or None
        "count": count,
        "files": corpus.files,
        "venues": table.venue_names,
        "source_files": file_names,
        "errors": [[e.path, e.message, e.fatal] for e in file_errors],
        "sections": sections,
        "chunk": CHUNK,
        "numbers": _numbers_crc(arrays),
    }
    # the header's size depends on the offsets it holds: lay out from a generous bound
    base = _ALIGN * (1 + (len(json.dumps(meta)) + _HEAD + 64 * len(_SECTIONS) * 2) // _ALIGN)
    position = base
    for name, (dtype, _count) in _SECTIONS.items():
        if name in sizes:
            length = sizes[name]
        else:
            length = int(arrays[name].size)
        sections[name] = [position, dtype, length]
        position += length * np.dtype(dtype).itemsize
        position = -(-position // _ALIGN) * _ALIGN
    head = json.dumps(meta).encode("utf-8")
    if _HEAD + len(head) > base:
        return None
    # authenticated with this user's secret when there is one (else all zero: a reader with
    # the secret refuses the file, one without checks all of it)
    key_bytes = secret(cache_dir)
    head_mac = bytes(_MAC_SIZE)
    macs = [bytes(_MAC_SIZE)] * len(sums)
    if key_bytes is not None:
        head_mac = _head_mac(key_bytes, key, head, arrays)
        for k, pieces in enumerate(chunk_abstracts):
            first, last = k * CHUNK, min(count, (k + 1) * CHUNK)
            macs[k] = _chunk_mac(
                key_bytes,
                head_mac,
                k,
                abstracts=pieces,
                titles=titles_at[title_offsets[first] : title_offsets[last]],
                arrays=arrays,
                rows=range(first, last),
            )
            for span in chunk_spans[k]:
                _drop_read(*span)
    arrays["macs"] = np.frombuffer(b"".join(macs), np.uint8)

    def write(handle: BinaryIO) -> None:
        crc = zlib.crc32(head).to_bytes(4, "little")
        handle.write(MAGIC + len(head).to_bytes(8, "little") + crc + b"\0" * 4)
        handle.write(head_mac + head)
        for name in _SECTIONS:
            offset = int(sections[name][0])  # type: ignore[call-overload]
            handle.write(b"\0" * (offset - handle.tell()))
            if name == "abstracts":
                for buffer, start, stop in abstract_parts:
                    handle.write(memoryview(buffer)[start:stop])
                    _drop_read(buffer, start, stop)
            elif name == "titles":
                handle.write(title_blob)
            else:
                handle.write(arrays[name].tobytes())

    # durable: on the disk before it is renamed into place (`Opened.record` vouches for
    # the file by its stat data, which must then never name unwritten blocks), and the
    # kernel's writeback of ~1.4 GB at a million papers is this session's, in this thread,
    # not the next start's
    written = write_atomically(cache_dir, f"{key}{SUFFIX}", write, keep=_KEEP, durable=True)
    for old in cache_dir.glob("*.npz"):  # the format before this one: never read again
        with contextlib.suppress(OSError):
            if old.is_file() and not old.is_symlink():
                old.unlink()
    return key if written else None


class Opened:
    """A cache file mapped and checked as far as numpy checks go; the texts and ids are
    checked chunk by chunk as `publish` adds them to a table: with the user's secret, by
    each chunk's MAC; without, in full."""

    def __init__(
        self,
        mapped: Any,
        files: Sequence[Path] | None,
        key: str | None = None,
        secret_key: bytes | None = None,
        *,
        file_stat: list[int] | None = None,
        checked: bytes | None = None,
    ) -> None:
        """``file_stat``: the mapped file's `stat_data`; ``checked``: the bytes of its
        record (`record`), if any."""
        import hmac
        import time

        import numpy as np

        #: when the file's bytes were first read here (`record`)
        self.opened_ns = time.time_ns()
        size = len(mapped)
        meta, head, head_mac = _read_head(mapped)
        head_size = len(head)
        chunk = meta["chunk"]
        if type(chunk) is not int or chunk < 1:
            raise CacheRefused("chunk")
        count = meta["count"]
        if meta["format"] != CORPUS_FORMAT or type(count) is not int or count < 0:
            raise CacheRefused("format")
        if meta.get("parser") != parser_fingerprint():  # (its key says so too)
            raise CacheRefused("written by other parsing code")
        if key is not None and meta["key"] != key:
            raise CacheRefused("the cache of other dumps")
        self.key: str = meta["key"]
        venue_names, file_names, loaded = meta["venues"], meta["source_files"], meta["files"]
        strings = [*venue_names, *file_names, *loaded]
        if not all(isinstance(v, str) and _clean(v) for v in strings):
            raise CacheRefused("names")
        allowed = {str(f) for f in files} if files is not None else set(loaded)
        if any(f not in allowed for f in loaded):
            raise CacheRefused("files")
        if not set(file_names) <= {sanitise(Path(f).name) for f in loaded}:
            raise CacheRefused("source files")
        errors = [LoadError(p, m, f) for p, m, f in meta["errors"]]
        if any(
            e.path not in allowed or not _clean(e.message) or type(e.fatal) is not bool
            for e in errors
        ):
            raise CacheRefused("errors")
        sections = meta["sections"]
        if not isinstance(sections, dict) or set(sections) != set(_SECTIONS):
            raise CacheRefused("sections")
        data_start = _HEAD + head_size
        arrays: dict[str, Any] = {}
        more = None
        for name, (dtype, wanted) in _SECTIONS.items():
            offset, stored_dtype, length = sections[name]
            if (
                stored_dtype != dtype
                or type(offset) is not int
                or type(length) is not int
                or offset < data_start
                or offset % _ALIGN
                or length < 0
                or offset + length * np.dtype(dtype).itemsize > size
            ):
                raise CacheRefused(name)
            if wanted == "m":
                more = length if more is None else more
            chunks = -(-count // chunk)
            expected = {
                "n": count,
                "n+1": count + 1,
                "m": more,
                "c": chunks,
                "c*32": chunks * _MAC_SIZE,
                None: length,
            }[wanted]
            if length != expected:
                raise CacheRefused(name)
            arrays[name] = np.frombuffer(mapped, np.dtype(dtype), length, offset)
        if secret_key is not None:  # written by us for these dumps, or refused
            if key is None or not hmac.compare_digest(
                head_mac, _head_mac(secret_key, key, head, arrays)
            ):
                raise CacheRefused("header MAC")
        elif meta["numbers"] != _numbers_crc(arrays):  # (each chunk's MAC covers its own)
            raise CacheRefused("numbers checksum")
        n = count
        # The offsets' ends here; that they rise, where texts start and the papers' codes
        # are checked chunk by chunk as `publish` adds them (`_check_numbers`): a pass over
        # every paper here (a byte per title) made ~70 MB of the file resident and cost
        # ~10 ms at a million papers before the first row.
        for text, offsets in (("abstracts", "abstract_offsets"), ("titles", "title_offsets")):
            blob, ends = arrays[text], arrays[offsets]
            if ends[0] != 0 or ends[-1] != blob.size:
                raise CacheRefused(offsets)
        m = arrays["more_rows"].size
        if m and (
            arrays["more_rows"].min() < 0
            or arrays["more_rows"].max() >= n
            or np.any(np.diff(arrays["more_rows"]) < 0)
            or arrays["more_files"].min() < 0
            or arrays["more_files"].max() >= len(file_names)
            or arrays["more_indexes"].min() < 1
        ):
            raise CacheRefused("sources")
        self.mapped = mapped
        self.blob_offset = int(sections["abstracts"][0])
        self.chunk = chunk
        self.count = n
        self.arrays = arrays
        self.venue_names: list[str] = venue_names
        self.file_names: list[str] = file_names
        self.errors = errors
        self.files = [str(f) for f in loaded]
        self.secret_key = secret_key
        self.head_mac = head_mac
        self.file_stat = file_stat
        #: every chunk's MAC held when this very file (its stat data unchanged since: see
        #: `record`) was read before, in this session or an earlier one: `publish` need not
        #: hash its texts again (~0.9 CPU s at a million papers)
        self.vouched = bool(
            secret_key is not None
            and file_stat is not None
            and record_holds(checked, _record_mac(secret_key, head_mac, file_stat), file_stat)
        )
        self.all_checked = False  #: every chunk's MAC held here (`publish`, `check_all`)

    def _mac_holds(self, k: int, first: int, last: int) -> bool:
        """Does chunk ``k`` (rows [first, last)) have the MAC of the user's secret?"""
        import hmac

        assert self.secret_key is not None
        arrays = self.arrays
        offsets, title_offsets = arrays["abstract_offsets"], arrays["title_offsets"]
        a, b = int(offsets[first]), int(offsets[last])
        texts = memoryview(arrays["titles"])[int(title_offsets[first]) : int(title_offsets[last])]
        mac = _chunk_mac(
            self.secret_key,
            self.head_mac,
            k,
            abstracts=[arrays["abstracts"][a:b]],
            titles=texts,
            arrays=arrays,
            rows=range(first, last),
        )
        return hmac.compare_digest(mac, bytes(arrays["macs"][k * _MAC_SIZE : (k + 1) * _MAC_SIZE]))

    def _check_numbers(self, first: int, last: int) -> None:
        """`CacheRefused` unless rows [first, last) have rising offsets (an abstract is
        never empty) and codes in range. With the user's secret their MAC covers these
        too; they are checked in every case, as cheap as they are (a few thousand
        numbers)."""
        import numpy as np

        arrays = self.arrays
        for name, least in (("abstract_offsets", 1), ("title_offsets", 0)):
            if np.diff(arrays[name][first : last + 1]).min() < least:
                raise CacheRefused(name)
        venues = arrays["venues"][first:last]
        years = arrays["years"][first:last]
        files = arrays["files"][first:last]
        if (
            venues.min() < -1
            or venues.max() >= len(self.venue_names)
            or np.any((years != 0) & ((years < 1900) | (years > 2099)))
            or files.min() < 0
            or files.max() >= len(self.file_names)
            or arrays["indexes"][first:last].min() < 1
        ):
            raise CacheRefused("codes")

    def check_all(self) -> None:
        """Every chunk's MAC checked (without publishing it); `CacheRefused` if one fails
        or there is no secret. Its pages leave the resident set as it goes."""
        if self.secret_key is None:
            raise CacheRefused("no secret")
        offsets = self.arrays["abstract_offsets"]
        start = self.blob_offset
        for first in range(0, self.count, self.chunk):
            last = min(self.count, first + self.chunk)
            if not self._mac_holds(first // self.chunk, first, last):
                raise CacheRefused("chunk MAC")
            drop_pages(self.mapped, start + int(offsets[first]), start + int(offsets[last]))
        self.all_checked = True

    def record(self, cache_dir: Path) -> bool:
        """After every chunk's MAC held (`publish` or `check_all`): record, beside the file
        and authenticated with the secret, that this file — its stat data — checked out, so
        that the next start need not hash its texts again (`vouched`). Only if its stat data
        is the same now as when it was opened, and its last change (ctime) came at least
        `_RACY_NS` before its bytes were first read here: a write to it since then would
        have given it another ctime, and one before was read by the checks. False when
        nothing was recorded."""
        if (
            not self.all_checked
            or self.vouched
            or self.secret_key is None
            or self.file_stat is None
        ):
            return False
        return write_record(
            cache_dir / f"{self.key}{SUFFIX}",
            f"{self.key}{CHECKED_SUFFIX}",
            _record_mac(self.secret_key, self.head_mac, self.file_stat),
            file_stat=self.file_stat,
            opened_ns=self.opened_ns,
            racy_ns=_RACY_NS,
            keep=_KEEP,
        )

    def confirm(self, pending: PendingKey | None) -> None:
        """`CacheRefused` unless the dumps' content key (hashed meanwhile: `open_for`) is
        this cache's: what was published must be cleared then."""
        if pending is None or pending.result() != self.key:
            raise CacheRefused("the dumps changed")

    def publish(self, table: PaperTable) -> Iterator[range]:
        """Check a chunk at a time, appending each chunk to ``table`` (empty) once it has
        passed; yields the rows added. `CacheRefused` when a chunk fails (the rows of
        earlier chunks are in ``table`` then). With the secret, a chunk passes when its MAC
        does (its ids are the stored ones: parsing derived them); without, its texts are
        checked and its ids derived again from its abstracts."""
        import numpy as np

        from .papertable import Chunk

        arrays = self.arrays
        table.set_names(self.venue_names, self.file_names)
        sources = [
            Source(self.file_names[f], i)
            for f, i in zip(
                arrays["more_files"].tolist(), arrays["more_indexes"].tolist(), strict=True
            )
        ]
        more_rows = arrays["more_rows"].tolist()
        blob, offsets = arrays["abstracts"], arrays["abstract_offsets"]
        titles, title_offsets = arrays["titles"], arrays["title_offsets"]
        at_more = 0
        sums = arrays["sums"].tolist()
        chunk = self.chunk
        secret_key = self.secret_key
        for first in range(0, self.count, chunk):
            last = min(self.count, first + chunk)
            k = first // chunk
            self._check_numbers(first, last)
            if secret_key is not None:
                if not self.vouched and not self._mac_holds(k, first, last):
                    raise CacheRefused("chunk MAC")
                # a copy (40 KB a chunk): the ids the MAC vouched for stay as checked
                # even if someone writes into the mapped file afterwards
                keys = arrays["keys"][first:last].copy()
            else:
                crc = _crc(blob, offsets, first, last, 0)
                if _crc(titles, title_offsets, first, last, crc) != sums[k]:
                    raise CacheRefused("texts checksum")
                if _splits_characters(blob, offsets[first : last + 1]):
                    raise CacheRefused("abstract_offsets")
                if _splits_characters(titles, title_offsets[first : last + 1]):
                    raise CacheRefused("title_offsets")
                keys = _check_chunk(blob, offsets, first, last)
                _check_texts(titles, title_offsets, first, last)
                # (parsing gives a paper once, with its further sources: a chunk whose MAC
                # holds has no repeat; asking the table's id index costs it a merge per
                # chunk, ~1 s at 1M)
                ordered = np.sort(keys)
                if np.any(ordered[1:] == ordered[:-1]) or table.any_of(keys):
                    raise CacheRefused("a repeated paper")
            while at_more < len(more_rows) and more_rows[at_more] < last:
                table.add_source(more_rows[at_more], sources[at_more])
                at_more += 1
            table.append_chunk(
                Chunk(
                    abstracts=blob,
                    abstract_offsets=offsets[first : last + 1],
                    titles=titles,
                    title_offsets=title_offsets[first : last + 1],
                    derived=np.ones(last - first, np.uint8),  # dumps only: derived titles
                    keys=keys,
                    venues=arrays["venues"][first:last],
                    years=arrays["years"][first:last],
                    files=arrays["files"][first:last],
                    indexes=arrays["indexes"][first:last],
                )
            )
            if not self.vouched:  # (else its texts' pages were not read)
                start = self.blob_offset
                drop_pages(self.mapped, start + int(offsets[first]), start + int(offsets[last]))
            yield range(first, last)
        self.all_checked = secret_key is not None
        # the ids' index, here rather than at the first look-up (the UI thread's, of the
        # current paper: see `PaperTable.find`)
        table.index_ids()


def _read_head(mapped: Any) -> tuple[dict[str, Any], bytes, bytes]:
    """(the header's fields, its bytes, its MAC) of a mapped cache file, its CRC checked."""
    import zlib

    size = len(mapped)
    if size < _HEAD or mapped[: len(MAGIC)] != MAGIC:
        raise CacheRefused("not a corpus cache")
    head_size = int.from_bytes(mapped[len(MAGIC) : len(MAGIC) + 8], "little")
    if head_size > size - _HEAD:
        raise CacheRefused("header size")
    head = bytes(mapped[_HEAD : _HEAD + head_size])
    if zlib.crc32(head) != int.from_bytes(mapped[len(MAGIC) + 8 : len(MAGIC) + 12], "little"):
        raise CacheRefused("header checksum")
    meta = json.loads(str(head, "utf-8"))
    if not isinstance(meta, dict):
        raise CacheRefused("header")
    return meta, head, bytes(mapped[_HEAD - _MAC_SIZE : _HEAD])


def _splits_characters(blob: Any, ends: Any) -> bool:
    """Does any of these offsets (rising, inside ``blob``) fall inside a UTF-8 character?"""
    import numpy as np

    inner = ends[ends < blob.size]
    return bool(inner.size and np.any((blob[inner] & 0xC0) == 0x80))


def _drop_read(buffer: object, start: int, stop: int) -> None:
    """Bytes ``[start, stop)`` of ``buffer``, just read, leave the resident set if it is a
    mapped file (they stay in the page cache); nothing for bytes in memory."""
    import mmap

    if isinstance(buffer, mmap.mmap):
        drop_pages(buffer, start, stop)


def _crc(blob: Any, offsets: Any, first: int, last: int, crc: int) -> int:
    import zlib

    return zlib.crc32(memoryview(blob)[int(offsets[first]) : int(offsets[last])], crc)


def _numbers_crc(arrays: dict[str, Any]) -> int:
    """CRC-32 of every section but the texts (whose chunks have their own) and the MACs."""
    import zlib

    crc = 0
    for name in _SECTIONS:
        if name not in _TEXTS and name != "macs":
            crc = zlib.crc32(memoryview(arrays[name]).cast("B"), crc)
    return crc


def _mac(secret_key: bytes, kind: bytes, parts: Sequence[Sequence[Any]]) -> bytes:
    """HMAC-SHA256 (with SHA extensions, faster here than keyed BLAKE2b: ~1.5 against
    ~0.8 GB/s; either hashes large buffers without the GIL) of this format, ``kind`` and
    each part (a sequence of buffers, taken as one) preceded by its length, so that no
    bytes can move from one part to another."""
    import hmac

    mac = hmac.new(secret_key, MAGIC + kind + CORPUS_FORMAT.to_bytes(8, "little"), "sha256")
    for pieces in parts:
        views = [memoryview(p).cast("B") for p in pieces]
        mac.update(sum(v.nbytes for v in views).to_bytes(8, "little"))
        for view in views:
            mac.update(view)
    return mac.digest()


def _record_mac(secret_key: bytes, head_mac: bytes, file_stat: list[int]) -> bytes:
    """The MAC of a file's record (`Opened.record`): bound to its header's MAC (so to the
    key, the header and the file's MACs) and the file's stat data."""
    return _mac(secret_key, b"checked", [[head_mac], [json.dumps(file_stat).encode()]])


def _head_mac(secret_key: bytes, key: str, head: bytes, arrays: dict[str, Any]) -> bytes:
    """The header's MAC: the cache's key (which dumps: a cache of others, renamed, is not
    believed), the header (counts, names, errors, where each section is) and the papers'
    further sources."""
    more = [[arrays[name]] for name in ("more_rows", "more_files", "more_indexes")]
    return _mac(secret_key, b"head", [[key.encode()], [head], *more])


def _chunk_mac(
    secret_key: bytes,
    head_mac: bytes,
    k: int,
    *,
    abstracts: Sequence[Any],
    titles: Any,
    arrays: dict[str, Any],
    rows: range,
) -> bytes:
    """Chunk ``k``'s MAC (of ``rows``): bound to the header's (so to the key and
    file) and its place, over its texts' bytes, their offsets and its rows' numbers."""
    parts: list[Sequence[Any]] = [[head_mac], [k.to_bytes(8, "little")], abstracts, [titles]]
    first, last = rows.start, rows.stop
    parts += [[arrays[name][first : last + 1]] for name in ("abstract_offsets", "title_offsets")]
    parts += [[arrays[name][first:last]] for name in _CHUNK_NUMBERS]
    return _mac(secret_key, b"chunk", parts)


def _check_texts(blob: Any, offsets: Any, first: int, last: int) -> tuple[str, bool]:
    """The texts of rows [first, last) as one string, and whether it is all printable; or
    `CacheRefused`: they must be valid UTF-8 (the offsets were checked to start
    characters) and sanitised as parsing leaves them."""
    start, stop = int(offsets[first]), int(offsets[last])
    try:
        text = str(memoryview(blob)[start:stop], "utf-8")
    except UnicodeDecodeError:
        raise CacheRefused("not UTF-8") from None
    # every character `sanitise` replaces is unprintable: one C scan for the usual chunk
    printable = text.isprintable()
    if not printable and _UNSAFE_RE.search(text) is not None:
        raise CacheRefused("text that was not sanitised")
    return text, printable


#: Rows checked per step (~0.5 MB of abstracts): each decode and scan of a step is one C
#: call holding the GIL, ~3 ms; a whole chunk's were 35-45 ms each, and the echo of a key
#: typed during a warm start waited for them.
_CHECK_ROWS = 400


def _check_chunk(blob: Any, offsets: Any, first: int, last: int) -> Any:
    """The abstracts of rows [first, last) checked; their id keys, derived again the way
    parsing derives them (`corpus.paper_key`), never read from the file."""
    import numpy as np

    keys: list[int] = []
    for low in range(first, last, _CHECK_ROWS):
        keys += _check_rows(blob, offsets, low, min(last, low + _CHECK_ROWS))
    return np.array(keys, np.uint64)


def _check_rows(blob: Any, offsets: Any, first: int, last: int) -> list[int]:
    """`_check_chunk` for a few rows: their id keys."""
    import hashlib

    text, printable = _check_texts(blob, offsets, first, last)
    ends = offsets[first : last + 1].tolist()
    view = memoryview(blob)
    blake2b = hashlib.blake2b
    from_bytes = int.from_bytes
    size = ID_LENGTH // 2
    # the fast path hashes the bytes as they are: only for abstracts that are already
    # whitespace-normalised (no double, leading, trailing or other space; every other
    # space is unprintable, so a printable chunk has none)
    irregular_chunk = "  " in text or (not printable and _ODD_SPACE_RE.search(text) is not None)
    keys: list[int] = []
    add = keys.append
    for a, b in itertools.pairwise(ends):
        piece = view[a:b]
        if irregular_chunk or piece[0] == 0x20 or piece[-1] == 0x20:
            add(paper_key(str(piece, "utf-8")))
        else:
            add(from_bytes(blake2b(piece, digest_size=size).digest(), "big"))
    return keys


def _clean(text: object) -> bool:
    """Text as parsing leaves it: sanitised (no control or bidi character)."""
    return isinstance(text, str) and _UNSAFE_RE.search(text) is None


def open_cache(cache_dir: Path, key: str, files: Sequence[Path] | None = None) -> Opened | None:
    """The cache file of ``key`` mapped and checked (but for its texts and ids, which
    `Opened.publish` checks as it goes), or None when there is none it could trust."""
    found = open_mapped_stat(cache_dir / f"{key}{SUFFIX}")
    if found is None:
        return None
    mapped, st = found
    try:
        return Opened(
            mapped,
            files,
            key,
            secret(cache_dir, create=False),
            file_stat=stat_data(st),
            checked=read_small(cache_dir / f"{key}{CHECKED_SUFFIX}"),
        )
    except Exception:  # a damaged or foreign file: parse the dumps again
        return None


def open_for(cache_dir: Path, files: Sequence[Path]) -> tuple[Opened | None, PendingKey]:
    """The cache of these dumps, opened, and their content key, being hashed; first rows
    need not wait for the hashing (~1 s for the 1.3 GB of a million abstracts):

    - a cache whose header (authenticated: only with the user's secret) records the dumps'
      stat data as it is now is opened at once — the dumps were not written since they
      were hashed for it; its rows are still only final once `Opened.confirm` has seen
      the key (the caller clears them and parses otherwise);
    - if no cache in the folder is of any of these files, there is nothing to wait for:
      None at once (the dumps are parsed while their key is hashed; `save` keeps it only
      if their stat data did not change meanwhile);
    - else (a cache of these files, the stat data changed: touched, copied back …) the key
      is waited for and its cache opened, as before."""
    pending = PendingKey(files)
    secret_key = secret(cache_dir, create=False)
    names = {str(f) for f in files}
    ours = False
    for path in _cache_files(cache_dir):
        found = open_mapped_stat(path)
        if found is None:
            continue
        mapped, st = found
        try:
            meta = _read_head(mapped)[0]
            if not names.isdisjoint(map(str, meta["files"])):
                ours = True
            if (
                secret_key is not None
                and pending.stats is not None
                and meta["stats"] == pending.stats
                and isinstance(meta["key"], str)
            ):
                found_key: str = meta["key"]
                checked = read_small(cache_dir / f"{found_key}{CHECKED_SUFFIX}")
                opened = Opened(
                    mapped, files, found_key, secret_key, file_stat=stat_data(st), checked=checked
                )
                return opened, pending
        except Exception:  # damaged, foreign, not ours: as if absent
            continue
    if not ours:
        return None, pending
    key = pending.result()
    return (open_cache(cache_dir, key, files) if key else None), pending


def _cache_files(cache_dir: Path) -> list[Path]:
    """The corpus cache files of the folder (at most `_KEEP` of ours), newest first."""
    try:
        found = [p for p in cache_dir.glob(f"*{SUFFIX}") if p.is_file() and not p.is_symlink()]
        found.sort(key=lambda p: p.stat().st_mtime_ns, reverse=True)
    except OSError:
        return []
    return found[: 2 * _KEEP]


def load(
    cache_dir: Path, key: str, files: Sequence[Path] | None = None
) -> tuple[PaperTable, list[LoadError], list[str]] | None:
    """(papers, per-file errors, loaded files) from the cache, all checked, or None."""
    opened = open_cache(cache_dir, key, files)
    if opened is None:
        return None
    table = PaperTable()
    try:
        for _rows in opened.publish(table):
            pass
    except Exception:
        return None
    return table, opened.errors, opened.files


def load_corpus_cached(
    paths: Iterable[str | os.PathLike[str]] | None,
    cache_dir: Path,
    min_bytes: int = MIN_BYTES,
    *,
    record_problems: int | None = MAX_RECORD_PROBLEMS,
) -> Corpus:
    """``load_corpus``, from the cache when the same dumps were parsed before.
    ``record_problems``: as `CorpusBuilder`'s (metadata files are never cached)."""
    builder = CorpusBuilder(paths, record_problems=record_problems)
    corpus = builder.corpus
    total = sum(_size(p) for p in builder.files)
    # only dumps are cached: metadata records carry fields this format does not keep
    dumps_only = not any(is_metadata_file(p) for p in builder.files)
    key = key_for(builder.files) if total >= min_bytes and dumps_only else None
    if key is not None:
        cached = load(cache_dir, key, builder.files)
        if cached is not None:
            adopt(corpus, *cached)
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

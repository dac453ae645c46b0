"""Cache files (corpus, index): written without following links, read as untrusted input.

Both caches are flat arrays, never pickle, each one file of sections that is
memory-mapped (`open_mapped`), so that opening it costs page faults, not a read. A cache is an optimisation: failing to read or write one
is never an error, and a file that does not check out is as good as absent. Cache files
are only ever replaced by renaming a new file over them, never rewritten in place (a
mapped file changed in place could fault under a reader).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

if TYPE_CHECKING:
    import mmap


def _open_regular(path: Path) -> tuple[int, os.stat_result] | None:
    """``path`` opened for reading with its stat data, if it is a regular file: never
    through a symlink, never blocking on a FIFO or device (closed and None for those)."""
    import stat

    try:
        fd = os.open(
            path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        )
    except OSError:
        return None
    try:
        st = os.fstat(fd)
    except OSError:
        st = None
    if st is None or not stat.S_ISREG(st.st_mode):
        os.close(fd)
        return None
    return fd, st


def open_mapped(path: Path) -> mmap.mmap | None:
    """A cache file mapped read-only, or None: only a regular, non-empty file (never a FIFO,
    device or symlink)."""
    found = open_mapped_stat(path)
    return None if found is None else found[0]


def open_mapped_stat(path: Path) -> tuple[mmap.mmap, os.stat_result] | None:
    """`open_mapped`, with the stat data of the file mapped (taken before mapping it)."""
    import mmap

    opened = _open_regular(path)
    if opened is None:
        return None
    fd, st = opened
    try:
        if st.st_size == 0:
            return None
        return mmap.mmap(fd, 0, access=mmap.ACCESS_READ), st
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)  # the mapping keeps its own reference to the file


def stat_data(st: os.stat_result) -> list[int]:
    """What says a file is the same, unwritten since: size, mtime, ctime, inode, device
    (ctime is set by the kernel on every write, rename, link, chmod or utime; no program
    can set it back)."""
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]


def read_small(path: Path, limit: int = 4096) -> bytes | None:
    """The bytes of a small regular file (never through a symlink, never a FIFO), or None
    (none there, or longer than ``limit``)."""
    opened = _open_regular(path)
    if opened is None:
        return None
    fd, st = opened
    try:
        if st.st_size > limit:
            return None
        data = os.read(fd, limit + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data if len(data) <= limit else None


def record_holds(data: bytes | None, mac: bytes, file_stat: list[int]) -> bool:
    """Is ``data`` (a ``.checked`` file's bytes, `write_record`) the record of a file with
    this stat data, made with this MAC?"""
    import hmac
    import json

    if data is None:
        return False
    try:
        record = json.loads(data)
        return (
            isinstance(record, dict)
            and record.get("stat") == file_stat
            and isinstance(record.get("mac"), str)
            and hmac.compare_digest(bytes.fromhex(record["mac"]), mac)
        )
    except ValueError:
        return False


def write_record(
    path: Path,
    name: str,
    mac: bytes,
    *,
    file_stat: list[int],
    opened_ns: int,
    racy_ns: int,
    keep: int,
) -> bool:
    """Record, in ``name`` beside ``path``, that the file at ``path`` checked out: its stat
    data (``file_stat``, taken when it was opened at ``opened_ns``) with ``mac`` (made with
    the user's secret). Only if its stat data is the same now, and its last change (ctime)
    came at least ``racy_ns`` before its checks began: a write since then would have given
    it another ctime, and one before was read by the checks. False when nothing was
    recorded."""
    import json

    if file_stat[2] > opened_ns - racy_ns:
        return False
    try:
        if stat_data(os.stat(path, follow_symlinks=False)) != file_stat:
            return False
    except OSError:
        return False
    body = json.dumps({"stat": file_stat, "mac": mac.hex()}).encode()
    return write_atomically(path.parent, name, lambda h: h.write(body), keep=keep)


SECRET_NAME = "cache.key"
SECRET_BYTES = 32


def secret(cache_dir: Path, *, create: bool = True) -> bytes | None:
    """This user's secret for the cache files of ``cache_dir``: read from ``cache.key``
    there, or made (``secrets.token_bytes``; written to a fresh 0600 ``mkstemp`` file and
    hard-linked into place, so that it is never followed through a link, never seen half
    written, and two processes making it at once agree on one). None when it cannot be read
    or made, or the file there could be another's: not a regular file, not this user's,
    readable or writable by anyone else, or not 32 bytes. Callers then trust no cache
    without checking all of it."""
    path = cache_dir / SECRET_NAME
    found = _read_secret(path)
    if found is not None or not create:
        return found
    import secrets
    import tempfile

    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=cache_dir, prefix=f".tmp-{os.getpid()}-", suffix=".part")
    except OSError:
        return None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(secrets.token_bytes(SECRET_BYTES))
        with contextlib.suppress(FileExistsError):  # another process made it first: theirs
            os.link(tmp, path)  # never replaces: the one there is kept
    except OSError:
        return None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    return _read_secret(path)


def _read_secret(path: Path) -> bytes | None:
    opened = _open_regular(path)
    if opened is None:
        return None
    fd, st = opened
    try:
        if st.st_size != SECRET_BYTES:
            return None
        if os.name == "posix" and (st.st_uid != os.getuid() or st.st_mode & 0o077):
            return None
        data = os.read(fd, SECRET_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data if len(data) == SECRET_BYTES else None


def write_atomically(
    cache_dir: Path,
    name: str,
    write: Callable[[BinaryIO], object],
    keep: int,
    *,
    durable: bool = False,
) -> bool:
    """Write a cache file: a fresh ``mkstemp`` file in ``cache_dir`` (created with O_EXCL,
    so no link is followed; named ``.tmp-<pid>-…`` so that files of killed processes are
    removed later) renamed over ``name``; then keep the newest ``keep`` files with its suffix.
    ``durable``: the file's bytes are on the disk before it is renamed into place, and the
    rename after (``fdatasync``, then the folder's ``fsync``): a crash never leaves the
    name on a file whose blocks were not written, and the writing session, not the next
    one, waits for the kernel's writeback. Failing to write a cache is not an error: False."""
    import tempfile

    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        remove_stale_temp_files(cache_dir)
        fd, tmp = tempfile.mkstemp(dir=cache_dir, prefix=f".tmp-{os.getpid()}-", suffix=".part")
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            if durable:
                handle.flush()
                os.fdatasync(handle.fileno())
        os.replace(tmp, cache_dir / name)
        if durable:
            _sync_folder(cache_dir)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if not isinstance(sys.exc_info()[1], Exception):
            raise  # KeyboardInterrupt, SystemExit: the temporary file is gone all the same
        return False
    try:
        pattern = f"*{Path(name).suffix}"
        entries = [e for e in cache_dir.glob(pattern) if e.is_file() and not e.is_symlink()]
        entries.sort(key=lambda p: p.stat().st_mtime, reverse=True)
        for old in entries[keep:]:
            old.unlink(missing_ok=True)
    except OSError:
        pass
    return True


def _sync_folder(folder: Path) -> None:
    """The folder's entries (a rename) on the disk; nothing where folders cannot be opened."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def remove_stale_temp_files(cache_dir: Path) -> None:
    """Remove ``.tmp-<pid>-…`` files of processes that no longer run."""
    if os.name != "posix":
        return
    for entry in cache_dir.glob(".tmp-*-*.part"):
        pid = entry.name[5:].partition("-")[0]
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
            continue
        except ProcessLookupError:
            pass
        except OSError:
            continue
        with contextlib.suppress(OSError):
            entry.unlink()


def drop_pages(mapped: mmap.mmap, start: int = 0, stop: int | None = None) -> None:
    """Checked pages of a mapped cache leave this process's resident memory (they stay in
    the page cache and come back on the next touch): checking or scanning a whole cache must
    not cost its size in RSS. ``start``/``stop``: offsets in the file (default: all of it)."""
    import mmap

    advice = getattr(mmap, "MADV_DONTNEED", None)
    stop = len(mapped) if stop is None else stop
    if advice is None or stop <= start:
        return
    first = start // mmap.PAGESIZE * mmap.PAGESIZE
    with contextlib.suppress(OSError, ValueError):
        mapped.madvise(advice, first, stop - first)

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


def open_mapped(path: Path) -> mmap.mmap | None:
    """A cache file mapped read-only, or None: only a regular, non-empty file (never a FIFO,
    device or symlink)."""
    import mmap
    import stat

    try:
        fd = os.open(
            path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        )
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size == 0:
            return None
        return mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)  # the mapping keeps its own reference to the file


def write_atomically(
    cache_dir: Path, name: str, write: Callable[[BinaryIO], object], keep: int
) -> bool:
    """Write a cache file: a fresh ``mkstemp`` file in ``cache_dir`` (created with O_EXCL,
    so no link is followed; named ``.tmp-<pid>-…`` so that files of killed processes are
    removed later) renamed over ``name``; then keep the newest ``keep`` files with its suffix.
    Failing to write a cache is not an error: False."""
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
        os.replace(tmp, cache_dir / name)
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

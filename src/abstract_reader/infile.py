"""Files the user names for reading (dumps, metadata files, library imports): regular
files only, and what is read whole into memory only up to a limit.

A path is looked at (``os.stat``) before it is opened, so a FIFO or a device is never
opened at all, then opened without waiting (``O_NONBLOCK``: a FIFO swapped in after that
look opens at once instead of waiting for a writer) and judged again on the open file, so
what is read is what was checked. Formats parsed whole (JSON, BibTeX, RIS, a library
export) are read up to `MAX_WHOLE_BYTES`: a file that says it is larger is refused before
anything is read, and one that grows (or a pipe) is read only one byte past the limit.
"""

from __future__ import annotations

import os
import stat
from pathlib import PurePath
from typing import BinaryIO

#: the most read into memory from one file that is parsed whole (.json, .bib, .ris, a
#: library export): OpenReview's notes of a whole venue are ~20 MB, an export of a
#: million-paper library ~120 MB
MAX_WHOLE_BYTES = 256 << 20

#: File suffixes read as metadata sources (everything else is read as a dump). Here, not in
#: ``sources``: the load asks this of every path, and the readers are imported only when a
#: metadata file is named (not on the way to the first frame).
METADATA_SUFFIXES = (".jsonl", ".json", ".bib", ".ris")


def is_metadata_file(path: str | os.PathLike[str]) -> bool:
    return PurePath(path).suffix.lower() in METADATA_SUFFIXES


class NotRegular(Exception):
    """The path is a folder, a FIFO, a device or a socket: ``str`` is one line for a
    message ("is a FIFO, not a regular file")."""

    def __init__(self, mode: int) -> None:
        self.kind = kind_of(mode)
        super().__init__(f"is {self.kind}, not a regular file")


class TooLarge(Exception):
    """More than the limit to read whole: ``str`` is one line naming the limit."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        super().__init__(f"too large: over {limit >> 20} MB, the limit for a file read whole")


def kind_of(mode: int) -> str:
    """What a file that is not a regular file is, from its ``st_mode``."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """``path`` opened for reading in binary, if it is a regular file (following links).
    Raises `NotRegular`, or the ``OSError`` of the look or the open (gone, unreadable)."""
    mode = os.stat(path).st_mode
    if not stat.S_ISREG(mode):
        raise NotRegular(mode)
    fd = os.open(path, _FLAGS)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):  # (replaced since the look)
            raise NotRegular(mode)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_whole(path: str | os.PathLike[str], limit: int = MAX_WHOLE_BYTES) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them: `TooLarge` beyond
    that, `NotRegular` or ``OSError`` as `open_regular`."""
    with open_regular(path) as handle:
        if os.fstat(handle.fileno()).st_size > limit:
            raise TooLarge(limit)
        return read_limited(handle, limit)


def read_limited(handle: BinaryIO, limit: int = MAX_WHOLE_BYTES) -> bytes:
    """All of ``handle`` (a file, standard input) if it ends within ``limit`` bytes, else
    `TooLarge` (having read one byte past the limit: never more)."""
    data = handle.read(limit + 1)
    if len(data) > limit:
        raise TooLarge(limit)
    return data

"""Files the user names for reading (dumps, metadata files): regular files only.

A path is looked at (``os.stat``) before it is opened, so a FIFO or a device is never
opened at all, then opened without waiting (``O_NONBLOCK``: a FIFO swapped in after that
look opens at once instead of waiting for a writer) and judged again on the open file, so
what is read is what was checked.
"""

from __future__ import annotations

import os
import stat
from typing import BinaryIO


class NotRegular(Exception):
    """The path is a folder, a FIFO, a device or a socket: ``str`` is one line for a
    message ("is a FIFO, not a regular file")."""

    def __init__(self, mode: int) -> None:
        self.kind = kind_of(mode)
        super().__init__(f"is {self.kind}, not a regular file")


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

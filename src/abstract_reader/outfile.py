"""Writing a file the user named (`export -o`, `library export`): the target rule.

- A target that does not exist is created with the permissions the umask allows (``0666 &
  ~umask``, as ``>`` in a shell would), through a temporary file in the same folder renamed
  into place, so a reader never sees half a file and a failure leaves nothing behind.
- An existing regular file is replaced only with ``force``; it keeps its permission bits.
- A symbolic link (dangling or not) is never replaced by a file. With ``force`` the write goes
  *through* it: the file it points to is written (created when the link dangles), the link
  stays. Without ``force`` it is refused like any existing target.
- Anything else (a folder, a device such as ``/dev/null``, a FIFO, a socket), reached directly
  or through a link, is refused even with ``force``: "write to standard output" is ``-``.

Refusals raise :class:`TargetError` (one line naming the file); I/O failures raise ``OSError``
from :func:`write_output`, and :class:`OutputError` (one line naming the file) from
:func:`write_file`, which the CLI and the reader's export dialog both use.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from pathlib import Path

from .text import escape_for_terminal

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
)


class OutputError(Exception):
    """The file could not be written; the message is one line naming it."""


class TargetError(OutputError):
    """The target is refused; the message is one line naming it. ``reason`` is that line
    without the hint for the command line (``--force``, ``-``), for the reader's dialog."""

    def __init__(self, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.reason = message if reason is None else reason


class TargetExists(TargetError, FileExistsError):
    """An existing file or link, refused without ``force``. ``link``: it is a symbolic link
    (dangling or not), which ``force`` writes through."""

    def __init__(self, message: str, reason: str | None = None, *, link: bool = False) -> None:
        super().__init__(message, reason)
        self.link = link


def _kind(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def write_output(path: Path, text: str, *, force: bool = False) -> None:
    """Write ``text`` (UTF-8) to ``path`` under the rule in this module's docstring."""
    shown = escape_for_terminal(str(path))
    try:
        link = os.lstat(path)
    except FileNotFoundError:
        link = None
    target = path
    existing: os.stat_result | None = link
    if link is not None and stat.S_ISLNK(link.st_mode):
        try:
            existing = os.stat(path)
        except FileNotFoundError:
            existing = None
        except OSError as exc:  # a loop of links, a link through a file
            raise TargetError(f"{shown}: {exc.strerror or exc}") from None
        if not force:
            state = "a dangling symbolic link" if existing is None else "a symbolic link"
            raise TargetExists(
                f"{shown}: already exists ({state}; use --force to write to what it points to)",
                f"{shown}: already exists ({state})",
                link=True,
            )
        target = Path(os.path.realpath(path))
    if existing is not None and not stat.S_ISREG(existing.st_mode):
        via = " (through a symbolic link)" if target != path else ""
        refused = f"{shown}: {_kind(existing.st_mode)}{via}, not a file; refusing to write there"
        raise TargetError(f"{refused} (use - for standard output)", refused)
    if existing is not None and link is not None and not stat.S_ISLNK(link.st_mode) and not force:
        raise TargetExists(
            f"{shown}: already exists (use --force to overwrite)", f"{shown}: already exists"
        )
    mode = stat.S_IMODE(existing.st_mode) if existing is not None else None
    try:
        _replace(target, text.encode("utf-8"), mode)
    except OSError as exc:
        if target == path:
            raise
        # "No such file or directory" alone would name neither the link nor where it points
        points = escape_for_terminal(os.readlink(path))
        why = exc.strerror or str(exc)
        if exc.errno == errno.ENOENT:
            why = f"its folder {escape_for_terminal(str(target.parent))} does not exist"
        raise OutputError(
            f"{shown}: a symbolic link to {points}, which cannot be written: {why}"
        ) from None


def write_file(path: Path, text: str, *, force: bool = False) -> None:
    """:func:`write_output`, with an I/O failure (a folder that does not exist or cannot be
    written, a full disk) turned into one line naming the file: :class:`OutputError`."""
    try:
        write_output(path, text, force=force)
    except OutputError:
        raise
    except OSError as exc:
        shown = escape_for_terminal(str(path))
        raise OutputError(f"{shown}: {exc.strerror or exc}") from None


def _replace(target: Path, data: bytes, mode: int | None) -> None:
    """Write ``data`` to a fresh temporary file next to ``target``, then rename it over."""
    directory = target.parent if str(target.parent) else Path(".")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    flags |= getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        tmp = directory / f".{target.name}.{secrets.token_hex(6)}.tmp"
        try:
            # 0o666: the umask decides a new file's permissions, as it does for `>` in a shell
            fd = os.open(tmp, flags, 0o666)
            break
        except FileExistsError:
            continue
    else:  # pragma: no cover - 100 random collisions
        raise OSError(errno.EEXIST, "could not create a temporary file", str(directory))
    try:
        with os.fdopen(fd, "wb") as handle:
            if mode is not None:
                os.fchmod(handle.fileno(), mode)
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    with contextlib.suppress(OSError):  # make the rename itself durable
        dir_fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)

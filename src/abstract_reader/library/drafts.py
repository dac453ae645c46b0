"""Notes being typed, kept as they are typed: what a note editor holds survives the
terminal closing, the reader being killed or the machine going down, and is offered again
the next time that paper's note is opened.

A draft is a small JSON file per note editor in a private folder beside the library
(``library.sqlite3.drafts/note-<paper id>-<slot>.json``), written atomically (a temporary
file, flushed to the disk, renamed over the old one). Files, not the library: typing must
never wait for another program holding the library's write lock, and a draft is not the
user's data until they save it. Each editor writes and removes only its own draft (its
*slot*: the process and a random part), so two readers editing one note never overwrite or
remove each other's; a draft is offered only once the process that wrote it has ended (a
live one is still being typed elsewhere). Saving the note or dropping the edit removes it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import stat
import time
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from ..paths import make_private_dir
from ..text import sanitise

#: The drafts folder's name: the library file's, with this after it.
FOLDER_SUFFIX = ".drafts"
#: Paper ids as the dumps' parsing makes them (16 hex digits).
_PAPER_ID = re.compile(r"[0-9a-f]{16}")
#: An editor's slot: its process id and a random part.
_SLOT = re.compile(r"[0-9]{1,10}-[0-9a-f]{8}")
_FILE = re.compile(r"note-([0-9a-f]{16})-([0-9]{1,10}-[0-9a-f]{8})\.json")
#: A draft larger than this is neither written nor read back (a note this long is not
#: typed in an editor; a file planted there is not loaded whole).
MAX_DRAFT_BYTES = 32 << 20


@dataclass(frozen=True, slots=True)
class Draft:
    """What a note editor held for a paper, unsaved."""

    paper_id: str
    text: str  #: the text typed
    base: str  #: the stored note the editing started from
    saved_at: float  #: when it was written (seconds since the epoch)
    slot: str  #: the editor that wrote it (`new_slot`)


def new_slot() -> str:
    """A slot for a new note editor: this process and a random part."""
    return f"{os.getpid()}-{secrets.token_hex(4)}"


def _started(pid: int) -> str | None:
    """When process ``pid`` started (clock ticks since boot, from /proc; None where that
    cannot be read): a process id reused by a later process has another."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
        return fields[19].decode()  # (field 22 of the whole line)
    except (OSError, IndexError, UnicodeDecodeError):
        return None


def _writer_gone(pid: object, started: object, slot: str, live: Collection[str]) -> bool:
    """Has the editor that wrote a draft ended? In this process: unless it is one of the
    editors open now (``live``: their slots); else when its process has ended."""
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return True
    if pid == os.getpid():
        return slot not in live
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # another user's process: alive
        pass
    now = _started(pid)
    return now is not None and isinstance(started, str) and now != started


class Drafts:
    """The drafts of one library (``folder`` None: none are kept, as for a library in
    memory). Every method is safe to call from the UI thread: a few small file operations,
    and a failure (a full disk, a folder that cannot be made) is a reason or nothing, never
    an error."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder

    @classmethod
    def beside(cls, library: Path | None) -> Drafts:
        """The drafts of the library file ``library``."""
        if library is None:
            return cls(None)
        return cls(library.with_name(library.name + FOLDER_SUFFIX))

    def _path(self, paper_id: str, slot: str) -> Path | None:
        if (
            self.folder is None
            or _PAPER_ID.fullmatch(paper_id) is None
            or _SLOT.fullmatch(slot) is None
        ):
            return None
        return self.folder / f"note-{paper_id}-{slot}.json"

    def put(self, paper_id: str, text: str, base: str, slot: str) -> str | None:
        """Keep ``text`` as the draft of editor ``slot`` on the paper's note (typed over the
        stored note ``base``); None when kept, else why not (one line)."""
        path = self._path(paper_id, slot)
        if path is None:
            return "this library keeps no drafts" if self.folder is None else "not a paper id"
        body = json.dumps(
            {
                "paper": paper_id,
                "text": text,
                "base": base,
                "saved_at": time.time(),
                "pid": os.getpid(),
                "started": _started(os.getpid()),
            },
            ensure_ascii=False,
        ).encode("utf-8", "surrogatepass")
        if len(body) > MAX_DRAFT_BYTES:
            return f"longer than {MAX_DRAFT_BYTES >> 20} MB"
        tmp: Path | None = None
        try:
            make_private_dir(path.parent)
            fd, name = _temp_file(path.parent)
            tmp = Path(name)
            with os.fdopen(fd, "wb") as handle:
                handle.write(body)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
            tmp = None
        except OSError as exc:
            return f"{path.parent}: {exc.strerror or exc}"
        finally:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    tmp.unlink()
        return None

    def drop(self, paper_id: str, slot: str) -> None:
        """Editor ``slot`` has no draft of the paper's note any more (saved, dropped by the
        user, or taken over by another editor)."""
        path = self._path(paper_id, slot)
        if path is not None:
            with contextlib.suppress(OSError):
                path.unlink()

    def left(self, paper_id: str, live: Collection[str] = ()) -> list[Draft]:
        """The drafts of the paper's note that editors which ended left (the terminal
        closed, the reader killed), newest first; a damaged or foreign one, or one being
        typed (in another reader that runs, or in this one's editors ``live``: their
        slots) is not among them."""
        return [d for d in self._read_all(live) if d.paper_id == paper_id]

    def all_left(self, live: Collection[str] = ()) -> list[Draft]:
        """Every draft left (see `left`), of any paper, newest first: one look."""
        return self._read_all(live)

    def being_typed(self, live: Collection[str] = (), paper_id: str | None = None) -> bool:
        """Is a draft (of the note of ``paper_id``, if given) being typed in another reader
        that still runs? (This one's editors other than ``live``'s have none: theirs are
        left.) A reader whose window closed a moment ago may still be ending."""
        return any(
            d.slot not in live and paper_id in (None, d.paper_id)
            for d in self._read_all(live, ended=False)
        )

    def _read_all(self, live: Collection[str], *, ended: bool = True) -> list[Draft]:
        if self.folder is None:
            return []
        found: list[Draft] = []
        with contextlib.suppress(OSError):
            for entry in os.scandir(self.folder):
                named = _FILE.fullmatch(entry.name)
                if named is not None:
                    paper_id, slot = named.group(1), named.group(2)
                    draft = self._read(Path(entry.path), paper_id, slot, live, ended)
                    if draft is not None:
                        found.append(draft)
        return sorted(found, key=lambda d: d.saved_at, reverse=True)

    @staticmethod
    def _read(
        path: Path, paper_id: str, slot: str, live: Collection[str], ended: bool
    ) -> Draft | None:
        """The draft in ``path``, if it reads back whole and its writer has ended (with
        ``ended``; else if it has not). Its texts are sanitised: they are shown."""
        # no link followed, and a fifo planted there neither blocks nor is read
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
        try:
            with os.fdopen(os.open(path, flags), "rb") as handle:
                st = os.fstat(handle.fileno())
                if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_DRAFT_BYTES:
                    return None
                data = json.loads(handle.read().decode("utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("paper") != paper_id:
            return None
        text, base, saved_at = data.get("text"), data.get("base"), data.get("saved_at")
        if not (isinstance(text, str) and isinstance(base, str)):
            return None
        if _writer_gone(data.get("pid"), data.get("started"), slot, live) != ended:
            return None  # (being typed in a reader that still runs, or not)
        if not isinstance(saved_at, int | float) or isinstance(saved_at, bool):
            saved_at = 0.0
        return Draft(paper_id, sanitise(text), sanitise(base), float(saved_at), slot)


def draft_hint(draft: Draft, stored: str) -> str:
    """The line above a restored draft: what it is, and whether the stored note changed
    since the typing began (another reader, the CLI's ``note``)."""
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(draft.saved_at))
    hint = f"Restored what you typed ({when}) and did not save."
    if draft.base != stored:
        hint += " The stored note has changed since: saving shows both."
    return hint


def _temp_file(folder: Path) -> tuple[int, str]:
    import tempfile

    return tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".part")

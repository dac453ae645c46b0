"""Notes being typed, kept as they are typed: what the note editor holds survives the
terminal closing, the reader being killed or the machine going down, and is offered again
the next time that paper's note is opened.

A draft is a small JSON file per paper in a private folder beside the library
(``library.sqlite3.drafts/note-<paper id>.json``), written atomically (a temporary file,
flushed to the disk, renamed over the old one). Files, not the library: typing must never
wait for another program holding the library's write lock, and a draft is not the user's
data until they save it. Saving the note or dropping the edit removes the draft.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from ..paths import make_private_dir
from ..text import sanitise

#: The drafts folder's name: the library file's, with this after it.
FOLDER_SUFFIX = ".drafts"
#: Paper ids as the dumps' parsing makes them (16 hex digits): a file name, nothing more.
_PAPER_ID = re.compile(r"[0-9a-f]{16}")
#: A draft larger than this is not read back (no note is this long; a file planted there is
#: not loaded whole).
MAX_DRAFT_BYTES = 4 << 20


@dataclass(frozen=True, slots=True)
class Draft:
    """What the note editor held for a paper, unsaved."""

    paper_id: str
    text: str  #: the text typed
    base: str  #: the stored note the editing started from
    saved_at: float  #: when it was written (seconds since the epoch)


class Drafts:
    """The drafts of one library (``folder`` None: none are kept, as for a library in
    memory). Every method is safe to call from the UI thread: a few small file operations,
    and a failure (a full disk, a read-only folder) is False or None, never an error."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder

    @classmethod
    def beside(cls, library: Path | None) -> Drafts:
        """The drafts of the library file ``library``."""
        if library is None:
            return cls(None)
        return cls(library.with_name(library.name + FOLDER_SUFFIX))

    def _path(self, paper_id: str) -> Path | None:
        if self.folder is None or _PAPER_ID.fullmatch(paper_id) is None:
            return None
        return self.folder / f"note-{paper_id}.json"

    def put(self, paper_id: str, text: str, base: str) -> bool:
        """Keep ``text`` as the paper's draft (typed over the stored note ``base``);
        False if it could not be written."""
        path = self._path(paper_id)
        if path is None:
            return False
        body = json.dumps(
            {"paper": paper_id, "text": text, "base": base, "saved_at": time.time()},
            ensure_ascii=False,
        ).encode("utf-8", "surrogatepass")
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
        except OSError:
            return False
        finally:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    tmp.unlink()
        return True

    def get(self, paper_id: str) -> Draft | None:
        """The paper's draft, if there is one that reads back whole (a damaged or foreign
        file is ignored). Its texts are sanitised: they are shown."""
        path = self._path(paper_id)
        if path is None:
            return None
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
        if not isinstance(saved_at, int | float) or isinstance(saved_at, bool):
            saved_at = 0.0
        return Draft(paper_id, sanitise(text), sanitise(base), float(saved_at))

    def drop(self, paper_id: str) -> None:
        """The paper has no draft any more (saved, or dropped by the user)."""
        path = self._path(paper_id)
        if path is not None:
            with contextlib.suppress(OSError):
                path.unlink()

    def paper_ids(self) -> list[str]:
        """The papers with a draft, most recently written first."""
        if self.folder is None:
            return []
        found: list[tuple[float, str]] = []
        with contextlib.suppress(OSError):
            for entry in os.scandir(self.folder):
                name = entry.name
                if not (name.startswith("note-") and name.endswith(".json")):
                    continue
                paper_id = name[len("note-") : -len(".json")]
                if _PAPER_ID.fullmatch(paper_id) and entry.is_file(follow_symlinks=False):
                    with contextlib.suppress(OSError):
                        found.append((entry.stat(follow_symlinks=False).st_mtime, paper_id))
        return [paper_id for _when, paper_id in sorted(found, reverse=True)]


def draft_hint(draft: Draft, stored: str) -> str:
    """The line above a restored draft: what it is, and whether the stored note changed
    since the typing began (another reader, the CLI's ``note``)."""
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(draft.saved_at))
    hint = f"Restored what you typed ({when}) and did not save."
    if draft.base != stored:
        hint += " The stored note has changed since."
    return hint


def _temp_file(folder: Path) -> tuple[int, str]:
    import tempfile

    return tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".part")

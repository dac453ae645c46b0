"""Derived titles from a second process: `derive_title` on the other core while this one
parses the next dump and adds rows (at a million papers the titles are half of a cold
load's CPU time).

The child is this Python running this package's `derive_title` (the same files this process
imported, found by path: isolated mode, ``-I``, ignores the working directory and
``PYTHON*`` variables), not ``multiprocessing`` (which would re-import the reader's
``__main__``). Texts and titles go through files in a ``mkdtemp`` folder ("\\0" between
them: sanitised text holds no NUL); a line on its stdin names a batch, a line on its stdout
says its titles are written. It exits when our end of its stdin closes — however this
process ends (`close` ends it at once). Its titles are those `derive_title` gives here: the same function on the
same text; an answer of the wrong shape, or no answer, raises `TitlerFailed` and the
caller derives the titles itself.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import weakref
from collections.abc import Sequence
from pathlib import Path

from .sanitise import sanitise

__all__ = ["Titler", "TitlerFailed"]

#: The child: put this package's folder first on the path, then serve (`_serve`).
_CHILD = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "from abstract_reader.text.titler import _serve; _serve(sys.argv[2])"
)


class TitlerFailed(Exception):
    """The child failed or answered nonsense: derive the titles here."""


class Titler:
    """A child process deriving titles of batches of abstracts, in the order sent."""

    def __init__(self) -> None:
        root = Path(__file__).resolve().parents[2]  # (the folder holding abstract_reader/)
        self.folder = Path(tempfile.mkdtemp(prefix="abstract-reader-titles-"))
        try:
            self.child = subprocess.Popen(
                [sys.executable, "-I", "-c", _CHILD, str(root), str(self.folder)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                bufsize=0,
            )
        except BaseException:
            shutil.rmtree(self.folder, ignore_errors=True)
            raise
        self.sent = 0
        self._said = b""
        # (a builder dropped without `close`: the child still ends, its folder goes)
        self._close = weakref.finalize(self, _shut, self.child, self.folder)

    def send(self, texts: Sequence[str]) -> int:
        """Hand a batch over (sanitised texts); its number, for `receive`."""
        k = self.sent
        try:
            with open(self.folder / f"in-{k}", "wb") as out:
                for i in range(0, len(texts), 1024):  # a slice at a time: no whole copy
                    piece = "\0".join(texts[i : i + 1024])
                    out.write((("\0" if i else "") + piece).encode("utf-8"))
            assert self.child.stdin is not None
            self.child.stdin.write(b"%d\n" % k)
        except OSError as exc:
            raise TitlerFailed(str(exc)) from None
        self.sent += 1
        return k

    def receive(self, k: int, count: int) -> list[str]:
        """The titles of batch ``k`` of ``count`` texts (waits for them)."""
        assert self.child.stdout is not None
        try:
            while b"\n" not in self._said:
                data = os.read(self.child.stdout.fileno(), 4096)
                if not data:
                    raise TitlerFailed("the title process ended")
                self._said += data
            line, _, self._said = self._said.partition(b"\n")
            if line != b"%d" % k:
                raise TitlerFailed("the title process answered out of turn")
            path = self.folder / f"out-{k}"
            text = path.read_bytes().decode("utf-8")
            path.unlink()
        except (OSError, UnicodeDecodeError) as exc:
            raise TitlerFailed(str(exc)) from None
        titles = text.split("\0") if count else []
        if len(titles) != count:
            raise TitlerFailed("the title process answered with the wrong number of titles")
        return [t if t.isprintable() else sanitise(t) for t in titles]

    def close(self) -> None:
        self._close()


def _shut(child: subprocess.Popen[bytes], folder: Path) -> None:
    """End the child now (titles it is still deriving are not wanted) and remove the folder."""
    try:
        if child.stdin is not None:
            child.stdin.close()
        child.kill()
        child.wait()
    except OSError:
        pass
    finally:
        if child.stdout is not None:
            child.stdout.close()
        shutil.rmtree(folder, ignore_errors=True)


def _serve(folder: str) -> None:
    """The child's loop: a batch number on stdin → its titles in ``out-N``, N on stdout."""
    # below the reader in priority: on a busy machine the UI thread (keys echoed while
    # loading) goes first; on an idle one this process has a core of its own anyway
    with contextlib.suppress(AttributeError, OSError):
        os.nice(10)
    from .titles import derive_title

    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        k = int(line)
        source = os.path.join(folder, f"in-{k}")
        with open(source, "rb") as handle:
            data = handle.read()
        os.unlink(source)
        texts = data.decode("utf-8").split("\0") if data else [""]
        del data
        answer = "\0".join([derive_title(text) for text in texts]).encode("utf-8")
        done = os.path.join(folder, f"out-{k}")
        with open(done + ".part", "wb") as handle:
            handle.write(answer)
        os.replace(done + ".part", done)
        out.write(b"%d\n" % k)
        out.flush()
    shutil.rmtree(folder, ignore_errors=True)  # (our parent is gone, or done with us)

"""The installed console script in a real pseudo-terminal: what a person's terminal gets."""

from __future__ import annotations

import contextlib
import os
import pty
import re
import select
import time
from collections.abc import Callable
from pathlib import Path

import pyte
import pytest

from abstract_reader.corpus import LOAD_PROBLEMS_SHOWN, Corpus
from abstract_reader.library import Library
from abstract_reader.search import SearchIndex
from abstract_reader.session import dump_set_key, save_place

from ..conftest import installed_script

pytestmark = pytest.mark.slow

_ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\x1b[()][A-Z0-9]|\x1b[=>]")


class Terminal:
    """The program in a pty; what it writes is rendered by a terminal emulator (pyte)."""

    def __init__(
        self, argv: list[str], env: dict[str, str], *, ignore_hangup: bool = False
    ) -> None:
        """``ignore_hangup``: the program starts with SIGHUP ignored (as under ``nohup``)."""
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            import signal

            signal.signal(signal.SIGHUP, signal.SIG_IGN if ignore_hangup else signal.SIG_DFL)
            os.execvpe(argv[0], argv, env)
        import fcntl
        import struct
        import termios

        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 140, 0, 0))
        self.output = b""
        self.screen = pyte.Screen(140, 40)
        self.stream = pyte.ByteStream(self.screen)

    def shows(self, needle: bytes) -> bool:
        """``needle`` is on the screen now, or was in what was written (text shown for a
        moment, then drawn over in the same read). A frame writes only the cells that
        changed: new text can land in the middle of text already shown."""
        return needle.decode() in self.text() or needle in _ANSI.sub(b"", self.output)

    def read_until(self, needle: bytes, timeout: float = 30.0) -> None:
        self.until(lambda: self.shows(needle), f"{needle!r} did not appear", timeout)

    def until(self, condition: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
        """Read what the program writes until ``condition`` holds (checked after each read)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.fd], [], [], 0.1)
            if ready:
                try:
                    data = os.read(self.fd, 1 << 16)
                except OSError:
                    break
                self.output += data
                self.stream.feed(data)
            if condition():
                return
        raise AssertionError(f"{what}; screen:\n{self.text()}")

    def text(self) -> str:
        return "\n".join(self.screen.display)

    def send(self, data: str) -> None:
        os.write(self.fd, data.encode())

    def close_window(self, timeout: float = 20.0) -> int:
        """Close the terminal (its window: the pty's other end goes), then wait for the
        program to end; its exit status."""
        os.close(self.fd)
        deadline = time.monotonic() + timeout
        while not (ended := os.waitpid(self.pid, os.WNOHANG))[0]:
            if time.monotonic() > deadline:
                os.kill(self.pid, 9)
                raise AssertionError("the reader did not end when its terminal closed")
            time.sleep(0.05)
        return os.waitstatus_to_exitcode(ended[1])

    def wait(self, timeout: float = 20.0) -> int:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                return os.waitstatus_to_exitcode(status)
            ready, _, _ = select.select([self.fd], [], [], 0.1)
            if ready:  # (a read with nothing to read would block past the deadline)
                with contextlib.suppress(OSError):
                    self.output += os.read(self.fd, 1 << 16)
        os.kill(self.pid, 9)
        raise AssertionError("the reader did not exit")


def reader_env(tmp_path: Path, db: Path | None = None, **extra: str) -> dict[str, str]:
    """The reader's environment in a pty: its own library (``db``, else one in ``tmp_path``)
    and cache, and 140×40 — the size, should it ask before the pty is sized (as after)."""
    return {
        **os.environ,
        "TERM": "xterm-256color",
        "ABSTRACT_READER_DB": str(db if db is not None else tmp_path / "lib.sqlite3"),
        "ABSTRACT_READER_CACHE": str(tmp_path / "cache"),
        "COLUMNS": "140",
        "LINES": "40",
        **extra,
    }


def test_console_script_in_a_real_terminal(tmp_path: Path) -> None:
    argv = installed_script()
    env = reader_env(tmp_path)
    term = Terminal(argv, env)
    term.read_until(b"RSE: Robust Satisficing Ensemble")
    term.read_until(b"55 papers")
    for ch in "/starcraft":
        term.send(ch)
        time.sleep(0.05)
    term.read_until(b"1 of 55")
    term.read_until(b"StarCraft Motion")
    term.send("\r")  # back to the list
    time.sleep(0.3)
    term.send("q")
    assert term.wait() == 0


def test_bad_path_is_shown_and_repeated_after_the_session(tmp_path: Path) -> None:
    argv = installed_script()
    missing = str(tmp_path / "missing.txt")
    env = {
        **os.environ,
        "TERM": "xterm-256color",
        "ABSTRACT_READER_DB": str(tmp_path / "lib.sqlite3"),
        "ABSTRACT_READER_CACHE": str(tmp_path / "cache"),
    }
    term = Terminal([*argv, missing, str(Path(__file__).parents[1] / "data" / "wrapped.txt")], env)
    term.read_until("1 load error · 1 file loaded".encode())
    term.read_until(b"2 papers")
    term.send("q")
    assert term.wait() == 1
    tail = _ANSI.sub(b"", term.output).split(b"2 papers")[-1]
    assert b"missing.txt: no such file or directory" in tail


def test_many_bad_paths_are_repeated_after_the_session_a_few_and_a_count(tmp_path: Path) -> None:
    """Each failed path was repeated on stderr once the reader closed: a folder of 10,000
    empty files was 10,000 lines there. As many as the commands list, then a count."""
    folder = tmp_path / "wrong"
    folder.mkdir()
    for n in range(40):
        (folder / f"e{n:02}.txt").write_bytes(b"")
    wrapped = str(Path(__file__).parents[1] / "data" / "wrapped.txt")
    term = Terminal([*installed_script(), str(folder), wrapped], reader_env(tmp_path))
    term.read_until("40 load errors · 1 file loaded".encode())
    term.read_until(b"2 papers")
    term.send("q")
    assert term.wait() == 1
    assert LOAD_PROBLEMS_SHOWN == 12  # (the lines below)
    tail = _ANSI.sub(b"", term.output).split(b"2 papers")[-1].decode()
    said = [
        line[line.index("abstract-reader:") :]
        for line in tail.split("\n")
        if "abstract-reader:" in line
    ]
    assert [line.rstrip("\r") for line in said] == [
        *(f"abstract-reader: {folder / f'e{n:02}.txt'}: empty file" for n in range(12)),
        "abstract-reader: … and 28 more load errors"
        " (abstract-reader list -v -d PATH lists them all)",
    ]


def test_the_cli_writes_beside_a_running_reader(tmp_path: Path) -> None:
    """The reader open in one terminal, the CLI writing in another: what the CLI wrote shows
    up within a second or so, and the reader's own tag edit keeps the CLI's tag."""
    from abstract_reader.corpus import load_corpus
    from abstract_reader.library import Library

    from ..conftest import SEEDS, cli

    argv = installed_script()
    db = tmp_path / "lib.sqlite3"
    env = reader_env(tmp_path, db)
    paper_id = load_corpus([SEEDS]).papers[0].id
    term = Terminal(argv, env)
    term.read_until(b"55 papers")
    for args in (("tag", paper_id, "fromcli"), ("bookmark", paper_id), ("note", paper_id, "cli")):
        done = cli(*args, env=env)
        assert done.returncode == 0, done.stderr
    term.read_until(b"#fromcli")
    term.read_until(b"1 bookmarked")
    term.read_until(b"note: cli")
    term.send("t")
    term.read_until(b"Tags of")
    for ch in "fromtui":
        term.send(ch)
    term.send("\r\r")  # add the tag, then save: one burst
    term.read_until(b"#fromcli #fromtui")
    term.send("q")
    assert term.wait() == 0
    with Library(db) as fresh:
        assert fresh.snapshot.tags[paper_id] == ["fromcli", "fromtui"]
        assert paper_id in fresh.snapshot.bookmarks
        assert fresh.snapshot.notes[paper_id] == "cli"
        assert paper_id not in fresh.snapshot.read  # shown at start-up only: not read


def test_a_note_edited_in_editor_is_saved_and_the_temp_file_removed(tmp_path: Path) -> None:
    """ctrl+o in the note editor runs $EDITOR on a temporary file with the reader suspended;
    the text comes back into the editor, ctrl+s saves it, the file is gone."""
    from abstract_reader.corpus import load_corpus
    from abstract_reader.library import Library

    from ..conftest import SEEDS

    editor = tmp_path / "editor.sh"
    seen = tmp_path / "seen-path"
    editor.write_text(
        '#!/bin/sh\nprintf "%s" "$1" > "' + str(seen) + '"\n'
        'printf "written in the editor\\n" >> "$1"\n',
        encoding="utf-8",
    )
    editor.chmod(0o755)
    db = tmp_path / "lib.sqlite3"
    env = reader_env(tmp_path, db, VISUAL=str(editor))
    paper_id = load_corpus([SEEDS]).papers[0].id
    term = Terminal(installed_script(), env)
    term.read_until(b"55 papers")
    term.send("o")
    term.read_until(b"Note on")
    term.send("mine ")
    term.send("\x0f")  # ctrl+o
    term.read_until(b"written in the editor")
    term.send("\x13")  # ctrl+s
    term.read_until(b"note: mine written in the editor")
    term.send("q")
    assert term.wait() == 0
    with Library(db) as fresh:
        assert fresh.snapshot.notes[paper_id] == "mine written in the editor"
    temp = Path(seen.read_text(encoding="utf-8"))
    assert temp.name.startswith("abstract-reader-note-") and not temp.exists()


def test_an_editor_that_cannot_start_leaves_the_reader_running(tmp_path: Path) -> None:
    """$EDITOR naming no program: one notice, and the reader is back and answers keys (it
    used to stay suspended for good: only kill ended it)."""
    env = reader_env(tmp_path, VISUAL="", EDITOR=str(tmp_path / "no-such-editor") + " --flag")
    term = Terminal(installed_script(), env)
    term.read_until(b"55 papers")
    term.send("o")
    term.read_until(b"Note on")
    term.send("\x0f")  # ctrl+o
    term.read_until(b"Could not run")
    term.send("\x1b")  # Esc: the unchanged note editor closes; the main footer is back
    term.until(lambda: "Note on" not in term.text() and "Quit" in term.text(), "no main screen")
    term.send("q")
    assert term.wait() == 0


def test_keys_typed_before_the_reader_is_up_go_where_they_would_after(
    tmp_path: Path, seeds: Corpus
) -> None:
    """A query typed ahead — into the terminal before the reader has drawn anything — is
    handled as if typed after: `/` continues the last session's query, and the filter shows
    the query the list is filtered by (it showed the last session's query over the list of
    what was typed)."""
    db = tmp_path / "lib.sqlite3"
    library = Library(db)
    save_place(library, dump_set_key(None), "robust", None)  # the last session's query
    library.close()
    expected = len(SearchIndex(seeds).search("robust estimation"))
    assert 0 < expected < len(seeds.papers)
    env = {
        **os.environ,
        "TERM": "xterm-256color",
        "ABSTRACT_READER_DB": str(db),
        "ABSTRACT_READER_CACHE": str(tmp_path / "cache"),
    }
    term = Terminal(installed_script(), env)
    term.send("/ estimation")  # before the program has even started
    term.read_until(f"{expected} of 55".encode())
    term.read_until(b"robust estimation")
    term.send("\r")
    time.sleep(0.3)
    term.send("q")
    assert term.wait() == 0


def test_the_whole_screen_is_drawn_again_after_ctrl_z_and_fg(tmp_path: Path) -> None:
    """ctrl+z stops the reader; the shell's text covers the terminal; `fg` brings the reader
    back, and every part of its screen is there again — the filter bar, the list, the paper,
    the status line and the footer — not only what changes with the next key."""
    import signal

    env = reader_env(tmp_path)
    term = Terminal(installed_script(), env)
    term.read_until(b"55 papers")
    term.send("\x1a")  # ctrl+z
    deadline = time.monotonic() + 20
    while True:  # until the reader has stopped (reading what it writes meanwhile)
        pid, status = os.waitpid(term.pid, os.WUNTRACED | os.WNOHANG)
        if pid and os.WIFSTOPPED(status):
            break
        assert time.monotonic() < deadline, "ctrl+z did not stop the reader"
        term.until(lambda: True, "", 0.05)
    term.screen.reset()  # what the shell showed meanwhile: nothing of the reader's screen
    term.screen.draw("$ fg")
    os.kill(term.pid, signal.SIGCONT)
    parts = ("/ to filter", "RSE: Robust Satisficing Ensemble", "55 papers", "? Help")
    term.until(
        lambda: all(part in term.text() for part in parts) and "$ fg" not in term.text(),
        "the screen was not drawn whole again",
    )
    term.send("q")
    assert term.wait() == 0


def test_the_reader_refuses_a_db_in_a_missing_folder_as_the_commands_do(tmp_path: Path) -> None:
    """`abstract-reader --db typo/lib.db` made the folder and opened an empty library (the
    user's tags seemed gone); now it is the commands' one-line error, exit 1, no screen."""
    db = tmp_path / "typo" / "lib.sqlite3"
    env = {**os.environ, "TERM": "xterm-256color", "ABSTRACT_READER_CACHE": str(tmp_path / "c")}
    term = Terminal([*installed_script(), "--db", str(db)], env)
    codes: list[int] = []

    def ended() -> bool:
        pid, status = os.waitpid(term.pid, os.WNOHANG)
        if pid:
            codes.append(os.waitstatus_to_exitcode(status))
        return bool(codes)

    # (not term.wait(): it would block reading a reader that runs and writes nothing)
    deadline = time.monotonic() + 30
    try:
        while not ended():
            assert time.monotonic() < deadline, "the reader did not exit"
            if select.select([term.fd], [], [], 0.1)[0]:
                with contextlib.suppress(OSError):  # EIO once it has exited
                    term.output += os.read(term.fd, 1 << 16)
    finally:
        if not codes:
            os.kill(term.pid, 9)
            os.waitpid(term.pid, 0)
    with contextlib.suppress(OSError):  # what it wrote last
        while select.select([term.fd], [], [], 0)[0] and (data := os.read(term.fd, 1 << 16)):
            term.output += data
    assert codes == [1]
    shown = _ANSI.sub(b"", term.output).decode()
    assert f"--db {db}: the folder {db.parent} does not exist" in shown.replace("\r\n", "")
    assert not db.parent.exists()


def test_the_reader_says_when_it_made_the_library_it_was_given(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "TERM": "xterm-256color",
        "ABSTRACT_READER_DB": str(tmp_path / "new.sqlite3"),
        "ABSTRACT_READER_CACHE": str(tmp_path / "cache"),
    }
    term = Terminal(installed_script(), env)
    term.read_until(b"Created a new library at")
    term.read_until(b"55 papers")
    term.send("q")
    assert term.wait() == 0
    assert (tmp_path / "new.sqlite3").is_file()


def test_bundled_adds_the_bundled_dumps_to_the_paths_given(tmp_path: Path) -> None:
    """`abstract-reader --bundled mine.txt`: the bundled papers and the file's, in one
    reader (a user with a metadata file for the bundled papers had to find the package's
    folder to give both); without it, only the file's."""
    argv = installed_script()
    mine = str(Path(__file__).parents[1] / "data" / "wrapped.txt")
    term = Terminal([*argv, "--bundled", mine], reader_env(tmp_path))
    term.read_until(b"57 papers")  # the 55 bundled and the file's 2
    term.send("q")
    assert term.wait() == 0
    term = Terminal([*argv, mine], reader_env(tmp_path))
    term.read_until(b"2 papers")
    term.send("q")
    assert term.wait() == 0


@pytest.mark.parametrize("ignore_hangup", [False, True], ids=["sighup", "nohup"])
def test_a_note_typed_when_the_terminal_closes_is_offered_again(
    tmp_path: Path, ignore_hangup: bool
) -> None:
    """The terminal window closed (the pty's other end gone: SIGHUP) with the note editor
    open and nothing saved, the last keys shown a moment before: the reader ends (129, even
    started with SIGHUP ignored, as under nohup: it used to spin on a terminal that reads
    nothing), keeping what was typed; the next start says a note was kept, and that paper's
    note opens with it; ctrl+s saves it."""
    from abstract_reader.corpus import load_corpus
    from abstract_reader.library.drafts import Drafts

    from ..conftest import SEEDS

    db = tmp_path / "lib.sqlite3"
    env = reader_env(tmp_path, db)
    paper_id = load_corpus([SEEDS]).papers[0].id
    drafts = Drafts.beside(db)
    term = Terminal(installed_script(), env, ignore_hangup=ignore_hangup)
    term.read_until(b"55 papers")
    term.send("o")
    term.read_until(b"Note on")
    term.send("typed before the window closed")
    term.read_until(b"typed before the window closed")  # on screen: the reader has it
    assert term.close_window() == 129  # at once
    assert [d.text for d in drafts.left(paper_id)] == ["typed before the window closed"]
    with Library(db) as library:
        assert paper_id not in library.snapshot.notes

    again = Terminal(installed_script(), env)
    again.read_until(b"A note you did not save is kept")
    again.send("o")
    again.read_until(b"Restored what you typed")
    again.read_until(b"typed before the window closed")
    again.send("\x13")  # ctrl+s
    again.read_until(b"note: typed before the window closed")
    again.send("q")
    assert again.wait() == 0
    with Library(db) as library:
        assert library.snapshot.notes[paper_id] == "typed before the window closed"
    assert drafts.all_left() == []


def test_sigterm_ends_the_reader_as_quitting_does(tmp_path: Path) -> None:
    """`kill` (SIGTERM, as a logout or shutdown sends) with the note editor open: the reader
    ends with 143, keeps the note typed as a draft, and gives the terminal back — out of
    its screen, mouse reports off, the cursor shown (it used to die, leaving all three)."""
    import signal

    from abstract_reader.corpus import load_corpus
    from abstract_reader.library.drafts import Drafts

    from ..conftest import SEEDS

    db = tmp_path / "lib.sqlite3"
    paper_id = load_corpus([SEEDS]).papers[0].id
    term = Terminal(installed_script(), reader_env(tmp_path, db))
    term.read_until(b"55 papers")
    term.send("o")
    term.read_until(b"Note on")
    term.send("typed before kill")
    term.read_until(b"typed before kill")
    shown = len(term.output)
    os.kill(term.pid, signal.SIGTERM)
    assert term.wait() == 143
    after = term.output[shown:]
    assert b"\x1b[?1049l" in after  # the alternate screen left
    assert b"\x1b[?1003l" in after or b"\x1b[?1000l" in after  # mouse reports off
    assert b"\x1b[?25h" in after  # the cursor shown
    assert [d.text for d in Drafts.beside(db).left(paper_id)] == ["typed before kill"]


def test_an_editor_that_fails_leaves_the_note_as_it_was(tmp_path: Path) -> None:
    """$VISUAL writing to the file, then exiting 1 (`:cq`, an abort): the note editor
    keeps its text and says so."""
    editor = tmp_path / "abort.sh"
    editor.write_text('#!/bin/sh\nprintf " not wanted" >> "$1"\nexit 1\n', encoding="utf-8")
    editor.chmod(0o755)
    term = Terminal(installed_script(), reader_env(tmp_path, VISUAL=str(editor)))
    term.read_until(b"55 papers")
    term.send("o")
    term.read_until(b"Note on")
    term.send("kept as typed")
    term.read_until(b"kept as typed")
    term.send("\x0f")  # ctrl+o
    term.read_until(b"exited with code 1")
    assert "not wanted" not in term.text()
    term.send("\x13")  # ctrl+s
    term.read_until(b"note: kept as typed")
    term.send("q")
    assert term.wait() == 0


def test_what_the_editor_wrote_is_kept_when_the_window_closes_while_it_runs(
    tmp_path: Path,
) -> None:
    """The terminal window closed while $VISUAL ran, after it wrote the file (a `:w`): the
    editor ends with the window (its reads of the terminal end), the reader too (129), and
    what the editor wrote is the draft offered next time (it was lost: the draft held the
    text before ctrl+o)."""
    from abstract_reader.corpus import load_corpus
    from abstract_reader.library.drafts import Drafts

    from ..conftest import SEEDS

    written = tmp_path / "written"
    editor = tmp_path / "slow.sh"
    # (as an editor does, it reads the terminal: the read ends when the window closes)
    editor.write_text(
        '#!/bin/sh\nprintf " and what the editor wrote" >> "$1"\n'
        f'touch "{written}"\nread answer\nexit 3\n',
        encoding="utf-8",
    )
    editor.chmod(0o755)
    db = tmp_path / "lib.sqlite3"
    paper_id = load_corpus([SEEDS]).papers[0].id
    term = Terminal(installed_script(), reader_env(tmp_path, db, VISUAL=str(editor)))
    term.read_until(b"55 papers")
    term.send("o")
    term.read_until(b"Note on")
    term.send("typed first")
    term.read_until(b"typed first")
    term.send("\x0f")  # ctrl+o
    term.until(written.exists, "the editor did not write the file")
    assert term.close_window() == 129  # while the editor runs
    assert [d.text for d in Drafts.beside(db).left(paper_id)] == [
        "typed first and what the editor wrote"
    ]

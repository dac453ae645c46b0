"""The installed program as a process: closed and broken output, unexpected errors, hostile
names in messages, mistyped commands, and the reader without a terminal."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from abstract_reader.corpus import Corpus

from .conftest import SEEDS, installed_script, paper_with, write_dump
from .tui.test_pty import _ANSI, Terminal


def run(
    *args: str,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    stdout: int | None = subprocess.PIPE,
    new_session: bool = False,
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*installed_script(), *args],
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        start_new_session=new_session,
    )


def shell(script: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """``script`` in bash with $AR the installed program."""
    return subprocess.run(
        ["bash", "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, "AR": " ".join(installed_script())},
        stdin=subprocess.DEVNULL,
    )


def test_broken_pipe_exits_141_without_a_traceback() -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader of our output is already gone: every write is EPIPE
    try:
        result = run("list", "--json", stdout=write_end)
    finally:
        os.close(write_end)
    assert result.returncode == 141
    assert result.stderr == ""


def test_list_into_head_is_quiet(tmp_path: Path) -> None:
    result = shell('$AR list --json | head -c 10; echo " rc=${PIPESTATUS[0]}"', tmp_path)
    assert result.stdout.startswith('{"id": "') and result.stdout.rstrip().endswith(
        ("rc=0", "rc=141")
    )
    assert result.stderr == ""


def test_closed_stdout_is_one_line_and_never_hits_the_library(
    seeds: Corpus, tmp_path: Path
) -> None:
    rse = paper_with(seeds, "Robust Satisficing Ensemble (RSE)")
    db = tmp_path / "lib.sqlite3"
    listed = shell(f"$AR list --db {db} >&-", tmp_path)
    assert listed.returncode == 1
    assert listed.stderr == (
        f"abstract-reader: created a new library at {db}\n"
        "abstract-reader: cannot write to standard output: standard output is closed\n"
    )
    # the library opened while fd 1 is closed must not become "standard output"
    tagged = shell(f"$AR tag {rse.id} kept --db {db} >&-", tmp_path)
    assert tagged.returncode == 1 and "Traceback" not in tagged.stderr
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert "kept" in run("tags", "--db", str(db)).stdout


def test_full_disk_on_stdout_is_one_line(tmp_path: Path) -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full")
    result = shell("$AR list > /dev/full", tmp_path)
    assert result.returncode == 1
    assert (
        result.stderr
        == "abstract-reader: cannot write to standard output: No space left on device\n"
    )


def test_unexpected_error_is_one_line_nonzero_with_the_traceback_kept(tmp_path: Path) -> None:
    # an injected bug in a real command, through the real main()
    code = (
        "import sys; from abstract_reader import cli\n"
        "def boom(args): raise ZeroDivisionError('division by zero\\nsecond line')\n"
        "cli.COMMANDS['list'] = boom\n"
        "sys.exit(cli.main(['list']))\n"
    )
    cache = tmp_path / "cache"
    env = {**os.environ, "ABSTRACT_READER_CACHE": str(cache)}
    env.pop("ABSTRACT_READER_DEBUG", None)
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("abstract-reader: unexpected error: ZeroDivisionError: division")
    saved = cache / "last-error.txt"
    assert str(saved) in lines[0] and "ABSTRACT_READER_DEBUG=1" in lines[0]
    assert "Traceback" in saved.read_text() and "boom" in saved.read_text()
    debug = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**env, "ABSTRACT_READER_DEBUG": "1"},
        timeout=60,
    )
    assert debug.returncode == 1 and "Traceback (most recent call last)" in debug.stderr


HOSTILE = "evil\x1b]52;c;aGk=\x07\x9b2J\u202eTXT"


def _clean(text: str) -> bool:
    return not any(
        (ord(c) < 32 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F or c == "\u202e" for c in text
    )


def test_names_in_messages_and_output_are_sanitised(seeds: Corpus, tmp_path: Path) -> None:
    db = tmp_path / "lib.sqlite3"
    pid = seeds.papers[0].id
    refused = run("tag", pid, HOSTILE, "--db", str(db))
    assert refused.returncode == 2 and _clean(refused.stderr)  # (a usage error: no tag)
    assert run("tag", pid, "plain", "--db", str(db)).returncode == 0
    # values written by another tool (or an older version) straight into the library
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE tags SET name = ?", (HOSTILE,))
        tag_id = conn.execute("SELECT id FROM tags").fetchone()[0]
        conn.execute("INSERT INTO paper_tags VALUES (?, ?, 0)", ("feedface" + HOSTILE, tag_id))
        conn.execute("INSERT INTO settings VALUES ('cite_format', ?)", (HOSTILE,))
    conn.close()
    for args in (
        ("tags",),
        ("tags", "--json"),
        ("list",),
        ("show", pid),
        ("show", pid, "--json"),
        ("list", "--json"),
        ("cite", pid),
    ):
        result = run(*args, "--db", str(db))
        assert result.returncode in (0, 1), args
        assert _clean(result.stdout + result.stderr), (args, result.stderr)
        assert "Traceback" not in result.stderr and "unexpected" not in result.stderr
    row = next(
        json.loads(line)
        for line in run("list", "--json", "--db", str(db)).stdout.splitlines()
        if json.loads(line)["id"] == pid
    )
    assert len(row["tags"]) == 1 and "\\u202e" not in row["tags"][0]  # JSON keeps the value
    for args in (
        ("show", HOSTILE),
        ("list", "-d", str(tmp_path / HOSTILE)),
        ("export", "--format", HOSTILE),
        ("export", "--format", "csv", "-o", str(tmp_path), "--force"),
        ("tags", "--delete", HOSTILE + "x"),
    ):
        result = run(*args, "--db", str(db))
        assert result.returncode in (1, 2), args
        assert _clean(result.stderr), (args, result.stderr)
        assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("word", "expected"), [("lsit", "did you mean 'list'"), ("sohw", "'show'")]
)
def test_mistyped_command_is_a_usage_error_with_a_suggestion(word: str, expected: str) -> None:
    result = run(word)
    assert result.returncode == 2
    assert expected in result.stderr and "is not a command" in result.stderr
    assert result.stdout == "" and "\x1b" not in result.stderr


def test_unknown_word_lists_the_commands_but_an_existing_path_opens_the_reader(
    tmp_path: Path,
) -> None:
    result = run("nosuchcmd", cwd=tmp_path)
    assert result.returncode == 2
    assert "commands: list, show" in result.stderr
    write_dump(tmp_path / "nosuchcmd", "An abstract about robust estimation.")
    # a file by that name: the reader, which (no terminal here) says it needs one
    as_path = run("nosuchcmd", cwd=tmp_path, new_session=True)
    assert as_path.returncode == 2 and "the reader needs a terminal" in as_path.stderr
    assert "is not a command" not in as_path.stderr
    # a path-like word that names nothing is still a path for the reader (reported there)
    missing = run("missing.txt", cwd=tmp_path, new_session=True)
    assert "is not a command" not in missing.stderr


def test_help_word_prints_the_help() -> None:
    result = run("help")
    assert result.returncode == 0 and "list" in result.stdout and "usage:" in result.stdout


def test_reader_without_any_terminal_exits_2_and_writes_no_escape_codes() -> None:
    result = run(new_session=True)  # no controlling terminal, stdin /dev/null, pipes
    assert result.returncode == 2
    assert result.stdout == ""
    assert "\x1b" not in result.stderr and "needs a terminal" in result.stderr
    assert len(result.stderr.splitlines()) == 1


@pytest.mark.slow
@pytest.mark.parametrize("redirect", ["2>log", "2>&1 | cat > log", "< /dev/null 2>log"])
def test_redirected_reader_draws_on_the_controlling_terminal(redirect: str, tmp_path: Path) -> None:
    env = {
        **os.environ,
        "TERM": "xterm-256color",
        "ABSTRACT_READER_DB": str(tmp_path / "lib.sqlite3"),
        "ABSTRACT_READER_CACHE": str(tmp_path / "cache"),
        "AR": " ".join(installed_script()),
    }
    term = Terminal(["bash", "-c", f'cd {tmp_path} && $AR {redirect}; echo "rc=$?"'], env)
    term.read_until(b"55 papers")
    term.send("q")
    term.read_until(b"rc=0")
    term.wait()
    log = (tmp_path / "log").read_bytes()
    assert b"\x1b" not in log, log[:200]


@pytest.mark.slow
def test_mistyped_command_in_a_terminal_never_opens_the_reader(tmp_path: Path) -> None:
    env = {**os.environ, "TERM": "xterm-256color", "ABSTRACT_READER_DB": str(tmp_path / "l")}
    term = Terminal([*installed_script(), "lsit"], env)
    assert term.wait() == 2
    assert b"did you mean 'list'" in term.output
    assert b"\x1b[?1049h" not in term.output  # no alternate screen: no reader
    assert _ANSI.sub(b"", term.output) == term.output


def test_dump_in_cwd_named_like_a_folder_still_opens(tmp_path: Path) -> None:
    (tmp_path / "dumps").mkdir()
    write_dump(tmp_path / "dumps" / "a.txt", "An abstract about robust estimation.")
    result = run("dumps", cwd=tmp_path, new_session=True)
    assert result.returncode == 2 and "needs a terminal" in result.stderr
    assert run("list", "-d", str(SEEDS)).returncode == 0


@pytest.mark.slow
def test_a_missing_path_in_a_terminal_is_one_line_and_no_reader(tmp_path: Path) -> None:
    """`abstract-reader nonexist.txt` opened an empty reader ("0 files loaded, 1 failed")."""
    env = {**os.environ, "TERM": "xterm-256color", "ABSTRACT_READER_DB": str(tmp_path / "l")}
    missing, fifo = tmp_path / "nonexist.txt", tmp_path / "fifo.txt"
    os.mkfifo(fifo)
    term = Terminal([*installed_script(), str(missing), "-d", str(fifo)], env)
    assert term.wait() == 1
    assert b"\x1b[?1049h" not in term.output  # no alternate screen: no reader
    lines = term.output.decode().splitlines()
    assert lines == [
        f"abstract-reader: {missing}: no such file or directory",
        f"abstract-reader: {fifo}: is a FIFO, not a regular file",
        "abstract-reader: nothing to read: none of those 2 can be loaded, so no reader was opened",
    ]
    assert not (tmp_path / "l").exists()  # nor a library made for it


@pytest.mark.slow
def test_a_missing_path_next_to_a_dump_opens_the_reader_on_the_dump(tmp_path: Path) -> None:
    env = {**os.environ, "TERM": "xterm-256color", "ABSTRACT_READER_DB": str(tmp_path / "l")}
    write_dump(tmp_path / "a.txt", "An abstract about robust estimation.")
    term = Terminal([*installed_script(), str(tmp_path / "nonexist.txt"), str(tmp_path)], env)
    term.read_until("1 load error · 1 file loaded".encode())
    term.send("q")
    assert term.wait() == 1  # a bad input file: reported, the rest read, exit 1


@pytest.mark.slow
def test_a_fifo_as_the_config_file_does_not_stop_the_reader(tmp_path: Path) -> None:
    """The reader opened the config file with a plain open(): on a FIFO it waited for a
    writer forever, a blank screen until ctrl+c."""
    fifo = tmp_path / "config.toml"
    os.mkfifo(fifo)
    env = {
        **os.environ,
        "TERM": "xterm-256color",
        "ABSTRACT_READER_DB": str(tmp_path / "lib.sqlite3"),
        "ABSTRACT_READER_CACHE": str(tmp_path / "cache"),
        "ABSTRACT_READER_CONFIG": str(fifo),
    }
    term = Terminal([*installed_script()], env)
    term.read_until(b"55 papers")  # (Terminal's read_until fails after 30 s)
    term.read_until(b"FIFO")  # the warning, as a notification
    term.send("q")
    assert term.wait() == 0

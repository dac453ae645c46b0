"""`export -o FILE` and `library export FILE` onto every kind of target (outfile.py's rule)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from abstract_reader import cli

from .conftest import SEEDS


@pytest.fixture
def out(tmp_path: Path) -> Path:
    """A folder of its own (the library and cache live elsewhere under tmp_path)."""
    folder = tmp_path / "out"
    folder.mkdir()
    return folder


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    yield
    os.umask(old)


def export(capsys: pytest.CaptureFixture[str], target: Path, *extra: str) -> tuple[int, str]:
    code = cli.main(["export", "-d", str(SEEDS), "--format", "jsonl", "-o", str(target), *extra])
    return code, capsys.readouterr().err


def lines(path: Path) -> int:
    return len(path.read_text().splitlines())


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_new_file_honours_the_umask(out: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = os.umask(0o022)
    try:
        assert export(capsys, out / "a.jsonl")[0] == 0
        os.umask(0o077)
        assert export(capsys, out / "b.jsonl")[0] == 0
    finally:
        os.umask(old)
    assert mode(out / "a.jsonl") == 0o644
    assert mode(out / "b.jsonl") == 0o600
    assert lines(out / "a.jsonl") == 55
    assert sorted(p.name for p in out.iterdir()) == ["a.jsonl", "b.jsonl"]  # no temp files


def test_existing_file_needs_force_and_keeps_its_mode(
    out: Path, capsys: pytest.CaptureFixture[str], umask_022: None
) -> None:
    target = out / "list.jsonl"
    target.write_text("mine\n")
    target.chmod(0o640)
    code, err = export(capsys, target)
    assert code == 1 and "already exists" in err and "--force" in err
    assert len(err.strip().splitlines()) == 1
    assert target.read_text() == "mine\n"
    code, err = export(capsys, target, "--force")
    assert code == 0 and lines(target) == 55
    assert mode(target) == 0o640
    assert [p.name for p in out.iterdir()] == ["list.jsonl"]


def test_symlink_is_written_through_only_with_force(
    out: Path, capsys: pytest.CaptureFixture[str], umask_022: None
) -> None:
    real = out / "real.jsonl"
    real.write_text("mine\n")
    real.chmod(0o600)
    link = out / "link.jsonl"
    link.symlink_to(real)
    code, err = export(capsys, link)
    assert code == 1 and "symbolic link" in err and "--force" in err
    assert real.read_text() == "mine\n" and link.is_symlink()
    code, _ = export(capsys, link, "--force")
    assert code == 0
    assert link.is_symlink() and os.readlink(link) == str(real)  # the link is kept
    assert lines(real) == 55 and mode(real) == 0o600


def test_dangling_symlink_is_never_replaced(
    out: Path, capsys: pytest.CaptureFixture[str], umask_022: None
) -> None:
    link = out / "link.jsonl"
    link.symlink_to(out / "sub" / "missing.jsonl")
    (out / "sub").mkdir()
    code, err = export(capsys, link)
    assert code == 1 and "dangling symbolic link" in err
    assert link.is_symlink() and not link.exists()
    code, _ = export(capsys, link, "--force")
    assert code == 0 and link.is_symlink()
    created = out / "sub" / "missing.jsonl"
    assert lines(created) == 55 and mode(created) == 0o644


@pytest.mark.parametrize("kind", ["folder", "fifo", "device", "link-to-device", "link-to-folder"])
def test_non_file_targets_are_refused_even_with_force(
    kind: str, out: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = out / "target"
    if kind == "folder":
        target.mkdir()
    elif kind == "fifo":
        os.mkfifo(target)  # opening it for writing would hang: it must never be opened
    elif kind == "device":
        target = Path("/dev/null")
    elif kind == "link-to-device":
        target.symlink_to("/dev/null")
    else:
        (out / "dir").mkdir()
        target.symlink_to(out / "dir")
    before = sorted(out.iterdir())
    for extra in ((), ("--force",)):
        code, err = export(capsys, target, *extra)
        assert code == 1, (kind, extra)
        assert "not a file" in err or "already exists" in err, err
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "not a file" in err  # with --force the reason is the kind of target
    assert sorted(out.iterdir()) == before
    if kind == "fifo":
        assert stat.S_ISFIFO(os.lstat(target).st_mode)
    if kind == "link-to-device":
        assert target.is_symlink()


def test_missing_folder_and_odd_names_are_one_clean_line(
    out: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = export(capsys, out / "no" / "such" / "x.jsonl")
    assert code == 1 and "No such file or directory" in err
    assert len(err.strip().splitlines()) == 1
    hostile = out / "evil\x1b]52;c;aGk=\x07\u202e.jsonl"
    hostile.mkdir()
    code, err = export(capsys, hostile, "--force")
    assert code == 1 and "\x1b" not in err and "\u202e" not in err and "\\x1b" in err


def test_library_export_follows_the_same_rule(
    out: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = out / "lib.sqlite3"
    assert cli.main(["tag", "-d", str(SEEDS), "d059a4d9", "keep", "--db", str(db)]) == 0
    link = out / "lib.json"
    link.symlink_to(out / "nowhere.json")
    assert cli.main(["library", "export", str(link), "--db", str(db)]) == 1
    assert "dangling symbolic link" in capsys.readouterr().err
    assert cli.main(["library", "export", "/dev/null", "--force", "--db", str(db)]) == 1
    assert "character device" in capsys.readouterr().err
    assert cli.main(["library", "export", str(link), "--force", "--db", str(db)]) == 0
    assert "keep" in (out / "nowhere.json").read_text() and link.is_symlink()


@pytest.mark.parametrize("command", ["export", "library"])
def test_a_dangling_link_into_a_missing_folder_names_the_link_and_its_target(
    command: str, out: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--force` through a link to a file in a missing folder said only "link: No such file
    or directory" (which looks like the link itself is missing)."""
    link = out / "link.json"
    link.symlink_to(out / "nodir" / "x.json")
    if command == "export":
        code, err = export(capsys, link, "--force")
    else:
        code = cli.main(["library", "export", str(link), "--force"])
        err = capsys.readouterr().err
    assert code == 1
    assert err == (
        f"abstract-reader: {link}: a symbolic link to {out / 'nodir' / 'x.json'}, which cannot"
        f" be written: its folder {out / 'nodir'} does not exist\n"
    )
    assert link.is_symlink() and not (out / "nodir").exists()

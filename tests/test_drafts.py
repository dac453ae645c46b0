"""The note editor's drafts (`library.drafts`): kept whole or not at all, private, and a
file someone else put there is never trusted or allowed to block the reader."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from abstract_reader.library.drafts import MAX_DRAFT_BYTES, Drafts, draft_hint

A = "0123456789abcdef"
B = "fedcba9876543210"


def test_a_draft_is_kept_read_back_and_dropped(tmp_path: Path) -> None:
    drafts = Drafts.beside(tmp_path / "lib.sqlite3")
    assert drafts.get(A) is None and drafts.paper_ids() == []
    assert drafts.put(A, "first line\nsecond — ünïcode", "the stored note")
    assert drafts.put(B, "other", "")
    found = drafts.get(A)
    assert found is not None
    assert (found.text, found.base) == ("first line\nsecond — ünïcode", "the stored note")
    assert drafts.put(A, "typed on", "the stored note")  # replaced whole
    assert drafts.get(A) is not None and drafts.get(A).text == "typed on"  # type: ignore[union-attr]
    assert drafts.paper_ids() == [A, B]  # the last written first
    drafts.drop(A)
    assert drafts.get(A) is None and drafts.paper_ids() == [B]
    drafts.drop(A)  # dropping nothing is no error
    # the folder sits beside the library, private as the library's is
    folder = tmp_path / "lib.sqlite3.drafts"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert [stat.S_IMODE(p.stat().st_mode) for p in folder.iterdir()] == [0o600]
    assert not [p for p in folder.iterdir() if p.name.startswith(".tmp-")]


def test_a_library_in_memory_keeps_no_drafts() -> None:
    drafts = Drafts.beside(None)
    assert not drafts.put(A, "x", "")
    assert drafts.get(A) is None and drafts.paper_ids() == []


@pytest.mark.parametrize("paper_id", ["../../etc/passwd", "0123456789ABCDEF", "abc", "", A + "0"])
def test_only_paper_ids_name_draft_files(tmp_path: Path, paper_id: str) -> None:
    drafts = Drafts.beside(tmp_path / "lib.sqlite3")
    assert not drafts.put(paper_id, "x", "")
    assert drafts.get(paper_id) is None
    assert not (tmp_path / "lib.sqlite3.drafts").exists()


def test_what_someone_else_put_in_the_folder_is_ignored(tmp_path: Path) -> None:
    drafts = Drafts.beside(tmp_path / "lib.sqlite3")
    assert drafts.put(A, "mine", "")
    folder = tmp_path / "lib.sqlite3.drafts"
    # another paper's draft renamed to this one's
    (folder / f"note-{A}.json").rename(folder / f"note-{B}.json")
    assert drafts.get(B) is None
    # not JSON, JSON of another shape, a text that is not a string
    for body in (b"\xff\xfe not json", b"[1, 2]", json.dumps({"paper": B, "text": 3}).encode()):
        (folder / f"note-{B}.json").write_bytes(body)
        assert drafts.get(B) is None
    # too large to be a note
    (folder / f"note-{B}.json").write_bytes(b" " * (MAX_DRAFT_BYTES + 1))
    assert drafts.get(B) is None
    # a fifo: neither blocks nor counts; a link: not followed
    (folder / f"note-{B}.json").unlink()
    os.mkfifo(folder / f"note-{B}.json")
    assert drafts.get(B) is None
    assert drafts.paper_ids() == []
    target = tmp_path / "elsewhere.json"
    target.write_text(json.dumps({"paper": A, "text": "planted", "base": ""}))
    (folder / f"note-{A}.json").unlink(missing_ok=True)
    (folder / f"note-{A}.json").symlink_to(target)
    assert drafts.get(A) is None


def test_a_draft_with_terminal_controls_reads_back_harmless(tmp_path: Path) -> None:
    drafts = Drafts.beside(tmp_path / "lib.sqlite3")
    assert drafts.put(A, "a\x1b]52;c;SGVsbG8=\x07b", "\u202eold")
    found = drafts.get(A)
    assert found is not None
    assert "\x1b" not in found.text and "\x07" not in found.text and "a" in found.text
    assert "\u202e" not in found.base


def test_a_draft_that_cannot_be_written_is_no_error(tmp_path: Path) -> None:
    """Its folder cannot be made (a file is there; as a full disk or a read-only home)."""
    (tmp_path / "lib.sqlite3.drafts").write_text("not a folder")
    drafts = Drafts.beside(tmp_path / "lib.sqlite3")
    assert not drafts.put(A, "x", "")
    assert drafts.get(A) is None and drafts.paper_ids() == []


def test_the_hint_says_when_and_whether_the_note_changed_since(tmp_path: Path) -> None:
    drafts = Drafts.beside(tmp_path / "lib.sqlite3")
    assert drafts.put(A, "typed", "stored then")
    found = drafts.get(A)
    assert found is not None
    assert "Restored what you typed" in draft_hint(found, "stored then")
    assert "changed since" not in draft_hint(found, "stored then")
    assert "changed since" in draft_hint(found, "stored now")

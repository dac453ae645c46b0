"""The note editors' drafts (`library.drafts`): each editor's own, kept whole or not at
all, private, offered once the editor that wrote it has ended, and a file someone else put
there is never trusted or allowed to block the reader."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from abstract_reader.library.drafts import (
    MAX_DRAFT_BYTES,
    Drafts,
    draft_hint,
    new_slot,
)

from .conftest import DraftWriter

A = "0123456789abcdef"
B = "fedcba9876543210"


def _papers(drafts: Drafts) -> list[str]:
    """The papers with drafts left, the newest draft's first."""
    return list(dict.fromkeys(d.paper_id for d in drafts.all_left()))


def _drafts(tmp_path: Path) -> Drafts:
    return Drafts.beside(tmp_path / "lib.sqlite3")


def test_a_draft_is_kept_offered_once_its_editor_is_gone_and_dropped(tmp_path: Path) -> None:
    drafts = _drafts(tmp_path)
    mine, other = new_slot(), new_slot()
    assert drafts.left(A) == [] and _papers(drafts) == []
    assert drafts.put(A, "first line\nsecond — ünïcode", "the stored note", mine) is None
    assert drafts.put(B, "other", "", other) is None
    # while its editor is open it is not left; once that editor is gone, it is
    assert drafts.left(A, live={mine}) == []
    (found,) = drafts.left(A)
    assert (found.text, found.base, found.slot) == (
        "first line\nsecond — ünïcode",
        "the stored note",
        mine,
    )
    assert drafts.put(A, "typed on", "the stored note", mine) is None  # replaced whole
    assert [d.text for d in drafts.left(A)] == ["typed on"]
    assert _papers(drafts) == [A, B]  # the newest draft's paper first
    drafts.drop(A, mine)
    assert drafts.left(A) == [] and _papers(drafts) == [B]
    drafts.drop(A, mine)  # dropping nothing is no error
    # the folder sits beside the library, private as the library's is
    folder = tmp_path / "lib.sqlite3.drafts"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert [stat.S_IMODE(p.stat().st_mode) for p in folder.iterdir()] == [0o600]
    assert not [p for p in folder.iterdir() if p.name.startswith(".tmp-")]


def test_two_editors_of_one_note_keep_and_drop_only_their_own(tmp_path: Path) -> None:
    """Two readers editing the same note: one saving (its draft dropped) leaves the
    other's; neither's overwrites the other's."""
    drafts = _drafts(tmp_path)
    first, second = new_slot(), new_slot()
    assert drafts.put(A, "typed in the first", "", first) is None
    assert drafts.put(A, "typed in the second", "", second) is None
    assert sorted(d.text for d in drafts.left(A)) == ["typed in the first", "typed in the second"]
    drafts.drop(A, first)
    assert [d.text for d in drafts.left(A)] == ["typed in the second"]


def test_a_draft_of_a_reader_that_still_runs_is_not_offered_until_it_ends(
    tmp_path: Path,
) -> None:
    drafts = _drafts(tmp_path)
    with DraftWriter(tmp_path / "lib.sqlite3", A, "typed in another reader"):
        assert drafts.left(A) == [] and _papers(drafts) == []  # being typed
        assert drafts.being_typed() and drafts.being_typed(paper_id=A)
        assert not drafts.being_typed(paper_id=B)
    assert [d.text for d in drafts.left(A)] == ["typed in another reader"]
    assert not drafts.being_typed()
    mine = new_slot()
    assert drafts.put(B, "typed here", "", mine) is None
    assert not drafts.being_typed(live={mine})  # this reader's own open editor


def test_a_process_id_taken_by_another_process_is_not_its_writer(tmp_path: Path) -> None:
    """A draft names its writer by process id and start time: a running process with that
    id that started at another time (the id reused after a reboot) is not the writer."""
    drafts = _drafts(tmp_path)
    slot = new_slot()
    assert drafts.put(A, "from before the reboot", "", slot) is None
    path = next((tmp_path / "lib.sqlite3.drafts").iterdir())
    data = json.loads(path.read_text())
    stat_line = Path(f"/proc/{os.getppid()}/stat").read_text()
    parent_started = stat_line.rsplit(")", 1)[1].split()[19]
    data["pid"] = os.getppid()  # alive
    data["started"] = parent_started
    path.write_text(json.dumps(data))
    assert drafts.left(A) == []  # its writer (the parent, as far as it can tell) runs
    data["started"] = str(int(parent_started) + 1)
    path.write_text(json.dumps(data))
    assert [d.text for d in drafts.left(A)] == ["from before the reboot"]


def test_a_library_in_memory_keeps_no_drafts() -> None:
    drafts = Drafts.beside(None)
    assert drafts.put(A, "x", "", new_slot()) is not None
    assert drafts.left(A) == [] and _papers(drafts) == []


@pytest.mark.parametrize("paper_id", ["../../etc/passwd", "0123456789ABCDEF", "abc", "", A + "0"])
def test_only_paper_ids_name_draft_files(tmp_path: Path, paper_id: str) -> None:
    drafts = _drafts(tmp_path)
    assert drafts.put(paper_id, "x", "", new_slot()) is not None
    assert drafts.put(A, "x", "", "../x") is not None  # nor slots that are not ours
    assert drafts.left(paper_id) == []
    assert not (tmp_path / "lib.sqlite3.drafts").exists()


def test_what_someone_else_put_in_the_folder_is_ignored(tmp_path: Path) -> None:
    drafts = _drafts(tmp_path)
    slot = new_slot()
    assert drafts.put(A, "mine", "", slot) is None
    folder = tmp_path / "lib.sqlite3.drafts"
    theirs = folder / f"note-{B}-{slot}.json"
    # another paper's draft renamed to this one's
    (folder / f"note-{A}-{slot}.json").rename(theirs)
    assert drafts.left(B) == []
    # not JSON, JSON of another shape, a text that is not a string
    for body in (b"\xff\xfe not json", b"[1, 2]", json.dumps({"paper": B, "text": 3}).encode()):
        theirs.write_bytes(body)
        assert drafts.left(B) == []
    # too large to be a note
    theirs.write_bytes(b" " * (MAX_DRAFT_BYTES + 1))
    assert drafts.left(B) == []
    # a fifo: neither blocks nor counts; a folder: ignored; a link: not followed
    theirs.unlink()
    os.mkfifo(theirs)
    assert drafts.left(B) == [] and _papers(drafts) == []
    theirs.unlink()
    theirs.mkdir()
    assert drafts.left(B) == [] and _papers(drafts) == []
    target = tmp_path / "elsewhere.json"
    target.write_text(json.dumps({"paper": A, "text": "planted", "base": "", "pid": 0}))
    (folder / f"note-{A}-{slot}.json").symlink_to(target)
    assert drafts.left(A) == []


def test_a_draft_with_terminal_controls_reads_back_harmless(tmp_path: Path) -> None:
    drafts = _drafts(tmp_path)
    assert drafts.put(A, "a\x1b]52;c;SGVsbG8=\x07b", "\u202eold", new_slot()) is None
    (found,) = drafts.left(A)
    assert "\x1b" not in found.text and "\x07" not in found.text and "a" in found.text
    assert "\u202e" not in found.base


def test_a_draft_that_cannot_be_kept_says_why(tmp_path: Path) -> None:
    """Its folder cannot be made (a file is there; as a full disk or a read-only home), or
    it is too long: a reason, no error."""
    (tmp_path / "lib.sqlite3.drafts").write_text("not a folder")
    why = _drafts(tmp_path).put(A, "x", "", new_slot())
    assert why is not None and "lib.sqlite3.drafts" in why
    (tmp_path / "lib.sqlite3.drafts").unlink()
    why = _drafts(tmp_path).put(A, "x" * MAX_DRAFT_BYTES, "", new_slot())
    assert why is not None and "MB" in why
    assert _papers(_drafts(tmp_path)) == []


def test_the_hint_says_when_and_whether_the_note_changed_since(tmp_path: Path) -> None:
    drafts = _drafts(tmp_path)
    assert drafts.put(A, "typed", "stored then", new_slot()) is None
    (found,) = drafts.left(A)
    assert "Restored what you typed" in draft_hint(found, "stored then")
    assert "changed since" not in draft_hint(found, "stored then")
    assert "changed since" in draft_hint(found, "stored now")

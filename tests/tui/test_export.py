"""The reader's export dialog (E / palette): the view or the marked papers to a file, written
by the export command's code under outfile.py's rule. Real keys, files read back."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import bibtexparser
import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Select, Static

from abstract_reader.tui.app import ReaderApp
from abstract_reader.tui.screens.export import ExportDialog
from abstract_reader.tui.widgets.paper_list import PaperList

from .conftest import make_app, run_palette_command, settle, type_filter, until

WIDE = (120, 40)
SMALL = (70, 24)


def _preview(app: ReaderApp) -> str:
    return str(app.screen.query_one("#export-preview", Static).render())


def _message(app: ReaderApp) -> str:
    return str(app.screen.query_one("#export-message", Static).render())


async def _type_path(pilot: Pilot[Any], path: Path | str) -> None:
    """Empty the file name field (ctrl+u: delete to the start) and type ``path``."""
    await pilot.press("end", "ctrl+u", *[{" ": "space"}.get(c, c) for c in str(path)])


async def _open_dialog(app: ReaderApp, pilot: Pilot[Any]) -> None:
    await pilot.press("E")
    await until(pilot, lambda: isinstance(app.screen, ExportDialog))
    await pilot.pause()


async def _exported(app: ReaderApp, pilot: Pilot[Any]) -> str:
    await until(pilot, lambda: not isinstance(app.screen, ExportDialog))
    # the dialog's result (and so the notification) arrives after the screen is popped
    await until(pilot, lambda: bool(list(app._notifications)))
    return [n.message for n in app._notifications][-1]


def _bib_ids(text: str) -> list[str]:
    """The abstract-reader ids of a BibTeX export, in order (parsed with bibtexparser)."""
    library = bibtexparser.parse_string(text)
    assert not library.failed_blocks
    return [entry["note"].rsplit(" ", 1)[1] for entry in library.entries]


async def test_export_the_view_in_its_order_as_bibtex(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await type_filter(app, pilot, "robust")
        await pilot.press("enter", "s", "s", "s")  # title order: not the dump order
        await settle(app, pilot)
        paper_list = app.query_one(PaperList)
        view = [paper_list.source.paper(i).id for i in range(len(paper_list.source))]
        assert 1 < len(view) < 55
        await _open_dialog(app, pilot)
        target = tmp_path / "view.bib"
        await _type_path(pilot, target)
        await pilot.press("enter")
        message = await _exported(app, pilot)
        assert message == f"Exported {len(view)} papers to {target}"
        assert _bib_ids(target.read_text("utf-8")) == view


async def test_export_the_marked_papers_as_csl_json_and_jsonl(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        paper_list = app.query_one(PaperList)
        await pilot.press("space", "j", "space")  # marks the first and the third paper
        marked = sorted(app.session.marks, key=app.session.corpus.index_of)
        assert len(marked) == 2
        await _open_dialog(app, pilot)
        assert "2 papers as BibTeX" in str(app.screen.query_one("#export-preview").render())
        # the format: Tab (from the file name, round to the first field), Enter opens the
        # choices, down to CSL-JSON (BibTeX, Markdown, CSL-JSON), Enter
        await pilot.press("tab", "enter", "down", "down", "enter")
        await pilot.pause()
        field = app.screen.query_one("#export-path", Input)
        assert field.value == "papers.json"  # the name followed the format
        field.focus()
        await _type_path(pilot, tmp_path / "marked.json")
        await pilot.press("ctrl+s")
        assert (await _exported(app, pilot)).startswith("Exported 2 papers to ")
        items = json.loads((tmp_path / "marked.json").read_text("utf-8"))
        assert [item["id"] for item in items] == marked

        # JSON Lines, from the palette this time, still the marked papers by default
        await run_palette_command(app, pilot, "export to")
        await until(pilot, lambda: isinstance(app.screen, ExportDialog))
        await pilot.pause()
        await pilot.press("tab", "enter", "down", "down", "down", "down", "enter")
        await pilot.pause()
        app.screen.query_one("#export-path", Input).focus()
        await _type_path(pilot, tmp_path / "marked.jsonl")
        await pilot.press("enter")
        await _exported(app, pilot)
        lines = (tmp_path / "marked.jsonl").read_text("utf-8").splitlines()
        assert [json.loads(line)["id"] for line in lines] == marked
        assert paper_list.current_id is not None


async def test_overwrite_asks_and_n_leaves_the_file_alone(tmp_path: Path) -> None:
    target = tmp_path / "x.bib"
    target.write_bytes(b"my own bibliography\n")
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await _open_dialog(app, pilot)
        await _type_path(pilot, tmp_path)  # a folder: said before Enter refuses it
        assert _preview(app).endswith(" (a folder)")
        await _type_path(pilot, target)  # said before Enter asks
        assert _preview(app).endswith("x.bib (exists: Enter asks before replacing it)")
        await pilot.press("backspace")  # x.bi: a name not there
        assert _preview(app).endswith("x.bi")
        await pilot.press("b")
        await pilot.press("enter")
        await until(pilot, lambda: "Overwrite x.bib? y/n" in _message(app))
        await pilot.press("n")
        await until(pilot, lambda: "unchanged" in _message(app))
        assert target.read_bytes() == b"my own bibliography\n"
        assert app.screen.query_one("#export-path", Input).value == str(target)  # n is no text
        # asked again, Esc answers no too; the dialog stays
        await pilot.press("enter")
        await until(pilot, lambda: "Overwrite x.bib? y/n" in _message(app))
        await pilot.press("escape")
        await until(pilot, lambda: "unchanged" in _message(app))
        assert isinstance(app.screen, ExportDialog)
        assert target.read_bytes() == b"my own bibliography\n"
        # and y replaces it
        await pilot.press("enter")
        await until(pilot, lambda: "Overwrite x.bib? y/n" in _message(app))
        await pilot.press("y")
        assert (await _exported(app, pilot)).startswith("Exported 55 papers to ")
        assert len(_bib_ids(target.read_text("utf-8"))) == 55


async def test_a_symbolic_link_is_written_through_only_after_yes(tmp_path: Path) -> None:
    real = tmp_path / "real.bib"
    real.write_text("old\n")
    link = tmp_path / "link.bib"
    link.symlink_to(real)
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await _open_dialog(app, pilot)
        await _type_path(pilot, link)
        await pilot.press("enter")
        await until(pilot, lambda: "symbolic link" in _message(app))
        assert real.read_text() == "old\n"
        await pilot.press("y")
        await _exported(app, pilot)
        assert link.is_symlink() and real.read_text().startswith("@")


@pytest.mark.parametrize("case", ["missing folder", "a file as folder", "read-only folder"])
async def test_an_unwritable_place_is_one_line_in_the_dialog(tmp_path: Path, case: str) -> None:
    if case == "missing folder":
        target, reason = tmp_path / "nope" / "x.bib", "No such file or directory"
    elif case == "a file as folder":
        (tmp_path / "file").write_text("")
        target, reason = tmp_path / "file" / "x.bib", "Not a directory"
    else:
        if os.geteuid() == 0:
            pytest.skip("root writes into read-only folders")
        (tmp_path / "ro").mkdir(mode=0o500)
        target, reason = tmp_path / "ro" / "x.bib", "Permission denied"
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await _open_dialog(app, pilot)
        await _type_path(pilot, target)
        await pilot.press("enter")
        await until(pilot, lambda: reason in _message(app))
        assert _message(app) == f"{target}: {reason}"  # one line, naming the file
        assert isinstance(app.screen, ExportDialog)
        assert not target.exists()


async def test_a_folder_or_device_is_refused(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await _open_dialog(app, pilot)
        await _type_path(pilot, tmp_path)
        await pilot.press("enter")
        await until(pilot, lambda: "a folder" in _message(app))
        assert "use -" not in _message(app)  # the command line's hint means nothing here
        await _type_path(pilot, "/dev/null")
        await pilot.press("enter")
        await until(pilot, lambda: "a character device" in _message(app))
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, ExportDialog))


async def test_tilde_is_the_home_folder_and_the_message_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await _open_dialog(app, pilot)
        await _type_path(pilot, "~/x.md")
        await pilot.press("enter")
        assert await _exported(app, pilot) == "Exported 55 papers to ~/x.md"
        assert (tmp_path / "x.md").read_text("utf-8").count("\n") == 55


async def test_esc_cancels_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    app = make_app(tmp_path)
    async with app.run_test(size=SMALL) as pilot:
        await settle(app, pilot)
        await _open_dialog(app, pilot)
        assert app.screen.query_one("#export-path", Input).value == "papers.bib"
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, ExportDialog))
        assert not (tmp_path / "papers.bib").exists()
        # and Enter with the default name writes papers.bib in the current folder
        await _open_dialog(app, pilot)
        await pilot.press("enter")
        assert (await _exported(app, pilot)).endswith("papers.bib")
        assert (tmp_path / "papers.bib").is_file()


async def test_an_empty_view_is_not_exported_and_the_file_is_left_alone(tmp_path: Path) -> None:
    """0 papers would empty papers.bib (after "Overwrite? y"): refused, with one line."""
    target = tmp_path / "papers.bib"
    target.write_bytes(b"@misc{mine, title={Kept}}\n")
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await type_filter(app, pilot, "zzzzqq")
        await pilot.press("enter")
        assert len(app.query_one(PaperList).source) == 0
        await _open_dialog(app, pilot)
        await _type_path(pilot, target)
        await pilot.press("enter")
        await until(pilot, lambda: "Nothing to export" in _message(app))
        assert _message(app) == "Nothing to export: the view is empty. Nothing was written."
        await pilot.press("ctrl+s")  # and again, not an overwrite question
        await pilot.pause()
        assert "Overwrite" not in _message(app) and isinstance(app.screen, ExportDialog)
        await app.workers.wait_for_complete()
        assert target.read_bytes() == b"@misc{mine, title={Kept}}\n"
        assert not [n for n in app._notifications if n.message.startswith("Exported")]
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, ExportDialog))
        assert target.read_bytes() == b"@misc{mine, title={Kept}}\n"


async def test_after_n_the_name_is_there_to_edit_not_to_replace(tmp_path: Path) -> None:
    """After "n" to "Overwrite x.bib? y/n" (or Esc) the whole name was selected again: the
    next key typed replaced it (⌫ emptied the field). The cursor is at the end of the name,
    nothing selected, and the name is edited: here into another file, which is written."""
    target = tmp_path / "x.bib"
    target.write_bytes(b"my own bibliography\n")
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await _open_dialog(app, pilot)
        await _type_path(pilot, target)
        field = app.screen.query_one("#export-path", Input)
        for answer in ("n", "escape"):
            await pilot.press("enter")
            await until(pilot, lambda: "Overwrite x.bib? y/n" in _message(app))
            await pilot.press(answer)
            await until(pilot, lambda: "unchanged" in _message(app))
            assert field.has_focus
            assert field.selection.is_empty and field.cursor_position == len(str(target))
        await pilot.press("backspace", "backspace", "backspace", *"md")  # x.bib → x.md
        assert field.value == str(tmp_path / "x.md")
        assert app.screen.query_one("#export-format", Select).value == "markdown"
        await pilot.press("enter")
        assert (await _exported(app, pilot)) == f"Exported 55 papers to {tmp_path / 'x.md'}"
        assert (tmp_path / "x.md").exists()
        assert target.read_bytes() == b"my own bibliography\n"


async def test_a_message_about_another_file_or_format_goes_when_it_changes(
    tmp_path: Path,
) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await _open_dialog(app, pilot)
        await _type_path(pilot, "/nonexistent/x.bib")
        await pilot.press("enter")
        await until(pilot, lambda: "nonexistent" in _message(app))
        await _type_path(pilot, tmp_path / "x.bib")  # another file: the error was not about it
        await until(pilot, lambda: _message(app) == "")
        # "Not exported; …/papers.bib is unchanged." goes when the format changes the name
        target = tmp_path / "papers.bib"
        target.write_bytes(b"mine\n")
        await _type_path(pilot, target)
        await pilot.press("enter")
        await until(pilot, lambda: "Overwrite papers.bib? y/n" in _message(app))
        await pilot.press("n")
        await until(pilot, lambda: "unchanged" in _message(app))
        await pilot.press("shift+tab", "shift+tab")  # the papers, then the format
        assert app.screen.focused is app.screen.query_one("#export-format", Select)
        await pilot.press("enter", "down", "down", "down", "enter")  # BibTeX → … → CSV
        await until(
            pilot, lambda: app.screen.query_one("#export-path", Input).value.endswith(".csv")
        )
        preview = str(app.screen.query_one("#export-preview", Static).render())
        assert preview.endswith("papers.csv")
        await until(pilot, lambda: _message(app) == "")
        assert target.read_bytes() == b"mine\n"


async def test_the_name_opens_with_the_cursor_at_its_end_nothing_selected(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The dialog opened with the whole name selected (the line putting the cursor at its
    end ran before Textual's focus, which selects everything): ⌫ emptied the field and a
    letter replaced the name. Typed keys edit the name at its end."""
    monkeypatch.chdir(tmp_path)
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await _open_dialog(app, pilot)
        field = app.screen.query_one("#export-path", Input)
        assert field.has_focus
        assert field.selection.is_empty and field.cursor_position == len("papers.bib")
        await pilot.press("backspace", "backspace", "backspace", *"md")
        assert field.value == "papers.md"


@pytest.mark.parametrize("key", ["enter", "ctrl+s"])
async def test_n_typed_ahead_after_enter_answers_the_question_and_names_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str
) -> None:
    """Enter then "n" in one burst (typed ahead while the reader was busy) exported to a
    file named "n": the n reached the field before the dialog read it. Now the keys typed
    while the export starts wait for it: "n" answers the question that Enter raised."""
    from .test_key_bursts import burst

    monkeypatch.chdir(tmp_path)
    target = tmp_path / "papers.bib"
    target.write_bytes(b"my own bibliography\n")
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await _open_dialog(app, pilot)
        burst(app, key, "n")
        await until(pilot, lambda: "unchanged" in _message(app))
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert _message(app) == f"Not exported; {tmp_path / 'papers.bib'} is unchanged."
        assert not (tmp_path / "n").exists()
        assert target.read_bytes() == b"my own bibliography\n"
        field = app.screen.query_one("#export-path", Input)
        assert field.value == "papers.bib" and field.has_focus
        # y typed ahead replaces it, as y answered would
        burst(app, key, "y")
        assert (await _exported(app, pilot)).endswith("papers.bib")
        assert len(_bib_ids(target.read_text("utf-8"))) == 55


async def test_keys_typed_ahead_of_an_export_that_needs_no_question_are_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No file to protect: the export is written under the name as it was at Enter, and the
    n typed behind it names nothing and does nothing (no next paper in the list)."""
    from .test_key_bursts import burst

    monkeypatch.chdir(tmp_path)
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        cursor = app.query_one(PaperList).cursor
        await _open_dialog(app, pilot)
        burst(app, "enter", "n", "enter")
        assert (await _exported(app, pilot)).endswith("papers.bib")
        await settle(app, pilot)
        assert (tmp_path / "papers.bib").is_file()
        assert not (tmp_path / "n").exists() and not (tmp_path / "papers.bibn").exists()
        assert app.query_one(PaperList).cursor == cursor
        assert not isinstance(app.screen, ExportDialog)

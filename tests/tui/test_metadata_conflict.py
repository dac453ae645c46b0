"""The metadata editor (`e`) and another writer on the same library (the CLI's `meta`,
another reader): a field changed in both while the editor was open is never overwritten
unseen; the user sees both values and chooses, as for a note."""

from __future__ import annotations

from pathlib import Path

import pytest

from abstract_reader import cli
from abstract_reader.library import Library, Metadata
from abstract_reader.tui.screens.editors import MetadataConflictDialog, MetadataEditor
from abstract_reader.tui.widgets.paper_list import PaperList

from ..conftest import SEEDS
from .conftest import make_app, settle, until
from .test_dialogs_small import SMALL, box_text, visible

WIDE = (140, 40)


def _meta_cli(db: Path, *args: str) -> int:
    """``abstract-reader meta …`` on the reader's library, as a user types it elsewhere."""
    return cli.main(["meta", "-d", str(SEEDS), "--db", str(db), *args])


@pytest.mark.parametrize("choice", ["m", "t"])
async def test_a_title_the_cli_set_meanwhile_is_never_overwritten_unseen(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], choice: str
) -> None:
    """The tester's steps: `e`, then `meta ID --title 'CLI T2'` from the CLI, then "Reader T2"
    typed and ctrl+s. The title was saved over the CLI's without a word; now both are shown
    and the user chooses. The CLI's author (not touched in the editor) and the URL typed in
    the editor (not touched elsewhere) are saved either way."""
    app = make_app(tmp_path)
    db = tmp_path / "lib.sqlite3"
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        paper_id = app.query_one(PaperList).current_id or ""
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, MetadataEditor))
        assert _meta_cli(db, paper_id, "--title", "CLI T2", "--author", "Cli Author") == 0
        await pilot.press(*"Reader T2", "tab", "tab", *"https://reader.example/p", "ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, MetadataConflictDialog))
        await pilot.pause()
        shown = box_text(app)
        assert "Changed elsewhere while you edited it: Title" in shown
        assert "Reader T2" in shown and "CLI T2" in shown
        assert "Cli Author" not in shown and "reader.example" not in shown  # no conflict
        assert visible(app, "m: keep mine · t: keep theirs")
        await pilot.press("escape")  # drops nothing: the dialog stays and says why
        await pilot.pause()
        assert isinstance(app.screen, MetadataConflictDialog)
        assert "Choose m or t" in box_text(app)
        await pilot.press(choice)
        await until(pilot, lambda: not app.screen.is_modal)
        await settle(app, pilot)
    with Library(db) as fresh:
        stored = fresh.snapshot.metadata[paper_id]
    title = "Reader T2" if choice == "m" else "CLI T2"
    assert stored == Metadata(title=title, authors=("Cli Author",), url="https://reader.example/p")
    capsys.readouterr()
    assert _meta_cli(db, paper_id) == 0
    assert f"title:    {title}\n" in capsys.readouterr().out


async def test_conflicting_fields_are_chosen_one_by_one_and_shown_as_typed(
    tmp_path: Path,
) -> None:
    """Two fields changed in both places: each is listed with both values (markup in the
    other writer's title shown as text, never run), Enter switches one to theirs, ctrl+s
    saves the choices. At 70×24 the fields and the keys are on screen."""
    hostile = "Theirs [bold]x[/] [@click=app.quit]q"
    app = make_app(tmp_path)
    async with app.run_test(size=SMALL) as pilot:
        await settle(app, pilot)
        paper_id = app.query_one(PaperList).current_id or ""
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, MetadataEditor))
        with Library(app.library.path) as other:  # another reader on the same file
            other.set_metadata(paper_id, Metadata(title=hostile, year=2024))
        await pilot.press(*"Mine", "tab", "tab", "tab", "tab", *"2026", "ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, MetadataConflictDialog))
        await pilot.pause()
        shown = box_text(app)
        assert "Changed elsewhere while you edited it: Title, Year" in shown
        # (the box wraps the long title: its two halves, each as typed)
        assert "Theirs [bold]x[/]" in shown and "[@click=app.quit]q" in shown
        assert "2024" in shown and "2026" in shown and "Mine" in shown
        assert visible(app, "Enter: switch a field · ctrl+s: save as marked")
        await pilot.press("enter")  # the first field, the title: theirs
        await pilot.pause()
        await pilot.press("ctrl+s")
        await until(pilot, lambda: not app.screen.is_modal)
        await settle(app, pilot)
        assert app.is_running
    with Library(app.library.path) as fresh:
        assert fresh.snapshot.metadata[paper_id] == Metadata(title=hostile, year=2026)


async def test_a_field_changed_again_while_choosing_is_asked_about_again(
    tmp_path: Path,
) -> None:
    """The other writer changes the title once more while the dialog is open: "keep mine"
    chose over a value the user has not seen, so the dialog asks again with the new one."""
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        paper_id = app.query_one(PaperList).current_id or ""
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, MetadataEditor))
        with Library(app.library.path) as other:
            other.set_metadata(paper_id, Metadata(title="Theirs 1"))
            await pilot.press(*"Mine", "ctrl+s")
            await until(pilot, lambda: isinstance(app.screen, MetadataConflictDialog))
            other.set_metadata(paper_id, Metadata(title="Theirs 2", url="https://other.example"))
        await pilot.press("m")
        await until(pilot, lambda: isinstance(app.screen, MetadataConflictDialog))
        await until(pilot, lambda: "Theirs 2" in box_text(app))
        await pilot.press("m")
        await until(pilot, lambda: not app.screen.is_modal)
        await settle(app, pilot)
    with Library(app.library.path) as fresh:
        assert fresh.snapshot.metadata[paper_id] == Metadata(
            title="Mine", url="https://other.example"
        )

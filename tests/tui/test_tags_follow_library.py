"""The tag editor follows the library while it is open: tags another process (the CLI's
`abstract-reader tag`, another reader) adds or removes on its papers show in its list, with
their counts, as the main screen shows them (the same refresh, ``MainScreen.library_changed``);
the user's own changes in the editor are kept, and saving writes only those."""

from __future__ import annotations

from pathlib import Path

from abstract_reader.library import Library
from abstract_reader.tui.screens.editors import TagEditor
from abstract_reader.tui.screens.triage import TriageScreen
from abstract_reader.tui.widgets.paper_list import PaperList

from .conftest import make_app, settle, until
from .test_dialogs_small import box_text

SIZE = (120, 40)


async def test_the_bulk_tag_editor_shows_tags_changed_elsewhere_while_open(
    tmp_path: Path,
) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        paper_list = app.query_one(PaperList)
        ids = [paper_list.source.paper(i).id for i in range(2)]
        app.library.add_tags(ids, ["shared", "gone"])
        app.main.refresh_library()
        await pilot.press("space", "space", "t")  # two papers marked, their tags
        await until(pilot, lambda: isinstance(app.screen, TagEditor))
        await until(pilot, lambda: "#shared" in box_text(app))
        await pilot.press(*"mine", "enter")  # the user's own change, not saved yet
        await until(pilot, lambda: "#mine" in box_text(app))
        with Library(tmp_path / "lib.sqlite3") as cli:  # the CLI, while the editor is open
            cli.add_tags(ids[:1], ["fromcli"])
            cli.remove_tags(ids, ["gone"])
        await until(pilot, lambda: "#fromcli on 1 of 2" in box_text(app))
        await until(pilot, lambda: "#gone" not in box_text(app))
        assert isinstance(app.screen, TagEditor)
        assert "#shared" in box_text(app) and "#mine" in box_text(app)  # kept
        await pilot.press("enter")  # Enter on the empty field saves
        await until(pilot, lambda: not isinstance(app.screen, TagEditor))
        await settle(app, pilot)
    with Library(tmp_path / "lib.sqlite3") as fresh:
        tags = fresh.snapshot.tags
        # fromcli stays on its one paper (not spread to both); gone stays gone
        assert sorted(tags[ids[0]]) == ["fromcli", "mine", "shared"]
        assert sorted(tags[ids[1]]) == ["mine", "shared"]


async def test_a_tag_shown_after_a_change_elsewhere_can_be_removed(tmp_path: Path) -> None:
    """The editor's list is what saving compares with: a tag that appeared while it was
    open, removed in it, is removed from the papers."""
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        paper_id = app.query_one(PaperList).current_id or ""
        await pilot.press("t")
        await until(pilot, lambda: isinstance(app.screen, TagEditor))
        with Library(tmp_path / "lib.sqlite3") as cli:
            cli.add_tags([paper_id], ["fromcli"])
        await until(pilot, lambda: "#fromcli" in box_text(app))
        await pilot.press("up", "delete")  # the list's last tag: removed
        await until(pilot, lambda: "#fromcli" not in box_text(app))
        await pilot.press("ctrl+s")
        await until(pilot, lambda: not isinstance(app.screen, TagEditor))
        await settle(app, pilot)
    with Library(tmp_path / "lib.sqlite3") as fresh:
        assert not fresh.snapshot.tags.get(paper_id)


async def test_triages_tag_editor_shows_tags_changed_elsewhere_while_open(
    tmp_path: Path,
) -> None:
    """The tag editor opened from triage (`!` then `t`) follows the library as the main
    screen's does: a tag the CLI adds to its paper while it is open shows in its list, one
    the CLI removes goes, and saving keeps the CLI's tag and writes only the user's."""
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("exclamation_mark")
        await until(pilot, lambda: isinstance(app.screen, TriageScreen))
        triage = app.screen
        assert isinstance(triage, TriageScreen)
        paper_id = triage.current_id or ""
        app.library.add_tags([paper_id], ["gone"])
        app.main.refresh_library()
        await pilot.press("t")
        await until(pilot, lambda: isinstance(app.screen, TagEditor))
        await until(pilot, lambda: "#gone" in box_text(app))
        await pilot.press(*"mine", "enter")  # the user's own change, not saved yet
        await until(pilot, lambda: "#mine" in box_text(app))
        with Library(tmp_path / "lib.sqlite3") as cli:  # the CLI, while the editor is open
            cli.add_tags([paper_id], ["fromcli"])
            cli.remove_tags([paper_id], ["gone"])
        await until(pilot, lambda: "#fromcli" in box_text(app))
        await until(pilot, lambda: "#gone" not in box_text(app))
        assert "#mine" in box_text(app)  # kept
        await pilot.press("enter")  # Enter on the empty field saves
        await until(pilot, lambda: isinstance(app.screen, TriageScreen))
        await settle(app, pilot)
    with Library(tmp_path / "lib.sqlite3") as fresh:
        assert sorted(fresh.snapshot.tags[paper_id]) == ["fromcli", "mine"]


async def test_the_tag_list_follows_the_library_and_its_questions_say_what_d_does_now(
    tmp_path: Path,
) -> None:
    """`T` shows the tags as stored now while it is open, the cursor on the same tag: "d
    again" counts the papers the tag is on now (d removed it from more papers than it
    said), and a rename of a tag removed elsewhere is taken back, said."""
    from abstract_reader.tui.screens.pickers import TagList

    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        ids = [p.id for p in app.session.corpus.papers[:6]]
        app.library.add_tags(ids[:2], ["alpha"])
        app.library.add_tags(ids[2:3], ["beta"])
        app.main.refresh_library()
        await pilot.press("T")
        await until(pilot, lambda: isinstance(app.screen, TagList))
        await pilot.press("down", "d")  # beta
        await until(pilot, lambda: "remove #beta from 1 paper." in box_text(app))
        with Library(tmp_path / "lib.sqlite3") as cli:
            cli.add_tags(ids[3:6], ["Aardvark"])  # a new first row
            cli.add_tags(ids[3:6], ["gamma"])
            cli.add_tags(ids[3:5], ["beta"])
        await until(pilot, lambda: "#gamma" in box_text(app) and "#Aardvark" in box_text(app))
        await until(pilot, lambda: "remove #beta from 3 papers." in box_text(app))
        await pilot.press("d")  # from the 3 papers it said
        await until(pilot, lambda: not app.screen.is_modal)
        assert app.library.tag_counts() == [("Aardvark", 3), ("alpha", 2), ("gamma", 3)]

        await pilot.press("T", "down", "down", "r")  # renaming gamma ...
        await until(pilot, lambda: "Enter: rename" in box_text(app))
        with Library(tmp_path / "lib.sqlite3") as cli:
            cli.delete_tag("gamma")  # ... which another process removes meanwhile
        await until(pilot, lambda: "#gamma is on no paper now" in box_text(app))
        await pilot.press("enter")  # on the list again, the cursor on its last row
        await until(pilot, lambda: not app.screen.is_modal)
        assert app.library.tag_counts() == [("Aardvark", 3), ("alpha", 2)]
        assert app.session.query_text == "#alpha"

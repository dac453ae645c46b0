"""The tag editor's completions follow the library while it is open, as its list of tags
does (``test_tags_follow_library.py``): a tag another process (the CLI's
`abstract-reader tag`, another reader) creates is offered as soon as the reader has seen it,
by Tab and by the field's suggestion; a tag that no longer exists anywhere is offered no
more. (They were the tag names read when the editor opened.)"""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input

from abstract_reader.library import Library
from abstract_reader.tui.screens.editors import TagEditor
from abstract_reader.tui.widgets.paper_list import PaperList

from .conftest import make_app, settle, until
from .test_dialogs_small import box_text

SIZE = (120, 40)


async def test_a_tag_created_elsewhere_while_the_editor_is_open_is_offered(
    tmp_path: Path,
) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        other = app.query_one(PaperList).source.paper(1).id  # (not the edited paper)
        await pilot.press("t")
        await until(pilot, lambda: isinstance(app.screen, TagEditor))
        field = app.screen.query_one("#tag-input", Input)
        await pilot.press(*"zeb")
        await until(pilot, lambda: field.value == "zeb")
        with Library(tmp_path / "lib.sqlite3") as cli:  # the CLI, while the editor is open
            cli.add_tags([other], ["zebracli"])
        await until(pilot, lambda: "zebracli" in app.library.snapshot.tag_names)
        # the suggestion for what is typed already, then Tab's completion
        await until(pilot, lambda: "zebracli" in box_text(app))
        await pilot.press("tab")
        assert field.value == "zebracli"
        # and for a prefix typed afresh
        await pilot.press(*["backspace"] * 8, *"ze")
        await until(pilot, lambda: field.value == "ze")
        await pilot.press("tab")
        assert field.value == "zebracli"


async def test_a_tag_gone_from_every_paper_while_the_editor_is_open_is_not_offered(
    tmp_path: Path,
) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        other = app.query_one(PaperList).source.paper(1).id
        app.library.add_tags([other], ["quokka"])
        app.main.refresh_library()
        await pilot.press("t")
        await until(pilot, lambda: isinstance(app.screen, TagEditor))
        field = app.screen.query_one("#tag-input", Input)
        await pilot.press(*"quo")
        await until(pilot, lambda: "quokka" in box_text(app))  # suggested, while it exists
        with Library(tmp_path / "lib.sqlite3") as cli:
            cli.remove_tags([other], ["quokka"])  # its only paper: the tag is gone
        await until(pilot, lambda: "quokka" not in app.library.snapshot.tag_names)
        await until(pilot, lambda: "quokka" not in box_text(app))  # its suggestion gone
        await pilot.press("tab", "right")  # neither completes it
        assert field.value == "quo"
        await pilot.press("enter")  # added as typed, not as a vanished name
        await until(pilot, lambda: "#quo" in box_text(app))
        assert "quokka" not in box_text(app)

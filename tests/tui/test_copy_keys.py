"""`c` and `C` copy what `abstract-reader cite` prints for the same papers: the default format,
and BibTeX with abstract and keywords (the tags) when the library's ``cite_abstract`` is on.

What the copy chain is asked to copy is captured at its first step (the system clipboard
tool), which says it worked."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from abstract_reader.cite import format_records
from abstract_reader.clipboard import CopyResult
from abstract_reader.tui.screens.pickers import CitePicker

from .conftest import make_app, settle, until

WIDE = (120, 40)


@pytest.fixture
def copied(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts the reader copies (a system clipboard tool that always works)."""
    texts: list[str] = []

    def tool(text: str) -> CopyResult:
        texts.append(text)
        return CopyResult(True, "test clipboard")

    monkeypatch.setattr("abstract_reader.clipboard.copy_with_system_tool", tool)
    return texts


@pytest.mark.parametrize("setting", ["on", "off", None])
async def test_c_and_capital_c_honour_cite_abstract(
    tmp_path: Path, copied: list[str], setting: str | None
) -> None:
    """With `cite_abstract = on` `cite` (and `export`, and the reader's export dialog) gave
    BibTeX with the abstract and the tags as keywords, while `c`, `C`'s preview and what `C`
    copied left them out."""
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        paper = app.main.current_paper()
        assert paper is not None
        app.library.add_tags([paper.id], ["robust-reading"])
        if setting is not None:
            app.library.set_setting("cite_abstract", setting)
        await settle(app, pilot)
        record = app.session.record(paper)
        with_abstract = setting == "on"
        expected = format_records([record], "bibtex", with_abstract=with_abstract)
        assert ("abstract  = {" in expected) == with_abstract  # (the two differ)
        assert ("robust-reading" in expected) == with_abstract

        await pilot.press("c")
        await until(pilot, lambda: len(copied) == 1)
        assert copied[0] == expected

        await pilot.press("C")
        await until(pilot, lambda: isinstance(app.screen, CitePicker))
        preview = app.screen.query_one("#cite-preview", Static)
        await until(pilot, lambda: str(preview.render()).strip() == expected.strip())
        await pilot.press("enter")
        await until(pilot, lambda: len(copied) == 2)
        assert copied[1] == expected
        # the other formats have no abstract field: the setting changes BibTeX only
        await pilot.press("C")
        await until(pilot, lambda: isinstance(app.screen, CitePicker))
        await pilot.press("down", "enter")  # text
        await until(pilot, lambda: len(copied) == 3)
        assert copied[2] == format_records([record], "text")


async def test_j_and_k_move_in_the_citation_formats_as_in_the_list(
    tmp_path: Path, copied: list[str]
) -> None:
    """QA: `C j Enter` copied BibTeX (j did nothing in the formats); the reader's list moves
    with j / k, so its dialogs' lists do too."""
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        paper = app.main.current_paper()
        assert paper is not None
        record = app.session.record(paper)
        await pilot.press("C")
        await until(pilot, lambda: isinstance(app.screen, CitePicker))
        await pilot.press("j", "enter")
        await until(pilot, lambda: len(copied) == 1)
        assert copied[0] == format_records([record], "text")
        await pilot.press("C")
        await until(pilot, lambda: isinstance(app.screen, CitePicker))
        await pilot.press("j", "j", "k", "enter")
        await until(pilot, lambda: len(copied) == 2)
        assert copied[1] == format_records([record], "text")


async def test_a_remapped_dialog_list_key_moves_and_the_default_does_not(
    tmp_path: Path, copied: list[str]
) -> None:
    from abstract_reader.config import Config

    app = make_app(tmp_path, config=Config(keys={"dialog_list_down": ("ctrl+n",)}))
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        paper = app.main.current_paper()
        assert paper is not None
        record = app.session.record(paper)
        await pilot.press("C")
        await until(pilot, lambda: isinstance(app.screen, CitePicker))
        await pilot.press("j", "ctrl+n", "enter")  # j is no longer the formats' key
        await until(pilot, lambda: len(copied) == 1)
        assert copied[0] == format_records([record], "text")

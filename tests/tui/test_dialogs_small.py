"""Every dialog at 70×24: its hint is whole on screen (wrapped, never cut), what it says after
a key (a warning, a question) is on screen, and a notification leaves the status line alone.
Snapshots of each dialog at that size are in test_snapshots.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.screen import ModalScreen
from textual.widgets import Label

from abstract_reader.library import Library
from abstract_reader.tui.app import ReaderApp
from abstract_reader.tui.widgets.paper_list import PaperList

from .conftest import make_app, settle, until

SMALL = (70, 24)


def screen_text(app: ReaderApp) -> list[str]:
    """The characters on the terminal, line by line (what the compositor draws)."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


def _flat(text: str) -> str:
    return " ".join(text.split())


def box_text(app: ReaderApp) -> str:
    """The dialog's box as one line of words (wrapped lines joined), borders dropped."""
    box = app.screen.query_one(".modal-box")
    region = box.region
    lines = screen_text(app)[region.y : region.bottom]
    inner = [line[region.x + 1 : region.right - 1] for line in lines]
    return _flat(" ".join(inner))


def visible(app: ReaderApp, text: str) -> bool:
    return _flat(text) in box_text(app)


async def _with_tags(app: ReaderApp, count: int) -> None:
    paper_list = app.query_one(PaperList)
    ids = [paper_list.source.paper(i).id for i in range(count)]
    for n, paper_id in enumerate(ids):
        app.library.add_tags([paper_id], [f"topic-{n:02d}", "long-tag-name-for-the-list"])
    app.main.refresh_library()


# (keys that open it, keys that make it say something, what it then says)
DIALOGS: dict[str, tuple[list[str], list[str], str]] = {
    "tag editor": (["t"], [*"draft", "escape"], "Unsaved changes"),
    "bulk tag editor": (
        ["space", "space", "t"],
        ["x", "escape"],
        "Unsaved changes",
    ),
    "note editor": (["o"], [*"a note", "escape"], "Unsaved changes"),
    "metadata editor": (["e"], [*"A title", "escape"], "Unsaved changes"),
    "citation formats": (["C"], [], ""),
    "tag list": (["T"], ["d"], "Press d again"),
    "export": (["E"], ["ctrl+u", "enter"], "Give a file name"),
}


@pytest.mark.parametrize("name", list(DIALOGS))
async def test_the_dialog_fits_70x24(tmp_path: Path, name: str) -> None:
    opening, then, says = DIALOGS[name]
    app = make_app(tmp_path)
    async with app.run_test(size=SMALL) as pilot:
        await settle(app, pilot)
        await _with_tags(app, 12)  # a tag list and tag editors with something in them
        await pilot.press(*opening)
        await until(pilot, lambda: isinstance(app.screen, ModalScreen))
        await settle(app, pilot)
        for hint in app.screen.query(".modal-hint").results(Label):
            text = str(hint.render())
            assert visible(app, text), f"{name}: hint cut: {text!r} not in {box_text(app)!r}"
        focused = app.focused
        assert focused is not None and focused.region.bottom <= SMALL[1]
        if then:
            await pilot.press(*then)
            await pilot.pause()
            assert says in box_text(app), f"{name}: {says!r} not on screen"


async def test_the_note_conflict_dialog_fits_70x24(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=SMALL) as pilot:
        await settle(app, pilot)
        paper_id = app.query_one(PaperList).current_id or ""
        await pilot.press("o", *"mine")
        with Library(app.library.path) as other:
            other.set_note(paper_id, "theirs")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: "changed elsewhere" in box_text(app))
        assert visible(app, "m: keep mine · t: keep theirs · g: both, in the editor")
        await pilot.press("escape")
        await pilot.pause()
        assert "Choose m, t or g" in box_text(app)


async def _status_line_after_notify(pilot: Pilot[Any], app: ReaderApp) -> tuple[str, str]:
    status_y = app.main.query_one("#status").region.y
    before = screen_text(app)[status_y]
    app.notify("A notification long enough to reach the status line's end.", timeout=30)
    await until(pilot, lambda: any(t.region for t in app.screen.query("Toast")))
    await pilot.pause()
    assert any("A notification" in line for line in screen_text(app))  # on screen
    return before, screen_text(app)[status_y]


@pytest.mark.parametrize("size", [SMALL, (120, 40)])
async def test_a_notification_leaves_the_status_line_alone(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=size, notifications=True) as pilot:  # toasts drawn
        await settle(app, pilot)
        await pilot.press("space")  # a longer status: "… · 1 marked"
        await pilot.pause()
        before, after = await _status_line_after_notify(pilot, app)
        assert "1 marked" in before
        assert after == before


@pytest.mark.parametrize(
    ("name", "size"),
    [
        *(pytest.param(name, SMALL, id=f"{name}-70x24") for name in DIALOGS),
        pytest.param("citation formats", (120, 40), id="citation formats-120x40"),
    ],
)
async def test_a_notification_leaves_the_dialogs_hint_alone(
    tmp_path: Path, name: str, size: tuple[int, int]
) -> None:
    """A new user's first run says "Created a new library at …" for 15 s; a dialog opened
    meanwhile had that notification over the bottom of its box, where the hint is (at 70×24
    the right half of the tag editor's, note editor's, metadata editor's and citation
    picker's hints; at 120×40 the picker's "Esc: cancel"). Over a dialog notifications sit
    at the top: the hint is whole, the notification on screen once (not also at the bottom,
    left by the screen under the dialog), and back on the list when the dialog closes."""
    opening = DIALOGS[name][0]
    app = make_app(tmp_path, announce_new_library=True)
    said = "Created a new library at"

    def shown() -> int:
        return " ".join(screen_text(app)).count(said)

    async with app.run_test(size=size, notifications=True) as pilot:
        await settle(app, pilot)
        await until(pilot, lambda: shown() == 1)
        await _with_tags(app, 12)
        await pilot.press(*opening)
        await until(pilot, lambda: isinstance(app.screen, ModalScreen))
        await until(pilot, lambda: any(t.region for t in app.screen.query("Toast")))
        await settle(app, pilot)
        for hint in app.screen.query(".modal-hint").results(Label):
            text = str(hint.render())
            assert visible(app, text), f"{name}: hint hidden: {text!r} not in {box_text(app)!r}"
        assert shown() == 1, "\n".join(screen_text(app))
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, ModalScreen))
        await until(pilot, lambda: shown() == 1)


@pytest.mark.parametrize("size", [(40, 12), (50, 13)])
@pytest.mark.parametrize("bulk", [False, True], ids=["one paper", "marked papers"])
async def test_the_tag_editors_field_is_on_screen_when_tiny(
    tmp_path: Path, size: tuple[int, int], bulk: bool
) -> None:
    """At 40×12 the tag editor's title, current tags and captions filled its box and the
    field was below the box's edge: what was typed went in unseen (at 50×13 half of it
    showed). The box scrolls: the field is whole on screen and what is typed shows in it;
    ↑ goes to the current tags, which come into view with the tag just added."""
    app = make_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        await _with_tags(app, 2)
        await pilot.press(*(["space", "space", "t"] if bulk else ["t"]))
        await until(pilot, lambda: isinstance(app.screen, ModalScreen))
        await settle(app, pilot)
        field = app.screen.query_one("#tag-input")
        assert field.has_focus
        box = app.screen.query_one(".modal-box").region.shrink((1, 1, 1, 1))  # its border
        assert box.contains_region(field.region), (field.region, box)
        await pilot.press(*"draft")
        await until(pilot, lambda: "draft" in box_text(app))
        await pilot.press("enter", "up")
        await until(pilot, lambda: app.screen.query_one("#tag-current").has_focus)
        await until(pilot, lambda: "#draft" in box_text(app))


@pytest.mark.parametrize("size", [(40, 12), (50, 15)])
async def test_the_tag_lists_rename_field_and_question_are_on_screen_when_tiny(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """At 50×15 and 40×12 the tag list's list filled its box: r's rename field (below the
    list) was past the box's edge, the name typed into it unseen, and so was d's "Press d
    again to remove …". The box scrolls to show them."""
    app = make_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        await _with_tags(app, 12)
        await pilot.press("T")
        await until(pilot, lambda: isinstance(app.screen, ModalScreen))
        await settle(app, pilot)
        await pilot.press("r")
        field = app.screen.query_one("#tag-rename")
        await until(pilot, lambda: field.has_focus)
        box = app.screen.query_one(".modal-box").region.shrink((1, 1, 1, 1))  # its border
        await until(pilot, lambda: box.contains_region(field.region))
        await pilot.press("ctrl+u", *"fresh")
        await until(pilot, lambda: "fresh" in box_text(app))
        await pilot.press("escape", "d")
        await until(pilot, lambda: "Press d again" in box_text(app))


@pytest.mark.parametrize("size", [(40, 12), (50, 15)])
async def test_the_tag_lists_messages_are_whole_on_screen_when_tiny(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """At 40×12 the tag list's messages were cut at its box's edge: "Not renamed: a tag is at
    most 64 characters (70 given)" showed its first line only (the box scrolled to the
    message as it was before, empty), and the merge question, which named the existing tag
    twice, was taller than the box. Each is whole on screen, inside the box (a tag longer
    than the message's line cut there with "…": at 40×12, #distribution-shift-ben…)."""
    app = make_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        paper_list = app.query_one(PaperList)
        ids = [paper_list.source.paper(i).id for i in range(3)]
        app.library.add_tags(ids, ["robust-ensemble-methods"])
        app.library.add_tags(ids[:1], ["distribution-shift-benchmarks"])
        app.main.refresh_library()
        await pilot.press("T")
        await until(pilot, lambda: isinstance(app.screen, ModalScreen))
        await settle(app, pilot)

        message = app.screen.query_one("#taglist-message")

        async def said_whole(text: str) -> None:
            await until(pilot, lambda: _said_as(str(message.render()), text))
            said = str(message.render())
            await until(pilot, lambda: _flat(_shown_in(app, "#taglist-message")) == _flat(said))
            await until(pilot, lambda: _inside_the_box(app, "#taglist-message"))

        await pilot.press("r", "ctrl+u", *"x" * 70, "enter")
        await said_whole("Not renamed: a tag is at most 64 characters (70 given)")
        # (the first tag by name is highlighted)
        await pilot.press("ctrl+u", *"Robust-Ensemble-Methods", "enter")
        await said_whole(
            "#robust-ensemble-methods exists (3 papers). Enter again merges"
            " #distribution-shift-benchmarks into it (its papers get that tag); Esc cancels."
        )
        await pilot.press("escape", "d")
        await said_whole("Press d again to remove #distribution-shift-benchmarks from 1 paper.")
        assert app.library.tag_counts() == [
            ("distribution-shift-benchmarks", 1),
            ("robust-ensemble-methods", 3),
        ]


@pytest.mark.parametrize("size", [(40, 12), (50, 15)])
async def test_the_merge_question_about_long_tags_is_whole_on_screen_when_tiny(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """With tags near the 64-character limit the merge question, naming both, was taller
    than the tag list's box at 40×12 (its start or its keys cut off whatever the scroll).
    A tag longer than the message's line is cut there with "…" (the whole names are in the
    list and the field): all that is said, keys included, is inside the box."""
    existing = "robust-ensemble-methods-for-distribution-shift-in-vision-models"
    renamed = "distribution-shift-benchmarks-for-robust-ensembles-and-vision-xy"
    assert len(existing) == 63 and len(renamed) == 64
    app = make_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        paper_list = app.query_one(PaperList)
        ids = [paper_list.source.paper(i).id for i in range(3)]
        app.library.add_tags(ids, [existing])
        app.library.add_tags(ids[:1], [renamed])
        app.main.refresh_library()
        await pilot.press("T")
        await until(pilot, lambda: isinstance(app.screen, ModalScreen))
        await settle(app, pilot)
        # (the first tag by name is highlighted: the one to rename)
        await pilot.press("r", "ctrl+u", *existing.upper(), "enter")
        message = app.screen.query_one("#taglist-message")
        await until(pilot, lambda: "Enter again merges" in str(message.render()))
        said = str(message.render())
        assert said.startswith("#robust-") and "exists (3 papers)" in said
        assert said.endswith("into it (its papers get that tag); Esc cancels.")

        def unspaced(text: str) -> str:
            return "".join(text.split())

        await until(pilot, lambda: unspaced(_shown_in(app, "#taglist-message")) == unspaced(said))
        await until(pilot, lambda: _inside_the_box(app, "#taglist-message"))
        await pilot.press("enter")  # the question works: merged
        await until(pilot, lambda: not isinstance(app.screen, ModalScreen))
        await until(pilot, lambda: app.library.tag_counts() == [(existing, 3)])


@pytest.mark.parametrize("size", [(40, 12), (50, 15)])
async def test_the_citation_pickers_formats_are_on_screen_when_tiny(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """At 40×12 the citation picker's title and hint left its formats one row, their list's
    top border: no format showed (at 50×15, two). Three show, the box scrolled to them, and
    the highlight moves among them where it is seen."""
    app = make_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        await pilot.press("C")
        await until(pilot, lambda: isinstance(app.screen, ModalScreen))
        formats = app.screen.query_one("#cite-formats")
        await until(pilot, lambda: formats.has_focus)
        await until(
            pilot,
            lambda: all(f in box_text(app) for f in ("BibTeX (default)", "plain text", "Markdown")),
        )
        box = app.screen.query_one(".modal-box").region.shrink((1, 1, 1, 1))  # its border
        assert box.contains_region(formats.region), (formats.region, box)


@pytest.mark.parametrize("size", [(60, 20), (70, 24), (40, 12)])
async def test_the_citation_preview_takes_the_boxs_width_when_narrow(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """At 60×20 the preview beside the formats was 17 columns wide (a BibTeX line in three
    pieces). Under the narrow width the formats are above the preview, which has the box's
    width; each format still changes it."""
    app = make_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        await pilot.press("C")
        await until(pilot, lambda: isinstance(app.screen, ModalScreen))
        formats = app.screen.query_one("#cite-formats")
        preview = app.screen.query_one("#cite-preview")
        await until(pilot, lambda: formats.has_focus and bool(preview.region))
        box = app.screen.query_one(".modal-box").region.shrink((1, 1, 1, 1))
        assert preview.region.width >= box.width * 2 // 3, (preview.region, box)
        assert preview.region.y > formats.region.bottom - 1  # below the formats
        assert box.contains_region(formats.region)
        await pilot.press("down")  # plain text
        await until(pilot, lambda: "@" not in str(preview.render()))


async def test_the_citation_preview_stays_beside_the_formats_when_wide(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("C")
        await until(pilot, lambda: isinstance(app.screen, ModalScreen))
        formats = app.screen.query_one("#cite-formats")
        preview = app.screen.query_one("#cite-preview")
        await until(pilot, lambda: formats.has_focus and bool(preview.region))
        assert preview.region.x > formats.region.right - 1 and preview.region.y == formats.region.y
        assert preview.region.width > 70


def _said_as(said: str, expected: str) -> bool:
    """``said`` is ``expected`` word for word, but for tags (#…) cut with "…" at the end of
    the message's line."""
    words, expected_words = said.split(), expected.split()
    return len(words) == len(expected_words) and all(
        word == whole
        or (word.startswith("#") and word.endswith("…") and whole.startswith(word[:-1]))
        for word, whole in zip(words, expected_words, strict=True)
    )


def _inside_the_box(app: ReaderApp, selector: str) -> bool:
    """The widget is whole inside the dialog's box (within its border), so on screen."""
    box = app.screen.query_one(".modal-box").region.shrink((1, 1, 1, 1))  # its border
    region = app.screen.query_one(selector).region
    return bool(region) and box.contains_region(region)


def _shown_in(app: ReaderApp, selector: str) -> str:
    """What the screen shows where the widget is, as one line of words (the box's text has
    its scrollbar's glyphs in it)."""
    region = app.screen.query_one(selector).region
    lines = screen_text(app)[region.y : region.bottom]
    return _flat(" ".join(line[region.x : region.right] for line in lines))


@pytest.mark.parametrize("size", [(40, 12), (50, 15)])
async def test_the_note_editors_unsaved_warning_is_on_screen_when_tiny(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """At 50×15 and 40×12 the note editor's text area filled its box and the first Esc's
    "Unsaved changes: Esc again drops them" was below the box's edge: the first Esc seemed
    to do nothing, and a second one dropped the note unannounced. The box scrolls to the
    warning; the text area (at least 4 lines of text) is whole in view while typing, and
    typing after the warning takes it back (the next Esc asks again)."""
    app = make_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        paper_id = app.query_one(PaperList).current_id or ""
        await pilot.press("o")
        await until(pilot, lambda: isinstance(app.screen, ModalScreen))
        area = app.screen.query_one("#note-text")
        await until(pilot, lambda: area.has_focus and _inside_the_box(app, "#note-text"))
        assert area.scrollable_content_region.height >= 4  # lines of text shown
        await pilot.press(*"a note")
        await until(pilot, lambda: "a note" in box_text(app))
        await pilot.press("escape")
        said = "Unsaved changes: Esc again drops them, ctrl+s saves."
        await until(pilot, lambda: _shown_in(app, "#note-message") == said)
        assert _inside_the_box(app, "#note-message")
        await pilot.press(*" more")  # back to the text: in view, and the question taken back
        await until(pilot, lambda: "a note more" in box_text(app))
        assert _inside_the_box(app, "#note-text")
        assert "Unsaved changes" not in box_text(app)
        await pilot.press("escape")
        await until(pilot, lambda: _shown_in(app, "#note-message") == said)
        assert _inside_the_box(app, "#note-message")
        assert isinstance(app.screen, ModalScreen)  # asked again, not dropped
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, ModalScreen))
        assert paper_id not in app.library.snapshot.notes


@pytest.mark.parametrize("size", [(40, 12), (50, 15)])
async def test_the_metadata_editors_fields_and_warning_are_on_screen_when_tiny(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """At 40×12 the metadata editor showed its title field only (the title from the abstract,
    wrapped below it, took the rest): Tab went to fields below the box's edge, typed into
    unseen, and the first Esc's "Unsaved changes" was below it too (at 50×15 the warning).
    The box scrolls: to the focused field, and to the warning."""
    app = make_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, ModalScreen))
        await until(pilot, lambda: app.screen.query_one("#meta-title").has_focus)
        await pilot.press(*"A title", "tab")
        await until(pilot, lambda: app.screen.query_one("#meta-authors").has_focus)
        await pilot.press(*"Ada")
        await until(pilot, lambda: _shown_in(app, "#meta-authors") == "Ada")
        assert _inside_the_box(app, "#meta-authors")
        await pilot.press("escape")
        said = "Unsaved changes: Esc again drops them, ctrl+s saves."
        await until(pilot, lambda: _shown_in(app, "#meta-error") == said)
        assert _inside_the_box(app, "#meta-error")


@pytest.mark.parametrize("size", [(40, 12), (50, 15)])
async def test_the_export_dialogs_field_and_messages_are_on_screen_when_tiny(
    tmp_path: Path, size: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """At 40×12 what the export dialog says below its fields was past the box's edge: Enter
    on an existing file asked "Overwrite papers.bib? y/n" unseen (Enter again did nothing,
    Esc answered no), and "Give a file name" and "Not exported" were not seen either. The
    box scrolls to what is said, and opens with the file name field in view."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "papers.bib").write_text("mine\n", encoding="utf-8")
    app = make_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        await pilot.press("E")
        await until(pilot, lambda: isinstance(app.screen, ModalScreen))
        field = app.screen.query_one("#export-path")
        await until(pilot, lambda: field.has_focus and _inside_the_box(app, "#export-path"))
        await pilot.press("enter")
        await until(pilot, lambda: _shown_in(app, "#export-message") == "Overwrite papers.bib? y/n")
        assert _inside_the_box(app, "#export-message")
        await pilot.press("n")
        await until(pilot, lambda: _shown_in(app, "#export-message").endswith("is unchanged."))
        assert _inside_the_box(app, "#export-message")
        assert _shown_in(app, "#export-message").startswith("Not exported;")
        await pilot.press("ctrl+u", "enter")
        await until(
            pilot, lambda: _shown_in(app, "#export-message") == "Give a file name to export to."
        )
        assert _inside_the_box(app, "#export-message")
        assert (tmp_path / "papers.bib").read_text(encoding="utf-8") == "mine\n"

"""The reader, driven with real keys through Pilot."""

from __future__ import annotations

from pathlib import Path
from xml.etree import ElementTree

from textual.widgets import Input, OptionList, Static, TextArea

from abstract_reader.corpus import Corpus
from abstract_reader.library import Library
from abstract_reader.tui.screens.editors import MetadataEditor, NoteEditor, TagEditor
from abstract_reader.tui.screens.help import HelpScreen
from abstract_reader.tui.screens.paper import PaperScreen
from abstract_reader.tui.screens.pickers import CitePicker, CopyFallback, TagList
from abstract_reader.tui.widgets.paper_list import PaperList
from abstract_reader.tui.widgets.paper_view import PaperView

from ..conftest import SEEDS, paper_with, read_clipboard_when, write_dump
from .conftest import (
    current_title,
    list_lines,
    listed,
    make_app,
    run_palette_command,
    settle,
    type_filter,
    until,
    view_text,
)

WIDE = (140, 40)


async def test_opens_on_the_bundled_dumps(tmp_path: Path, seeds: Corpus) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        assert len(listed(app)) == 55
        assert app.query_one(PaperList).has_focus
        status = str(app.query_one("#status").render())
        assert "55 papers" in status and "55 unread" in status and "0 bookmarked" in status
        first = seeds.papers[0]
        assert first.title in view_text(app) and "derived title" in view_text(app)
        assert "μ̂" in view_text(app)  # math rendered in the view
        assert any(first.title[:30] in line for line in list_lines(app))


async def test_moving_with_keys(tmp_path: Path, seeds: Corpus) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        paper_list = app.query_one(PaperList)
        await pilot.press("j", "j", "down")
        assert paper_list.cursor == 3
        assert current_title(app) == seeds.papers[3].title
        assert seeds.papers[3].title in view_text(app)
        await pilot.press("k", "up")
        assert paper_list.cursor == 1
        await pilot.press("G")
        assert paper_list.cursor == 54
        await pilot.press("g")
        assert paper_list.cursor == 0
        await pilot.press("end")
        assert paper_list.cursor == 54
        await pilot.press("home", "pagedown")
        page = paper_list.cursor
        assert page > 10
        await pilot.press("pageup")
        assert paper_list.cursor == 0
        await pilot.press("pagedown", "pagedown")
        assert paper_list.cursor == 54  # clamped at the end
        await pilot.press("G")  # the cursor row is scrolled into view
        assert any(seeds.papers[54].title[:20] in line for line in list_lines(app))


async def test_mouse_click_selects_a_row(tmp_path: Path, seeds: Corpus) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await pilot.click(PaperList, offset=(10, 4))
        assert app.query_one(PaperList).cursor == 4
        assert current_title(app) == seeds.papers[4].title


async def test_live_filter_narrows_highlights_and_clears(tmp_path: Path, seeds: Corpus) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await type_filter(app, pilot, "satisficing")
        rse = paper_with(seeds, "Robust Satisficing Ensemble (RSE)")
        assert listed(app) == [rse.title]
        assert "1 of 55" in str(app.query_one("#status").render())
        row = app.query_one(PaperList).source.row(0)
        assert [rse.title[s:e].lower() for s, e in row.spans] == ["satisficing"]
        details = app.query_one(PaperView).details
        assert details is not None and details.body_spans
        body = details.body.text
        assert all(body[s:e].lower().startswith("satisfic") for s, e in details.body_spans)
        # Esc leaves the filter for the list; Esc again clears the filter
        await pilot.press("escape")
        assert app.query_one(PaperList).has_focus
        await pilot.press("escape")
        await settle(app, pilot)
        assert app.query_one("#filter", Input).value == ""
        assert len(listed(app)) == 55
        assert current_title(app) == rse.title  # the cursor kept its paper


async def test_typo_filter_and_prefix_while_typing(tmp_path: Path, seeds: Corpus) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await type_filter(app, pilot, "starcra")
        assert listed(app) == [paper_with(seeds, "StarCraft Motion").title]
        await pilot.press("backspace", "backspace", "backspace", "backspace", "backspace")
        await settle(app, pilot)
        assert len(listed(app)) > 1  # "st" matches many


async def test_cursor_keeps_its_paper_when_it_still_matches(tmp_path: Path, seeds: Corpus) -> None:
    rse = paper_with(seeds, "Robust Satisficing Ensemble (RSE)")
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await type_filter(app, pilot, "robust")
        await pilot.press("enter", "g")
        for _ in range(len(listed(app))):  # walk down to RSE with the keyboard
            if current_title(app) == rse.title:
                break
            await pilot.press("j")
        assert current_title(app) == rse.title
        await type_filter(app, pilot, " ensemble")  # narrower: RSE is still in it
        assert len(listed(app)) < 17
        assert current_title(app) == rse.title


async def test_single_letter_keys_never_reach_the_filter(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await pilot.press("b", "j", "r")
        assert app.query_one("#filter", Input).value == ""
        assert len(app.library.snapshot.bookmarks) == 1
        # in the filter, letters are text: q does not quit, b does not bookmark
        await type_filter(app, pilot, "qb")
        assert app.is_running
        assert app.query_one("#filter", Input).value == "qb"
        assert len(app.library.snapshot.bookmarks) == 1


async def test_narrow_layout_and_live_resize(tmp_path: Path, seeds: Corpus) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 30)) as pilot:
        await settle(app, pilot)
        view = app.query_one(PaperView)
        assert not view.display or view.size.width == 0
        assert app.query_one(PaperList).size.width >= 78
        await pilot.press("j", "enter")
        assert isinstance(app.screen, PaperScreen)
        await pilot.pause()
        full = app.screen.query_one(PaperView)
        assert full.details is not None and full.details.title == seeds.papers[1].title
        # and a person can actually see it
        assert full.display and full.size.width >= 70 and full.size.height > 10
        header = full.header.plain
        assert seeds.papers[1].title[:30] in header
        await pilot.press("escape")
        assert not isinstance(app.screen, PaperScreen)
        await pilot.resize_terminal(*WIDE)
        await pilot.pause()
        assert app.query_one(PaperView).size.width > 40
        await pilot.resize_terminal(80, 30)
        await pilot.pause()
        assert app.query_one(PaperView).size.width == 0


async def test_space_pages_the_paper_view(tmp_path: Path) -> None:
    long_text = " ".join(f"sentence {n} about long abstracts." for n in range(400))
    dump = write_dump(tmp_path / "long.txt", long_text)
    app = make_app(tmp_path, [dump])
    async with app.run_test(size=(120, 20)) as pilot:
        await settle(app, pilot)
        await pilot.press("enter")
        view = app.query_one(PaperView)
        assert view.has_focus
        await pilot.press("space")
        await pilot.pause()
        first = view.scroll_y
        assert first > 0
        await pilot.press("space")
        await pilot.pause()
        assert view.scroll_y > first


async def test_help_screen(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        text = str(app.screen.query_one("#help-text").render())
        for phrase in ("next / previous unread", "bookmark", "'word", "#tag", "command palette"):
            assert phrase in text
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


async def test_command_palette_runs_actions(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await run_palette_command(app, pilot, "bookmark")
        await until(pilot, lambda: len(app.library.snapshot.bookmarks) == 1)
        assert "1 bookmarked" in str(app.query_one("#status").render())


async def test_empty_states(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    app = make_app(tmp_path, [empty])
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        assert "No dumps loaded" in "\n".join(list_lines(app))
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await type_filter(app, pilot, "zzqqxx")
        text = "\n".join(list_lines(app))
        assert "No paper matches zzqqxx" in text and "Esc clears" in text
        assert "0 of 55" in str(app.query_one("#status").render())


async def test_load_errors_are_notified_and_good_files_open(tmp_path: Path) -> None:
    missing = tmp_path / "missing.txt"
    app = make_app(tmp_path, [missing, SEEDS])
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        assert len(listed(app)) == 55
        messages = [n.message for n in app._notifications]
        assert any(str(missing) in m and "no such file" in m for m in messages)
        assert "1 load error" in str(app.query_one("#status").render())


PAYLOADS = [
    "\x1b]52;c;ZXZpbA==\x07",
    "\x1b[2J",
    "[@click=app.quit]x[/]",
    "[/]",
    "[link='file:///etc/passwd']x[/]",
    "a[i] = b[j]",
]


async def test_injection_payloads_show_as_harmless_text(tmp_path: Path) -> None:
    abstracts = [
        f"We propose Evil{n}, a payload {p} inside an abstract." for n, p in enumerate(PAYLOADS)
    ]
    dump = write_dump(tmp_path / "evil.txt", *abstracts, header="[bold]Evil[/] 2026 Papers")
    app = make_app(tmp_path, [dump])
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        assert len(listed(app)) == len(PAYLOADS)
        for n in range(len(PAYLOADS)):
            app.query_one(PaperList).cursor = n
            await pilot.pause()
            text = view_text(app)
            screen = "\n".join(list_lines(app))
            assert "\x1b" not in text and "\x1b" not in screen and "\x07" not in text
            if "[" in PAYLOADS[n] and "\x1b" not in PAYLOADS[n]:
                assert PAYLOADS[n] in text  # shown literally, not parsed as markup
        await type_filter(app, pilot, "click")
        await pilot.press("enter")
        assert app.is_running
        # every modal that shows dump text
        await pilot.press("t")
        assert isinstance(app.screen, TagEditor)
        await pilot.press("escape", "C")
        assert isinstance(app.screen, CitePicker)
        preview = str(app.screen.query_one("#cite-preview").render())
        assert "[@click=app" in preview and "[bold]Evil[/]" in preview and "\x1b" not in preview
        await pilot.press("escape")
        svg = app.export_screenshot()
        assert "\x1b" not in svg
        ElementTree.fromstring(svg)  # well-formed XML
        assert app.is_running


async def test_bookmark_read_and_status(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await pilot.press("b")
        paper_id = app.query_one(PaperList).current_id
        assert paper_id in app.library.snapshot.bookmarks
        assert app.query_one(PaperList).source.row(0).bookmarked
        assert "★ bookmarked" in view_text(app)
        assert "1 bookmarked" in str(app.query_one("#status").render())
        await pilot.press("r")
        assert paper_id in app.library.snapshot.read
        assert "54 unread" in str(app.query_one("#status").render())
        await pilot.press("r", "b")
        assert paper_id not in app.library.snapshot.read
        assert paper_id not in app.library.snapshot.bookmarks
    # saved: a new library on the same file sees nothing left over, then a kept bookmark
    with Library(tmp_path / "lib.sqlite3") as lib:
        assert not lib.snapshot.bookmarks


async def test_auto_read_after_a_moment_and_next_unread(tmp_path: Path) -> None:
    app = make_app(tmp_path, read_delay=0.05)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        first = app.query_one(PaperList).current_id
        await pilot.press("j")  # a key of the user brings the second paper into view
        second = app.query_one(PaperList).current_id
        await until(pilot, lambda: second in app.library.snapshot.read)
        assert first not in app.library.snapshot.read  # shown at start-up only: not read
        app.library.set_read([app.session.corpus.papers[2].id])
        app.library.set_setting("auto_read", "off")
        await pilot.press("n")
        assert app.query_one(PaperList).cursor == 3  # skipped the read ones
        await pilot.press("N")
        assert app.query_one(PaperList).cursor == 0  # the first paper is still unread
        await pilot.press("n")
        assert app.query_one(PaperList).cursor == 3
        assert app.main._read_timer is None  # auto-read is off: nothing will mark it read
        assert app.session.corpus.papers[3].id not in app.library.snapshot.read


async def test_tag_editor_with_completion(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    app.library.add_tags(["0" * 16], ["reinforcement", "robustness"])
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await pilot.press("t")
        assert isinstance(app.screen, TagEditor)
        await pilot.press("r", "e", "i", "tab")  # completes to an existing tag
        assert app.screen.query_one("#tag-input", Input).value == "reinforcement"
        await pilot.press("enter")
        await pilot.press(*"to-read", "enter")
        assert app.screen.tags == ["reinforcement", "to-read"]
        await pilot.press("enter")  # empty input: save
        await pilot.pause()
        paper_id = app.query_one(PaperList).current_id
        assert app.library.snapshot.tags[paper_id] == ["reinforcement", "to-read"]
        assert "#reinforcement #to-read" in view_text(app)
        # remove one, cancel changes with Esc: the first Esc asks, the second drops them
        await pilot.press("t", "shift+tab", "end", "delete")
        assert app.screen.tags == ["reinforcement"]
        await pilot.press("escape")
        assert isinstance(app.screen, TagEditor)
        assert "Unsaved changes" in str(app.screen.query_one("#tag-error").render())
        await pilot.press("escape")
        assert not isinstance(app.screen, TagEditor)
        assert app.library.snapshot.tags[paper_id] == ["reinforcement", "to-read"]
        await pilot.press("t", "shift+tab", "end", "delete", "tab", "enter")
        await pilot.pause()
        assert app.library.snapshot.tags[paper_id] == ["reinforcement"]


async def test_bulk_marks_apply_to_all(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await pilot.press("space", "space")
        ids = {app.session.corpus.papers[0].id, app.session.corpus.papers[1].id}
        assert app.session.marks == ids
        assert "2 marked" in str(app.query_one("#status").render())
        await pilot.press("b")
        assert set(app.library.snapshot.bookmarks) == ids
        await pilot.press("r")
        assert set(app.library.snapshot.read) == ids
        await pilot.press("t", *"batch", "enter", "enter")
        await pilot.pause()
        assert all(app.library.snapshot.tags.get(i) == ["batch"] for i in ids)
        await pilot.press("escape")  # clears the marks
        assert not app.session.marks


async def test_metadata_editor_changes_title_everywhere(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await pilot.press("e")
        assert isinstance(app.screen, MetadataEditor)
        await pilot.press(*"Zanzibar Estimators", "tab", *"Ada Lovelace; Alan Turing", "enter")
        await pilot.pause()
        assert listed(app)[0] == "Zanzibar Estimators"
        assert "Ada Lovelace, Alan Turing" in view_text(app)
        assert "derived title" not in view_text(app)
        await type_filter(app, pilot, "^zanzibar")
        assert listed(app) == ["Zanzibar Estimators"]


async def test_metadata_editor_stores_a_doi_as_the_cli_does(tmp_path: Path) -> None:
    """A DOI typed in the editor is checked and stored as `meta --doi` stores it: what is
    not a DOI is refused with the reason (the dialog stays, nothing is saved), a DOI link is
    stored as the bare DOI that citations and the CLI use."""
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        paper_id = app.query_one(PaperList).current_id
        assert paper_id is not None
        await pilot.press("e", "tab", "tab", "tab", *"banana", "enter")
        await pilot.pause()
        assert isinstance(app.screen, MetadataEditor)  # not saved: the reason is shown
        error = str(app.screen.query_one("#meta-error", Static).render())
        assert "'banana' is not a DOI" in error
        assert paper_id not in app.library.snapshot.metadata
        await pilot.press("ctrl+u", *"https://doi.org/10.1234/ABC.def", "enter")
        await until(pilot, lambda: not isinstance(app.screen, MetadataEditor))
        assert app.library.snapshot.metadata[paper_id].doi == "10.1234/ABC.def"
        assert "10.1234/ABC.def" in view_text(app)


async def test_note_editor_saves_on_ctrl_s(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await pilot.press("o")
        assert isinstance(app.screen, NoteEditor)
        await pilot.press(*"check lemma 2", "enter", *"and the appendix")
        await pilot.press("ctrl+s")
        await pilot.pause()
        paper_id = app.query_one(PaperList).current_id
        assert app.library.snapshot.notes[paper_id] == "check lemma 2\nand the appendix"
        assert "check lemma 2" in view_text(app)


async def test_tag_list_filters_to_a_tag(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        app.library.add_tags(
            [app.session.corpus.papers[3].id, app.session.corpus.papers[7].id], ["theory"]
        )
        await pilot.press("T")
        assert isinstance(app.screen, TagList)
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.query_one("#filter", Input).value == "#theory"
        assert listed(app) == [
            app.session.corpus.papers[3].title,
            app.session.corpus.papers[7].title,
        ]


async def test_tag_list_shows_a_tag_with_a_space_as_one_tag(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        paper = app.session.corpus.papers[5]
        app.library.add_tags([paper.id], ["reading list"])
        await pilot.press("T")
        assert isinstance(app.screen, TagList)
        options = app.screen.query_one("#taglist", OptionList)
        label = str(options.get_option_at_index(0).prompt)
        assert label.split()[-2:] == ['#"reading', 'list"'], label  # as the rows show it
        await pilot.press("d")
        message = str(app.screen.query_one("#taglist-message", Static).render())
        assert '#"reading list"' in message
        await pilot.press("escape")
        await pilot.press("T", "enter")
        await settle(app, pilot)
        assert listed(app) == [paper.title]


async def test_copy_without_any_clipboard_shows_the_text(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await pilot.press("c")
        await settle(app, pilot)
        assert isinstance(app.screen, CopyFallback)
        text = app.screen.query_one("#copy-text", TextArea).text
        assert text.startswith("@inproceedings{neurips2026")
        assert "no clipboard tool" in str(app.screen.query_one("#copy-reason").render())


async def test_cite_picker_previews_and_sets_default(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("DISPLAY", raising=False)
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await pilot.press("space", "space", "C")
        assert isinstance(app.screen, CitePicker)
        preview = lambda: str(app.screen.query_one("#cite-preview").render())  # noqa: E731
        assert preview().count("@inproceedings") == 2  # both marked papers
        await pilot.press("down")
        assert "[abstract-reader:" in preview() and "@inproceedings" not in preview()
        await pilot.press("down")
        assert preview().startswith("- ")
        await pilot.press("d")  # copy as Markdown and make it the default
        await settle(app, pilot)
        assert app.library.setting("cite_format") == "markdown"
        assert isinstance(app.screen, CopyFallback)  # headless, no display: shown instead
        assert app.screen.query_one("#copy-text", TextArea).text.count("\n- ") == 1


async def test_restores_filter_cursor_and_theme(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await pilot.press("j", "j", "j", "j")
        kept = current_title(app)
        app.theme = "nord"
        await pilot.press("q")
    again = make_app(tmp_path)
    async with again.run_test(size=WIDE) as pilot:
        await settle(again, pilot)
        assert current_title(again) == kept
        assert again.theme == "nord"
    filtered = make_app(tmp_path)
    async with filtered.run_test(size=WIDE) as pilot:
        await settle(filtered, pilot)
        await type_filter(filtered, pilot, "spiking")
        await pilot.press("enter", "j")  # the second of the two results
        kept = current_title(filtered)
        await pilot.press("q")
    restored = make_app(tmp_path)
    async with restored.run_test(size=WIDE) as pilot:
        await settle(restored, pilot)
        assert restored.query_one("#filter", Input).value == "spiking"
        assert len(listed(restored)) == 2
        assert current_title(restored) == kept
    other_dumps = make_app(tmp_path, [write_dump(tmp_path / "o.txt", "Another abstract here.")])
    async with other_dumps.run_test(size=WIDE) as pilot:  # the saved paper is not loaded
        await settle(other_dumps, pilot)
        assert other_dumps.is_running


async def test_read_only_library_says_so_and_still_reads(tmp_path: Path) -> None:
    (tmp_path / "lib.sqlite3").write_bytes(b"not a database" * 100)
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        assert "library read-only" in str(app.query_one("#status").render())
        await pilot.press("b")
        assert not app.library.snapshot.bookmarks
        messages = [n.message for n in app._notifications]
        assert any("read-only" in m for m in messages)
    assert (tmp_path / "lib.sqlite3").read_bytes() == b"not a database" * 100


async def test_tag_list_renames_and_deletes_on_every_paper(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        ids = [app.session.corpus.papers[3].id, app.session.corpus.papers[7].id]
        app.library.add_tags(ids, ["theroy"])
        await pilot.press("T", "r", "ctrl+u", *"theory", "enter")
        await pilot.pause()
        assert app.library.tag_counts() == [("theory", 2)]
        assert all(app.library.snapshot.tags[i] == ["theory"] for i in ids)
        await pilot.press("T", "d")
        assert isinstance(app.screen, TagList)  # the first d only asks
        assert app.library.tag_counts() == [("theory", 2)]
        await pilot.press("d")
        await pilot.pause()
        assert app.library.tag_counts() == []
        assert not any(app.library.snapshot.tags.values())


async def test_tag_list_renaming_onto_an_existing_tag_asks_then_merges(tmp_path: Path) -> None:
    """Renaming a tag to the name of another (any ASCII case) asks first, in the dialog;
    Enter again merges it: every paper of the first gets the second, and nothing else
    changes. Another name typed, or Esc, and nothing is merged."""
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        papers = app.session.corpus.papers
        app.library.add_tags([papers[1].id, papers[2].id], ["cli-tag"])
        app.library.add_tags([papers[2].id, papers[5].id], ["to read"])
        await pilot.press("T")  # the tags by count, then by name: cli-tag first
        assert isinstance(app.screen, TagList)
        await pilot.press("r", "ctrl+u", *"To Read", "enter")
        await pilot.pause()
        assert isinstance(app.screen, TagList)  # asked, not done
        message = str(app.screen.query_one("#taglist-message", Static).render())
        assert "Enter again merges #cli-tag" in message
        assert app.library.tag_counts() == [("cli-tag", 2), ("to read", 2)]
        await pilot.press("escape", "escape")  # Esc: nothing merged
        assert app.library.tag_counts() == [("cli-tag", 2), ("to read", 2)]
        await pilot.press("T", "r", "ctrl+u", *"to read", "enter", "enter")
        await until(pilot, lambda: not isinstance(app.screen, TagList))
        await settle(app, pilot)
        assert app.library.tag_counts() == [("to read", 3)]
        messages = [n.message for n in app._notifications]
        assert 'Merged #cli-tag into #"to read"' in messages  # (quoted, as the filter takes it)
        tags = app.library.snapshot.tags
        assert {i for i, names in tags.items() if "to read" in names} == {
            papers[1].id,
            papers[2].id,
            papers[5].id,
        }


async def test_copy_reaches_the_real_clipboard_and_says_how(
    tmp_path: Path,
    display: str,
    monkeypatch,  # type: ignore[no-untyped-def]
) -> None:
    from textual.notifications import Notification

    monkeypatch.setenv("DISPLAY", display)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await pilot.press("space", "space", "c")  # two marked papers
        await settle(app, pilot)
        messages = [n.message for n in app._notifications if isinstance(n, Notification)]
        assert "Copied BibTeX for 2 papers (xclip)" in messages
        from abstract_reader.cite import format_records, record

        expected = format_records([record(p) for p in app.session.corpus.papers[:2]], "bibtex")
        assert read_clipboard_when(display, expected) == expected


async def test_a_burst_of_keys_after_slash_lands_in_the_filter(tmp_path: Path) -> None:
    """As a paste or a fast typist delivers them: all queued before the first is handled."""
    from textual import events

    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        for key, char in [
            ("slash", "/"),
            ("r", "r"),
            ("o", "o"),
            ("b", "b"),
            ("slash", "/"),
            ("t", "t"),
        ]:
            app.post_message(events.Key(key, char))
        await settle(app, pilot)
        assert app.query_one("#filter", Input).value == "rob/t"
        assert not app.library.snapshot.read and not app.library.snapshot.bookmarks
        assert not isinstance(app.screen, (TagEditor, NoteEditor))


async def test_slash_is_text_in_editors(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await pilot.press("e", "tab", "tab", *"https://example.org/a", "enter")
        await pilot.pause()
        paper_id = app.query_one(PaperList).current_id
        assert app.library.snapshot.metadata[paper_id].url == "https://example.org/a"
        assert app.query_one("#filter", Input).value == ""


async def test_keys_queued_behind_a_modal_key_never_run_as_commands(tmp_path: Path) -> None:
    """`t` then letters in one burst: the letters must not toggle read, bookmark, etc."""
    from textual import events

    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        for key in ["t", "r", "b", "o", "c"]:
            app.post_message(events.Key(key, key))
        await settle(app, pilot)
        assert isinstance(app.screen, TagEditor)
        assert not app.library.snapshot.read and not app.library.snapshot.bookmarks
        assert not app.library.snapshot.notes


async def test_double_click_opens_and_esc_returns(tmp_path: Path, seeds: Corpus) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 30)) as pilot:  # narrow: opening is visible
        await settle(app, pilot)
        await pilot.double_click(PaperList, offset=(10, 2))
        await pilot.pause()
        assert isinstance(app.screen, PaperScreen)
        assert app.screen.details.title == seeds.papers[2].title
        await pilot.press("escape")
        assert not isinstance(app.screen, PaperScreen)
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:  # wide: Enter focuses the view, Esc leaves it
        await settle(app, pilot)
        await pilot.press("enter")
        assert app.query_one(PaperView).has_focus
        await pilot.press("escape")
        assert app.query_one(PaperList).has_focus


async def test_is_marked_filters_to_the_marked_papers(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await pilot.press("space", "j", "space")
        await type_filter(app, pilot, "is:marked")
        assert listed(app) == [
            app.session.corpus.papers[0].title,
            app.session.corpus.papers[2].title,
        ]


async def test_palette_toggles_auto_read(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await run_palette_command(app, pilot, "auto-read")
        await until(pilot, lambda: app.library.setting("auto_read") == "off")


async def test_tag_list_filters_to_a_tag_with_spaces(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        app.library.add_tags([app.session.corpus.papers[5].id], ["reading list"])
        await pilot.press("T", "enter")
        await settle(app, pilot)
        assert app.query_one("#filter", Input).value == '#"reading list"'
        assert listed(app) == [app.session.corpus.papers[5].title]


async def test_file_names_with_control_characters_are_harmless(tmp_path: Path) -> None:
    dump = write_dump(
        tmp_path / "evil\x1b[2J\x1b]52;c;eA==\x07.txt", "An abstract from a bad name."
    )
    app = make_app(tmp_path, [dump])
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        text = view_text(app)
        assert "evil" in text and "\x1b" not in text and "\x07" not in text
        ElementTree.fromstring(app.export_screenshot())


async def test_changes_from_another_reader_show_when_focus_returns(tmp_path: Path) -> None:
    from textual import events

    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        paper_id = app.query_one(PaperList).current_id
        assert paper_id is not None
        with Library(tmp_path / "lib.sqlite3") as other:  # e.g. a second reader, or the CLI
            other.set_bookmark([paper_id])
            other.add_tags([paper_id], ["from-elsewhere"])
        app.post_message(events.AppFocus())
        await settle(app, pilot)
        row = app.query_one(PaperList).source.row(app.query_one(PaperList).cursor)
        assert row.bookmarked and row.tags == ("from-elsewhere",)
        assert "#from-elsewhere" in view_text(app)


async def test_keys_on_the_narrow_paper_screen(tmp_path: Path, seeds: Corpus) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 30)) as pilot:
        await settle(app, pilot)
        await pilot.press("j", "enter")
        assert isinstance(app.screen, PaperScreen)
        await pilot.press("b")  # acts on the paper shown, and the screen shows it
        assert seeds.papers[1].id in app.library.snapshot.bookmarks
        assert "★ bookmarked" in app.screen.query_one(PaperView).header.plain
        await pilot.press("n")  # the next unread paper, shown in place
        await pilot.pause()
        assert isinstance(app.screen, PaperScreen)
        assert app.screen.query_one(PaperView).details.title == seeds.papers[2].title
        await pilot.press("slash")  # back to the list, typing in the filter
        await until(pilot, lambda: app.query_one("#filter", Input).has_focus)
        assert not isinstance(app.screen, PaperScreen)
        await pilot.press(*"wavelets")
        await settle(app, pilot)
        assert listed(app) == [paper_with(seeds, "based on wavelets").title]


async def test_keys_after_quit_do_nothing(tmp_path: Path) -> None:
    """`q` then `e` in one burst (a paste): no editor opens on a closing app, no crash."""
    from textual import events

    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        for key in ["q", "e", "t", "b"]:
            app.post_message(events.Key(key, key))
        await pilot.pause()
    assert app.return_code == 0
    assert not app.library.snapshot.bookmarks


async def test_reopening_large_dumps_reads_the_parsed_cache(
    tmp_path: Path,
    monkeypatch,  # type: ignore[no-untyped-def]
) -> None:
    from abstract_reader.corpus import CorpusBuilder

    abstracts = [
        f"Abstract {n} on topic {n % 89}, long enough to be a real abstract." * 3
        for n in range(6000)
    ]  # about 1.3 MB: streamed from a thread, then cached
    dump = write_dump(tmp_path / "big.txt", *abstracts)
    app = make_app(tmp_path, [dump])
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        first = listed(app)[:5], app.main.loaded
    monkeypatch.setattr(CorpusBuilder, "add_file", lambda *a: (_ for _ in ()).throw(AssertionError))
    again = make_app(tmp_path, [dump])
    async with again.run_test(size=WIDE) as pilot:
        await settle(again, pilot)
        assert (listed(again)[:5], again.main.loaded) == first
        await type_filter(again, pilot, "topic 88")
        assert len(listed(again)) > 0


async def test_a_huge_abstract_is_capped_in_the_view(tmp_path: Path) -> None:
    dump = write_dump(tmp_path / "huge.txt", "robust words here " * 200_000)  # 3.6 MB
    app = make_app(tmp_path, [dump])
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await type_filter(app, pilot, "robust")
        details = app.query_one(PaperView).details
        assert details is not None
        assert all(end <= 20_000 for _, end in details.body_spans)  # only what is shown
        assert "more characters not shown" in view_text(app)


async def test_one_enormous_file_shows_rows_before_it_is_finished(
    tmp_path: Path,
    monkeypatch,  # type: ignore[no-untyped-def]
) -> None:
    import threading
    from collections.abc import Iterator
    from typing import Any

    from abstract_reader.corpus import CorpusBuilder
    from abstract_reader.tui.screens.main import MainScreen

    abstracts = [
        f"Abstract {n} about streaming one big file of many abstracts." for n in range(12_000)
    ]
    dump = write_dump(tmp_path / "one.txt", *abstracts)
    seen: list[int] = []
    partial = threading.Event()  # the screen showed some of the file's rows, not all
    original = MainScreen._papers_arrived

    def spy(self: MainScreen, done: int, total: int) -> None:
        original(self, done, total)
        seen.append(self.loaded)
        if 0 < self.loaded < 12_000:
            partial.set()

    # The loading thread never waits for the screen; on a loaded machine it could finish the
    # file before the screen's turn came. So it waits here, after its first batch of rows,
    # until the screen shows them: the rest of the file is not parsed yet.
    real_batches = CorpusBuilder.add_file_in_batches

    def batches(builder: CorpusBuilder, path: Path, *args: Any) -> Iterator[range]:
        for n, batch in enumerate(real_batches(builder, path, *args)):
            yield batch
            if n == 0:
                partial.wait(timeout=60)

    monkeypatch.setattr(MainScreen, "_papers_arrived", spy)
    monkeypatch.setattr(CorpusBuilder, "add_file_in_batches", batches)
    monkeypatch.setattr(
        "abstract_reader.tui.screens.main.SYNC_LOAD_BYTES", 0
    )  # stream even this one
    app = make_app(tmp_path, [dump])
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        assert app.main.loaded == 12_000
        assert partial.is_set(), seen  # rows arrived while the file was loading
        assert listed(app)[0].startswith("Abstract")


async def test_a_tag_and_two_enters_in_one_burst_add_and_save(tmp_path: Path) -> None:
    """`t`, a tag, Enter, Enter as one burst (a fast typist, tmux send-keys): the second Enter
    saves; it is not taken for the same tag again."""
    from textual import events

    app = make_app(tmp_path)
    app.library.add_tags(["0" * 16], ["fromcli"])  # a known tag sharing a prefix: completion
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await pilot.press("t")
        for ch in "fromtui":
            app.post_message(events.Key(ch, ch))
        app.post_message(events.Key("enter", "\r"))
        app.post_message(events.Key("enter", "\r"))
        await settle(app, pilot)
        assert not isinstance(app.screen, TagEditor)
        assert app.library.snapshot.tags[app.query_one(PaperList).current_id or ""] == ["fromtui"]


async def test_tab_cycles_through_every_completion_and_keeps_the_focus(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    app.library.add_tags(["0" * 16], ["Robust", "robustness", "reinforcement"])
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await pilot.press("t", "r", "o")
        field = app.screen.query_one("#tag-input", Input)
        seen = []
        for _ in range(3):
            await pilot.press("tab")
            seen.append(field.value)
            assert field.has_focus
        assert seen == ["Robust", "robustness", "Robust"]
        await pilot.press("ctrl+u", "z", "z", "tab", "tab")
        assert field.has_focus and field.value == "zz"  # nothing to complete: focus stays
        await pilot.press("x")
        assert field.value == "zzx"


async def test_tag_editor_up_or_backspace_in_the_empty_field_selects_a_tag_to_remove(
    tmp_path: Path,
) -> None:
    """Where the editor opens (the empty field), ↑ or ⌫ goes to the current tags, the last
    one selected; Del or ⌫ there removes it, Tab goes back to the field. (↑ and Del did
    nothing there: only shift+Tab reached the list, which a new user did not find.)"""
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        paper_id = app.query_one(PaperList).current_id
        assert paper_id is not None
        app.library.add_tags([paper_id], ["alpha", "beta", "gamma"])
        await pilot.press("t")
        editor = app.screen
        assert isinstance(editor, TagEditor) and editor.tags == ["alpha", "beta", "gamma"]
        options = editor.query_one("#tag-current", OptionList)
        await pilot.press("up")
        assert options.has_focus and options.highlighted == 2  # gamma, next to the field
        await pilot.press("delete")
        assert editor.tags == ["alpha", "beta"]
        await pilot.press("tab", "backspace")  # back in the empty field: ⌫ selects beta
        assert options.has_focus and options.highlighted == 1 and len(editor.tags) == 2
        await pilot.press("backspace")
        assert editor.tags == ["alpha"]
        await pilot.press("tab", *"delta", "backspace", "enter")  # typed text: ⌫ edits it
        assert editor.tags == ["alpha", "delt"]
        await pilot.press("ctrl+s")
        await until(pilot, lambda: not isinstance(app.screen, TagEditor))
        assert app.library.snapshot.tags[paper_id] == ["alpha", "delt"]


async def test_bulk_tag_editor_shows_counts_and_removes_from_all(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        ids = [p.id for p in app.session.corpus.papers[:3]]
        app.library.add_tags(ids[:2], ["theory"])
        app.library.add_tags(ids, ["keep"])
        await pilot.press("space", "space", "space", "t")
        assert isinstance(app.screen, TagEditor)
        options = app.screen.query_one("#tag-current")
        labels = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        assert labels == ["#keep", "#theory  on 2 of 3"]
        await pilot.press("shift+tab", "end", "delete", "ctrl+s")  # remove #theory
        await settle(app, pilot)
        assert all(app.library.snapshot.tags.get(i) == ["keep"] for i in ids)
        await pilot.press("t", "ctrl+s")  # no change: says so
        await until(
            pilot, lambda: "No change to the tags." in [n.message for n in app._notifications]
        )


async def test_metadata_fields_never_merge_in_a_burst(tmp_path: Path) -> None:
    """ "Zz⇥Ada" typed faster than the app handles it: the authors go to the authors field."""
    from textual import events

    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await pilot.press("e")
        assert isinstance(app.screen, MetadataEditor)
        for key, char in [("Z", "Z"), ("z", "z"), ("tab", None), ("A", "A"), ("d", "d")]:
            app.post_message(events.Key(key, char))
        app.post_message(events.Key("a", "a"))
        await settle(app, pilot)
        assert app.screen.query_one("#meta-title", Input).value == "Zz"
        assert app.screen.query_one("#meta-authors", Input).value == "Ada"


async def test_metadata_editor_warns_about_a_url_o_would_refuse(tmp_path: Path) -> None:
    """`javascript:…` is not saved on the first Enter: one line says why `O` would refuse
    it; Enter again keeps it as typed; a changed URL is checked afresh."""
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        paper_id = app.query_one(PaperList).current_id or ""
        await pilot.press("e")
        assert isinstance(app.screen, MetadataEditor)
        await pilot.press("tab", "tab", *"javascript:alert(1)", "enter")
        await pilot.pause()
        assert isinstance(app.screen, MetadataEditor)
        message = str(app.screen.query_one("#meta-error", Static).render())
        assert message == (
            "O will not open this URL and citations leave it out: only http and https links are "
            "opened, not javascript:. "
            "Save again to keep it anyway."
        )
        assert paper_id not in app.library.snapshot.metadata
        await pilot.press("backspace")  # javascript:alert(1 — another URL: warned again
        await until(pilot, lambda: str(app.screen.query_one("#meta-error", Static).render()) == "")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, MetadataEditor)
        assert "O will not open" in str(app.screen.query_one("#meta-error", Static).render())
        await pilot.press("ctrl+s")  # insisting saves it
        await until(pilot, lambda: not isinstance(app.screen, MetadataEditor))
        assert app.library.snapshot.metadata[paper_id].url == "javascript:alert(1"
        # a good URL saves at once
        await pilot.press("e", "tab", "tab", "ctrl+u", *"https://example.org/p", "enter")
        await until(pilot, lambda: not isinstance(app.screen, MetadataEditor))
        assert app.library.snapshot.metadata[paper_id].url == "https://example.org/p"


async def test_a_row_with_many_tags_still_shows_its_venue(tmp_path: Path) -> None:
    """Tags too long for the row's right part are cut ("…"), not the venue after them."""
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        first = app.query_one(PaperList).current_id
        assert first is not None
        app.library.add_tags([first], ["reinforcement-learning", "to-read-next-week", "survey"])
        await until(pilot, lambda: "#rei" in list_lines(app)[0])
        row = list_lines(app)[0].rstrip()
        assert row.endswith("#rei… NeurIPS 2026"), row


async def test_the_tag_lists_hint_names_the_rename_fields_keys_while_it_is_open(
    tmp_path: Path,
) -> None:
    """`T`, `r`: the hint kept saying "Enter: show papers with the tag · m: rank like them
    · …" under the name field, where Enter renames and Esc cancels; it says that now, and
    the list's keys again once the field is closed."""
    app = make_app(tmp_path)

    def hint() -> str:
        return str(app.screen.query_one("#taglist-hint", Static).render())

    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        app.library.add_tags([app.session.corpus.papers[3].id], ["theroy"])
        await pilot.press("T")
        await until(pilot, lambda: isinstance(app.screen, TagList))
        assert "Enter: show papers with the tag" in hint()
        await pilot.press("r")
        await until(pilot, lambda: "Enter: rename" in hint())
        assert "show papers" not in hint() and "Esc: cancel" in hint()
        await pilot.press("escape")  # the field closes, the list stays
        await until(pilot, lambda: "Enter: show papers with the tag" in hint())
        assert isinstance(app.screen, TagList)

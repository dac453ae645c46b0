"""Issue #13's reader keys: open the link, copy parts, ctrl+c, a filter the app fills."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input, TextArea

from abstract_reader.library import Metadata
from abstract_reader.tui.app import ReaderApp
from abstract_reader.tui.screens.pickers import CopyFallback
from abstract_reader.tui.widgets.paper_list import PaperList

from .conftest import (
    config_file,
    list_lines,
    make_app,
    run_palette_command,
    settle,
    type_filter,
    until,
)

WIDE = (120, 40)


@pytest.mark.parametrize(
    ("meta", "expected"),
    [
        (Metadata(url="https://example.org/paper"), "https://example.org/paper"),
        (Metadata(doi="10.1234/abc"), "https://doi.org/10.1234/abc"),
        (
            Metadata(url="https://arxiv.org/abs/2401.01234", doi="10.1/x"),
            "https://arxiv.org/abs/2401.01234",
        ),
    ],
)
async def test_capital_o_opens_the_link_through_webbrowser(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, meta: Metadata, expected: str
) -> None:
    opened: list[str] = []

    def fake_open(url: str, *args: object, **kwargs: object) -> bool:
        opened.append(url)
        return True

    monkeypatch.setattr("webbrowser.open", fake_open)
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        paper_id = app.query_one(PaperList).current_id or ""
        app.library.set_metadata(paper_id, meta)
        await pilot.press("O")
        await settle(app, pilot)
        assert opened == [expected]
        assert f"Opened {expected}" in [n.message for n in app._notifications]


async def test_capital_o_without_a_link_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("webbrowser.open", lambda *a, **k: pytest.fail("opened"))
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await pilot.press("O")
        await settle(app, pilot)
        assert any("No web link" in n.message for n in app._notifications)


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("javascript:alert(1)", "only http and https links are opened, not javascript:"),
        ("https://evil.example/\x1b]52;c;QUJD\x07", "it contains a control character"),
        ("ftp://example.org/paper.pdf", "not ftp:"),
        # what `meta --url` saves for a byte that is not UTF-8: not a control character
        ("https://example.org/a\ufffdb", "it contains \ufffd (U+FFFD), the stand-in for a byte"),
    ],
)
async def test_capital_o_on_a_refused_link_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str, why: str
) -> None:
    monkeypatch.setattr("webbrowser.open", lambda *a, **k: pytest.fail("opened"))
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        paper_id = app.query_one(PaperList).current_id or ""
        app.library.set_metadata(paper_id, Metadata(url=url))
        await pilot.press("O")
        await settle(app, pilot)
        [message] = [n.message for n in app._notifications]
        assert message.startswith("Link refused, not opened: ")
        assert why in message and "\n" not in message and "\x1b" not in message


async def test_copy_the_id_from_the_palette(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        paper_id = app.query_one(PaperList).current_id
        await run_palette_command(app, pilot, "copy id")
        await until(pilot, lambda: isinstance(app.screen, CopyFallback))
        assert app.screen.query_one("#copy-text", TextArea).text == paper_id


async def test_ctrl_c_quits(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+c")
        await pilot.pause()
    assert app.return_code == 0


async def test_typing_after_the_app_filled_the_filter_goes_at_the_end(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await run_palette_command(app, pilot, "show unread")
        await until(pilot, lambda: app.query_one("#filter", Input).value == "is:unread")
        await type_filter(app, pilot, " robust")
        assert app.query_one("#filter", Input).value == "is:unread robust"


async def test_up_and_down_in_the_filter_walk_earlier_queries(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        for query in ("robust", "spiking", "is:unread"):
            await pilot.press("slash", "ctrl+u", *query.replace(" ", ""), "enter")
        await settle(app, pilot)
        field = app.query_one("#filter", Input)
        await pilot.press("slash", "ctrl+u", *"gaus")
        await pilot.press("up")
        assert field.value == "is:unread"
        await pilot.press("up", "up")
        assert field.value == "robust"
        await pilot.press("up")  # the oldest stays
        assert field.value == "robust"
        await pilot.press("down")
        assert field.value == "spiking"
        await pilot.press("down", "down")
        assert field.value == "gaus"  # back to what was being typed
        assert field.cursor_position == len("gaus")
        await pilot.press("up", "enter")
        await settle(app, pilot)
        assert app.query_one(PaperList).has_focus
    again = make_app(tmp_path)  # kept in the library
    async with again.run_test(size=WIDE) as pilot:
        await settle(again, pilot)
        await pilot.press("slash", "ctrl+u", "up")
        assert again.query_one("#filter", Input).value == "is:unread"


async def test_esc_in_the_list_clears_the_filter_and_esc_again_brings_it_back(
    tmp_path: Path,
) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await type_filter(app, pilot, "robust")
        await pilot.press("enter", "escape")
        await settle(app, pilot)
        assert app.query_one("#filter", Input).value == ""
        await pilot.press("escape")
        await settle(app, pilot)
        assert app.query_one("#filter", Input).value == "robust"


async def test_s_cycles_the_order_and_the_status_says_which(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        corpus = app.session.corpus
        rows = lambda: [  # noqa: E731
            app.query_one(PaperList).source.row(i) for i in range(len(corpus.papers))
        ]
        status = lambda: str(app.main.query_one("#status").render())  # noqa: E731
        await pilot.press("j", "j")
        kept = app.query_one(PaperList).current_id
        assert [r.paper_id for r in rows()] == [p.id for p in corpus.papers]  # dump order
        # no query: relevance is the dump order, so the first s is the title order, not a
        # "dump order" that looked the same (it seemed to do nothing)
        await pilot.press("s")
        await settle(app, pilot)
        titles = [r.title for r in rows()]
        assert titles == sorted(titles, key=str.casefold) and "sorted by title" in status()
        assert app.query_one(PaperList).current_id == kept  # the cursor kept its paper
        await pilot.press("s", "s")  # year, then recently tagged or bookmarked
        await settle(app, pilot)
        later = corpus.papers[9].id
        app.library.set_bookmark([corpus.papers[4].id])
        app.library.add_tags([later], ["later"])
        await until(pilot, lambda: rows()[0].paper_id == later)
        assert rows()[1].paper_id == corpus.papers[4].id
        assert "sorted by recently tagged or bookmarked" in status()
        await pilot.press("s")  # unread first
        await settle(app, pilot)
        app.library.set_read([corpus.papers[0].id])
        await until(pilot, lambda: rows()[-1].paper_id == corpus.papers[0].id)
        assert "sorted by unread first" in status()
        await pilot.press("s")  # back to relevance
        await settle(app, pilot)
        assert "sorted" not in status()
        await type_filter(app, pilot, "robust")
        await pilot.press("enter", "s", "s")  # a query's result by title
        await settle(app, pilot)
        shown = [
            app.query_one(PaperList).source.row(i).title
            for i in range(len(app.query_one(PaperList).source))
        ]
        assert len(shown) > 3 and shown == sorted(shown, key=str.casefold)


async def test_footer_hints_follow_focus(tmp_path: Path) -> None:
    """The footer offers what the focused place does: list keys on the list, not in the
    filter; a dialog's own keys in a dialog."""
    from textual.widgets import Footer

    def footer_keys() -> set[str]:
        footer = app.screen.query_one(Footer)
        return {item.description for item in footer.query("FooterKey").results()}  # type: ignore[attr-defined]

    app = make_app(tmp_path)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(app, pilot)
        assert {"Bookmark", "Tags", "Filter"} <= footer_keys()
        await pilot.press("slash")
        await pilot.pause()
        assert not {"Bookmark", "Tags", "Sort"} & footer_keys()
        await pilot.press("enter", "t")
        await pilot.pause()
        keys = footer_keys()
        assert {"Save", "Cancel"} <= keys and not {"Bookmark", "Quit"} & keys


async def test_the_paper_screens_footer_shows_esc_and_its_keys_whole_at_70_columns(
    tmp_path: Path,
) -> None:
    """Under 100 columns Enter opens the paper full screen. At 70 its footer was cut
    ("/ Filter  b Bookmark  r Read  t Tags  c Copy  ? H▏^p Command palette") and did not
    name Esc, the way back to the list. It shows Esc and the keys that act on the paper,
    whole (the command palette is in `?`, as on the triage screen), and Esc does what it
    says."""
    from abstract_reader.tui.screens.paper import PaperScreen

    def footer_line() -> str:
        return app.screen._compositor.render_strips()[-1].text

    app = make_app(tmp_path)
    async with app.run_test(size=(70, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, PaperScreen))
        await until(pilot, lambda: "Bookmark" in footer_line())
        line = footer_line()
        for key in ("esc Back", "b Bookmark", "r Read", "t Tags", "c Copy", "? Help", "q Quit"):
            assert f" {key} " in f"{line} ", (key, line)
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, PaperScreen))
        assert app.query_one(PaperList).has_focus


PAPER_FOOTER_KEYS = ("esc Back", "b Bookmark", "r Read", "t Tags", "c Copy", "? Help", "q Quit")


@pytest.mark.parametrize("size", [(60, 20), (50, 15), (40, 12)])
async def test_the_paper_screens_footer_keeps_back_help_and_quit_whole_when_small(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """The paper screen's footer needs 61 columns: at 60 it ended "? Help  q Qui", at 50
    "c Copy  ? H", at 40 "t Tags  c" — no Help, no Quit. The least wanted keys are left out
    instead, each key shown whole, in the usual order, Esc, Help and Quit always among
    them. A key left out still works: r marks the paper read."""
    from abstract_reader.tui.screens.paper import PaperScreen

    def footer_line() -> str:
        return app.screen._compositor.render_strips()[-1].text

    app = make_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        paper_id = app.query_one(PaperList).current_id
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, PaperScreen))
        await until(pilot, lambda: "Back" in footer_line())
        line = footer_line()
        assert len(line) == size[0]
        shown = line.strip().split("  ")
        assert shown == [key for key in PAPER_FOOTER_KEYS if key in shown], line  # all whole
        assert {"esc Back", "b Bookmark", "? Help", "q Quit"} <= set(shown), line
        assert "c Copy" not in shown
        assert paper_id is not None and paper_id not in app.library.snapshot.read
        await pilot.press("r")
        await until(pilot, lambda: paper_id in app.library.snapshot.read)
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, PaperScreen))


async def test_a_footer_whose_screen_closed_is_not_made_again(tmp_path: Path) -> None:
    """Textual recomposes a footer after the next refresh when its screen's keys change: a
    screen closed meanwhile (the paper screen, Esc right after a key) left its footer with
    no screen, and the reader stopped on "NoScreen: node has no screen" (seen once in CI)."""
    from abstract_reader.tui.screens.paper import PaperScreen
    from abstract_reader.tui.widgets.fitted_footer import FittedFooter

    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, PaperScreen))
        footer = app.screen.query_one(FittedFooter)
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, PaperScreen))
        await footer.recompose()  # (what the callback Textual queued does)
        await pilot.press("j")
        await settle(app, pilot)
        assert app.is_running and "q Quit" in app.screen._compositor.render_strips()[-1].text


MAIN_FOOTER_KEYS = (
    *("⏎ Open", "space Mark", "/ Filter", "s Sort", "b Bookmark"),
    *("r Read", "t Tags", "c Copy", "? Help", "q Quit"),
)


@pytest.mark.parametrize("size", [(70, 24), (80, 24), (120, 40)])
async def test_the_main_footer_keeps_help_and_quit_whole_when_narrow(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """At 70 columns the main screen's footer was cut after "b Bookmark" (80: after "t"),
    and "? Help" and "q Quit" were never seen. The least wanted keys are left out instead,
    each key shown whole, in the usual order, Help and Quit always among them; at 120 the
    footer is as it was. A key left out still works: r marks the paper read."""

    def footer_line() -> str:
        return app.screen._compositor.render_strips()[-1].text

    app = make_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        await until(pilot, lambda: "Command palette" in footer_line())
        line = footer_line()
        assert len(line) == size[0]
        keys_part, _, palette = line.partition("▏")
        assert palette.strip() == "^p Command palette", line
        shown = keys_part.strip().split("  ")
        assert shown == [key for key in MAIN_FOOTER_KEYS if key in shown], line  # all whole
        assert {"? Help", "q Quit", "⏎ Open", "/ Filter"} <= set(shown), line
        if size[0] >= 120:
            assert shown == list(MAIN_FOOTER_KEYS)
        else:
            assert "r Read" not in shown
        paper_id = app.query_one(PaperList).current_id
        assert paper_id is not None and paper_id not in app.library.snapshot.read
        await pilot.press("r")
        await until(pilot, lambda: paper_id in app.library.snapshot.read)


async def test_a_tag_with_spaces_reads_as_one_tag(tmp_path: Path) -> None:
    from .conftest import list_lines, view_text

    app = make_app(tmp_path)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(app, pilot)
        paper_id = app.query_one(PaperList).current_id or ""
        app.library.add_tags([paper_id], ["reading list", "theory"])
        await until(pilot, lambda: '#"reading list" #theory' in view_text(app))
        # the row: quoted too (its tags may be cut to leave the venue room: "#\"readi…")
        assert any('#"readi' in line for line in list_lines(app))


async def test_the_config_file_remaps_keys_and_sets_auto_read_and_width(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        'auto_read = false\nlist_width = 30\n\n[keys]\nbookmark = "B"\nnosuchthing = "x"\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("ABSTRACT_READER_CONFIG", str(config))
    app = make_app(tmp_path, config=None, read_delay=None)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await pilot.press("b")
        assert not app.library.snapshot.bookmarks  # b is no longer bookmark …
        await pilot.press("B")
        assert len(app.library.snapshot.bookmarks) == 1  # … B is
        assert app.query_one(PaperList).outer_size.width == 30
        await pilot.press("j")
        assert app.main._read_timer is None  # auto-read off
        messages = [n.message for n in app._notifications]
        assert any("nosuchthing: no such binding id" in m for m in messages)


async def test_the_footer_shows_the_filters_own_keys_while_it_has_focus(tmp_path: Path) -> None:
    """In the filter, the list's letter keys do not apply: the footer says what does."""
    from textual.widgets._footer import FooterKey

    def footer() -> set[str]:
        return {key.description for key in app.screen.query(FooterKey)}

    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        assert "Bookmark" in footer() and "Apply" not in footer()
        await pilot.press("slash")
        await pilot.pause()
        assert {"Apply", "Back to the list"} <= footer() and "Bookmark" not in footer()
        await pilot.press("escape")  # the footer's Esc does what it says
        await pilot.pause()
        assert app.query_one(PaperList).has_focus and "Bookmark" in footer()


def _browser(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    opened: list[str] = []

    def fake_open(url: str, *args: object, **kwargs: object) -> bool:
        opened.append(url)
        return True

    monkeypatch.setattr("webbrowser.open", fake_open)
    return opened


@pytest.mark.parametrize(
    ("meta", "expected", "what"),
    [
        (Metadata(url="https://example.org/a b", doi="10.1/x"), "https://doi.org/10.1/x", "DOI"),
        (Metadata(url="javascript:alert(1)", doi="10.5/y"), "https://doi.org/10.5/y", "DOI"),
    ],
)
async def test_capital_o_opens_the_next_safe_link_when_the_url_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, meta: Metadata, expected: str, what: str
) -> None:
    opened = _browser(monkeypatch)
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        paper_id = app.query_one(PaperList).current_id or ""
        app.library.set_metadata(paper_id, meta)
        await pilot.press("O")
        await settle(app, pilot)
        assert opened == [expected]
        [message] = [n.message for n in app._notifications]
        assert message.startswith(f"Opened the {what}, {expected} (the URL was refused: ")
        assert ("space" in message) or ("not javascript:" in message)


async def test_capital_o_opens_the_link_in_the_abstract(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No URL, DOI or arXiv id, but the abstract has an underlined link: `O` opens it; and
    after a refused URL too."""
    opened = _browser(monkeypatch)
    app = make_app(tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        await type_filter(app, pilot, "VeriStressGT")
        await pilot.press("enter")
        await settle(app, pilot)
        link = "https://github.com/NeurIPSAnon12345/VeriStressGT.git"
        await pilot.press("O")
        await settle(app, pilot)
        assert opened == [link]
        assert [n.message for n in app._notifications] == [
            f"Opened the link in the abstract, {link}"
        ]
        paper_id = app.query_one(PaperList).current_id or ""
        app.library.set_metadata(paper_id, Metadata(url="https://example.org/a b"))
        await pilot.press("O")
        await settle(app, pilot)
        assert opened == [link, link]
        assert [n.message for n in app._notifications][-1] == (
            f"Opened the link in the abstract, {link} "
            "(the URL was refused: it contains a space or line break)"
        )


def _help_lines(app: ReaderApp) -> list[str]:
    """The lines of text the help's box shows on screen (inside its border, left of its
    scrollbar)."""
    box = app.screen.query_one("#help-box").region.shrink((1, 1, 1, 1))
    text = app.screen.query_one("#help-text").region
    lines = [strip.text for strip in app.screen._compositor.render_strips()]
    return [line[text.x : text.right].strip() for line in lines[box.y : box.bottom]]


def _help_shows(app: ReaderApp, text: str) -> bool:
    return any(text in line for line in _help_lines(app))


@pytest.mark.parametrize("size", [(40, 12), (80, 24)])
async def test_the_help_scrolls_with_the_paper_views_keys(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """The help scrolled with ↓ / ↑ and PgDn only: j / k, which move the list and scroll the
    paper, did nothing there. It scrolls with the paper view's keys: j / k a line, space /
    shift+space a page, G / g to its end and back to its top."""
    from abstract_reader.tui.screens.help import HelpScreen

    title, last = "abstract-reader — keys", "Esc, ? or q closes"  # (wrapped at 40 columns)
    app = make_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await until(pilot, lambda: _help_shows(app, title))
        assert not _help_shows(app, last)
        top = _help_lines(app)
        await pilot.press("j", "j")
        await until(pilot, lambda: _help_lines(app)[:-2] == top[2:])  # two lines up
        assert not _help_shows(app, title)
        await pilot.press("k")
        await until(pilot, lambda: _help_lines(app)[:-1] == top[1:])
        await pilot.press("k")
        await until(pilot, lambda: _help_lines(app) == top)
        await pilot.press("G")
        await until(pilot, lambda: _help_shows(app, last))
        assert not _help_shows(app, title)
        await pilot.press("g")
        await until(pilot, lambda: _help_lines(app) == top)
        help_text = app.screen.query_one("#help-text")
        body = [help_text.render_line(y).text.strip() for y in range(help_text.size.height)]
        page = len(top)
        assert top == [title, *body[: page - 1]]
        await pilot.press("space")  # a page down: the lines after those shown
        await until(pilot, lambda: _help_lines(app) == body[page - 1 : 2 * page - 1])
        await pilot.press("shift+space")
        await until(pilot, lambda: _help_lines(app) == top)


async def test_a_remapped_paper_view_key_scrolls_the_help_too(tmp_path: Path) -> None:
    """`[keys] view_down = "x"` (the paper view's j) makes x scroll the help, and j not."""
    from abstract_reader.config import Config
    from abstract_reader.tui.screens.help import HelpScreen

    app = make_app(tmp_path, config=Config(keys={"view_down": ("x",)}))
    async with app.run_test(size=(40, 12)) as pilot:
        await settle(app, pilot)
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await until(pilot, lambda: _help_shows(app, "abstract-reader — keys"))
        top = _help_lines(app)
        box = app.screen.query_one("#help-box")
        await pilot.press("j", "x")
        await until(
            pilot,
            lambda: _help_lines(app) != top and not app.animator.is_being_animated(box, "scroll_y"),
        )
        assert _help_lines(app)[:-1] == top[1:]  # one line (x), not two


async def test_every_key_the_reader_binds_by_id_can_be_remapped_and_is_documented(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A binding id of any screen or widget (the dialogs' own keys too) is accepted in the
    config's [keys] without a warning, and docs/keys.md names it (ctrl+y's `meta_candidate`,
    the metadata editor's "use candidate", was refused as "no such binding id")."""
    import importlib
    import pkgutil

    from textual.binding import Binding

    from abstract_reader.tui import screens, widgets

    ids: set[str] = set()
    for package in (screens, widgets):
        for info in pkgutil.iter_modules(package.__path__):
            module = importlib.import_module(f"{package.__name__}.{info.name}")
            for value in vars(module).values():
                for binding in getattr(value, "BINDINGS", None) or ():
                    if isinstance(binding, Binding) and binding.id:
                        ids.add(binding.id)
    assert "meta_candidate" in ids and "editor_save" in ids  # (the scan finds them)
    config = tmp_path / "config.toml"
    keys = "".join(f'{binding_id} = "f{12 + n % 8}"\n' for n, binding_id in enumerate(ids))
    config.write_text(f"[keys]\n{keys}", encoding="utf-8")
    monkeypatch.setenv("ABSTRACT_READER_CONFIG", str(config))
    app = make_app(tmp_path, config=None)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        refused = [n.message for n in app._notifications if "no such binding id" in n.message]
        assert refused == []
    documented = (Path(__file__).resolve().parents[2] / "docs" / "keys.md").read_text("utf-8")
    assert [i for i in sorted(ids) if f"`{i}`" not in documented] == []


async def test_the_help_lists_the_keys_the_config_file_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With `bookmark = "B"` and `toggle_read = "j"` the `?` help still said "b  bookmark
    on/off" and "r  read on/off" (the footer said B Bookmark): it printed the table's keys.
    It lists the keys in effect, for the lines of the list's keys (j is toggle_read's now,
    so "next / previous paper" is ↓ / k, ↑) and of triage's own keys too."""
    config_file(
        tmp_path,
        monkeypatch,
        '[keys]\nbookmark = "B"\ntoggle_read = "j"\ntriage_keep = "K"\n',
    )
    app = make_app(tmp_path, config=None)
    async with app.run_test(size=(160, 100)) as pilot:  # (the whole help on screen)
        await settle(app, pilot)
        await pilot.press("question_mark")
        await until(pilot, lambda: _help_shows(app, "Esc, ? or q closes"))
        lines = [" ".join(line.split()) for line in _help_lines(app)]
        assert "B bookmark on/off (all marked papers when some are marked)" in lines
        assert "j read on/off (marked papers too)" in lines
        assert "↓ / k, ↑ next / previous paper" in lines
        assert not any(line.startswith(("b bookmark", "r read", "j / k")) for line in lines)
        await pilot.press("escape")
        await pilot.press("exclamation_mark")  # triage: its own keys come first in its help
        await until(pilot, lambda: type(app.screen).__name__ == "TriageScreen")
        await pilot.press("question_mark")
        await until(pilot, lambda: _help_shows(app, "Triage (this screen)"))
        lines = [" ".join(line.split()) for line in _help_lines(app)]
        assert "K keep: bookmark the paper, and on to the next" in lines
        assert "r skip: mark it read, and on to the next" in lines


async def test_a_remapped_key_another_binding_has_wins_and_is_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`toggle_read = "j"`: j stayed the list's "down" (the list, nearer the focus, was asked
    first), r no longer toggled, so read marks had no key at all, and nothing was said. The
    remap wins: j toggles read, ↓ still moves down, and one warning names the file, the
    line, the key and both ids."""
    config = config_file(tmp_path, monkeypatch, '[keys]\nbookmark = "B"\ntoggle_read = "j"\n')
    app = make_app(tmp_path, config=None)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        paper_list = app.query_one(PaperList)
        first = paper_list.current_id
        assert first is not None
        await pilot.press("j")
        await until(pilot, lambda: first in app.library.snapshot.read)
        assert paper_list.current_id == first  # j did not move
        await pilot.press("r")  # r is nothing now
        await pilot.press("down")
        await until(pilot, lambda: paper_list.current_id != first)
        assert first in app.library.snapshot.read
        await pilot.press("B")
        await until(pilot, lambda: paper_list.current_id in app.library.snapshot.bookmarks)
        clashes = [n.message for n in app._notifications if "toggle_read" in n.message]
        assert len(clashes) == 1 and "\n" not in clashes[0]
        assert clashes[0].startswith(f"{config}: line 3: keys.toggle_read: j is also down's")
        assert "view_down" in clashes[0] and "the remap wins" in clashes[0]


async def test_an_unknown_theme_is_said_and_the_default_applies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`theme = "nosuchtheme"` was accepted without a word (the reader kept its theme)."""
    config = config_file(tmp_path, monkeypatch, 'theme = "nosuchtheme"\n')
    app = make_app(tmp_path, config=None)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        assert app.theme == "textual-dark"
        said = [n.message for n in app._notifications if "nosuchtheme" in n.message]
        assert len(said) == 1 and said[0].startswith(f"{config}: line 1: theme: no theme")
        assert "nord" in said[0]
        assert said[0].endswith("the theme last chosen in the reader applies (else the default)")
    # the theme chosen in the reader, kept in the library, is what applies (the notice said
    # "the default applies" while gruvbox was on screen)
    from abstract_reader.library import Library

    with Library(tmp_path / "lib.sqlite3") as library:
        library.set_setting("theme", "gruvbox")
    app = make_app(tmp_path, config=None)
    async with app.run_test(size=WIDE) as pilot:
        await settle(app, pilot)
        assert app.theme == "gruvbox"


def test_the_config_files_theme_names_are_the_readers(tmp_path: Path) -> None:
    """config.THEMES (the core cannot ask Textual) are the themes the reader has."""
    from abstract_reader.config import THEMES

    assert sorted(THEMES) == sorted(make_app(tmp_path).available_themes)


@pytest.mark.parametrize("width", ['"45%"', "20"])
async def test_a_configured_list_width_gives_way_on_a_narrow_screen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, width: str
) -> None:
    """On a narrow screen the paper pane is hidden: the list fills the screen whatever
    `list_width` says (it kept its width, the rest of the screen blank), and takes that
    width again beside the pane when the terminal is widened."""
    config_file(tmp_path, monkeypatch, f"list_width = {width}\n")
    app = make_app(tmp_path, config=None)
    async with app.run_test(size=(70, 24)) as pilot:
        await settle(app, pilot)
        paper_list = app.query_one(PaperList)
        assert paper_list.outer_size.width == 70
        assert any("Robust" in line or "robust" in line for line in list_lines(app))
        await pilot.resize_terminal(120, 30)
        await until(pilot, lambda: paper_list.outer_size.width < 70)
        assert paper_list.outer_size.width == (54 if "%" in width else 20)
        await pilot.resize_terminal(70, 24)
        await until(pilot, lambda: paper_list.outer_size.width == 70)

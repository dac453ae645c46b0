"""ReaderApp: the full-screen reader. Thin: user intent → calls on the core → redraw."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.content import Content
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Input, Static

from ..corpus import Corpus, CorpusBuilder, LoadError, Paper
from ..library import Library, LibraryError
from ..paths import cache_dir as default_cache_root
from ..paths import default_db_path
from ..text import render, sanitise
from .citation_actions import CitationActions
from .screens.paper import PaperScreen
from .widgets.paper_list import PaperList, Row
from .widgets.paper_view import DISPLAY_LIMIT, PaperDetails, PaperView

if TYPE_CHECKING:  # imported when first needed: numpy, rapidfuzz, modals cost start-up time
    from ..search import SearchIndex, SearchResult

NARROW_WIDTH = 100
READ_DELAY_S = 1.5
SYNC_LOAD_BYTES = 1 << 20  # dumps up to this size load before the first frame


@dataclass(frozen=True, slots=True)
class _FrozenState:
    """A copy of the library's state filters, handed to a search thread."""

    tags: dict[str, frozenset[str]]
    states: dict[str, frozenset[str]]

    def ids_with_tag(self, tag: str) -> set[str]:
        return set(self.tags.get(tag.casefold(), frozenset()))

    def ids_with_state(self, state: str) -> set[str]:
        return set(self.states.get(state, frozenset()))


class _Rows:
    """The list's rows: the search result (or the corpus order) seen through the library."""

    def __init__(self, app: ReaderApp) -> None:
        self.app = app

    def __len__(self) -> int:
        result = self.app.result
        return len(result) if result is not None else self.app.loaded

    def paper(self, index: int) -> Paper:
        result = self.app.result
        if result is not None:
            return result.paper_at(index)
        return self.app.corpus.papers[index]

    def row(self, index: int) -> Row:
        app = self.app
        paper = self.paper(index)
        snap = app.library.snapshot
        title = app.title_of(paper)
        spans: tuple[tuple[int, int], ...] = ()
        if app.result is not None and not app.result.query.empty:
            spans = tuple(app.result.matcher.spans(title))
        return Row(
            paper_id=paper.id,
            title=title,
            venue=paper.venue_year,
            tags=tuple(snap.tags.get(paper.id, ())),
            bookmarked=paper.id in snap.bookmarks,
            read=paper.id in snap.read,
            marked=paper.id in app.marked,
            spans=spans,
        )


class ReaderApp(CitationActions):
    CSS_PATH = Path(__file__).with_name("app.tcss")  # absolute: works for subclasses too
    TITLE = "abstract-reader"
    # Under NARROW_WIDTH columns the list fills the screen (`Screen.-narrow` in app.tcss).
    HORIZONTAL_BREAKPOINTS = [  # noqa: RUF012 (App declares it without ClassVar)
        (0, "-narrow"),
        (NARROW_WIDTH, "-wide"),
    ]

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit"),
        Binding("question_mark", "help", "Help"),
        # priority: the App acts on `/` before it forwards the next key, so "/query" typed in
        # one burst (a paste, a fast typist) lands in the filter; see check_action.
        Binding("slash", "focus_filter", "Filter", priority=True),
        Binding("escape", "escape", "Back", show=False),
        Binding("n", "next_unread", "Next unread", show=False),
        Binding("N", "previous_unread", "Prev unread", show=False),
        Binding("b", "bookmark", "Bookmark"),
        Binding("r", "toggle_read", "Read"),
        Binding("t", "tags", "Tags"),
        Binding("T", "tag_list", "Tag list", show=False),
        Binding("e", "edit_metadata", "Edit", show=False),
        Binding("o", "note", "Note", show=False),
        Binding("c", "copy", "Copy"),
        Binding("C", "cite_picker", "Cite…", show=False),
    ]

    def __init__(
        self,
        paths: Sequence[str | os.PathLike[str]] | None = None,
        db: str | os.PathLike[str] | None = None,
        *,
        read_delay: float = READ_DELAY_S,
        cache_dir: Path | None = None,
    ) -> None:
        super().__init__()
        self.paths = list(paths) if paths is not None else None
        self.library = Library(Path(db) if db is not None else default_db_path())
        self.read_delay = read_delay
        self.cache_dir = cache_dir if cache_dir is not None else default_cache_root() / "index"
        self.corpus = Corpus()
        self.index: SearchIndex | None = None
        self.result: SearchResult | None = None
        self.loaded = 0
        self.loading = True
        self.load_progress = (0, 0)
        self.marked: set[str] = set()
        self.query_text = ""
        self._generation = 0
        self._read_timer: Timer | None = None
        self._restore_paper: str | None = None
        self._index_after_first_frame = False
        self._rows = _Rows(self)
        saved_theme = self.library.setting("theme")
        if saved_theme and saved_theme in self.available_themes:
            self.theme = saved_theme

    # -- layout ---------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        # select_on_focus=False: `/` continues the current query; nothing typed right after
        # `/` is selected and then overwritten.
        yield Input(
            select_on_focus=False,
            placeholder="/ to filter — words, 'exact, ^title, !not, a | b, #tag, "
            "is:unread — ? for help",
            id="filter",
        )
        with Horizontal(id="main"):
            yield PaperList(id="paper-list")
            yield PaperView(id="paper-view")
        yield Static(id="status", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        paper_list = self.query_one(PaperList)
        paper_list.empty_message = Content("Loading dumps…")
        paper_list.focus()
        self.query_one(PaperView).show(None, "Loading…")
        self.query_text = sanitise(self.library.setting("filter", "") or "").replace("\n", " ")
        self._restore_paper = self.library.setting("paper")
        if self.query_text:
            with self.prevent(Input.Changed):
                self.query_one("#filter", Input).value = self.query_text
        if self.library.problem:
            self.notify(
                self.library.problem, title="Library", severity="warning", timeout=15, markup=False
            )
        self._update_status()
        self._load()

    def on_app_focus(self) -> None:
        """Back in this terminal: another reader or the CLI may have changed the library."""
        try:
            self.library.reload()
        except LibraryError as exc:
            self.notify(str(exc), title="Library", severity="error", markup=False)
            return
        self._sync_title_overrides()
        self._refresh()

    @property
    def narrow(self) -> bool:
        return self.size.width < NARROW_WIDTH

    # -- loading --------------------------------------------------------------------------
    def _load(self) -> None:
        """Small dumps load before the first frame; large ones stream in from a thread."""
        builder = CorpusBuilder(self.paths)
        self.corpus = builder.corpus
        total = 0
        for path in builder.files:
            try:
                total += path.stat().st_size
            except OSError:
                continue
        if total <= SYNC_LOAD_BYTES:
            for path in builder.files:
                builder.add_file(path)
            builder.finish()
            self._papers_arrived(len(builder.files), len(builder.files))
            self._all_loaded()
            self._index_after_first_frame = True
        else:
            self._load_in_thread(builder)

    @work(thread=True, exclusive=True, group="load")
    def _load_in_thread(self, builder: CorpusBuilder) -> None:
        from ..corpus_cache import adopt, key_for, load, save

        total = len(builder.files)
        key = key_for(builder.files)
        cached = load(self.cache_dir.with_name("corpus"), key) if key else None
        if cached is not None:  # the same dumps as last time: no parsing
            adopt(builder.corpus, *cached)
            self.call_from_thread(self._papers_arrived, total, total)
            self.call_from_thread(self._all_loaded)
            self._index_in_thread()
            return
        first_file_error = len(builder.corpus.errors)
        self.call_from_thread(self._papers_arrived, 0, total)
        for n, path in enumerate(builder.files, start=1):
            for _batch in builder.add_file_in_batches(path):  # rows show batch by batch
                self.call_from_thread(self._papers_arrived, n - 1, total)
            self.call_from_thread(self._papers_arrived, n, total)
        builder.finish()
        self.call_from_thread(self._all_loaded)
        if key is not None:
            save(
                self.cache_dir.with_name("corpus"),
                key,
                builder.corpus,
                builder.corpus.errors[first_file_error:],
            )
        self._index_in_thread()

    def on_ready(self) -> None:
        # The first frame is on screen: now build the index (numpy and rapidfuzz imports and
        # all), so that it never competes with the first paint.
        if self._index_after_first_frame:
            self._index_after_first_frame = False
            self._build_index()

    @work(thread=True, exclusive=True, group="index")
    def _build_index(self) -> None:
        self._index_in_thread()

    def _index_in_thread(self) -> None:
        from ..search import SearchIndex, cache_key_for

        key = cache_key_for(self.corpus.files)
        index = SearchIndex(self.corpus, cache_dir=self.cache_dir, cache_key=key)
        self.call_from_thread(self._index_ready, index)

    def _papers_arrived(self, files_done: int, files_total: int) -> None:
        self.load_progress = (files_done, files_total)
        count = len(self.corpus.papers)
        if count != self.loaded:
            first = self.loaded == 0
            self.loaded = count
            paper_list = self.query_one(PaperList)
            if self.result is None:
                paper_list.set_source(self._rows, paper_list.cursor)
            if first:  # rows first; the paper (math rendering) right after they are drawn
                self.call_after_refresh(self._show_current)
        self._update_status()

    def _all_loaded(self) -> None:
        self.loading = False
        self.loaded = len(self.corpus.papers)
        errors = self.corpus.errors
        if errors:
            self._report_load_errors(errors)
        paper_list = self.query_one(PaperList)
        if self.loaded == 0:
            paper_list.empty_message = Content(
                "No dumps loaded.\n\nStart with: abstract-reader PATH…  (dump files or folders)"
                "\nor with no argument for the bundled NeurIPS 2026 dumps."
            )
        if self.result is None:
            paper_list.set_source(self._rows, paper_list.cursor)
        if not self.query_text and self._restore_paper:
            self._move_to(self._restore_paper)
            self._restore_paper = None
        self.call_after_refresh(self._show_current)  # list first; math rendering after
        self._update_status()

    def _report_load_errors(self, errors: list[LoadError]) -> None:
        fatal = [e for e in errors if e.fatal]
        lines = [str(e) for e in errors[:12]]
        if len(errors) > 12:
            lines.append(f"… and {len(errors) - 12} more")
        title = (
            f"{len(fatal)} path{'s' if len(fatal) != 1 else ''} could not be loaded"
            if fatal
            else "Loaded with warnings"
        )
        self.notify(
            "\n".join(lines),
            title=title,
            severity="error" if fatal else "warning",
            timeout=20,
            markup=False,
        )

    def _index_ready(self, index: SearchIndex) -> None:
        self.index = index
        self._sync_title_overrides()
        if self.query_text:
            self._run_filter()
        self._update_status()

    # -- the filter -------------------------------------------------------------------------
    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.query_text = event.value
        self._run_filter()

    @on(Input.Submitted, "#filter")
    def _filter_submitted(self) -> None:
        self.screen.set_focus(self.query_one(PaperList))  # at once: the next key is for the list

    def _run_filter(self) -> None:
        self._generation += 1
        if not self.query_text.strip():
            self._show_result(None, self._generation)
            return
        if self.index is None:
            self._update_status()
            return
        uses_library = "#" in self.query_text or "is:" in self.query_text
        state = self._library_state() if uses_library else _FrozenState({}, {})
        self._search(self.index, self.query_text, state, self._generation)

    def _library_state(self) -> _FrozenState:
        """A copy of the state filters for the search thread, in one pass over the library."""
        snap = self.library.snapshot
        tags: dict[str, set[str]] = {}
        for paper_id, names in snap.tags.items():
            for name in names:
                tags.setdefault(name.casefold(), set()).add(paper_id)
        return _FrozenState(
            tags={name: frozenset(ids) for name, ids in tags.items()},
            states={
                "bookmarked": frozenset(snap.bookmarks),
                "read": frozenset(snap.read),
                "noted": frozenset(snap.notes),
                "tagged": frozenset(p for ids in tags.values() for p in ids),
                "marked": frozenset(self.marked),
            },
        )

    @work(thread=True, exclusive=True, group="search")
    def _search(self, index: SearchIndex, query: str, state: _FrozenState, generation: int) -> None:
        result = index.search(query, state)
        self.call_from_thread(self._show_result, result, generation)

    def _show_result(self, result: SearchResult | None, generation: int) -> None:
        if generation != self._generation:
            return  # an older query finished after a newer one started
        paper_list = self.query_one(PaperList)
        current = self._restore_paper or paper_list.current_id  # the saved paper, at start
        self._restore_paper = None
        self.result = result
        if result is None:
            try:
                position = self.corpus.index_of(current) if current and self.loaded else 0
            except KeyError:  # a saved paper that is not in the dumps loaded now
                position = 0
        else:
            found = result.position_of(current) if current else None
            position = found if found is not None else 0
            query = self.query_text.strip()
            paper_list.empty_message = Content.assemble(
                "No paper matches ",
                (query, "bold"),
                ".\n\nEsc clears the filter; ? shows the query language.",
            )
        paper_list.set_source(self._rows, position)
        self._show_current()
        self._update_status()

    def _move_to(self, paper_id: str) -> bool:
        paper_list = self.query_one(PaperList)
        if self.result is not None:
            position = self.result.position_of(paper_id)
        else:
            try:
                position = self.corpus.index_of(paper_id)
            except KeyError:
                position = None
        if position is None or position >= len(self._rows):
            return False
        paper_list.cursor = position
        return True

    # -- the current paper -------------------------------------------------------------------
    def title_of(self, paper: Paper) -> str:
        meta = self.library.snapshot.metadata.get(paper.id)
        return meta.title if meta is not None and meta.title else paper.title

    def current_paper(self) -> Paper | None:
        paper_id = self.query_one(PaperList).current_id
        return self.corpus.get(paper_id) if paper_id else None

    def details(self, paper: Paper) -> PaperDetails:
        from ..cite import record

        snap = self.library.snapshot
        rec = record(paper, snap)
        rendered = render(paper.abstract, DISPLAY_LIMIT)  # cut before rendering, not after
        title_spans: tuple[tuple[int, int], ...] = ()
        body_spans: tuple[tuple[int, int], ...] = ()
        if self.result is not None and not self.result.query.empty:
            title_spans = tuple(self.result.matcher.spans(rec.title))
            # only what the view shows: an abstract of megabytes is cut at DISPLAY_LIMIT
            body_spans = tuple(self.result.matcher.spans(rendered.text[:DISPLAY_LIMIT]))
        return PaperDetails(
            paper_id=paper.id,
            title=rec.title,
            title_derived=rec.title_derived,
            venue=paper.venue_year,
            sources=tuple(str(s) for s in paper.sources),
            tags=rec.tags,
            bookmarked=rec.bookmarked,
            read=rec.read,
            marked=paper.id in self.marked,
            body=rendered,
            authors=rec.authors,
            url=rec.url,
            doi=rec.doi,
            note=rec.note,
            title_spans=title_spans,
            body_spans=body_spans,
        )

    @on(PaperList.CursorMoved)
    def _cursor_moved(self, event: PaperList.CursorMoved) -> None:
        self._show_current()

    def _show_current(self) -> None:
        paper = self.current_paper()
        view = self.query_one(PaperView)
        if paper is None:
            if self.loading:
                message = "Loading…"
            elif self.loaded == 0:
                message = "No dumps loaded."
            else:
                message = "No paper matches the filter."
            view.show(None, message)
            return
        details = self.details(paper)
        view.show(details)
        if isinstance(self.screen, PaperScreen):
            self.screen.update(details)
        self._schedule_read(paper.id)

    def _schedule_read(self, paper_id: str) -> None:
        if self._read_timer is not None:
            self._read_timer.stop()
            self._read_timer = None
        if self.library.setting("auto_read", "on") == "off" or self.library.read_only:
            return
        if paper_id in self.library.snapshot.read:
            return
        if self.narrow and not isinstance(self.screen, PaperScreen):
            return  # narrow: the paper is not on screen until it is opened

        def mark() -> None:
            self._read_timer = None
            if self.query_one(PaperList).current_id == paper_id:
                self._write(lambda: self.library.set_read([paper_id], True))

        self._read_timer = self.set_timer(self.read_delay, mark)

    def _refresh(self) -> None:
        self.query_one(PaperList).refresh_rows()
        paper = self.current_paper()
        if paper is not None:
            details = self.details(paper)
            self.query_one(PaperView).show(details)
            if isinstance(self.screen, PaperScreen):
                self.screen.update(details)
        self._update_status()

    @on(PaperList.Opened)
    def _opened(self, event: PaperList.Opened) -> None:
        paper = self.corpus.get(event.paper_id)
        if paper is None:
            return
        if self.narrow:
            self.push_screen(PaperScreen(self.details(paper)))
            self._schedule_read(paper.id)
        else:
            self.query_one(PaperView).focus()

    # -- status -------------------------------------------------------------------------------
    def _update_status(self) -> None:
        snap = self.library.snapshot
        total = self.loaded
        shown = len(self._rows)
        by_id = self.corpus.get
        read = sum(1 for pid in snap.read if by_id(pid) is not None)
        bookmarked = sum(1 for pid in snap.bookmarks if by_id(pid) is not None)
        parts = [f"{shown:,} of {total:,}" if self.result is not None else f"{total:,} papers"]
        parts.append(f"{max(0, total - read):,} unread")
        parts.append(f"{bookmarked:,} bookmarked")
        if self.marked:
            parts.append(f"{len(self.marked)} marked")
        if self.loading:
            done, files = self.load_progress
            parts.append(f"loading {done}/{files} files…")
        elif self.index is None:
            parts.append(
                "indexing…" + (" (the filter applies when ready)" if self.query_text else "")
            )
        if self.result is not None and self.result.ignored:
            parts.append("ignored: " + " ".join(self.result.ignored))
        problems = [e for e in self.corpus.errors if e.fatal]
        if problems:
            parts.append(f"⚠ {len(problems)} load error{'s' if len(problems) != 1 else ''}")
        if self.library.read_only:
            parts.append("⚠ library read-only")
        orphans = len(snap.paper_ids()) - sum(1 for pid in snap.paper_ids() if by_id(pid))
        if orphans and not self.loading:
            parts.append(f"{orphans} saved paper{'s' if orphans != 1 else ''} not in these dumps")
        self.query_one("#status", Static).update(Content(" · ".join(parts)))

    # -- actions: moving ----------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if getattr(self, "_exit", False):  # quitting: keys still queued (a paste) do nothing
            return False
        if action == "focus_filter":
            # Where text is being typed (the filter, an editor, the palette), `/` is text.
            from textual.widgets import TextArea

            if isinstance(self.focused, Input | TextArea) or self.screen.is_modal:
                return False
        return True

    def action_focus_filter(self) -> None:
        filter_bar = self.query_one("#filter", Input)
        if isinstance(self.screen, PaperScreen):  # the filter is on the list's screen
            self.pop_screen()
            self.call_after_refresh(lambda: self.screen.set_focus(filter_bar))
            return
        # Synchronously: keys typed right after `/` (fast typing, a paste) must reach the
        # filter, not run as commands on the list.
        self.screen.set_focus(filter_bar)

    def action_escape(self) -> None:
        filter_bar = self.query_one("#filter", Input)
        if filter_bar.has_focus or (self.query_one(PaperView).has_focus and not self.narrow):
            self.query_one(PaperList).focus()
        elif self.marked:
            self.marked.clear()
            self._refresh()
        elif filter_bar.value:
            filter_bar.value = ""

    def action_help(self) -> None:
        from .screens.help import HelpScreen

        self.push_screen(HelpScreen())

    def _step_unread(self, step: int) -> None:
        rows = self._rows
        paper_list = self.query_one(PaperList)
        read = self.library.snapshot.read
        i = paper_list.cursor + step
        while 0 <= i < len(rows):
            if rows.paper(i).id not in read:
                paper_list.cursor = i
                return
            i += step
        self.notify(
            "No more unread papers " + ("below." if step > 0 else "above."),
            severity="information",
            timeout=3,
        )

    def action_next_unread(self) -> None:
        self._step_unread(1)

    def action_previous_unread(self) -> None:
        self._step_unread(-1)

    # -- palette, theme, exit -------------------------------------------------------------------
    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        commands = [
            ("Filter", "Focus the filter bar", self.action_focus_filter),
            ("Bookmark", "Bookmark on/off (marked papers too)", self.action_bookmark),
            ("Toggle read", "Mark read/unread (marked papers too)", self.action_toggle_read),
            ("Mark for bulk action", "Mark/unmark the current paper", self.action_mark),
            ("Edit tags", "Tag editor for the paper (or the marked ones)", self.action_tags),
            ("Tag list", "Every tag with its count; filter to one", self.action_tag_list),
            ("Edit metadata", "Real title, authors, URL, DOI, year", self.action_edit_metadata),
            ("Edit note", "The paper's note", self.action_note),
            ("Copy citation", "In the default format", self.action_copy),
            ("Copy citation as…", "Choose a format, with a preview", self.action_cite_picker),
            ("Next unread", "Move to the next unread paper", self.action_next_unread),
            ("Previous unread", "Move to the previous unread paper", self.action_previous_unread),
            (
                "Show bookmarked",
                "Filter to bookmarked papers",
                lambda: self._set_filter("is:bookmarked"),
            ),
            ("Show unread", "Filter to unread papers", lambda: self._set_filter("is:unread")),
            ("Clear filter", "Show every paper", lambda: self._set_filter("")),
            (
                "Toggle auto-read",
                "Mark papers read when shown for a moment",
                self.action_toggle_auto_read,
            ),
            ("Help", "Keys and the query language", self.action_help),
        ]
        for title, help_text, callback in commands:
            yield SystemCommand(title, help_text, callback)

    def _set_filter(self, text: str) -> None:
        self.query_one("#filter", Input).value = text

    def action_toggle_auto_read(self) -> None:
        on_ = self.library.setting("auto_read", "on") == "off"
        if self._write(lambda: self.library.set_setting("auto_read", "on" if on_ else "off")):
            self.notify(f"Auto-read {'on' if on_ else 'off'}")

    def watch_theme(self, theme: str) -> None:
        library = getattr(self, "library", None)
        if library is not None and not library.read_only and library.setting("theme") != theme:
            with contextlib.suppress(LibraryError):
                library.set_setting("theme", theme)

    def _save_session(self) -> None:
        if self.library.read_only:
            return
        try:
            self.library.set_setting("filter", self.query_text)
            paper_id = self.query_one(PaperList).current_id if self.loaded else None
            if paper_id:
                self.library.set_setting("paper", paper_id)
        except LibraryError:
            pass

    async def action_quit(self) -> None:
        self._save_session()
        self.exit(0)


def run(paths: Sequence[str] | None, db: str | None = None) -> int:
    """The bare command. Exit 1 when a path could not be loaded (as the subcommands do); the
    load errors are repeated on stderr once the screen is back, so they outlive the session."""
    import sys

    app = ReaderApp(paths, db)
    code = app.run()
    app.library.close()
    fatal = app.corpus.fatal_errors
    for problem in fatal:
        sys.stderr.write(f"abstract-reader: {problem}\n")
    if fatal or app.return_code:  # return_code 1: the app crashed (Textual printed why)
        return 1
    return code if isinstance(code, int) else 0

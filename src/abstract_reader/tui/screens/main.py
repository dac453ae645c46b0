"""The main screen: the filter, the paper list, the paper view and the status bar.

It holds the reader's state through one ``Session`` (plain Python, ``abstract_reader.session``)
and turns keys into calls on it. Every library change — made here or by another process —
arrives the same way: ``Library.refresh`` says which facts changed, the screen redraws what
shows them and re-runs the filter when the query reads one of them.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Self

from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal
from textual.content import Content
from textual.geometry import Region
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer
from textual.types import NoActiveAppError
from textual.widgets import Input
from textual.worker import Worker, WorkerState

from ...corpus import (
    Corpus,
    CorpusBuilder,
    LoadError,
    Paper,
    fault_text,
    files_bytes,
    listed_problems,
    more_problems,
)
from ...library import (
    Library,
    LibraryBusy,
    LibraryError,
    Metadata,
    MetadataConflict,
    NoteConflict,
    tag_query,
)
from ...metadata import EffectiveMetadata, provenance
from ...paper import SOURCES_SHOWN
from ...plural import count_phrase, papers_phrase
from ...priority import lower_this_thread
from ...session import (
    Dependency,
    Session,
    dump_set_key,
    metadata_change,
    metadata_conflicts,
    save_place,
    saved_place,
    tag_change,
)
from ...sorting import SORTS, canonical_sort
from ...text import display_title, render, sanitise
from ..commands import (
    COMMANDS,
    DIALOG_BINDINGS,
    MAIN_FOOTER_PALETTE_AFTER,
    MAIN_FOOTER_PRIORITY,
    NO_KEY,
    bindings,
    footer_priority,
    key_label,
    keyed,
    keys_in_effect,
)
from ..widgets.fitted_footer import FittedFooter
from ..widgets.fitted_input import FittedInput
from ..widgets.paper_list import PaperList, Row
from ..widgets.paper_view import DISPLAY_LIMIT, PaperDetails, PaperView
from ..widgets.status_line import StatusLine
from .paper import PaperScreen

if TYPE_CHECKING:
    from pathlib import Path

    from ...clipboard import CopyResult
    from ...library.drafts import Draft, Drafts
    from ...search import SearchIndex, SearchResult
    from ...search.engine import EarlyIndex
    from ...sorting import TitleOrder
    from .editors import MetadataEditor, NoteEditor, NoteResult, SaveListener
NARROW_WIDTH = 100
SYNC_LOAD_BYTES = 1 << 20  # dumps up to this size load before the first frame
#: Dumps of at least this many bytes (~25,000 papers) are indexed while they load: the
#: abstracts' chunks go to the tokenising helper process as rows come (`EarlyIndex`).
EARLY_INDEX_BYTES = 32 << 20
#: … from this many rows on (a chunk's worth; the search stack's imports come after the
#: first rows were drawn)
EARLY_INDEX_ROWS = 8192
#: From this many papers on, the index is handed over before its cache is saved and mapped
#: (~3 s at 1M, off the path to "fully indexed"); below it, after (~0.2 s at 100k), so
#: that the built arrays are gone before the first searches (the 100k peak is ~15 MB lower)
HAND_OVER_FIRST = 400_000
INDEX_AFTER_S = 0.5  #: the index build starts after the first abstract is drawn, or this
POLL_S = 1.0  # how often the library is asked whether another process wrote
#: Unsaved notes of earlier sessions: looked for this many times at most, this far apart,
#: while one is being typed in another reader (whose window closed a moment ago, it may
#: still be ending: `_tell_drafts`)
DRAFTS_LOOKS = 30
DRAFTS_LOOK_AGAIN_S = 2.0
KEYS_QUIET_S = 0.4  # background work that can wait starts again this long after a key
#: … and a large index's cache save this long: it takes seconds (a pause of the typist's
#: between two words is not the end of the query), and nothing the user can ask for while
#: the filter has the focus waits for it (`m` is pressed in the list: no wait then)
SAVE_QUIET_S = 1.0
#: a warm start waits at most this long for the UI to take its first chunk's rows
FIRST_ROWS_WAIT_S = 0.5
CANCEL_CHECK_S = 0.02  #: how often a thread waiting for the UI checks that the reader goes on
#: how long the load problems' notice stays (their count stays in the status)
LOAD_NOTICE_S = 12.0
BUSY_RETRY_S = 2.0  # a write the library was too busy for is tried once more after this


class _ReopenOnFailure:
    """The listener of a save of typed text made with no editor open (a conflict dialog's
    "keep mine"): when the library does not take it, an editor opens again with the text,
    saying why (``reopen``), so nothing typed is lost; ctrl+s there tries again."""

    retrying = True  # no second try of its own: the user's ctrl+s in the reopened editor

    def __init__(self, reopen: Callable[[str], None]) -> None:
        self._reopen = reopen

    def saved(self) -> None:
        pass

    def busy(self, why: str, retry_in: float) -> None:
        self._reopen(why)

    def not_saved(self, why: str) -> None:
        self._reopen(why)


#: The filter's placeholder, longest first: the longest that fits is shown (70 columns: the third).
FILTER_PLACEHOLDERS = (
    "/ to filter — words, 'exact, ^title, !not, a | b, #tag, is:unread — ? for help",
    "/ to filter — words, 'exact, ^title, !not, a | b, #tag — ? for help",
    "/ to filter — words, 'exact, ^title, !not, #tag — ? for help",
    "/ to filter — ? for help",
)
#: How long a key waits for its search before the screen goes on without it (the result then
#: comes from a worker): a search quicker than this is drawn with the key's echo, in one frame.
SEARCH_WAIT_S = 0.012


#: Set by the reader's command (``tui.app.run``), not in tests: many apps in one process
#: (a test run) would keep each other's frozen cycles.
SETTLE_OBJECTS = False


def _settle_objects() -> None:
    """What is loaded so far stays: out of the garbage collector's scans (``gc.freeze``).

    The corpus, the index and the imports are millions of long-lived objects; each full
    collection walked them all (124–150 ms at 10,000 papers, a young-generation one up to
    40 ms while loading), holding the GIL, so a key's echo or a frame waited for it. Frozen
    objects are still freed by reference counting; only cycles among them stay."""
    if SETTLE_OBJECTS:
        gc.freeze()


@functools.cache
def _search_pool() -> ThreadPoolExecutor:
    """The search thread: one for the process, started at the first search, so a search
    begins at once (no thread to start, no hop through the event loop)."""
    return ThreadPoolExecutor(1, thread_name_prefix="search")


class _Cancelled(Exception):
    """The reader is quitting: the loading or index thread stops where it is."""


def _early_index(corpus: Corpus) -> EarlyIndex:
    from ...search.engine import EarlyIndex

    return EarlyIndex(corpus)


def _save_corpus(
    save: Callable[[Path, str, Corpus, list[LoadError]], object],
    cache: Path,
    key: str,
    corpus: Corpus,
    errors: list[LoadError],
) -> None:
    """Write the parsed corpus's cache (in a thread of its own). The abstracts it reads
    leave the resident set chunk by chunk as it goes (`corpus_cache._save`: at a million
    papers they are 1.3 GB). Failing to save is no error: the next start parses."""
    try:
        with contextlib.suppress(Exception):
            save(cache, key, corpus, errors)
    finally:
        corpus.papers.release_pages()


def _check_index_ahead(cache_dir: Path, files: list[str], n: int) -> None:
    from ...search.cache import check_ahead  # (imported here: not before the first rows)

    check_ahead(cache_dir, files, n)


def _stop_if_cancelled() -> None:
    """In a worker thread: raise `_Cancelled` once the worker is cancelled (Textual cancels
    every worker when the app exits; a thread is never stopped by it, and the process waits
    for the thread: quitting during a 100k build took 10 s of blank screen)."""
    from textual.worker import NoActiveWorker, get_current_worker

    try:
        worker = get_current_worker()
    except NoActiveWorker:
        return
    if worker.is_cancelled:
        raise _Cancelled


class _LoadProgress(Message):
    """The loading thread has more rows or more of the index (`MainScreen._post_progress`)."""


#: What each worker group does, for the notification when one fails.
_WORKER_WHAT = {
    "load": "Loading the dumps",
    "index": "Building the search index",
    "search": "Searching",
    "copy": "Copying",
    "browser": "Opening the link",
    "seen": "Noting what is new",
    "match": "Matching metadata",
    "candidates": "Looking for metadata candidates",
    "like": "Preparing like: (similar papers)",
    "titles": "Sorting by title",
}


#: Commands on single letters: text, not commands, while the filter has focus.
_LETTER_ACTIONS = frozenset(
    c.action_name
    for c in COMMANDS
    if c.where == "main" and c.keys and all(len(k) == 1 for k in c.keys.split(","))
)


def _provenance_line(meta: EffectiveMetadata) -> str | None:
    """Where matched metadata came from, for the view (None: not from a match)."""
    if meta.origin != "match" or meta.provenance is None:
        return None
    return meta.provenance.describe()


def load_notice_title(corpus: Corpus) -> str:
    """The load notice's counts, in the status's words: "3 load errors · 4 files loaded,
    1 with warnings" beside "⚠ 3 load errors" (both count the paths that gave nothing)."""
    loaded = f"{count_phrase(len(corpus.files), 'file')} loaded"
    if corpus.warned:
        loaded += f", {corpus.warned:,} with warnings"
    if not corpus.failed:
        return loaded
    return f"{count_phrase(corpus.failed, 'load error')} · {loaded}"


class _Rows:
    """The list's rows: the search result (or the corpus order) seen through the library."""

    def __init__(self, screen: MainScreen) -> None:
        self.screen = screen
        self._spans_for: object = None  #: the result the remembered spans are of
        self._spans: dict[str, tuple[tuple[int, int], ...]] = {}  #: title → its matches

    def __len__(self) -> int:
        return self.screen.session.row_count(self.screen.loaded)

    def paper(self, index: int) -> Paper:
        return self.screen.session.paper_at(index)

    def paper_id(self, index: int) -> str:
        return self.screen.session.brief_at(index).id

    def row(self, index: int) -> Row:
        session = self.screen.session
        paper = session.brief_at(index)  # (a row shows no abstract: none is read)
        snap = session.library.snapshot
        meta = session.metadata(paper)  # (once: the title and the venue are both of it)
        title = display_title(meta.title)  # (what is matched and drawn: no {GAN}, no $k$)
        spans: tuple[tuple[int, int], ...] = ()
        result = session.result
        if result is not None and not result.query.empty:
            if self._spans_for is not result:  # a row is drawn in many frames: matched once
                self._spans_for = result
                self._spans = {}
            found = self._spans.get(title)
            if found is None:
                if len(self._spans) > 4096:
                    self._spans.clear()
                found = self._spans[title] = tuple(result.matcher.spans(title))
            spans = found
        return Row(
            paper_id=paper.id,
            title=title,
            venue=meta.venue_label,
            tags=tuple(snap.tags.get(paper.id, ())),
            bookmarked=paper.id in snap.bookmarks,
            read=paper.id in snap.read,
            marked=paper.id in session.marks,
            spans=spans,
        )


class FilterInput(FittedInput):
    """The filter bar. Its own keys show in the footer while it has focus (the list's keys
    do not apply there).

    Enter and Esc are priority bindings: they run while the app handles the key, before it
    hands the next one on, and they move the focus to the list there and then. Otherwise the
    keys of a quick "⏎ j j" reach the filter (still focused while its Enter waited in its
    queue) and are typed into it."""

    BINDINGS: ClassVar[list[BindingType]] = list(DIALOG_BINDINGS["filter"])

    async def action_submit(self) -> None:
        self.screen.set_focus(self.screen.query_one(PaperList))  # at once: see the class
        await super().action_submit()

    _value_changing = False

    def _watch_value(self, value: str) -> None:
        self._value_changing = True
        try:
            super()._watch_value(value)
        finally:
            self._value_changing = False

    def refresh(
        self,
        *regions: Region,
        repaint: bool = True,
        layout: bool = False,
        recompose: bool = False,
    ) -> Self:
        """A typed key changes the input's scrollable width (a layout reactive), which would
        lay out the whole screen on every key; the filter's box never depends on its text
        (full width, fixed height), so that is a repaint."""
        if layout and self._value_changing and not self.styles.auto_dimensions:
            layout = False
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)


class MainScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = list(bindings("main"))

    def __init__(
        self,
        library: Library,
        paths: list[str] | None,
        *,
        read_delay: float | None,
        cache_dir: Path,
        list_width: int | str | None = None,
        citation_format: str | None = None,
    ) -> None:
        super().__init__()
        self.session = Session(library)
        self.paths = paths
        self._place_key = dump_set_key(paths)  #: the filter and paper are kept per dump set
        self.read_delay = read_delay  #: None: auto-read is off (config file)
        self.list_width = list_width
        self.citation_format = citation_format
        self.cache_dir = cache_dir
        self.loaded = 0
        self.loading_dumps = True
        self.load_progress: tuple[int | None, int] = (0, 0)  #: files loaded (None: cached), files
        self.index_progress = (0, 0)  #: papers indexed, papers (while the index is built)
        #: progress from the loading thread not shown yet, and whether a message says so
        self._progress_args: tuple[int | None, int] | None = None
        self._index_progress_args: tuple[int, int] | None = None
        self._progress_posted = False
        #: set once the UI has taken the progress last posted (`_await_progress_shown`)
        self._progress_taken = threading.Event()
        self._progress_taken.set()
        #: the background work after the index (the similarity model) is done: the corpus
        #: cache's second check waits for it (`corpus_cache.save_and_vouch`)
        self._background_done = threading.Event()
        self._drafts_told = False  #: the unsaved notes of earlier sessions were said
        self._drafts_looks = 0  #: times the drafts folder was looked at for them
        self._generation = 0
        self._searching: Future[SearchResult] | None = None  #: a search that outlasted the wait
        self._search_again = False  #: a newer query came while it ran
        self._keep_position = False
        self._read_timer: Timer | None = None
        self._read_pending: str | None = None  #: the paper the read timer is for
        #: the filter was left before its result came: its paper is read once shown
        self._read_when_shown = False
        self._restore_paper: str | None = None
        self._index_after_first_frame = False
        #: the query cleared most recently (by Esc, or by editing the filter empty), brought
        #: back by Esc on an empty filter; forgotten once another query is typed
        self._cleared_query = ""
        self._deleting_from: str | None = None  #: the query before the current deletions
        self._history_at: int | None = None  #: where Up/Down are in the filter's history
        self._history_draft = ""  #: what was typed before walking the history
        self._history_value = ""  #: the query the history put in the filter
        self._library_problem: str | None = None
        self._title_order_making = False  #: a worker makes the corpus's TitleOrder
        self._rows = _Rows(self)

    @property
    def library(self) -> Library:
        return self.session.library

    # -- layout ---------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        # select_on_focus=False: `/` continues the current query; nothing typed right after
        # `/` is selected and then overwritten.
        yield FilterInput(
            select_on_focus=False,
            placeholders=FILTER_PLACEHOLDERS,
            id="filter",
        )
        with Horizontal(id="main"):
            yield PaperList(id="paper-list")
            yield PaperView(id="paper-view")
        yield StatusLine(id="status")
        # under 120 columns not every key fits: `? Help` and `q Quit` stay, the least wanted
        # keys are left out (they still work)
        yield FittedFooter(
            priority=footer_priority(MAIN_FOOTER_PRIORITY), palette_after=MAIN_FOOTER_PALETTE_AFTER
        )

    def on_unmount(self) -> None:
        # the reader is closing: nothing more to wait for (a quit before the similarity
        # model was built still checks and records the corpus cache, while the process lives)
        self._background_done.set()
        self._progress_taken.set()  # (a loading thread waiting for the UI: no UI now)

    def on_mount(self) -> None:
        paper_list = self.query_one(PaperList)
        paper_list.empty_message = Content("Loading dumps…")
        paper_list.focus()
        self._fit_list_width()
        self.query_one(PaperView).show(None, "Loading…")
        # the place of the last session on these dumps (another dump set's is not theirs)
        saved_query, self._restore_paper = saved_place(self.library, self._place_key)
        query = sanitise(saved_query).replace("\n", " ")
        self.session.set_query(query)
        sort = canonical_sort(self.library.setting("sort", "relevance") or "relevance")
        self.session.sort = sort if sort in SORTS else "relevance"
        if query:
            self._fill_filter(query, run=False)
        if self.library.problem:
            self.notify(
                self.library.problem, title="Library", severity="warning", timeout=15, markup=False
            )
        self.refresh_library()  # the first call only takes note of the library's state
        self._load()
        self.set_interval(POLL_S, self.refresh_library)

    @property
    def narrow(self) -> bool:
        return self.app.size.width < NARROW_WIDTH

    def _fit_list_width(self) -> None:
        """The list's width from the config file, beside the paper pane; on a narrow screen,
        where the pane is hidden, the list fills it (the stylesheet's rule: an inline width
        would win over it and leave the rest of the screen blank)."""
        if self.list_width is None:
            return
        paper_list = self.query_one(PaperList)
        paper_list.styles.width = None if self.narrow else self.list_width
        paper_list.styles.min_width = 0  # the stylesheet's minimum gives way

    def on_resize(self) -> None:
        self._fit_list_width()

    # -- loading --------------------------------------------------------------------------
    def _load(self) -> None:
        """Small dumps load before the first frame; large ones stream in from a thread."""
        builder = CorpusBuilder(self.paths)
        self.session.corpus = builder.corpus
        self.load_progress = (0, len(builder.files))  # the first frame knows the total
        self._update_status()
        if files_bytes(builder.files) <= SYNC_LOAD_BYTES:
            for path in builder.files:
                builder.add_file(path)
            builder.finish()
            self._papers_arrived(len(builder.files), len(builder.files))
            self._all_loaded()
            self._index_after_first_frame = True
        else:
            self._load_in_thread(builder)

    @work(thread=True, exclusive=True, group="load", exit_on_error=False)
    def _load_in_thread(self, builder: CorpusBuilder) -> None:
        lower_this_thread()  # (and the threads and helper processes it starts)
        with contextlib.suppress(_Cancelled):
            self._load_and_index(builder)

    def _load_and_index(self, builder: CorpusBuilder) -> None:
        from ...corpus_cache import open_for
        from ...corpus_cache import save_and_vouch as save
        from ...infile import is_metadata_file

        call = self.app.call_from_thread
        total = len(builder.files)
        corpus = builder.corpus
        cache = self.cache_dir.with_name("corpus")
        # only dumps are cached (metadata records carry fields the cache does not keep), and
        # the cache must name exactly the dumps asked for
        dumps_only = not any(is_metadata_file(p) for p in builder.files)
        # (the dumps' content key is hashed on a thread meanwhile: `open_for`)
        opened, key = open_for(cache, builder.files) if dumps_only else (None, None)
        if opened is not None:  # the same dumps as last time: mapped, not parsed
            # the index cache's arrays are checked meanwhile (`search.cache.check_ahead`),
            # from a quarter of the chunks on (its imports hold the GIL: not beside the
            # first rows' drawing)
            ahead = threading.Thread(
                target=_check_index_ahead,
                args=(self.cache_dir, opened.files, opened.count),
                name="index-check",
                daemon=True,
            )
            try:
                # rows show chunk by chunk as they are checked, posted as the parse's are:
                # this thread never waits for the UI, which draws the latest count once per
                # turn (at 1M, waiting for it after every chunk made a key's echo wait too);
                # final once the key agrees
                for rows in opened.publish(corpus.papers):
                    self._post_progress(None, total)
                    if not rows.start:  # the first rows drawn from the first chunk
                        self._await_progress_shown()
                    if rows.stop * 4 >= opened.count and ahead.ident is None:
                        ahead.start()
                opened.confirm(key)
            except _Cancelled:
                raise
            except Exception:  # CacheRefused, or damage: what was shown goes, the dumps are parsed
                self._progress_args = None  # (a progress update still queued shows nothing)
                call(self._papers_cleared, total)
            else:
                corpus.errors.extend(opened.errors)
                corpus.files.extend(opened.files)
                call(self._papers_arrived, total, total)
                call(self._all_loaded)
                self._index_in_thread()
                # every chunk's MAC held: the next start need not hash the texts again
                with contextlib.suppress(OSError):
                    opened.record(cache)
                return
        first_file_error = len(corpus.errors)
        # the abstracts go to an unlinked file beside the cache as they are parsed (mapped:
        # page cache, not this process's memory; see `PaperTable.spill_into`)
        corpus.papers.spill_into(cache)
        call(self._papers_arrived, 0, total)
        # Large dumps: the abstracts' chunks are tokenised by the helper process (its own
        # core) while this thread parses; the build carries on after `finish`.
        early_wanted = files_bytes(builder.files) >= EARLY_INDEX_BYTES
        early: EarlyIndex | None = None
        try:
            for n, path in enumerate(builder.files, start=1):
                try:
                    for _batch in builder.add_file_in_batches(path):  # rows show batch by batch
                        self._post_progress(n - 1, total)
                        if early is not None:
                            early.offer()
                        elif early_wanted and len(corpus.papers) >= EARLY_INDEX_ROWS:
                            early_wanted = False
                            early = _early_index(corpus)
                except _Cancelled:
                    raise
                except Exception as exc:
                    # A fault of ours mid-dump (a dump's own problems are load errors that
                    # skip it): the load stops here, says so where it stays on screen (the
                    # status's load errors), and the papers loaded so far are indexed and
                    # usable. A partial parse is never saved as these dumps' cache.
                    stopped = f"loading stopped here ({fault_text(exc)})"
                    corpus.errors.append(LoadError(str(path), stopped))
                    key = None
                    break
                self._post_progress(n, total)
            builder.finish()
        except BaseException:
            if early is not None:
                early.close()  # (the reader quit, or the load failed: the helper goes)
            raise
        call(self._all_loaded)
        saver: threading.Thread | None = None
        if key is not None:
            # Saved beside the build, from its own thread, as soon as the parse is done: a
            # reader quit while indexing keeps the parse (the process waits for a save under
            # way at exit: ~0.5 s at 100,000 papers). The save's work is mostly writing and
            # CRCs (no GIL); failing to save is no error.
            errors = corpus.errors[first_file_error:]
            saver = threading.Thread(
                target=_save_corpus,
                args=(
                    functools.partial(save, after=self._background_done),
                    cache,
                    key,
                    corpus,
                    errors,
                ),
                name="corpus-save",
            )
            saver.start()
        self._index_in_thread(early)
        if saver is not None:
            saver.join()  # (long done, but this worker ends when everything is written)

    def _await_progress_shown(self, limit: float = FIRST_ROWS_WAIT_S) -> None:
        """Wait (at most ``limit`` s) until the UI has taken the progress posted: a warm
        start whose chunks need no MAC (`Opened.vouched`) publishes a million rows in a
        fraction of a second, and the first rows are drawn sooner from the first chunk,
        with the rest published (and the index cache checked) while they are drawn."""
        deadline = time.monotonic() + limit
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or self._progress_taken.wait(min(left, CANCEL_CHECK_S)):
                return
            _stop_if_cancelled()

    def _post_progress(self, files_done: int | None, files_total: int) -> None:
        """Rows came (from the loading thread): the status and list catch up on the UI
        thread without this thread waiting for it; while one such update is queued, later
        ones only change what it will show. The reader quitting stops the thread here."""
        _stop_if_cancelled()
        self._progress_args = (files_done, files_total)
        if not self._progress_posted:
            self._progress_posted = True
            self._progress_taken.clear()  # (before the message: the UI sets it)
            self.post_message(_LoadProgress())

    @on(_LoadProgress)
    def _load_progress(self, _message: _LoadProgress) -> None:
        self._progress_posted = False  # first: a later update posts again (see above)
        self._progress_taken.set()
        rows, self._progress_args = self._progress_args, None
        indexed, self._index_progress_args = self._index_progress_args, None
        if rows is not None and self.loading_dumps:  # never after `_all_loaded`
            self._papers_arrived(*rows)
        if indexed is not None and self.session.index is None:  # never after `_index_ready`
            self._indexing(*indexed)

    def first_frame(self) -> None:
        """The first frame is on screen. The index (numpy and rapidfuzz imports and all) is
        built once the current paper's abstract is drawn too, so that its thread never holds
        the GIL while the first abstract is rendered; at the latest after INDEX_AFTER_S."""
        if self._index_after_first_frame:
            if self.loaded == 0 or self.query_one(PaperView).details is not None:
                self._start_index()  # (the first abstract was drawn with the rows)
            else:
                self.set_timer(INDEX_AFTER_S, self._start_index)

    def _start_index(self) -> None:
        if self._index_after_first_frame:
            self._index_after_first_frame = False
            self._build_index()

    @work(thread=True, exclusive=True, group="index", exit_on_error=False)
    def _build_index(self) -> None:
        lower_this_thread()
        with contextlib.suppress(_Cancelled):
            self._index_in_thread()

    def _index_in_thread(self, early: EarlyIndex | None = None) -> None:
        """Build (or read) the index; ``early``: its build begun while loading."""
        from ...search import SearchIndex, cache_key_for

        corpus = self.session.corpus
        try:
            key = cache_key_for(corpus.files)
            index = SearchIndex(
                corpus,
                cache_dir=self.cache_dir,
                cache_key=key,
                progress=self._post_indexing,
                defer_save=True,
                early=early,
            )
        finally:
            if early is not None:
                early.close()  # (SearchIndex has closed or taken it: nothing, then)
        self.session.prime_metadata(index)  # (here, not on the UI thread at the hand-over)
        # Saved, then read from the file written (page cache, not this process's memory:
        # ~65 MB at 100,000 papers) before the similarity model's pass over every posting,
        # so that no pass reads both the built arrays and the file's pages. Below
        # `HAND_OVER_FIRST` papers that comes before the index is handed over (~0.2 s at
        # 100k: searches then never keep the built arrays); from it on, after (a few
        # seconds at 1M, off the path to "fully indexed").
        if index.n < HAND_OVER_FIRST:
            index.save_and_map()
            self.app.call_from_thread(self._index_ready, index)
            return
        self.app.call_from_thread(self._index_ready, index, like=False)
        # The first keys after "fully indexed" are often typed now: the save (seconds at
        # 1M, the CRCs and the mapping holding the GIL for parts of it) waits while a query
        # is typed, as the like model does, so that it does not take the CPU from their
        # searches and frames — before it begins, and between its pieces (8 MB written, 1M
        # values compared), since typing often begins once it is under way. It goes on once
        # the filter is left or no key came for `SAVE_QUIET_S` (and on quitting; a `like:`
        # search, which waits for it through `index.settling`, lets it go on too).
        from ...search.similar import wait_while

        typing = functools.partial(wait_while, functools.partial(self.keys_arriving, SAVE_QUIET_S))
        typing()
        index.save_and_map(pause=typing)
        self.app.call_from_thread(self._prepare_like, index)

    def _post_indexing(self, done: int, total: int) -> None:
        """Index progress from the building thread, posted without waiting (as rows are);
        the reader quitting stops the build here (its helper process is closed)."""
        _stop_if_cancelled()
        self._index_progress_args = (done, total)
        if not self._progress_posted:
            self._progress_posted = True
            self._progress_taken.clear()  # (before the message: the UI sets it)
            self.post_message(_LoadProgress())

    def _indexing(self, done: int, total: int) -> None:
        self.index_progress = (done, total)
        self._update_status()

    def _papers_cleared(self, files_total: int) -> None:
        """The rows of a refused cache go, in one step on the UI thread: no frame is drawn
        between the corpus emptied and the list told so."""
        self.session.corpus.papers.clear()
        self._papers_arrived(0, files_total)

    def _papers_arrived(self, files_done: int | None, files_total: int) -> None:
        """Rows came: ``files_done`` of ``files_total`` dumps are in (None: the rows come
        from the corpus cache, all files at once)."""
        self.load_progress = (files_done, files_total)
        count = len(self.session.corpus.papers)
        if count != self.loaded:
            _settle_objects()
            first = self.loaded == 0
            self.loaded = count
            paper_list = self.query_one(PaperList)
            if self.session.result is None:
                self.session.apply_sort(count)
                paper_list.set_source(self._rows, paper_list.cursor)
            if first:  # rows first; the paper (math rendering) right after they are drawn
                self.call_after_refresh(self._show_current)
        self._update_status()

    def _all_loaded(self) -> None:
        _settle_objects()
        self.loading_dumps = False
        self.loaded = len(self.session.corpus.papers)
        errors = self.session.corpus.errors
        if errors:
            self._report_load_errors(errors)
        paper_list = self.query_one(PaperList)
        if self.loaded == 0:
            paper_list.empty_message = Content(
                "No dumps loaded.\n\nStart with: abstract-reader PATH…  (dump files or folders)"
                "\nor with no argument for the bundled NeurIPS 2026 dumps."
            )
        if self.session.result is None:
            self.session.apply_sort(self.loaded)
            paper_list.set_source(self._rows, paper_list.cursor)
        self._want_title_order()  # (a result's rows too: it waited for the load's end)
        if not self.session.query_text and self._restore_paper:
            self._move_to(self._restore_paper)
            self._restore_paper = None
        # the abstract in the same frame as the rows (its math is converted with a stored
        # symbol table, no pylatexenc import; the index thread starts after it is drawn)
        self._show_current()
        self._update_status()
        self.call_after_refresh(self._begin_session)  # off the first frame's path
        self.call_after_refresh(self._tell_drafts)

    def _tell_drafts(self) -> None:
        """Notes typed and not saved in an earlier session (the terminal closed, the reader
        was killed): said once the dumps are loaded, for the papers loaded — their note
        editor opens with what was typed — and counted for the others. A draft that is the
        stored note now (saved since, elsewhere) goes without a word."""
        if self._drafts_told:
            return
        corpus, notes = self.session.corpus, self.library.snapshot.notes
        left = self.drafts.all_left(self._live_draft_slots())  # (one look at the folder)
        papers: list[Paper] = []
        elsewhere = 0
        for pid in dict.fromkeys(d.paper_id for d in left):
            paper = corpus.get(pid)
            if paper is None:
                elsewhere += 1
            elif self._left_draft(paper, notes.get(pid, ""), left) is not None:
                papers.append(paper)
        if not papers and not elsewhere:
            # a reader whose window was closed a moment ago may still be ending (its drafts
            # are offered only once it has): looked at again a little later while a draft
            # is being typed elsewhere (for a while: it may be another reader left open)
            self._drafts_looks += 1
            if self._drafts_looks < DRAFTS_LOOKS and self.drafts.being_typed(
                self._live_draft_slots()
            ):
                self.set_timer(DRAFTS_LOOK_AGAIN_S, self._tell_drafts)
            return
        self._drafts_told = True
        keys = keys_in_effect("note", getattr(self.app, "keys_in_effect", None))
        key = next((key_label(k) for k in keys if k != NO_KEY), "")
        where = f"its note ({key})" if key else "its note"
        lines: list[str] = []
        if len(papers) == 1:
            lines.append(f"{self.session.describe(papers)}: {where} opens with what you typed.")
        elif papers:
            more = f" and {len(papers) - 3} more" if len(papers) > 3 else ""
            named = ", ".join(self.session.describe([p]) for p in papers[:3])
            lines.append(f"{named}{more}: each paper's note opens with what you typed.")
        if elsewhere:
            # (short: at 70×24 a notice shows four lines; their dumps opened offer them)
            lines.append(f"{elsewhere} on papers not loaded now.")
        count = len(papers) + elsewhere
        title = (
            "A note you did not save is kept"
            if count == 1
            else f"{count} notes you did not save are kept"
        )
        self._drafts_notice = (title, "\n".join(lines))
        self.notify(
            self._drafts_notice[1], title=title, severity="information", timeout=15, markup=False
        )

    def _unnotify_drafts(self) -> None:
        """The notice of the drafts left goes once a note editor opens with one (at 70×24
        it covered the editor's title, at 40×12 its text)."""
        for notice in list(self.app._notifications):
            if self._drafts_notice == (notice.title, notice.message):
                self.app._unnotify(notice)

    # -- the order by title of a large corpus -----------------------------------------------
    def _want_title_order(self) -> None:
        """The list waits for the corpus's title order (`Session.sort_pending`): a worker
        makes it once every dump is loaded (a load's end can still change titles), and the
        list is ordered again when it is made. Until then the rows keep their order and the
        status says "sorting by title…"; the keys go on meanwhile."""
        if self.session.sort_pending and not self.loading_dumps and not self._title_order_making:
            self._title_order_making = True
            self._make_title_order()

    @work(thread=True, exclusive=True, group="titles", exit_on_error=False)
    def _make_title_order(self) -> None:
        from ...sorting import TitleOrder

        lower_this_thread()
        try:  # (quitting stops it between its pieces: seconds at a million)
            titles = TitleOrder(self.session.corpus.papers, _stop_if_cancelled)
        except _Cancelled:
            return
        except BaseException:
            self.app.call_from_thread(setattr, self, "_title_order_making", False)
            raise  # (reported as a failed worker is)
        self.app.call_from_thread(self._title_order_made, titles)

    def _title_order_made(self, titles: TitleOrder) -> None:
        self._title_order_making = False
        self.session.take_title_order(titles)  # (out of date already: made again below)
        if not self.session.sort_pending:
            return  # another order was chosen meanwhile
        paper_list = self.query_one(PaperList)
        current = paper_list.current_id
        self.session.apply_sort(self.loaded)
        position = self.session.position_of(current) if current else None
        paper_list.set_source(self._rows, paper_list.cursor if position is None else position)
        self._want_title_order()
        self._update_status()

    @work(thread=True, exclusive=True, group="seen", exit_on_error=False)
    def _begin_session(self) -> None:
        """This session begins: note the dumps seen, and which papers are new (is:new)."""
        lower_this_thread()
        new = self.session.begin_session()
        self.app.call_from_thread(self._new_known, new)

    def _new_known(self, new: frozenset[str]) -> None:
        self.session.new = new
        if self.session.is_stale({"new"}):
            self._run_filter(keep_position=True)

    def _report_load_errors(self, errors: list[LoadError]) -> None:
        fatal = [e for e in errors if e.fatal]
        listed, left = listed_problems(errors)  # (the CLI lists as many)
        lines = [str(e) if e.fatal else f"warning: {e}" for e in listed]
        if left:
            lines.append(more_problems(left))
        # (they outlive the toast: the status keeps their count, the key lists them all)
        listing = f"{self._problems_key() or 'Load problems in the command palette'} lists them"
        if fatal:
            lines.append(f"{listing}; the load errors are printed again when you quit.")
        else:
            lines.append(f"{listing}.")
        title = load_notice_title(self.session.corpus)
        self._load_notice = (title, "\n".join(lines))
        self.notify(
            self._load_notice[1],
            title=title,
            severity="error" if fatal else "warning",
            timeout=LOAD_NOTICE_S,
            markup=False,
        )

    _problems_key_shown: str | None = None
    #: the load notice shown (title, message): it goes when the problems' dialog opens
    _load_notice: tuple[str, str] | None = None
    _drafts_notice: tuple[str, str] | None = None  #: (title, text) of `_tell_drafts`' notice

    def _problems_key(self) -> str:
        """The key in effect that lists the load problems ("L"; "" when a remap left it
        none: the palette's "Load problems" still does). (Read once: the status asks on
        every key typed into the filter, and the keys do not change while the reader runs.)"""
        if self._problems_key_shown is None:
            keys = keys_in_effect("load_problems", getattr(self.app, "keys_in_effect", None))
            self._problems_key_shown = next((key_label(k) for k in keys if k != NO_KEY), "")
        return self._problems_key_shown

    def action_load_problems(self) -> None:
        """Every load problem in a dialog (`screens/problems.py`); with none, says so."""
        corpus = self.session.corpus
        if not corpus.errors:
            loading = " so far" if self.loading_dumps else ""
            self.notify(
                f"No load problems{loading}: {load_notice_title(corpus)}.",
                title="Load problems",
                timeout=4,
                markup=False,
            )
            return
        from .problems import LoadProblems

        if isinstance(self.app.screen, LoadProblems):
            return
        # the notice goes: it lists the first of them, over the dialog's top (at 70×24 it
        # hid half the list)
        for notice in list(self.app._notifications):
            if self._load_notice == (notice.title, notice.message):
                self.app._unnotify(notice)
        keys = getattr(self.app, "keys_in_effect", None)
        self.app.push_screen(LoadProblems(corpus.errors, load_notice_title(corpus), keys))

    def _index_ready(self, index: SearchIndex, like: bool = True) -> None:
        """The index is ready (``like``: build the similarity model now; else the caller
        does, later)."""
        _settle_objects()
        self.session.index = index
        self.session.sync_metadata()
        if self.session.query_text:
            self._run_filter()
        self._update_status()
        if like:
            self._prepare_like(index)

    @work(thread=True, exclusive=True, group="like", exit_on_error=False)
    def _prepare_like(self, index: SearchIndex) -> None:
        """The similarity model of the index (idf, norms, each paper's words), built once in
        the background, so that the first `m`, `like:#tag` or `like:ID` is as quick as the
        next (a search that needs it first waits for this build, never builds it twice)."""
        from ...search.similar import prepare

        def busy() -> bool:
            # quitting stops the build at its next step: at a million papers it is ~15 s,
            # and the process waited for it (q, then 15 s before the shell came back)
            _stop_if_cancelled()
            return self.keys_arriving()

        lower_this_thread()
        try:
            with contextlib.suppress(_Cancelled):
                prepare(index, busy)
        finally:
            self._background_done.set()

    def keys_arriving(self, quiet: float | None = None) -> bool:
        """Whether a query is being typed: the filter has the focus and a key arrived in the
        last `KEYS_QUIET_S` (or ``quiet``) seconds. Work that can wait (the like model, the prefix masks) waits
        then between its steps, so that it does not take the CPU and the GIL from the search
        and the frame of a key. Once the filter is left (Enter, Esc), it goes on at once: an
        `m` pressed then finds the like model nearer done. Any thread."""
        try:
            app = self.app  # a ReaderApp (which records `last_key_at`), or another host
        except NoActiveAppError:  # the reader has closed (asked from a background thread)
            return False
        if getattr(app, "_exit", False) or not isinstance(self.focused, FilterInput):
            return False  # (quitting: nothing waits for keys any more)
        quiet = KEYS_QUIET_S if quiet is None else quiet
        return bool(getattr(app, "last_key_at", 0.0) + quiet > time.monotonic())

    @on(Worker.StateChanged)
    def _worker_changed(self, event: Worker.StateChanged) -> None:
        """A failed worker is reported; the reader goes on with what it has."""
        if event.state != WorkerState.ERROR:
            return
        worker = event.worker
        what = _WORKER_WHAT.get(worker.group, worker.name or "A background task")
        error = worker.error
        detail = fault_text(error) if error is not None else "unknown error"
        if worker.group == "load":  # (kept in the status's load errors, not only a toast)
            self.session.corpus.errors.append(LoadError("loading", f"stopped ({detail})"))
            self.loading_dumps = False
            self._update_status()
        self.notify(
            f"{what} failed ({detail}).", title="Error", severity="error", timeout=20, markup=False
        )

    # -- the library ----------------------------------------------------------------------
    def refresh_library(self) -> None:
        """Ask the library what changed since the last call (this process's writes and any
        other's) and update what shows it: rows, the paper, the status, and the filter's
        result when the query reads a changed fact. Called about once a second and after
        each write; cheap when nothing changed."""
        try:
            changed = self.session.refresh()
        except LibraryError as exc:
            if str(exc) != self._library_problem:  # once, not every second
                self._library_problem = str(exc)
                self.notify(str(exc), title="Library", severity="error", markup=False)
            return
        self._library_problem = None
        if changed:
            self.library_changed(changed)

    def library_changed(self, changed: frozenset[Dependency]) -> None:
        if self.session.is_stale(changed):
            self._run_filter(keep_position=True)
        self._redraw()
        if self.app.screen.is_modal:  # a dialog over this screen may show the facts too
            from .editors import FollowsLibrary

            if isinstance(self.app.screen, FollowsLibrary):
                self.app.screen.library_changed(changed)

    def _write(
        self,
        change: Callable[[], object],
        *,
        retry: bool = True,
        done: str | None = None,
        on_conflict: Callable[[NoteConflict | MetadataConflict], None] | None = None,
        editor: SaveListener | None = None,
    ) -> bool:
        """Make one change on the library and show it. A change the library could not take
        is said so, never dropped silently; one it was too busy for is tried once more.

        ``editor``: the change is what an editor still open saves (``_Editor.saves_with``).
        The editor is told how it went: it closes once saved; it says why it was not, and
        keeps what was typed for ctrl+s to try again; and it makes the second try itself,
        with what it holds then (the user may type on meanwhile)."""
        try:
            change()
        except (NoteConflict, MetadataConflict) as conflict:
            if on_conflict is None:
                raise
            on_conflict(conflict)
            return False
        except LibraryBusy as exc:
            said = str(exc).rstrip(".") + "."  # one sentence, then ours
            if editor is not None:
                if editor.retrying:
                    editor.not_saved(said)
                else:
                    editor.busy(said, BUSY_RETRY_S)
            elif retry:
                self.notify(
                    f"{said} Trying again in {BUSY_RETRY_S:.0f} s.",
                    title="Library busy",
                    severity="warning",
                    markup=False,
                )
                self.set_timer(
                    BUSY_RETRY_S,
                    lambda: self._write(change, retry=False, done=done, on_conflict=on_conflict),
                )
            else:
                self.notify(
                    f"{said} The change was not saved.",
                    title="Not saved",
                    severity="error",
                    markup=False,
                )
            return False
        except LibraryError as exc:
            if editor is not None:
                editor.not_saved(str(exc))
            else:
                self.notify(str(exc), title="Not saved", severity="error", markup=False)
            return False
        self.refresh_library()
        if editor is not None:
            editor.saved()
        if done:
            self.notify(done, markup=False)
        return True

    # -- the filter -------------------------------------------------------------------------
    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        if event.value != self._history_value:
            self._history_at = None  # typed: a new query, not a walk through the history
        self._note_cleared(self.session.query_text, event.value)
        self._read_when_shown = False  # (typing again: the filter is not left)
        self.session.set_query(event.value)
        self._run_filter()

    @on(Input.Submitted, "#filter")
    def _filter_submitted(self) -> None:
        self.set_focus(self.query_one(PaperList))  # at once: the next key is for the list
        self._remember_query()
        self._left_filter()

    def _remember_query(self) -> None:
        self._history_at = None
        if self.library.read_only:
            return
        with contextlib.suppress(LibraryError):  # the history is a convenience, never an error
            self.session.remember_query(self.session.query_text)

    def _walk_history(self, step: int) -> None:
        history = self.session.history()
        if not history:
            return
        if self._history_at is None:
            if step > 0:
                return
            self._history_draft = self.query_one("#filter", Input).value
            at = len(history)
        else:
            at = self._history_at
        at = max(0, at + step)
        if at >= len(history):
            self._history_at = None
            self._history_value = self._history_draft
        else:
            self._history_at = at
            self._history_value = history[at]
        self._fill_filter(self._history_value)

    def action_history_back(self) -> None:
        self._walk_history(-1)

    def action_history_forward(self) -> None:
        self._walk_history(1)

    def _note_cleared(self, previous: str, value: str) -> None:
        """What Esc on an empty filter brings back, as the filter goes from ``previous`` to
        ``value``: emptied, the query it held before the deletions began (``ctrl+u``, or
        backspacing ``gauss`` away: ``gauss``, not ``g``); another query, nothing."""
        if not value:
            if previous:
                self._cleared_query = self._deleting_from or previous
            self._deleting_from = None
            return
        self._cleared_query = ""
        if len(value) < len(previous) and previous.startswith(value):
            self._deleting_from = self._deleting_from or previous
        else:
            self._deleting_from = None

    def _fill_filter(self, text: str, *, run: bool = True) -> None:
        """Put a query in the filter bar as if typed: the cursor at its end."""
        self._deleting_from = None  # (put there whole: no deletion of the user's)
        field = self.query_one("#filter", Input)
        if run:
            field.value = text
        else:
            with self.prevent(Input.Changed):
                field.value = text
        field.cursor_position = len(text)

    def _run_filter(self, *, keep_position: bool = False) -> None:
        """Run the query again. ``keep_position``: a write changed what it matches, so a
        paper that left the result leaves the cursor where it was (on the next paper), not
        at the top as for a new query.

        No debounce: the search starts as soon as the key arrives, unless one is running;
        then the newest query runs right after it (the ones typed between are skipped)."""
        self._generation += 1
        self._keep_position = keep_position
        session = self.session
        if not session.filters:  # @name: the saved search's text; an unknown one: nothing
            self._show_result(None, self._generation)
            return
        if session.index is None:
            self._update_status()
            return
        if self._searching is not None:
            self._search_again = True
            return
        self._start_search(session.index)

    def _start_search(self, index: SearchIndex) -> None:
        """Search on the search thread and wait up to ``SEARCH_WAIT_S`` for it: a quick
        search is drawn in the same frame as the key that asked for it (no worker, no second
        frame); a slow one is handed to a worker, and the screen goes on meanwhile."""
        generation = self._generation
        future = _search_pool().submit(
            index.search, self.session.search_text, self.session.library_view()
        )
        try:
            result = future.result(timeout=SEARCH_WAIT_S)
        except TimeoutError:
            self._searching = future
            self._await_search(future, generation)
            return
        except Exception as exc:  # as a failed worker is: said, and the reader goes on
            self._search_failed(exc)
            return
        self._show_result(result, generation)

    @work(thread=True, group="search", exit_on_error=False)
    def _await_search(self, future: Future[SearchResult], generation: int) -> None:
        wait([future])
        self.app.call_from_thread(self._search_finished, future, generation)

    def _search_finished(self, future: Future[SearchResult], generation: int) -> None:
        self._searching = None
        error = future.exception()
        if error is not None:
            self._search_failed(error)
        else:
            self._show_result(future.result(), generation)
        if self._search_again:  # keys came meanwhile: the newest query, now
            self._search_again = False
            index = self.session.index
            if index is not None and self.session.filters:
                self._start_search(index)

    def _search_failed(self, error: BaseException) -> None:
        detail = f"{type(error).__name__}: {error}"
        what = _WORKER_WHAT["search"]
        self.notify(f"{what} failed ({detail}).", title="Error", severity="error", markup=False)

    def _show_result(self, result: SearchResult | None, generation: int) -> None:
        if generation != self._generation:
            return  # an older query finished after a newer one started
        paper_list = self.query_one(PaperList)
        restoring = self._restore_paper is not None
        current = self._restore_paper or paper_list.current_id  # the saved paper, at start
        old_cursor = paper_list.cursor
        self._restore_paper = None
        self.session.take_result(result)
        self.session.apply_sort(self.loaded)
        position: int | None
        if result is None:
            position = self.session.position_of(current) if current and self.loaded else 0
        else:
            # a new query shows its best papers from the top (the cursor never stays on a
            # paper that led an earlier prefix, with the best ones above the screen); a run
            # because a write changed what it matches, or the paper of the last session,
            # keeps the paper
            keep = self._keep_position or restoring
            position = self.session.position_of(current) if current and keep else None
            query = self.session.query_text.strip()
            paper_list.empty_message = Content.assemble(
                "No paper matches ",
                (query, "bold"),
                ".\n\nEsc clears the filter; ? shows the query language.",
            )
        if position is None:  # the paper left the result
            position = old_cursor if current and self._keep_position else 0
        paper_list.set_source(self._rows, position)
        self._want_title_order()
        self._show_current()
        self._update_status()
        self._flush_refreshes()
        if self._read_when_shown and result is not None:  # (the filter was left before it)
            self._read_when_shown = False
            self._reading_current()

    def _flush_refreshes(self) -> None:
        """Hand the screen now what the widgets need repainted (Textual would do it when each
        widget is next idle, often after the screen's next frame), so a result is painted in
        the frame that echoes the key, not one frame later."""
        bars = self.query_one(PaperList)._vertical_scrollbar  # not a child: its thumb moved
        for widget in (*self.walk_children(with_self=False), bars):
            if getattr(widget, "_repaint_required", False) or getattr(
                widget, "_layout_required", False
            ):
                check = getattr(widget, "_check_refresh", None)
                if check is not None:
                    check()

    def _move_to(self, paper_id: str) -> bool:
        position = self.session.position_of(paper_id)
        if position is None or position >= len(self._rows):
            return False
        self.query_one(PaperList).cursor = position
        return True

    # -- the current paper -------------------------------------------------------------------
    def current_paper(self) -> Paper | None:
        paper_id = self.query_one(PaperList).current_id
        return self.session.corpus.get(paper_id) if paper_id else None

    def details(self, paper: Paper) -> PaperDetails:
        session = self.session
        rec = session.record(paper)
        rendered = render(paper.abstract, DISPLAY_LIMIT)  # cut before rendering, not after
        title = display_title(rec.title)  # (as the list draws it)
        title_spans: tuple[tuple[int, int], ...] = ()
        body_spans: tuple[tuple[int, int], ...] = ()
        if session.result is not None and not session.result.query.empty:
            title_spans = tuple(session.result.matcher.spans(title))
            # only what the view shows: an abstract of megabytes is cut at DISPLAY_LIMIT
            body_spans = tuple(session.result.matcher.spans(rendered.text[:DISPLAY_LIMIT]))
        return PaperDetails(
            paper_id=paper.id,
            title=title,
            title_derived=rec.title_derived,
            venue=session.venue_of(paper),
            sources=tuple(str(s) for s in paper.sources[:SOURCES_SHOWN]),
            more_sources=max(0, len(paper.sources) - SOURCES_SHOWN),
            tags=rec.tags,
            bookmarked=rec.bookmarked,
            read=rec.read,
            marked=paper.id in session.marks,
            body=rendered,
            authors=rec.authors,
            url=rec.url,
            doi=rec.doi,
            note=rec.note,
            provenance=_provenance_line(session.metadata(paper)),
            eprint=rec.eprint,
            title_spans=title_spans,
            body_spans=body_spans,
        )

    @on(PaperList.CursorMoved)
    def _cursor_moved(self, event: PaperList.CursorMoved) -> None:
        shown = self.query_one(PaperView).details
        if shown is None or shown.paper_id != self.query_one(PaperList).current_id:
            self._show_current()  # (a new result has shown its paper already)
        if event.by_user and event.paper_id is not None:
            self._schedule_read(event.paper_id)
        elif event.paper_id != self._read_pending:  # (a timer for this paper was just set:
            self._cancel_read()  # its result, shown after the filter was left)

    def _paper_screen(self) -> PaperScreen | None:
        for screen in self.app.screen_stack:
            if isinstance(screen, PaperScreen):
                return screen
        return None

    def _show_current(self) -> None:
        paper = self.current_paper()
        view = self.query_one(PaperView)
        if paper is None:
            if self.loading_dumps:
                message = "Loading…"
            elif self.loaded == 0:
                message = "No dumps loaded."
            else:
                message = "No paper matches the filter."
            view.show(None, message)
            return
        details = self.details(paper)
        view.show(details)
        if self._index_after_first_frame:  # the first abstract: the index once it is drawn
            self.call_after_refresh(self._start_index)
        paper_screen = self._paper_screen()
        if paper_screen is not None:
            paper_screen.update(details)

    # -- read means read --------------------------------------------------------------------
    def _schedule_read(self, paper_id: str) -> None:
        """A key or click of the user brought this paper into view: it becomes read if it is
        still there after the delay. Never at start-up, never for a paper left before."""
        self._cancel_read()
        if self.read_delay is None or self.library.read_only:
            return
        if self.library.setting("auto_read", "on") == "off":
            return
        if paper_id in self.library.snapshot.read:
            return
        if self.narrow and self._paper_screen() is None:
            return  # narrow: the paper is not on screen until it is opened

        def mark() -> None:
            self._read_timer = None
            self._read_pending = None
            if self.query_one(PaperList).current_id == paper_id:
                self.session.hold(paper_id)  # read here: it stays in an `is:unread` result
                self._write(lambda: self.library.set_read([paper_id], True))

        self._read_pending = paper_id
        self._read_timer = self.set_timer(self.read_delay, mark)

    def _left_filter(self) -> None:
        """The filter was left for the list (Enter, Esc): the query's paper in the pane was
        brought there by the user's keys. Its result may still be coming (the index is being
        built, a slow search): then the paper it shows is the one."""
        session = self.session
        if session.filters and (session.index is None or self._searching is not None):
            self._read_when_shown = True
        else:
            self._reading_current()

    def _reading_current(self) -> None:
        """Keys of the user's put the current paper in the pane without moving the cursor
        (the filter left with Enter or Esc) or act on it (`t`, `o`, `e`): it becomes read
        after the delay, as after a move — unless a timer for it runs already."""
        paper_id = self.query_one(PaperList).current_id
        if paper_id is not None and self._read_pending != paper_id:
            self._schedule_read(paper_id)

    def _cancel_read(self) -> None:
        if self._read_timer is not None:
            self._read_timer.stop()
        self._read_timer = None
        self._read_pending = None

    def _redraw(self) -> None:
        self.query_one(PaperList).refresh_rows()
        self._show_current()
        self._update_status()

    def open_paper(self, paper_id: str) -> None:
        """Open a paper of the list (Enter, a double click): the pane focused, or the paper
        full screen when narrow. The list calls it as Enter reaches it (`OpensPapers`), so
        the keys typed after Enter go to the paper."""
        paper = self.session.corpus.get(paper_id)
        if paper is None:
            return
        if self.narrow:
            self.app.push_screen(PaperScreen(self.details(paper)))
        else:  # now: a space typed right after Enter pages the paper (it marked a row)
            self.set_focus(self.query_one(PaperView))
        self._schedule_read(paper.id)

    def action_close_paper(self) -> None:
        """Back from the full-screen paper: left before the delay, it stays unread."""
        self._cancel_read()
        if self._paper_screen() is not None and isinstance(self.app.screen, PaperScreen):
            self.app.pop_screen()

    # -- status -------------------------------------------------------------------------------
    def _update_status(self) -> None:
        parts = self.session.status_parts(
            shown=len(self._rows),
            loaded=self.loaded,
            loading=self.loading_dumps,
            load_progress=self.load_progress,
            index_progress=self.index_progress,
            problems_key=self._problems_key(),
        )
        self.query_one("#status", StatusLine).show(parts)  # unchanged: no repaint

    # -- actions: moving ----------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if getattr(self.app, "_exit", False):  # quitting: keys still queued (a paste) do nothing
            return False
        if action in ("history_back", "history_forward"):
            return self.query_one("#filter", Input).has_focus
        if action in _LETTER_ACTIONS and self.query_one("#filter", Input).has_focus:
            return False  # letters are text there: not offered in the footer either
        if action in ("focus_filter", "saved_searches"):
            # Where text is being typed (the filter, an editor, the palette), `/` is text,
            # and so is `@` (Textual's own check misses it: its key is named "at")
            from textual.widgets import TextArea

            if isinstance(self.app.focused, Input | TextArea) or self.app.screen.is_modal:
                return False
        return True

    def action_focus_filter(self) -> None:
        filter_bar = self.query_one("#filter", Input)
        if isinstance(self.app.screen, PaperScreen):  # the filter is on the list's screen
            self.action_close_paper()
            self.call_after_refresh(lambda: self.set_focus(filter_bar))
            return
        # Synchronously: keys typed right after `/` (fast typing, a paste) must reach the
        # filter, not run as commands on the list.
        self.set_focus(filter_bar)

    def action_escape(self) -> None:
        filter_bar = self.query_one("#filter", Input)
        view = self.query_one(PaperView)
        if filter_bar.has_focus or (view.has_focus and not self.narrow):
            if filter_bar.has_focus:
                self._remember_query()
                self._left_filter()  # (as Enter: the query is kept, its paper shown)
            if view.has_focus:
                self._cancel_read()  # left the opened paper before the delay
            self.set_focus(self.query_one(PaperList))  # at once, not later: see FilterInput
        elif self.session.marks:
            self.session.marks.clear()
            self._marks_changed()
        elif filter_bar.value:
            self._cleared_query = filter_bar.value  # (now: Esc again may come first)
            self._fill_filter("")
            self.notify(
                keyed(self.app, "Filter cleared; {escape} again brings it back."),
                timeout=3,
                markup=False,
            )
        elif self._cleared_query:
            self._fill_filter(self._cleared_query)
            self._cleared_query = ""

    def _step_unread(self, step: int) -> None:
        rows = self._rows
        paper_list = self.query_one(PaperList)
        read = self.library.snapshot.read
        i = paper_list.cursor + step
        while 0 <= i < len(rows):
            if rows.paper(i).id not in read:
                paper_list.move(i, by_user=True)
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

    def action_sort(self) -> None:
        """The next order; the cursor stays on its paper."""
        sort = self.session.next_sort()
        with contextlib.suppress(LibraryError):
            if not self.library.read_only:
                self.library.set_setting("sort", sort)
        self._run_filter(keep_position=True)
        # (with no query, relevance is the dump order: said as what the list shows)
        label = SORTS["dump"] if sort == "relevance" and self.session.result is None else None
        self.notify(f"Sorted by {label or SORTS[sort]}", timeout=2)

    def action_set_filter(self, text: str) -> None:
        self._fill_filter(text)

    def action_more_like(self) -> None:
        """Filter to ``like:ID``: every paper ranked by likeness to the current one — most
        alike first, so another order (a year, say, kept from the last session) gives way to
        relevance, and says so (`s` brings it back)."""
        paper = self.current_paper()
        if paper is None:
            return
        if isinstance(self.app.screen, PaperScreen):
            self.action_close_paper()
        if self.session.sort != "relevance":
            self.session.sort = "relevance"
            with contextlib.suppress(LibraryError):
                if not self.library.read_only:
                    self.library.set_setting("sort", "relevance")
            self.notify(f"Sorted by {SORTS['relevance']}", timeout=2)
        self._fill_filter(f"like:{paper.id[:12]}")

    def action_save_search(self) -> None:
        """Name the filter's query (screens/searches.py); the library keeps it."""
        from .searches import SaveSearchDialog

        query = " ".join(self.session.query_text.split())
        if not query:
            self.notify("The filter is empty: type a query first, then S names it.", timeout=4)
            return
        if self.library.read_only:
            self.notify("The library is read-only.", title="Not saved", severity="error")
            return
        if isinstance(self.app.screen, PaperScreen):
            self.action_close_paper()

        dialog = SaveSearchDialog(query, self._saved_now)

        def save(name: str) -> None:
            # the name was checked by the dialog and the query is not empty; the dialog
            # stays open (with the name) until the library has it
            from ...saved import SavedSearchError

            try:
                self._write(
                    lambda: self.session.save_search(name, query),
                    done=f"Saved as @{name}",
                    editor=dialog,
                )
            except SavedSearchError as exc:  # a loop made meanwhile by another process
                dialog.not_saved(str(exc))

        self.app.push_screen(dialog.saves_with(save))

    def _saved_now(self) -> dict[str, str]:
        """The saved searches as stored now (another process may just have saved one)."""
        self.refresh_library()
        return self.session.saved_searches()

    def action_saved_searches(self) -> None:
        """The saved searches: run one (it fills the filter) or delete one."""
        from .searches import SavedSearches, SearchAction

        if isinstance(self.app.screen, PaperScreen):
            self.action_close_paper()

        def chosen(action: SearchAction | None) -> None:
            if action is None:
                return
            if action.kind == "run":
                self._fill_filter(action.query)
                self._remember_query()
                self.query_one(PaperList).focus()
            elif action.kind == "delete":
                from ...saved import SavedSearchError

                try:
                    self._write(
                        lambda: self.session.delete_search(action.name),
                        done=f"Deleted @{action.name}",
                    )
                except SavedSearchError:  # another process deleted it meanwhile: say so
                    self.refresh_library()
                    self.notify(f"@{action.name} was already deleted.", markup=False)

        self.app.push_screen(SavedSearches(self._saved_now), chosen)

    def action_triage(self) -> None:
        """The filter's papers one at a time, from the current one (screens/triage.py)."""
        from .triage import TriageScreen

        count = len(self._rows)
        if count == 0:
            self.notify("No papers to triage.", timeout=3)
            return
        ids = [self.session.paper_at(i).id for i in range(count)]
        start = self.query_one(PaperList).cursor
        if isinstance(self.app.screen, PaperScreen):
            self.action_close_paper()
        self.app.push_screen(TriageScreen(self, ids, start))

    def action_toggle_auto_read(self) -> None:
        on_ = self.library.setting("auto_read", "on") == "off"
        if not on_:
            self._cancel_read()
        self._write(
            lambda: self.library.set_setting("auto_read", "on" if on_ else "off"),
            done=f"Auto-read {'on' if on_ else 'off'}",
        )

    # -- actions: the library -----------------------------------------------------------------
    def _targets(self) -> list[Paper]:
        return self.session.targets(self.query_one(PaperList).current_id)

    def _hold_current(self, papers: list[Paper]) -> None:
        """A write of the user's on the current paper (not on marked ones) keeps it in the
        result while the query is the same (`Session.hold`): `r` in `is:unread`, `b` in
        `is:bookmarked`, a tag removed in `#tag` leave the paper where it is."""
        if not self.session.marks and len(papers) == 1:
            self.session.hold(papers[0].id)

    def _marks_changed(self) -> None:
        if self.session.is_stale({"marks"}):
            self._run_filter(keep_position=True)
        self._redraw()

    def action_bookmark(self) -> None:
        papers = self._targets()
        if not papers:
            return
        on_ = not all(p.id in self.library.snapshot.bookmarks for p in papers)
        done = f"{'Bookmarked' if on_ else 'Unbookmarked'} {papers_phrase(len(papers))}"
        self._hold_current(papers)
        self._write(
            lambda: self.library.set_bookmark([p.id for p in papers], on_),
            done=done if len(papers) > 1 else None,
        )

    def action_toggle_read(self) -> None:
        papers = self._targets()
        if not papers:
            return
        on_ = not all(p.id in self.library.snapshot.read for p in papers)
        self._cancel_read()
        self._hold_current(papers)
        done = f"Marked {len(papers)} papers {'read' if on_ else 'unread'}"
        self._write(
            lambda: self.library.set_read([p.id for p in papers], on_),
            done=done if len(papers) > 1 else None,
        )

    def action_mark(self) -> None:
        paper_list = self.query_one(PaperList)
        paper_id = paper_list.current_id
        if paper_id is None:
            return
        self.session.toggle_mark(paper_id)
        paper_list.move(paper_list.cursor + 1, by_user=True)
        self._marks_changed()

    def action_undo(self) -> None:
        try:
            what = self.session.undo()
        except LibraryError as exc:
            self.notify(str(exc), title="Not undone", severity="error", markup=False)
            return
        if what is None:
            self.notify("Nothing to undo.", timeout=3)
            return
        self._cancel_read()
        self.refresh_library()
        self.notify(f"Undone: {what}", markup=False)

    def action_tags(self) -> None:
        from .editors import TagEditor

        papers = self._targets()
        if not papers:
            return
        if not self.session.marks:
            self._reading_current()  # tagging the paper in view is reading it
        ids = [p.id for p in papers]

        def stored() -> tuple[list[str], dict[str, int]]:
            snap = self.library.snapshot
            counts: dict[str, int] = {}  # bulk: every tag of the marked papers, with counts
            for paper_id in ids:
                for tag in snap.tags.get(paper_id, []):
                    counts[tag] = counts.get(tag, 0) + 1
            return sorted(counts, key=str.casefold), counts

        def save(tags: list[str]) -> None:
            # (editor.shown: the stored tags as the editor last read them, while open)
            change = tag_change(editor.shown, tags)  # only what the user changed: a tag another
            if change.empty:  # process added meanwhile is kept
                editor.saved()
                self.notify("No change to the tags.", timeout=3)
                return

            self._hold_current(papers)

            def write() -> None:
                if change.removed:
                    self.library.remove_tags(ids, change.removed)
                if change.added:
                    self.library.add_tags(ids, change.added)

            self._write(
                write,
                done=f"Tags saved on {papers_phrase(len(ids))}" if len(ids) > 1 else None,
                editor=editor,  # open until saved: a failed save keeps what was typed
            )

        shown, counts = stored()
        editor = TagEditor(
            shown,
            self.library.snapshot.tag_names,
            self.session.describe(papers),
            counts=counts,
            total=len(ids),
            stored=stored,
        ).saves_with(save)
        self.app.push_screen(editor)

    def action_tag_list(self) -> None:
        from .pickers import TagAction, TagList

        def chosen(action: TagAction | None) -> None:
            if action is None:
                return
            if action.kind in ("filter", "like"):
                tag = action.tag
                query = tag_query(tag)  # (quoted, escaped, when it needs to be)
                query = f"like:{query}" if action.kind == "like" else query
                self._fill_filter(query)
                self.query_one(PaperList).focus()

        tag_list = TagList(self.library.tag_counts(), current=self.library.tag_counts)

        def save(action: TagAction) -> None:
            """A rename or delete, written with the list still open (it closes once done)."""
            if action.kind == "rename":
                self._write(
                    lambda: self.library.rename_tag(
                        action.tag, action.new_name, merge=action.merge
                    ),
                    done=f"Merged {tag_query(action.tag)} into {tag_query(action.new_name)}"
                    if action.merge
                    else f"Renamed {tag_query(action.tag)} to {tag_query(action.new_name)}",
                    editor=tag_list,
                )
            else:
                self._write(
                    lambda: self.library.delete_tag(action.tag),
                    done=f"Deleted {tag_query(action.tag)}",
                    editor=tag_list,
                )

        self.app.push_screen(tag_list.saves_with(save), chosen)

    def action_match_metadata(self) -> None:
        """Match the loaded papers against the metadata files loaded with them (as the
        `match` command does), in a worker; the matches are written through the library."""
        files = list(self.session.corpus.metadata_files)
        if not files:
            self.notify(
                "No metadata files loaded: start the reader with .jsonl, .json, .bib or .ris "
                "files next to the dumps.",
                title="Match metadata",
                severity="warning",
                markup=False,
            )
            return
        if self.library.read_only:
            self.notify("The library is read-only.", title="Match metadata", severity="error")
            return
        corpus = self.session.corpus
        if set(corpus.files) <= set(corpus.metadata_files):  # (no dump among them)
            self.notify(
                "No dump is loaded: M gives the dumps' papers the metadata of their records. "
                "Open the dumps with the metadata files (with the bundled dumps: "
                "abstract-reader --bundled FILE…).",
                title="Match metadata",
                severity="warning",
                markup=False,
            )
            return
        shown = count_phrase(len(files), "metadata file")
        self.notify(f"Matching against {shown}…", timeout=3, markup=False)
        self._match_metadata(files)

    @work(thread=True, exclusive=True, group="match", exit_on_error=False)
    def _match_metadata(self, files: list[str]) -> None:
        from ...library import LibraryError
        from ...match import plan_files, write
        from ...sources import SourceError

        call = self.app.call_from_thread
        problems: list[object] = []
        try:
            planned = plan_files(
                self.session.corpus, self.library.snapshot, files, on_problem=problems.append
            )
            written = write(self.library, planned)
        except (SourceError, LibraryError, OSError) as exc:
            call(self.notify, str(exc), title="Match metadata", severity="error", markup=False)
            return
        counts = dict.fromkeys(("matched", "ambiguous", "unmatched", "kept"), 0)
        for outcome in planned:
            counts[outcome.status] += 1
        call(self._matched, counts, written, len(problems))

    def _matched(self, counts: dict[str, int], written: int, problems: int) -> None:
        self.refresh_library()
        text = (
            f"{counts['matched']} matched ({written} written), {counts['ambiguous']} ambiguous,"
            f" {counts['unmatched']} unmatched"
        )
        if counts["kept"]:
            text += f", {counts['kept']} kept (set by hand)"
        if problems:
            text += f"; {count_phrase(problems, 'malformed record')} skipped"
        self.notify(text, title="Match metadata", timeout=10, markup=False)

    def action_edit_metadata(self) -> None:
        from .editors import MetadataEditor

        paper = self.current_paper()
        if paper is None:
            return
        self._reading_current()  # its real title looked up and typed: it is being read
        shown = self.library.snapshot.metadata.get(paper.id, Metadata())
        files = list(self.session.corpus.metadata_files)
        prov = provenance(self.library.snapshot, paper.id)
        hand_venue = (prov.hand_venue if prov is not None else None) or ""
        editor = MetadataEditor(
            shown,
            paper.title,
            looking=bool(files),
            paper=paper,
            venue=hand_venue,
            venue_shown=(prov.venue if prov is not None else None) or paper.venue or "",
        )

        def saved(edited: Metadata | None) -> None:
            if edited is not None and editor.edited_venue != hand_venue:
                venue = editor.edited_venue or None
                changed: list[frozenset[Dependency]] = []
                if self._write(lambda: changed.append(self.session.set_venue(paper.id, venue))):
                    self.library_changed(changed[0])
            self._save_metadata(paper, shown, edited, editor=editor)

        # open until saved: a failed save keeps what was typed
        editor.saves_with(saved)
        self.app.push_screen(editor)
        if files:
            self._find_candidates(editor, paper.abstract, files)

    @work(thread=True, exclusive=True, group="candidates", exit_on_error=False)
    def _find_candidates(self, editor: MetadataEditor, abstract: str, files: list[str]) -> None:
        """The editor's candidates: the paper against the loaded metadata files."""
        from ...match import candidates, read_file_records
        from ...sources import MetaRecord, SourceError

        def records() -> Iterator[MetaRecord]:
            for name in files:
                with contextlib.suppress(SourceError, OSError):  # said when the files loaded
                    yield from read_file_records(Path(name))

        verdict = candidates(abstract, records())
        self.app.call_from_thread(editor.show_candidates, verdict.candidates)

    def _save_metadata(
        self,
        paper: Paper,
        shown: Metadata,
        edited: Metadata | None,
        *,
        again: bool = False,
        editor: MetadataEditor | None = None,
    ) -> None:
        """Save the fields changed in the editor (``edited`` against the ``shown`` it opened
        with) over what is stored now: a field changed only elsewhere meanwhile is kept; one
        changed both here and elsewhere, to another value, is the user's choice (both
        values shown), never overwritten unseen, as with a note. ``again``: the write found
        another write after this read once already; a second time it is said, not retried.
        ``editor``: the editor still open, saving (see ``_write``)."""
        if edited is None or edited == shown:
            if editor is not None:
                editor.saved()  # nothing to save: it closes
            return
        self.refresh_library()  # what is stored now, so untouched fields are kept
        stored = self.library.snapshot.metadata.get(paper.id, Metadata())
        conflicts = metadata_conflicts(shown, edited, stored)
        if conflicts and not self.library.read_only:  # (read-only: nothing is saved anyway)
            if editor is None:
                self._metadata_conflict(paper, shown, edited, stored, conflicts)
            else:  # it closes: the dialog shows both values of each field (pushed from
                # here, not from the closing editor, which would never hear its answer)
                editor.saved()
                self.call_later(self._metadata_conflict, paper, shown, edited, stored, conflicts)
            return
        merged = metadata_change(shown, edited, stored)

        # written only over what was just read: a write from elsewhere landing in between
        # is found in the write's transaction, and the edit is weighed against it again
        def conflict(found: NoteConflict | MetadataConflict) -> None:
            if not again:
                self._save_metadata(paper, shown, edited, again=True, editor=editor)
            elif editor is not None:  # (writes keep landing between the read and the write)
                editor.not_saved(str(found))
            else:
                self.notify(str(found), title="Not saved", severity="error", markup=False)

        self._write(
            lambda: self.library.set_metadata(paper.id, merged, expected=stored),
            on_conflict=conflict,
            editor=editor
            or _ReopenOnFailure(lambda why: self._reopen_metadata(paper, shown, edited, why)),
        )

    def _reopen_metadata(self, paper: Paper, shown: Metadata, edited: Metadata, why: str) -> None:
        """The metadata editor again, with an edit the library did not take (see
        ``_ReopenOnFailure``), saying why; saved over ``shown`` as before."""
        from .editors import MetadataEditor

        editor = MetadataEditor(shown, paper.title, typed=edited)
        editor.saves_with(lambda again: self._save_metadata(paper, shown, again, editor=editor))
        self.app.push_screen(editor)
        editor.not_saved(why)  # (said once it is up)

    def _metadata_conflict(
        self,
        paper: Paper,
        shown: Metadata,
        edited: Metadata,
        stored: Metadata,
        conflicts: tuple[str, ...],
    ) -> None:
        from .editors import MetaChoice, MetadataConflictDialog

        def chosen(choices: dict[str, MetaChoice] | None) -> None:
            if choices is None:
                return
            # The edit as the user resolved it, over what the dialog showed as stored: a
            # field changed again elsewhere while the dialog was open asks again.
            merged = metadata_change(shown, edited, stored)
            theirs = {
                name: getattr(stored, name) for name in conflicts if choices[name] == "theirs"
            }
            self._save_metadata(paper, stored, replace(merged, **theirs))

        self.app.push_screen(MetadataConflictDialog(edited, stored, conflicts), chosen)

    def action_note(self, start: str | None = None) -> None:
        paper = self.current_paper()
        if paper is None:
            return
        self._reading_current()  # a note on the paper in view: it is being read
        stored = self.library.snapshot.notes.get(paper.id, "")
        text = stored if start is None else start
        hint = ""
        started_from = stored  #: what the save is checked against (a conflict otherwise)
        restored = None
        if start is None:  # what was typed and not saved (the terminal closed …) comes back
            restored = self._left_draft(paper, stored)
            if restored is None and self.drafts.being_typed(self._live_draft_slots(), paper.id):
                # (saving here then shows both, should the other save first)
                hint = "This note is being edited in another reader too, not saved there yet."
            if restored is not None:
                from ...library.drafts import draft_hint

                text, hint, started_from = (
                    restored.text,
                    draft_hint(restored, stored),
                    restored.base,
                )
                self._unnotify_drafts()
        editor = self._note_editor(paper, text, stored, base=started_from, hint=hint)
        if restored is not None:  # taken over: this editor keeps it now (then it goes)
            editor.keep_draft()
            if editor.keep_failed is None:
                self.drafts.drop(paper.id, restored.slot)
        # open until saved: a failed save keeps what was typed; a draft typed over a note
        # that changed since is saved over what it was typed over: both are shown
        editor.saves_with(lambda result: self._save_note(paper, started_from, result, editor))
        self._push_note_editor(paper, editor)

    def _left_draft(
        self, paper: Paper, stored: str, left: list[Draft] | None = None
    ) -> Draft | None:
        """The newest draft of the paper's note left by an ended session, if it is not the
        stored note (one that is — saved since by another reader or the CLI — goes).
        ``left``: the drafts left, already read (`Drafts.all_left`)."""
        drafts = self.drafts
        if left is None:
            left = drafts.left(paper.id, self._live_draft_slots())
        for draft in left:
            if draft.paper_id != paper.id:
                continue
            if draft.text != stored:
                return draft
            drafts.drop(paper.id, draft.slot)
        return None

    def _live_draft_slots(self) -> set[str]:
        """The drafts of the note editors open in this reader (never offered as left)."""
        from .editors import NoteEditor

        return {s.draft_slot for s in self.app.screen_stack if isinstance(s, NoteEditor)}

    @property
    def drafts(self) -> Drafts:
        """The unsaved notes kept beside the library (`library.drafts`)."""
        from ...library.drafts import Drafts

        return Drafts.beside(self.library.path)

    def _note_editor(
        self, paper: Paper, text: str, stored: str, *, base: str | None = None, hint: str = ""
    ) -> NoteEditor:
        """A note editor on ``text`` over the stored note ``stored``, keeping what is typed
        as its own draft of the paper's note (typed over ``base``, default ``stored``) until
        it closes (`_push_note_editor`)."""
        from ...library.drafts import new_slot
        from .editors import NoteEditor

        drafts = self.drafts
        slot = new_slot()
        typed_over = stored if base is None else base

        def keep(typed: str) -> str | None:
            if typed == stored:  # nothing unsaved
                drafts.drop(paper.id, slot)
                return None
            return drafts.put(paper.id, typed, typed_over, slot)

        editor = NoteEditor(
            text,
            self.session.describe([paper]),
            hint=hint,
            stored=stored if text != stored else None,
            keep=keep,
        )
        editor.draft_slot = slot
        return editor

    def _push_note_editor(self, paper: Paper, editor: NoteEditor) -> None:
        """Open ``editor``; once it closes — saved, or dropped with Esc — its draft goes (a
        conflict keeps the text again until the user chooses: `_note_conflict`)."""
        drafts, slot = self.drafts, editor.draft_slot
        self.app.push_screen(editor, lambda _result: drafts.drop(paper.id, slot))

    def _save_note(
        self,
        paper: Paper,
        started_from: str,
        result: NoteResult | None,
        editor: NoteEditor | None = None,
    ) -> None:
        """Save a note only over the note it started from; if another process changed it
        meanwhile, the user sees both and chooses. ``editor``: the editor still open,
        saving (see ``_write``)."""
        if result is None or result.text == started_from:
            if editor is not None:
                editor.saved()  # nothing to save: it closes
            return
        if paper.id == self.query_one(PaperList).current_id:
            self.session.hold(paper.id)  # (`is:noted`: a note cleared keeps it there)

        def conflict(found: NoteConflict | MetadataConflict) -> None:
            if not isinstance(found, NoteConflict):
                return
            if editor is None:
                self._note_conflict(paper, result.text, found.theirs, started_from)
            else:  # it closes: the dialog shows both notes (pushed from here, not from the
                # closing editor, which would never hear its answer)
                editor.saved()
                self.call_later(self._note_conflict, paper, result.text, found.theirs, started_from)

        self._write(
            lambda: self.library.set_note(paper.id, result.text, expected=started_from),
            on_conflict=conflict,
            editor=editor
            or _ReopenOnFailure(lambda why: self._reopen_note(paper, started_from, result, why)),
        )

    def _reopen_note(self, paper: Paper, started_from: str, result: NoteResult, why: str) -> None:
        """The note editor again, with a text the library did not take (see
        ``_ReopenOnFailure``), saying why; saved over ``started_from`` as before."""
        editor = self._note_editor(paper, result.text, started_from)
        editor.saves_with(lambda again: self._save_note(paper, started_from, again, editor))
        self._push_note_editor(paper, editor)
        editor.not_saved(why)  # (said once it is up)

    def _note_conflict(
        self, paper: Paper, mine: str, theirs: str, typed_over: str | None = None
    ) -> None:
        """Both notes side by side, the user chooses. ``typed_over``: the note ``mine`` was
        typed over: until the choice, ``mine`` is kept as a draft over it (the terminal
        closing now offers it again with "changed since", and saving it shows both again)."""
        from ...library.drafts import new_slot
        from .editors import NoteConflictDialog, NoteResult

        drafts, slot = self.drafts, new_slot()
        drafts.put(paper.id, mine, theirs if typed_over is None else typed_over, slot)

        def chosen(choice: str | None) -> None:
            # (mine: saved, or its editor reopened and keeping it; merge: its editor keeps it)
            drafts.drop(paper.id, slot)
            if choice == "mine":
                self._save_note(paper, theirs, NoteResult(mine))
            elif choice == "merge":
                merged = f"{theirs.rstrip()}\n\n──── your version ────\n\n{mine.strip()}\n"
                editor = self._note_editor(
                    paper,
                    merged,
                    theirs,
                    hint="Both versions, the stored one first: edit, then ctrl+s saves.",
                )
                editor.saves_with(lambda result: self._save_note(paper, theirs, result, editor))
                self._push_note_editor(paper, editor)
            else:  # theirs: the stored note stays
                self.refresh_library()

        self.app.push_screen(NoteConflictDialog(mine, theirs), chosen)

    # -- actions: citations -------------------------------------------------------------------
    def default_format(self) -> str:
        from ...formats import FORMATS

        # chosen in the reader (C, then d) > the config file > BibTeX
        for fmt in (self.library.setting("cite_format"), self.citation_format):
            if fmt in FORMATS:
                return fmt
        return "bibtex"

    def action_copy(self, fmt: str | None = None) -> None:
        """The citation of the papers (marked ones too) in ``fmt`` or the default format; its
        BibTeX carries abstracts and tags when the library's ``cite_abstract`` is on, as
        ``cite`` and the export dialog give it."""
        from ...cite import abstract_setting, format_records
        from ...formats import FORMAT_NAMES

        papers = self._targets()
        if not papers:
            return
        chosen = fmt or self.default_format()
        text = format_records(
            [self.session.record(p) for p in papers],
            chosen,
            with_abstract=abstract_setting(self.library),
        )
        count = papers_phrase(len(papers))
        self._copy(text, f"{FORMAT_NAMES[chosen]} for {count}")

    def action_cite_picker(self) -> None:
        from ...cite import abstract_setting, format_records
        from .pickers import CitePicker

        papers = self._targets()
        if not papers:
            return
        records = [self.session.record(p) for p in papers]
        with_abstract = abstract_setting(self.library)  # the preview is what c copies

        def done(choice: tuple[str, bool] | None) -> None:
            if choice is None:
                return
            fmt, make_default = choice
            if make_default:
                self._write(lambda: self.library.set_setting("cite_format", fmt))
            self.action_copy(fmt)

        self.app.push_screen(
            CitePicker(
                lambda f: format_records(records, f, with_abstract=with_abstract),
                self.default_format(),
                self.session.describe(papers),
            ),
            done,
        )

    def action_export(self) -> None:
        """The export dialog (screens/export.py): the view in its order, or the marked papers;
        written by the export command's code (cite.export_to_file) in a thread."""
        from ...cite import abstract_setting, export_to_file
        from ...record import record
        from .export import ExportDialog, ExportRequest, PaperSet

        if isinstance(self.app.screen, PaperScreen):
            self.action_close_paper()
        session = self.session
        groups = {"view": [session.paper_at(i) for i in range(len(self._rows))]}
        sets = [PaperSet("view", "the view", len(groups["view"]))]
        if session.marks:
            groups["marked"] = session.targets(None)
            sets.append(PaperSet("marked", "the marked papers", len(groups["marked"])))
        snapshot = self.library.snapshot
        with_abstract = abstract_setting(self.library)

        def exporter(request: ExportRequest) -> int:  # in the dialog's thread
            records = [record(p, snapshot) for p in groups[request.what]]
            export_to_file(
                records, request.fmt, request.path, force=request.force, with_abstract=with_abstract
            )
            return len(records)

        def done(message: str | None) -> None:
            if message:
                self.notify(message, title="Export", markup=False)

        default = "marked" if session.marks else "view"
        self.app.push_screen(ExportDialog(sets, default, self.default_format(), exporter), done)

    def action_copy_part(self, kind: str) -> None:
        """Copy the ids, abstracts or links of the papers (marked ones too)."""
        papers = self._targets()
        if not papers:
            return
        session = self.session
        if kind == "id":
            parts = [p.id for p in papers]
        elif kind == "abstract":
            parts = [p.abstract for p in papers]
        else:
            parts = [link for p in papers if (link := session.link_of(p))]
            if not parts:
                self.notify(
                    keyed(self.app, "No link known: {edit_metadata} sets a URL or DOI."),
                    severity="warning",
                    markup=False,
                )
                return
        noun = {"id": "id", "abstract": "abstract", "link": "link"}[kind]
        what = f"the {noun}" if len(parts) == 1 else f"{len(parts)} {noun}s"
        self._copy("\n\n".join(parts) if kind == "abstract" else "\n".join(parts), what)

    def action_open_link(self) -> None:
        """The paper's URL, else its DOI, its arXiv page, the first link in its abstract (the
        ones the paper view underlines): the first that is a safe web link (text/links.py).
        A refused URL is named with its reason, whether another link was opened or none."""
        paper = self.current_paper()
        if paper is None:
            return
        from ...text import escape_for_terminal
        from ...text.links import choose_link, doi_link, find_links

        meta = self.session.metadata(paper)
        candidates: list[tuple[str, str]] = []
        if meta.url:
            candidates.append(("URL", meta.url))
        if meta.doi:
            candidates.append(("DOI", doi_link(meta.doi)))  # as the paper view links it
        if meta.eprint:
            candidates.append(("arXiv page", "https://arxiv.org/abs/" + meta.eprint))
        shown_abstract = render(paper.abstract, DISPLAY_LIMIT).text[:DISPLAY_LIMIT]
        candidates += [("link in the abstract", link.url) for link in find_links(shown_abstract)]
        choice = choose_link(candidates)
        if not candidates:
            self.notify(
                keyed(
                    self.app, "No web link known for this paper: {edit_metadata} sets a URL or DOI."
                ),
                severity="warning",
                markup=False,
            )
            return
        if choice.url is None or choice.what is None:
            _what, link, why = choice.refused[0]
            shown = escape_for_terminal(link if len(link) <= 60 else link[:59] + "…")
            self.notify(
                f"Link refused, not opened: {shown} — {why}. "
                + keyed(self.app, "{edit_metadata} sets another URL."),
                severity="warning",
                markup=False,
            )
            return
        note = ""
        if choice.refused:
            what, _link, why = choice.refused[0]
            note = f" (the {what} was refused: {why})"
        if choice.refused or choice.what == "link in the abstract":
            self._open_in_browser(choice.url, f"the {choice.what}, ", note)
        else:
            self._open_in_browser(choice.url)

    @work(thread=True, group="browser", exit_on_error=False)
    def _open_in_browser(self, url: str, what: str = "", note: str = "") -> None:
        """Through ``webbrowser``, so ``$BROWSER`` is honoured."""
        import webbrowser

        opened = webbrowser.open(url)
        if opened:
            message = f"Opened {what}{url}{note}"
        else:
            message = f"No web browser could open {what}{url}{note}"
        self.app.call_from_thread(
            self.notify, message, severity="information" if opened else "warning", markup=False
        )

    @work(thread=True, group="copy", exit_on_error=False)
    def _copy(self, text: str, what: str) -> None:
        """The CLI's chain (`clipboard.copy`): a system tool or the tmux buffer, else OSC 52
        through this app's terminal — refused over the limit, as the CLI refuses it."""
        from ...clipboard import copy
        from ..app import terminal_osc52

        app = self.app
        result = copy(text, terminal=lambda t: app.call_from_thread(terminal_osc52, app, t))
        app.call_from_thread(self._copied, text, what, result)

    def _copied(self, text: str, what: str, result: CopyResult) -> None:
        from ...clipboard import OSC52_NOTE
        from .pickers import CopyFallback

        if result.ok:
            # OSC 52 is not confirmed by the terminal: its note stays a little longer
            timeout = 6.0 if result.method == OSC52_NOTE else self.app.NOTIFICATION_TIMEOUT
            self.notify(f"Copied {what} ({result.method})", markup=False, timeout=timeout)
            return
        self.app.push_screen(CopyFallback(text, f"{result.detail}.", f"Not copied: {what}"))

    # -- leaving ----------------------------------------------------------------------------
    def save_place(self) -> None:
        """Keep the filter and the current paper for the next start."""
        if self.library.read_only:
            return
        paper_id = self.query_one(PaperList).current_id if self.loaded else None
        with contextlib.suppress(LibraryError):
            save_place(self.library, self._place_key, self.session.query_text, paper_id)

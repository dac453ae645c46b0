"""Triage: the current filter's papers one at a time, full screen, one key per decision.

Every decision is an ordinary library change made through the main screen's ``_write`` (so
``u`` undoes it, the other screens refresh, and the CLI sees it at once)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar, Literal

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.screen import Screen
from textual.widgets import Footer, Static

from ...library import LibraryError
from ...session import tag_change
from ..commands import DIALOG_BINDINGS, default_keys, keyed, keys_label
from ..widgets.paper_view import PaperView

if TYPE_CHECKING:
    from .main import MainScreen

Decision = Literal["kept", "skipped"]


class TriageScreen(Screen[None]):
    """One paper at a time over a fixed list of paper ids (the filter's result when opened)."""

    #: its own keys; their ids are in ``commands.EXTRA_BINDING_IDS`` (remappable)
    BINDINGS: ClassVar[list[BindingType]] = list(DIALOG_BINDINGS["triage"])

    DEFAULT_CSS = """
    TriageScreen #triage-progress { height: 1; padding: 0 1; background: $boost; }
    TriageScreen #triage-view { height: 1fr; padding: 0 1; }
    """

    def help_section(
        self, keys: Mapping[str, tuple[str, ...]]
    ) -> tuple[str, list[tuple[str, str]]]:
        """Triage's keys, first in the `?` help asked from here; ``keys``: the keys in effect
        of the bindings the config file remapped."""
        defaults = default_keys()

        def shown(binding_id: str) -> str:
            return keys_label(keys.get(binding_id, defaults[binding_id]), " / ")

        return (
            "Triage (this screen)",
            [
                (shown("triage_keep"), "keep: bookmark the paper, and on to the next"),
                (shown("triage_skip"), "skip: mark it read, and on to the next"),
                (shown("triage_tag"), "tag it (and stay)"),
                (shown("triage_later"), "later: leave it unread, on to the next"),
                (shown("triage_back"), "back to the paper before"),
                (shown("triage_undo"), "undo the last change"),
                (shown("triage_leave"), "leave triage"),
            ],
        )

    def __init__(self, main: MainScreen, paper_ids: list[str], start: int = 0) -> None:
        super().__init__()
        self.main = main
        self.paper_ids = paper_ids
        self.position = min(max(start, 0), len(paper_ids))
        self.decisions: dict[str, Decision] = {}
        #: (paper id, decision) of each write made here, newest last, for ``u``
        self._done: list[tuple[str, Decision | None]] = []
        self._shown: object = None  # the shown paper's record, to notice changes made elsewhere

    def compose(self) -> ComposeResult:
        yield Static(id="triage-progress", markup=False)
        yield PaperView(id="triage-view")
        yield Footer(show_command_palette=False)  # room for every triage key at 70 columns

    def on_mount(self) -> None:
        from .main import POLL_S

        self.show()
        self.query_one(PaperView).focus()
        self.set_interval(POLL_S, self._follow_library)

    def _follow_library(self) -> None:
        """Another process (the CLI, another reader) changed the shown paper: show it so. The
        main screen's poll has already read the change into the snapshot."""
        if self._record() != self._shown:
            self.show()

    def _record(self) -> object:
        paper_id = self.current_id
        paper = self.main.session.corpus.get(paper_id) if paper_id else None
        return self.main.session.record(paper) if paper is not None else None

    # -- what shows -----------------------------------------------------------------------
    @property
    def current_id(self) -> str | None:
        if self.position < len(self.paper_ids):
            return self.paper_ids[self.position]
        return None

    def progress_text(self) -> str:
        total = len(self.paper_ids)
        kept = sum(1 for d in self.decisions.values() if d == "kept")
        skipped = sum(1 for d in self.decisions.values() if d == "skipped")
        tally = f"{kept:,} kept · {skipped:,} skipped"
        if self.current_id is None:
            return f"Done: all {total:,} seen · {tally} · " + keyed(
                self.app, "{triage_leave} leaves"
            )
        return f"{self.position + 1:,} of {total:,} · {tally}"

    def show(self) -> None:
        self.query_one("#triage-progress", Static).update(self.progress_text())
        self._shown = self._record()
        view = self.query_one(PaperView)
        paper_id = self.current_id
        paper = self.main.session.corpus.get(paper_id) if paper_id else None
        if paper is None:
            view.show(
                None,
                keyed(
                    self.app,
                    "No more papers. {triage_back} goes back, {triage_leave} leaves triage.",
                ),
            )
            return
        view.show(self.main.details(paper))

    def _step(self, step: int) -> None:
        self.position = min(max(self.position + step, 0), len(self.paper_ids))
        self.show()

    # -- decisions ------------------------------------------------------------------------
    def _decide(self, decision: Decision) -> None:
        paper_id = self.current_id
        if paper_id is None:
            return
        library = self.main.library
        snap = library.snapshot
        if decision == "kept":
            changes = paper_id not in snap.bookmarks
            ok = self.main._write(lambda: library.set_bookmark([paper_id], True))
        else:
            changes = paper_id not in snap.read
            ok = self.main._write(lambda: library.set_read([paper_id], True))
        if ok:
            self.decisions[paper_id] = decision
            if changes:  # a write that changes nothing is no step for undo to take back
                self._done.append((paper_id, decision))
            self._step(1)

    def action_keep(self) -> None:
        """Bookmark the paper and move on."""
        self._decide("kept")

    def action_skip(self) -> None:
        """Mark the paper read and move on."""
        self._decide("skipped")

    def action_later(self) -> None:
        """Leave the paper as it is (unread) and move on."""
        self._step(1)

    def action_back(self) -> None:
        self._step(-1)

    def action_tag(self) -> None:
        """The tag editor on this paper; triage stays on it."""
        from .editors import TagEditor

        paper_id = self.current_id
        paper = self.main.session.corpus.get(paper_id) if paper_id else None
        if paper_id is None or paper is None:
            return
        library = self.main.library

        def stored() -> tuple[list[str], dict[str, int]]:
            """The paper's tags as stored now: read again when another process changes
            the library's tags while the editor is open (``TagEditor.library_changed``),
            as the main screen's editor does."""
            return sorted(library.snapshot.tags.get(paper_id, []), key=str.casefold), {}

        def save(tags: list[str]) -> None:
            # (editor.shown: the stored tags as the editor last read them, while open) only
            # what the user changed: a tag another process added meanwhile is kept
            change = tag_change(editor.shown, tags)
            if change.empty:
                editor.saved()
                self.notify("No change to the tags.", timeout=3)
                return

            def write() -> None:
                if change.removed:
                    library.remove_tags([paper_id], change.removed)
                if change.added:
                    library.add_tags([paper_id], change.added)

            # the editor stays open until saved: a failed save keeps what was typed
            if self.main._write(write, editor=editor):
                self._done.append((paper_id, None))
                self.show()

        shown, _ = stored()
        editor = TagEditor(
            shown, library.snapshot.tag_names, self.main.session.describe([paper]), stored=stored
        ).saves_with(save)
        self.app.push_screen(editor)

    def action_undo(self) -> None:
        """Undo the latest library change (as ``u`` on the main screen); when it was a
        decision made here, back to that paper, undecided."""
        try:
            what = self.main.session.undo()
        except LibraryError as exc:
            self.notify(str(exc), title="Not undone", severity="error", markup=False)
            return
        if what is None:
            self.notify("Nothing to undo.", timeout=3)
            return
        self.main.refresh_library()
        self.notify(f"Undone: {what}", markup=False)
        if self._done:
            paper_id, decision = self._done.pop()
            if decision is not None:
                self.decisions.pop(paper_id, None)
            if paper_id in self.paper_ids:
                self.position = self.paper_ids.index(paper_id)
        self.show()

    def action_leave(self) -> None:
        self.app.pop_screen()

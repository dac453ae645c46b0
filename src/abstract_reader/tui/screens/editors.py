"""Editors: tags (with completion), metadata, note."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import (
    TYPE_CHECKING,
    Any,
    ClassVar,
    Literal,
    Protocol,
    Self,
    TypeVar,
    cast,
    runtime_checkable,
)

from textual import events, on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.suggester import SuggestFromList, SuggestionReady
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Footer, Input, Label, OptionList, Static, TextArea
from textual.widgets.option_list import Option

from ...library import Library, LibraryError, Metadata, clean_tag, tag_query
from ...metadata import normalise_doi
from ...status import word_cuts
from ...text.links import refusal
from ..commands import DIALOG_BINDINGS, keyed, keys_in_effect
from ..widgets.fitted_input import FittedInput
from ..widgets.keys_in_order import OrderedOptionList
from ..widgets.ordered_text_area import OrderedTextArea

if TYPE_CHECKING:
    from textual.await_complete import AwaitComplete

    from ...match import Candidate
    from ...paper import Paper

_T = TypeVar("_T")

#: The tags of an editor's papers as stored now, each with on how many of them it is.
StoredTags = Callable[[], tuple[list[str], dict[str, int]]]


@runtime_checkable
class FollowsLibrary(Protocol):
    """A dialog that shows library facts and follows their changes while it is open (made
    here or by another process): the main screen passes on what ``Library.refresh`` says
    changed (``MainScreen.library_changed``), as it redraws its own views."""

    def library_changed(self, changed: Collection[str]) -> None: ...


class SaveListener(Protocol):
    """An editor that stays open while what it saves is written (``_Editor.saves_with``):
    told how the write went (``MainScreen._write``)."""

    @property
    def retrying(self) -> bool: ...

    def saved(self) -> None: ...

    def busy(self, why: str, retry_in: float) -> None: ...

    def not_saved(self, why: str) -> None: ...


class MessageLine(Static):
    """A dialog's message (a warning, a question, an error) below its fields. In a short
    terminal the dialog's box scrolls: what is said is scrolled into view once it is laid
    out, and again when its size changes (a longer message's new lines are laid out after
    the refresh that follows ``say``, which scrolled to its old size)."""

    def __init__(self, *, id: str) -> None:
        super().__init__(id=id, markup=False)
        self.saying = False  #: something is said (the line is not empty)

    def say(self, message: Content) -> None:
        self.update(message)
        self.saying = bool(message.plain)
        if self.saying:
            self.call_after_refresh(self.scroll_visible, animate=False)

    def on_resize(self) -> None:
        if self.saying:
            self.scroll_visible(animate=False)


#: What the first Esc says in an editor with unsaved changes.
UNSAVED_QUESTION = "Unsaved changes: {editor_cancel} again drops them, {editor_save} saves."


class _Editor(ModalScreen[_T | None]):
    """One rule for every editor: ctrl+s saves; Esc cancels, but asks first (a second Esc)
    when there are unsaved changes.

    The second Esc drops only what the user was asked about: any change made after the
    question (a letter typed, a tag added or removed, a field filled) takes it back, its
    message goes, and the next Esc asks again. (The tag and metadata editors kept the
    question: Esc, typing on, Esc dropped what was typed since without a word.) Changes to
    any ``Input`` or ``TextArea`` are seen here; an editor calls ``edits_changed`` for the
    others (the tag editor's list of tags).

    Esc drops work only while the question is what the editor says: an editor says
    everything through ``say``, and a message that replaces the question (a refused ctrl+s:
    a tag too long, a bad year) takes it back, so the next Esc asks again. (The error of a
    refused save replaced the question on screen, and the next Esc closed the editor and
    dropped the work without a word.)"""

    BINDINGS: ClassVar[list[BindingType]] = list(DIALOG_BINDINGS["editor"])

    #: ``edits()`` when Esc asked "Unsaved changes"; None while no question stands
    _asked_at: tuple[object, ...] | None = None

    #: The opener's save (``saves_with``), handed what ctrl+s saves. The editor stays open
    #: while the library takes it: the opener says ``saved`` (the editor closes),
    #: ``busy`` (it tries once more by itself) or ``not_saved`` (it stays open, with exactly
    #: what was typed, and says why). None: ctrl+s closes the editor with its result, for
    #: the opener's callback. (A failed save closed the editor and lost what was typed.)
    _save: Callable[[Any], None] | None = None
    _retry_timer: Timer | None = None  #: a busy library's second try, pending
    _second_try = False  #: the save under way is that second try
    _untold: str | None = None  #: why a save failed, told once the (reopened) editor is up

    def saves_with(self, save: Callable[[_T], None]) -> Self:
        """Save through ``save`` (see ``_save``), keeping the editor open until it is done."""
        self._save = save
        return self

    @property
    def retrying(self) -> bool:
        """The save under way is the second try after the library was busy: another busy
        library says "not saved" (``not_saved``) instead of trying again."""
        return self._second_try

    def submit(self, value: _T) -> None:
        """What ctrl+s saves, checked: to the opener's save, or (none) the editor's result."""
        if self._save is None:
            self.dismiss(value)
            return
        if self._retry_timer is not None:  # ctrl+s while waiting to try again: now, instead
            self._stop_retry()
            self._second_try = True
        try:
            self._save(value)
        finally:
            self._second_try = False

    def saved(self) -> None:
        """The library has it (or there was nothing to save): the editor closes."""
        self._stop_retry()
        if self.is_attached and self.app.screen is self:
            self.dismiss(None)

    def busy(self, why: str, retry_in: float) -> None:
        """The library was busy (another program writing): said, and saved again in
        ``retry_in`` seconds, with what the editor holds then (ctrl+s: at once)."""
        self._stop_retry()
        self.warn(f"{why} Trying again in {retry_in:.0f} s.")
        self._retry_timer = self.set_timer(retry_in, self._try_again)

    def _try_again(self) -> None:
        self._retry_timer = None
        if self.is_attached and self.app.screen is self:
            self._second_try = True
            try:
                self.action_save()  # (refused, as typed now: said, and no second try)
            finally:
                self._second_try = False

    def not_saved(self, why: str) -> None:
        """The library did not take the save: the editor stays open with what was typed,
        and says why and what to do."""
        self._stop_retry()
        self._second_try = False
        if not self.is_mounted:  # (reopened with what a save made elsewhere could not save)
            self._untold = why
            return
        text = why.rstrip(".") + ". " if why else ""
        self.say(
            Content(
                keyed(
                    self.app,
                    f"Not saved: {text}{{editor_save}} tries again, {{editor_cancel}} drops it.",
                )
            ).stylize("$text-error")
        )

    @on(events.Mount)
    def _tell_untold(self) -> None:
        if self._untold is not None:
            why, self._untold = self._untold, None
            self.call_after_refresh(self.not_saved, why)  # (after the editor's own on_mount)

    def _stop_retry(self) -> None:
        if self._retry_timer is not None:
            self._retry_timer.stop()
            self._retry_timer = None

    def changed(self) -> bool:
        raise NotImplementedError

    def edits(self) -> tuple[object, ...]:
        """Everything being edited, as it stands now (only compared: with what it was when
        Esc asked). Needed by an editor whose ``changed`` can be true."""
        raise NotImplementedError

    def action_save(self) -> None:
        raise NotImplementedError

    def show_message(self, message: Content) -> None:
        """Put ``message`` on the editor's message line (empty: nothing is said there).
        Called by ``say``."""
        raise NotImplementedError

    def say(self, message: Content) -> None:
        """Say ``message`` below the fields (empty: say nothing). It replaces what was said:
        the question "Unsaved changes" too, which is then taken back."""
        self._asked_at = None
        self.show_message(message)

    def warn(self, text: str) -> None:
        """Say ``text`` below the fields, as a warning ("": say nothing)."""
        self.say(Content(text).stylize("$text-warning"))

    def action_cancel(self) -> None:
        # Compared with what was asked about, rather than a flag cleared by the change
        # messages: a key typed just before Esc (a burst) can have its Changed message
        # reach the screen after the Esc binding ran, and must not take back the question
        # it came before.
        if self.changed() and self.edits() != self._asked_at:
            self.warn(keyed(self.app, UNSAVED_QUESTION))
            self._asked_at = self.edits()  # (after warn: saying takes a question back)
            return
        self._stop_retry()  # dropped: a pending second try of the save drops too
        self.dismiss(None)

    def edits_changed(self) -> None:
        """Something being edited changed: a question "Unsaved changes" asked before the
        change is taken back (its message goes; the next Esc asks again)."""
        if self._asked_at is not None and self.edits() != self._asked_at:
            self._asked_at = None
            self.warn("")

    @on(Input.Changed)
    @on(TextArea.Changed)
    def _field_changed(self) -> None:
        self.edits_changed()


class _TagField(FittedInput):
    """The tag editor's field: with nothing typed in it, ↑ and the keys that remove a tag
    (``tags_remove``: ⌫ and Del, or the keys the config file gives it) go to the list of
    current tags above it (its last tag selected, for the next one to remove), rather than
    doing nothing in an empty field. (A key that is text stays text.)"""

    async def _on_key(self, event: events.Key) -> None:
        if not self.value and (
            event.key == "up"
            or (
                not event.is_printable
                and event.key
                in keys_in_effect("tags_remove", getattr(self.app, "keys_in_effect", None))
            )
        ):
            event.stop()
            event.prevent_default()
            editor = self.screen
            if isinstance(editor, TagEditor):
                editor.select_last_tag()
            return
        await super()._on_key(event)


class TagEditor(_Editor[list[str]]):
    """Current tags in a list, an input with completion. Enter adds; Enter on empty saves."""

    #: (with the editors' own: ``_Editor``) remappable, checked for clashes (``keymap.py``)
    BINDINGS: ClassVar[list[BindingType]] = list(DIALOG_BINDINGS["tags"])

    def __init__(
        self,
        tags: list[str],
        known: list[str],
        what: str,
        *,
        counts: dict[str, int] | None = None,
        total: int = 1,
        stored: StoredTags | None = None,
    ) -> None:
        """``counts`` (bulk): on how many of the ``total`` papers each tag is; a tag removed
        here is removed from all of them. ``stored``: the papers' tags and counts as stored
        now, read again when the library's tags change while the editor is open.

        ``shown`` is what the editor's list started from (the stored tags, as last read):
        saving writes only the differences between it and ``tags``."""
        super().__init__()
        self.stored = stored
        self.counts = counts or {}
        self.total = total
        self.shown = list(tags)
        self.tags = list(tags)
        self._cycle: tuple[list[str], int] | None = None  #: Tab's completions, where it is
        self._cycle_shown = ""
        self.known = known
        self.what = what

    def compose(self) -> ComposeResult:
        with Vertical(id="tag-box", classes="modal-box"):
            yield Static(Content(f"Tags of {self.what}"), classes="modal-title", markup=False)
            yield Label("Current tags", classes="field-caption")
            yield OrderedOptionList(id="tag-current")
            yield Label("Add a tag", classes="field-caption")
            yield _TagField(
                placeholders=(
                    "new tag — Tab completes, Enter adds, Enter on empty saves",
                    "new tag — Tab completes, Enter adds (empty: saves)",
                    "new tag — Tab completes, Enter adds",
                    "new tag",
                ),
                suggester=SuggestFromList(self.known, case_sensitive=False),
                on_enter=self._enter,
                id="tag-input",
            )
            yield Static(id="tag-error", markup=False)
            yield Label(
                keyed(
                    self.app,
                    "Enter: add/save · ↑: the tags, {tags_remove} removes one · Tab: back · "
                    "{editor_cancel}: cancel",
                ),
                classes="modal-hint",
                markup=False,
            )
        yield Footer()  # the dialog's own keys

    def on_mount(self) -> None:
        self._refresh_list()
        self.query_one("#tag-input", Input).focus()

    def library_changed(self, changed: Collection[str]) -> None:
        """Tags changed in the library (another process: the CLI's ``tag``, another
        reader): the completions are the tags that exist now, and the list shows the
        papers' tags as stored now, with the user's own changes kept on top (a tag added
        here stays, one removed here stays removed), and saving compares with what is
        stored now. (The list stood still while the editor was open.)"""
        if "tags" not in changed:
            return
        self._follow_known()
        if self.stored is None:
            return
        stored, counts = self.stored()
        if [t.casefold() for t in stored] == [t.casefold() for t in self.shown] and (
            counts == self.counts
        ):
            return
        was_asked = self._asked_at is not None and self._asked_at == self.edits()
        mine = {t.casefold() for t in self.tags}
        before = {t.casefold() for t in self.shown}
        added = [t for t in self.tags if t.casefold() not in before]
        removed = before - mine
        now = {t.casefold() for t in stored}
        self.shown = list(stored)
        self.counts = counts
        self.tags = [t for t in stored if t.casefold() not in removed] + [
            t for t in added if t.casefold() not in now
        ]
        self._refresh_list()
        if was_asked:  # the same changes of the user's: the question still stands
            self._asked_at = self.edits()

    def _follow_known(self) -> None:
        """The completions (Tab's and the field's suggestion) are the library's tag names
        as they are now: one another process created is offered, one that no longer exists
        anywhere is not. (They were read once, when the editor opened.) The names come from
        the reader's library (``ReaderApp.library``), the same snapshot the caller read
        ``known`` from."""
        library = getattr(self.app, "library", None)
        if not isinstance(library, Library):
            return
        known = list(library.snapshot.tag_names)
        if known == self.known:
            return
        self.known = known
        self._cycle = None  # Tab's round of completions starts again, from the new names
        field = self.query_one("#tag-input", Input)
        suggester = SuggestFromList(known, case_sensitive=False)
        field.suggester = suggester
        # and the suggestion shown for what is typed now (a name gone, a new one)
        value = field.value
        self.run_worker(self._suggest(field, suggester, value), group="tag-suggest", exclusive=True)

    @staticmethod
    async def _suggest(field: Input, suggester: SuggestFromList, value: str) -> None:
        """Replace the suggestion shown for ``value`` (none: "" hides it), as the field
        does as it is typed in (it ignores one for a value it no longer holds)."""
        suggestion = await suggester.get_suggestion(value.casefold()) if value else None
        field.post_message(SuggestionReady(value, suggestion or ""))

    def _refresh_list(self) -> None:
        options = self.query_one("#tag-current", OptionList)
        highlighted = options.highlighted
        # the tag under the cursor stays under it when the list changes around it (another
        # process's tag sorting before it moved the cursor onto that tag: Delete removed it)
        was = (
            options.get_option_at_index(highlighted).id
            if highlighted is not None and highlighted < options.option_count
            else None
        )
        options.clear_options()
        if self.tags:
            options.add_options(
                [
                    Option(
                        Content.assemble(tag_query(t), (self._count_note(t), "$text-muted")),
                        id=t,
                    )
                    for t in self.tags
                ]
            )
        else:
            options.add_option(Option(Content("(no tags yet)"), disabled=True))
        if highlighted is not None and self.tags:
            same = [i for i, t in enumerate(self.tags) if t == was]
            options.highlighted = same[0] if same else min(highlighted, len(self.tags) - 1)

    def _count_note(self, tag: str) -> str:
        count = self.counts.get(tag)
        return f"  on {count} of {self.total}" if count is not None and count < self.total else ""

    def show_message(self, message: Content) -> None:
        self.query_one("#tag-error", Static).update(message)

    def _error(self, text: str) -> None:
        self.say(Content(text).stylize("$text-error"))

    def warn(self, text: str) -> None:
        self._error(text)

    def edits(self) -> tuple[object, ...]:
        return (tuple(self.tags), self.query_one("#tag-input", Input).value)

    def changed(self) -> bool:
        pending = self.query_one("#tag-input", Input).value.strip()
        return bool(pending) or [t.casefold() for t in self.tags] != [
            t.casefold() for t in self.shown
        ]

    def on_key(self, event: object) -> None:
        """Tab in the field cycles through the known tags that start with what was typed
        (`ro` → Robust, robustness, …, then round again). With text in the field, Tab never
        moves the focus away (what is typed next would go to the list instead)."""

        if not isinstance(event, events.Key) or event.key != "tab":
            return
        field = self.query_one("#tag-input", Input)
        if not field.has_focus or not field.value.strip():
            return  # an empty field: Tab moves to the list of current tags, as usual
        event.prevent_default()
        event.stop()
        if self._cycle is None or field.value != self._cycle_shown:
            prefix = " ".join(field.value.split()).casefold().lstrip("#")
            candidates = sorted(
                (k for k in self.known if k.casefold().startswith(prefix)), key=str.casefold
            )
            self._cycle = (candidates, -1)
        candidates, at = self._cycle
        if not candidates:
            return
        at = (at + 1) % len(candidates)
        self._cycle = (candidates, at)
        self._cycle_shown = candidates[at]
        field.value = candidates[at]
        field.cursor_position = len(field.value)

    def _enter(self) -> None:
        """Enter in the field (as it reaches the field: `FittedInput.on_enter`): add what is
        typed, or save when nothing is."""
        field = self.query_one("#tag-input", Input)
        value = field.value.strip()
        if not value:
            self.action_save()
            return
        for raw in value.split(","):
            if not raw.strip():
                continue
            try:
                tag = clean_tag(raw)
            except LibraryError as exc:
                self._error(str(exc))
                return
            existing = {t.casefold() for t in self.tags}
            if tag.casefold() not in existing:
                known = {k.casefold(): k for k in self.known}
                self.tags.append(known.get(tag.casefold(), tag))
        self._error("")
        field.value = ""
        self._refresh_list()
        self.edits_changed()

    def select_last_tag(self) -> None:
        """The list of current tags focused, its last tag selected (next to the field)."""
        if not self.tags:
            return
        options = self.query_one("#tag-current", OptionList)
        self.set_focus(options)  # now: a Del typed right after goes to the list
        options.highlighted = len(self.tags) - 1

    def action_remove(self) -> None:
        """Remove the selected tag of the list. Not from the field: there the remove keys
        are the field's own while it holds text, and select the last tag when it is empty
        (``_TagField``); a remapped key the field does not take (``tags_remove =
        "ctrl+r"``) removes nothing from there either."""
        options = self.query_one("#tag-current", OptionList)
        if self.query_one("#tag-input", Input).has_focus:
            return
        index = options.highlighted
        if not self.tags:
            return
        if index is None:
            index = len(self.tags) - 1
        del self.tags[index]
        self._refresh_list()
        if self.tags:
            options.highlighted = min(index, len(self.tags) - 1)
        self.edits_changed()

    def action_save(self) -> None:
        pending = self.query_one("#tag-input", Input).value.strip()
        if pending:
            try:
                tag = clean_tag(pending)
            except LibraryError as exc:
                self._error(str(exc))
                return
            if tag.casefold() not in {t.casefold() for t in self.tags}:
                self.tags.append(tag)
        self.submit(list(self.tags))


#: The title field's hint when the title from the abstract does not fit in it (longest
#: first): that title then shows whole below the field.
TITLE_ELSEWHERE = (
    "empty: the title from the abstract, shown below",
    "empty: the abstract's title (below)",
    "empty: as below",
)


class _HintInput(FittedInput):
    """A ``FittedInput`` whose first placeholder, when a shorter one is shown instead, is
    shown whole by ``shown_whole`` (a widget below the field, hidden otherwise)."""

    def __init__(self, *args: Any, shown_whole: Widget, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.shown_whole = shown_whole

    def watch_placeholder(self, placeholder: str) -> None:
        forms: tuple[str, ...] = getattr(self, "placeholders", ())  # (set in __init__ too)
        whole: Widget | None = getattr(self, "shown_whole", None)
        if whole is not None and forms:
            whole.display = placeholder != forms[0]


#: The metadata editor's label of each field (its input's id is ``meta-`` and the name).
FIELD_LABELS = {"title": "Title", "authors": "Authors", "url": "URL", "doi": "DOI", "year": "Year"}


def field_text(meta: Metadata, name: str) -> str:
    """A metadata field as the editor shows it (authors joined by "; "; "" for none)."""
    value = getattr(meta, name)
    if name == "authors":
        return "; ".join(value)
    return "" if value is None else str(value)


class MetadataEditor(_Editor[Metadata]):
    DEFAULT_CSS = """
    #meta-title-hint {
        width: 100%;
        height: auto;
        padding-left: 11;  /* under the field's text, past its label */
    }
    """

    # (priority: see the table)
    BINDINGS: ClassVar[list[BindingType]] = list(DIALOG_BINDINGS["meta"])

    def __init__(
        self,
        meta: Metadata,
        derived_title: str,
        *,
        looking: bool = False,
        paper: Paper | None = None,
        venue: str = "",
        venue_shown: str = "",
        typed: Metadata | None = None,
    ) -> None:
        """``looking``: candidates from the loaded metadata files are on their way
        (``show_candidates``). ``paper``: the paper edited, whose own venue and year a
        candidate's year must not be paired with (`match.metadata_of`). ``venue``: the venue
        set by hand ("" none), ``venue_shown`` the one that applies without it (the hint);
        `edited_venue` is the field as saved. ``typed``: the fields as typed before (an edit
        that could not be saved), over ``meta``, the stored fields."""
        super().__init__()
        self.meta = meta
        self.typed = typed
        self.paper = paper
        self.venue = venue
        self.venue_shown = venue_shown
        self.edited_venue: str = venue
        self.derived_title = derived_title
        self.looking = looking
        self.candidates: list[Candidate] = []
        self.used: int | None = None  #: the candidate the fields were filled with
        self._url_warned: str | None = None  #: the refused URL the user was warned about

    def compose(self) -> ComposeResult:
        m = self.meta if self.typed is None else self.typed
        with Vertical(id="meta-box", classes="modal-box"):
            yield Static("Real title, authors, links", classes="modal-title")
            # The title from the abstract is the title field's hint; where it does not fit,
            # it shows whole (wrapped) below the field, and the field says so.
            full_title = Static(
                Content(self.derived_title).stylize("$text-muted"),
                id="meta-title-hint",
                markup=False,
            )
            full_title.display = False
            with Horizontal(classes="field"):
                yield Label(FIELD_LABELS["title"], classes="field-label")
                yield _HintInput(
                    value=field_text(m, "title"),
                    placeholders=(self.derived_title, *TITLE_ELSEWHERE),
                    shown_whole=full_title,
                    on_enter=self.action_save,
                    id="meta-title",
                )
            yield full_title
            for name, placeholder in (
                # examples, said to be: a new user took "Ada Lovelace; Alan Turing" in grey
                # for authors already set
                ("authors", "e.g. Ada Lovelace; Alan Turing"),
                ("url", "e.g. https://openreview.net/forum?id=…"),
                ("doi", "e.g. 10.1234/abc or https://doi.org/10.1234/abc"),
                ("year", "e.g. 2026"),
            ):
                with Horizontal(classes="field"):
                    yield Label(FIELD_LABELS[name], classes="field-label")
                    hints = [placeholder, *word_cuts("", placeholder)]
                    yield FittedInput(
                        value=field_text(m, name),
                        placeholders=hints,
                        on_enter=self.action_save,
                        id=f"meta-{name}",
                    )
            with Horizontal(classes="field"):  # (kept with the provenance, not in Metadata)
                yield Label("Venue", classes="field-label")
                hint = f"{self.venue_shown} (from the dump or match)" if self.venue_shown else ""
                yield FittedInput(
                    value=self.venue,
                    placeholders=[p for p in (hint, self.venue_shown, "e.g. NeurIPS") if p],
                    on_enter=self.action_save,
                    id="meta-venue",
                )
            error_line = MessageLine(id="meta-error")
            error_line.display = False
            yield error_line
            yield Static(
                Content("Looking for candidates in the metadata files…").stylize("$text-muted")
                if self.looking
                else Content(""),
                id="meta-candidates",
                markup=False,
            )
            yield Label(
                keyed(
                    self.app,
                    "Enter or {editor_save}: save · {editor_cancel}: cancel · empty fields clear",
                ),
                classes="modal-hint",
                markup=False,
            )
        yield Footer()  # the dialog's own keys

    def on_mount(self) -> None:
        self.query_one("#meta-title", Input).focus()

    def show_candidates(self, candidates: list[Candidate]) -> None:
        """The best records for this paper from the loaded metadata files, with scores."""
        self.candidates = candidates[:3]
        self._show_candidates()

    def _show_candidates(self) -> None:
        box = self.query_one("#meta-candidates", Static)
        if not self.candidates:
            box.update(Content("No candidate in the metadata files.").stylize("$text-muted"))
            return
        head = keyed(self.app, "Candidates ({meta_candidate} fills the fields with the next one)")
        lines = [Content(head).stylize("bold")]
        for n, cand in enumerate(self.candidates):
            rec = cand.record
            mark = "▶ " if n == self.used else "  "
            lines.append(
                Content.assemble(
                    mark,
                    (f"{cand.score:5.1f}  ", "$text-accent"),
                    rec.title or "(no title)",
                    (f"  {rec.source}:{rec.record_id}", "$text-muted"),
                )
            )
        box.update(Content("\n").join(lines))

    def action_use_candidate(self) -> None:
        """Fill the fields with the next candidate (saving writes them as usual)."""
        from ...match import metadata_of

        if not self.candidates:
            return
        self.used = 0 if self.used is None else (self.used + 1) % len(self.candidates)
        meta = metadata_of(self.candidates[self.used].record, self.paper)
        for name in FIELD_LABELS:
            self.query_one(f"#meta-{name}", Input).value = field_text(meta, name)
        self._show_candidates()

    def show_message(self, message: Content) -> None:
        """The line under the fields: a warning, an error, or nothing (then it takes no row:
        on a short terminal the candidates and the title's hint need the rows)."""
        line = self.query_one("#meta-error", MessageLine)
        line.display = bool(message.plain)
        line.say(message)  # below the fields: in a short terminal the box scrolls to it

    def _edited(self) -> Metadata | str:
        """The fields as typed, or what is wrong with them."""

        def value(field_id: str) -> str:
            return self.query_one(f"#{field_id}", Input).value.strip()

        year_text = value("meta-year")
        if year_text and not (year_text.isdigit() and len(year_text) == 4):
            return "Year must have four digits"
        doi = value("meta-doi")
        if doi:
            # as `abstract-reader meta --doi` stores it: doi:…, https://doi.org/… → 10.…
            try:
                doi = normalise_doi(doi)
            except ValueError as exc:
                return f"DOI: {exc}"
        authors = tuple(a.strip() for a in value("meta-authors").split(";") if a.strip())
        return Metadata(
            title=value("meta-title") or None,
            authors=authors,
            url=value("meta-url") or None,
            doi=doi or None,
            year=int(year_text) if year_text else None,
        )

    def edits(self) -> tuple[object, ...]:
        return tuple(field.value for field in self.query(".field Input").results(Input))

    def changed(self) -> bool:
        return self._edited() != self.meta or self._venue_value() != self.venue

    def _venue_value(self) -> str:
        return " ".join(self.query_one("#meta-venue", Input).value.split())

    @on(Input.Changed, "#meta-url")
    def _url_changed(self) -> None:
        if self._url_warned is not None:  # the warning was about another URL
            self._url_warned = None
            self.say(Content(""))

    def action_save(self) -> None:
        edited = self._edited()
        if isinstance(edited, str):
            self.say(Content(edited).stylize("$text-error"))
            return
        url = edited.url
        if url and url != self._url_warned and (why := refusal(url)):
            # a link `O` and the paper view would refuse: said before it is saved; saving
            # again (the URL unchanged) keeps it as typed
            self._url_warned = url
            self.warn(
                f"O will not open this URL and citations leave it out: {why}."
                " Save again to keep it anyway."
            )
            return
        self.edited_venue = self._venue_value()
        self.submit(edited)


@dataclass(frozen=True, slots=True)
class NoteResult:
    text: str


#: How soon the note editor keeps what was typed as a draft (``keep``), at the latest,
#: while typing goes on: at most this much typing is lost if the terminal closes.
DRAFT_EVERY_S = 0.5


class NoteEditor(_Editor[NoteResult]):
    """A TextArea; ctrl+s saves, Esc cancels (asking first when the text changed), ctrl+o
    edits the text in $VISUAL / $EDITOR (the reader is suspended meanwhile).

    With ``keep``, what is typed is handed to it as a draft (`library.drafts`) within
    `DRAFT_EVERY_S` of each change, when the editor opens with a text that is not the
    stored note, before an external editor runs, and when the reader closes with the
    editor open; the opener drops the draft once the editor closes (saved, or dropped with
    Esc). ``keep`` answers None, or why the text could not be kept: said once."""

    BINDINGS: ClassVar[list[BindingType]] = list(DIALOG_BINDINGS["note"])

    def __init__(
        self,
        note: str,
        what: str,
        *,
        hint: str = "",
        stored: str | None = None,
        keep: Callable[[str], str | None] | None = None,
    ) -> None:
        """``stored``: the stored note, when ``note`` (the text to edit) is not it (a text
        that could not be saved, a draft): Esc asks before dropping the difference."""
        super().__init__()
        self.draft = note
        self.note = note if stored is None else stored
        self.what = what
        self.hint = hint
        self._keep = keep
        self._keep_timer: Timer | None = None
        self._kept: str | None = None  #: the text last handed to ``keep``
        self._typed = note  #: the text as the last change left it
        #: why the text last handed to ``keep`` was not kept (None: it was)
        self.keep_failed: str | None = None
        self._told_keep_failed = False
        self.draft_slot = ""  #: the opener's name for this editor's draft
        #: dismissed: nothing is kept any more (not ``_closing``: Textual's message pump
        #: has one, and setting it kept the screen's queue from ever closing)
        self._dismissed = False

    def dismiss(self, result: NoteResult | None = None) -> AwaitComplete:
        self._dismissed = True
        self._stop_keeping()
        return super().dismiss(result)

    def keep_draft(self) -> None:
        """Hand the text as it is now to ``keep`` (if it changed since it last did), and
        say if it could not be kept."""
        self._keep_timer = None
        if self._hand_over():
            self._tell_keep_failed()

    def _hand_over(self) -> bool:
        """Hand the text to ``keep`` unless it did already or the editor was closed (saved
        or dropped); whether it did now."""
        self._read_text()
        if self._keep is None or self._dismissed or self._typed == self._kept:
            return False
        self._kept = self._typed
        self.keep_failed = self._keep(self._typed)
        return True

    def _tell_keep_failed(self) -> None:
        """Say (once: the next keys would say it again) that the text is not kept."""
        why = self.keep_failed
        if why is not None and not self._told_keep_failed and self.is_attached:
            self._told_keep_failed = True
            save = keyed(self.app, "{editor_save}")
            self.warn(f"Not kept as a draft should the reader close ({why}): {save} saves it.")

    def _stop_keeping(self) -> None:
        if self._keep_timer is not None:
            self._keep_timer.stop()
            self._keep_timer = None

    @on(TextArea.Changed, "#note-text")
    def _text_changed(self, event: TextArea.Changed) -> None:
        self._typed = event.text_area.text
        if self._keep is not None and self._keep_timer is None and not self._dismissed:
            self._keep_timer = self.set_timer(DRAFT_EVERY_S, self.keep_draft)

    def on_unmount(self) -> None:
        """The reader closing with the editor open (not dismissed): the text is kept."""
        self.keep_now()

    def keep_now(self) -> None:
        """Keep the text as it is, the last keys too, as the reader ends (nothing said: the
        widgets may be gone; the last change's text then stands)."""
        self._hand_over()

    def _read_text(self) -> None:
        """The text from the text area itself while it is there: the last keys' Changed
        messages may not have reached this screen yet (SIGHUP came right after them)."""
        with contextlib.suppress(Exception):  # (gone: the last change's text stands)
            self._typed = self.query_one("#note-text", TextArea).text

    def compose(self) -> ComposeResult:
        with Vertical(id="note-box", classes="modal-box"):
            yield Static(Content(f"Note on {self.what}"), classes="modal-title", markup=False)
            if self.hint:
                yield Static(Content(self.hint).stylize("$text-warning"), markup=False)
            yield OrderedTextArea(self.draft, id="note-text", soft_wrap=True)
            yield MessageLine(id="note-message")
            yield Label(
                keyed(
                    self.app,
                    "{editor_save}: save · {editor_cancel}: cancel · "
                    "{note_external_editor}: edit in $VISUAL / $EDITOR",
                ),
                markup=False,
                classes="modal-hint",
            )
        yield Footer()  # the dialog's own keys

    def on_mount(self) -> None:
        area = self.query_one("#note-text", TextArea)
        area.focus()
        area.move_cursor(area.document.end)
        if self.draft != self.note:  # (a draft restored, a text not saved: kept at once)
            self.keep_draft()
        self._tell_keep_failed()  # (a failure before it was up)
        # in a short terminal the box scrolls: the text area whole in view, once laid out
        self.call_after_refresh(area.scroll_visible, animate=False)

    def show_message(self, message: Content) -> None:
        # below the text area: in a short terminal the box scrolls to it
        self.query_one("#note-message", MessageLine).say(message)

    @on(TextArea.SelectionChanged, "#note-text")
    def _cursor_moved(self, event: TextArea.SelectionChanged) -> None:
        """In a short terminal the box scrolls (to the message below the text area): the
        text area comes back whole into view as its cursor moves, where the text is typed
        (the text area scrolls only itself to its cursor)."""
        self.call_after_refresh(event.text_area.scroll_visible, animate=False)

    def edits(self) -> tuple[object, ...]:
        return (self.query_one("#note-text", TextArea).text,)

    def changed(self) -> bool:
        return self.query_one("#note-text", TextArea).text != self.note

    def action_save(self) -> None:
        self.submit(NoteResult(self.query_one("#note-text", TextArea).text))

    def action_external_editor(self) -> None:
        """Write the text to a temporary file, suspend the reader, run the editor on it, and
        take the file back (it is removed either way). A failing editor changes nothing."""
        import os
        import shlex
        import subprocess
        import tempfile

        from textual.app import SuspendNotSupported

        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
        if not editor:
            self.warn("Set $VISUAL or $EDITOR to edit notes in your editor.")
            return
        area = self.query_one("#note-text", TextArea)
        self._stop_keeping()
        self.keep_draft()  # (what was typed: the draft waits while the editor runs)
        fd, name = tempfile.mkstemp(prefix="abstract-reader-note-", suffix=".md")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(area.text)
            failure: OSError | None = None
            try:
                # Nothing may escape the suspended block: Textual's suspend() resumes the
                # app only when the block ends normally, so an editor that cannot start
                # (no such program) must be caught inside it, or the reader never comes back.
                with self.app.suspend():
                    try:
                        code = subprocess.call([*shlex.split(editor), name])
                    except (OSError, ValueError) as exc:  # ValueError: shlex, bad quoting
                        failure = exc if isinstance(exc, OSError) else OSError(str(exc))
                        code = -1
            except SuspendNotSupported:
                self.warn("This terminal cannot be suspended for an editor.")
                return
            if failure is not None:
                self.warn(f"Could not run {editor}: {failure.strerror or failure}")
                return
            if code != 0 and _terminal_gone():
                # The window closed while the editor ran (it ended with it): what the editor
                # wrote to the file (a `:w`) is the text now, kept as the draft at once — the
                # reader ends next (SIGHUP).
                with (
                    contextlib.suppress(OSError),
                    open(name, encoding="utf-8", errors="replace") as handle,
                ):
                    area.text = _from_editor(handle.read(), area.text)
                    self.keep_now()
                return
            if code != 0:
                self.warn(f"{editor} exited with code {code}; the note is unchanged.")
                return
            with open(name, encoding="utf-8", errors="replace") as handle:
                text = handle.read()
        finally:
            with contextlib.suppress(OSError):
                os.unlink(name)
        area.text = _from_editor(text, area.text)
        area.move_cursor(area.document.end)


def _from_editor(text: str, before: str) -> str:
    """A note as an external editor left its file: without the newline editors add at the
    end of a file, and sanitised (nothing the terminal would run)."""
    from ...text import sanitise

    if text.endswith("\n") and not before.endswith("\n"):
        text = text[:-1]
    return sanitise(text.replace("\r\n", "\n"))


def _terminal_gone() -> bool:
    """Is the reader's terminal gone (hung up: its window closed)? Its settings can no
    longer be read then."""
    import sys
    import termios

    try:
        termios.tcgetattr(sys.__stdin__.fileno())  # type: ignore[union-attr]
    except (termios.error, OSError, ValueError, AttributeError):
        return True
    return False


NoteChoice = Literal["mine", "theirs", "merge"]


class NoteConflictDialog(ModalScreen[NoteChoice | None]):
    """The note changed elsewhere while it was being edited: both versions side by side,
    and the user chooses. Nothing is dropped without being asked."""

    BINDINGS: ClassVar[list[BindingType]] = list(DIALOG_BINDINGS["conflict"])

    def __init__(self, mine: str, theirs: str) -> None:
        super().__init__()
        self.mine = mine
        self.theirs = theirs

    def compose(self) -> ComposeResult:
        with Vertical(id="conflict-box", classes="modal-box"):
            yield Static(
                "The note was changed elsewhere while you edited it", classes="modal-title"
            )
            with Horizontal(id="conflict-sides"):
                with VerticalScroll(classes="conflict-side"):
                    yield Label("Yours (not saved)", classes="field-caption")
                    yield Static(Content(self.mine), id="conflict-mine", markup=False)
                with VerticalScroll(classes="conflict-side"):
                    yield Label("Stored now (theirs)", classes="field-caption")
                    yield Static(Content(self.theirs), id="conflict-theirs", markup=False)
            yield Static(id="conflict-message", markup=False)
            yield Label(
                keyed(
                    self.app,
                    "{conflict_mine}: keep mine · {conflict_theirs}: keep theirs · "
                    "{conflict_merge}: both, in the editor",
                ),
                classes="modal-hint",
                markup=False,
            )
        yield Footer()  # the dialog's own keys

    def action_choose(self, choice: str) -> None:
        if choice in ("mine", "theirs", "merge"):
            self.dismiss(cast("NoteChoice", choice))
        else:  # Esc drops nothing: one of the two texts would be lost
            text = keyed(
                self.app,
                "Choose {conflict_mine}, {conflict_theirs} or {conflict_merge}: one version "
                "would be lost otherwise.",
            )
            self.query_one("#conflict-message", Static).update(
                Content(text).stylize("$text-warning")
            )


MetaChoice = Literal["mine", "theirs"]


class MetadataConflictDialog(ModalScreen[dict[str, MetaChoice]]):
    """Fields changed both in the metadata editor and elsewhere while it was open (the CLI's
    ``meta``, another reader): each with both values, and the user chooses which to keep,
    for all fields at once (m, t) or field by field (Enter switches one, ctrl+s saves).
    As with a note, nothing is dropped without being asked: Esc chooses nothing."""

    BINDINGS: ClassVar[list[BindingType]] = list(DIALOG_BINDINGS["meta_conflict"])

    def __init__(self, mine: Metadata, theirs: Metadata, fields: tuple[str, ...]) -> None:
        """``fields``: the conflicting ones (names of ``Metadata``'s fields)."""
        super().__init__()
        self.mine = mine
        self.theirs = theirs
        self.fields = fields
        #: each field's choice so far: yours, until switched
        self.choices: dict[str, MetaChoice] = dict.fromkeys(fields, "mine")

    def compose(self) -> ComposeResult:
        names = ", ".join(FIELD_LABELS[name] for name in self.fields)
        with Vertical(id="meta-conflict-box", classes="modal-box"):
            yield Static(
                Content(f"Changed elsewhere while you edited it: {names}"),
                classes="modal-title",
                markup=False,
            )
            yield OptionList(
                *(Option(self._prompt(name), id=name) for name in self.fields),
                id="meta-conflicts",
            )
            yield MessageLine(id="meta-conflict-message")
            yield Label(
                keyed(
                    self.app,
                    "{conflict_mine}: keep mine · {conflict_theirs}: keep theirs"
                    if len(self.fields) == 1
                    else "{conflict_mine}: keep all mine · {conflict_theirs}: keep all theirs · "
                    "Enter: switch a field · {conflict_save}: save as marked",
                ),
                classes="modal-hint",
                markup=False,
            )
        yield Footer()  # the dialog's own keys

    def _prompt(self, name: str) -> Content:
        """A field: its label, then yours and theirs, the one kept marked ●. The values are
        library and typed text: sanitised, and never read as markup."""
        from ...text import sanitise

        def side(who: MetaChoice, caption: str, meta: Metadata) -> Content:
            text = sanitise(field_text(meta, name))
            kept = self.choices[name] == who
            return Content.assemble(
                ("  ● " if kept else "  ○ ", "$text-accent" if kept else "$text-muted"),
                (f"{caption:<21}", "bold" if kept else ""),
                Content(text) if text else ("(empty)", "$text-muted italic"),
            )

        return Content("\n").join(
            [
                Content(FIELD_LABELS[name]).stylize("bold"),
                side("mine", "yours (not saved)", self.mine),
                side("theirs", "theirs (stored now)", self.theirs),
            ]
        )

    def on_mount(self) -> None:
        self.query_one("#meta-conflicts", OptionList).focus()

    @on(OptionList.OptionSelected, "#meta-conflicts")
    def _switch(self, event: OptionList.OptionSelected) -> None:
        name = event.option.id
        if name not in self.choices:
            return
        self.choices[name] = "theirs" if self.choices[name] == "mine" else "mine"
        event.option_list.replace_option_prompt(name, self._prompt(name))

    def action_choose_all(self, choice: str) -> None:
        if choice in ("mine", "theirs"):
            self.dismiss(dict.fromkeys(self.fields, cast("MetaChoice", choice)))

    def action_save(self) -> None:
        self.dismiss(dict(self.choices))

    def action_refuse(self) -> None:
        """Esc drops nothing: one of the two values of each field would be lost."""
        text = keyed(
            self.app,
            "Choose {conflict_mine} or {conflict_theirs}: one of the two values would be lost "
            "otherwise."
            if len(self.fields) == 1
            else "Choose {conflict_mine} or {conflict_theirs}, or switch fields and "
            "{conflict_save}: a value would be lost otherwise.",
        )
        self.query_one("#meta-conflict-message", MessageLine).say(
            Content(text).stylize("$text-warning")
        )

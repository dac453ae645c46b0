"""Pickers: citation format (with a live preview), tag list, copy fallback."""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import ClassVar, Self

from rich.cells import cell_len
from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.timer import Timer
from textual.widgets import Footer, Input, Label, OptionList, Static, TextArea
from textual.widgets.option_list import Option

from ...formats import FORMAT_NAMES, FORMATS
from ...library import LibraryError, clean_tag, tag_query
from ...plural import papers_phrase
from ...text import sanitise
from ..commands import DIALOG_BINDINGS, keyed
from ..widgets.fitted_input import FittedInput
from ..widgets.keys_in_order import OrderedOptionList
from ..widgets.ordered_text_area import OrderedTextArea
from .editors import MessageLine


class CitePicker(ModalScreen[tuple[str, bool] | None]):
    """Choose a format; the preview follows the highlight. Enter copies, d makes default."""

    BINDINGS: ClassVar[list[BindingType]] = list(DIALOG_BINDINGS["cite"])

    def __init__(self, preview: Callable[[str], str], current: str, what: str) -> None:
        super().__init__()
        self.preview = preview
        self.current = current
        self.what = what

    def compose(self) -> ComposeResult:
        with Vertical(id="cite-box", classes="modal-box"):
            yield Static(
                Content(f"Copy the citation of {self.what}"), classes="modal-title", markup=False
            )
            with Horizontal():
                yield OrderedOptionList(
                    *[
                        Option(
                            Content(FORMAT_NAMES[f] + (" (default)" if f == self.current else "")),
                            id=f,
                        )
                        for f in FORMATS
                    ],
                    id="cite-formats",
                )
                with VerticalScroll(id="cite-preview-box"):
                    yield Static(id="cite-preview", markup=False)
            yield Label(
                keyed(
                    self.app,
                    "Enter: copy · {cite_default}: copy and make it the default · "
                    "{cite_cancel}: cancel",
                ),
                classes="modal-hint",
                markup=False,
            )
        yield Footer()  # the dialog's own keys

    def on_mount(self) -> None:
        options = self.query_one("#cite-formats", OptionList)
        options.highlighted = FORMATS.index(self.current) if self.current in FORMATS else 0
        options.focus()
        # in a short terminal the box scrolls: to the formats, once it is laid out
        self.call_after_refresh(options.scroll_visible, animate=False)
        self._show(self.current if self.current in FORMATS else FORMATS[0])

    def _show(self, fmt: str) -> None:
        self.query_one("#cite-preview", Static).update(Content(self.preview(fmt)))

    @on(OptionList.OptionHighlighted, "#cite-formats")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option.id:
            self._show(event.option.id)

    @on(OptionList.OptionSelected, "#cite-formats")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id:
            self.dismiss((event.option.id, False))

    def action_make_default(self) -> None:
        options = self.query_one("#cite-formats", OptionList)
        if options.highlighted is not None:
            self.dismiss((FORMATS[options.highlighted], True))

    def action_cancel(self) -> None:
        self.dismiss(None)


@dataclass(frozen=True, slots=True)
class TagAction:
    """What the tag list asks for: filter to a tag, rename it, or delete it."""

    kind: str  # "filter" | "like" (rank by likeness to its papers) | "rename" | "delete"
    tag: str
    new_name: str = ""
    merge: bool = False  #: a rename onto another tag: its papers get that tag


class TagList(ModalScreen[TagAction | None]):
    """Every tag with its count. Enter filters to it; r renames it, d deletes it (on every
    paper, after a second d to confirm).

    A rename or delete goes to the opener's write (``saves_with``), and the list stays open
    until the library has it, as the editors do (``editors.SaveListener``): a busy library
    is said and tried once more by itself; a change the library does not take is said on
    one line, with the name typed still in the field, for Enter (or d) to try again. (The
    list closed first, and a failed write lost the new name with a toast.)"""

    #: its keys, with ids (remappable, checked for clashes): commands.DIALOG_BINDINGS
    BINDINGS: ClassVar[list[BindingType]] = list(DIALOG_BINDINGS["taglist"])

    _save: Callable[[TagAction], None] | None = None  #: the opener's write (``saves_with``)
    _pending: TagAction | None = None  #: the rename or delete being written
    _retry_timer: Timer | None = None  #: a busy library's second try, pending
    _second_try = False  #: the write under way is that second try
    _saving = False  #: our own write is under way (the list closes once it is done)

    def __init__(
        self,
        counts: list[tuple[str, int]],
        current: Callable[[], list[tuple[str, int]]] | None = None,
    ) -> None:
        super().__init__()
        self.counts = counts
        #: the tags and counts as stored now, read when the library changes (None: the list
        #: stays as it opened)
        self.current = current
        self._confirm_delete: str | None = None
        self._confirm_merge: tuple[str, str] | None = None  #: (tag, onto) asked about
        self._renaming: str | None = None  #: the tag the name field renames

    def _options(self) -> list[Option]:
        if not self.counts:
            return []
        width = max(len(str(c)) for _, c in self.counts)
        return [
            Option(
                Content.assemble((f"{count:>{width}}  ", "$text-muted"), tag_query(name)),
                id=name,
            )
            for name, count in self.counts
        ]

    def compose(self) -> ComposeResult:
        with Vertical(id="taglist-box", classes="modal-box"):
            yield Static("Tags", classes="modal-title")
            yield OrderedOptionList(*self._options(), id="taglist")
            yield Static("No tags yet: press t on a paper to tag it.", id="taglist-empty")
            yield FittedInput(
                placeholder="new name — Enter renames, Esc cancels",
                on_enter=self._renamed,
                id="tag-rename",
            )
            yield MessageLine(id="taglist-message")
            yield Label(self._hint(), markup=False, classes="modal-hint", id="taglist-hint")
        yield Footer()  # the dialog's own keys

    def _hint(self, renaming: bool = False) -> str:
        """The keys that apply: the list's, or the name field's while a tag is renamed."""
        if renaming:
            return keyed(self.app, "Enter: rename · {taglist_close}: cancel")
        return keyed(
            self.app,
            "Enter: show papers with the tag · {taglist_like}: rank like them · "
            "{taglist_rename}: rename · {taglist_delete}: delete · {taglist_close}: close",
        )

    def on_mount(self) -> None:
        self.query_one("#tag-rename", Input).display = False
        self._show_list()

    def _show_list(self) -> None:
        self.query_one("#taglist", OptionList).display = bool(self.counts)
        self.query_one("#taglist-empty", Static).display = not self.counts

    def library_changed(self, changed: Collection[str]) -> None:
        """Tags changed in the library (the CLI's ``tag``, another reader, a write here):
        the list shows the tags and counts stored now, the cursor on the same tag. A
        question stands only about what it says: "d again" is asked again with the tag's
        count now, a rename or merge of a tag no paper has any more is taken back. (The
        list stood as it opened: d removed a tag from more papers than it said.)"""
        if "tags" not in changed or self.current is None or self._saving:
            return
        counts = self.current()
        if counts == self.counts:
            return
        options = self.query_one("#taglist", OptionList)
        tag, at = self._selected_tag(), options.highlighted
        self.counts = counts
        options.clear_options()
        options.add_options(self._options())
        names = [name for name, _count in counts]
        if tag in names:
            options.highlighted = names.index(tag)
        elif names:
            options.highlighted = min(at or 0, len(names) - 1)
        self._show_list()
        gone = [t for t in (self._confirm_delete, self._renaming) if t and t not in names]
        if self._confirm_merge is not None:  # (its counts are old: Enter asks again)
            self._confirm_merge = None
            self._say(Content(""))
        if gone:
            self._confirm_delete = None
            if self._renaming in gone:
                self._close_rename()
            self._say(
                Content.assemble(
                    self._named(gone[0]), " is on no paper now (changed elsewhere)."
                ).stylize("$text-warning")
            )
        elif self._confirm_delete is not None:
            self._ask_delete(self._confirm_delete)

    def _selected_tag(self) -> str | None:
        if not self.counts:
            return None
        options = self.query_one("#taglist", OptionList)
        index = options.highlighted
        return self.counts[index][0] if index is not None else None

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id:
            self.dismiss(TagAction("filter", event.option.id))

    def action_like(self) -> None:
        """Rank every paper by likeness to the tag's papers (the filter ``like:#tag``)."""
        tag = self._selected_tag()
        if tag is not None:
            self.dismiss(TagAction("like", tag))

    def action_rename(self) -> None:
        tag = self._selected_tag()
        if tag is None:
            return
        field = self.query_one("#tag-rename", Input)
        field.display = True
        field.value = tag
        self._renaming = tag
        self.query_one("#taglist-hint", Label).update(self._hint(renaming=True))
        self.set_focus(field)  # now, not after the keys queued behind r: the name goes in
        # below the list: in a short terminal the box scrolls to show it, once it is laid out
        self.call_after_refresh(field.scroll_visible, animate=False)

    def _renamed(self) -> None:
        """Enter in the name field, as it reaches the field (`FittedInput.on_enter`)."""
        tag = self._renaming or self._selected_tag()
        if tag is None:
            return
        try:
            new_name = clean_tag(self.query_one("#tag-rename", Input).value)
        except LibraryError as exc:
            self._say(Content(f"Not renamed: {exc}").stylize("$text-error"))
            return
        if new_name == tag:
            return
        # the library's tag names are unique up to ASCII case (SQLite's NOCASE)
        onto = next(
            (
                (name, n)
                for name, n in self.counts
                if name != tag and _nocase(name) == _nocase(new_name)
            ),
            None,
        )
        if onto is None:
            self._submit(TagAction("rename", tag, new_name))
        elif self._confirm_merge == (tag, onto[0]):
            self._submit(TagAction("rename", tag, onto[0], merge=True))
        else:  # asked first: the two tags become one, on every paper
            # (each tag named once: at 40×12 a question naming the existing tag twice took
            # more lines than the box shows)
            self._confirm_merge = (tag, onto[0])
            self._say(
                Content.assemble(
                    self._named(onto[0]),
                    f" exists ({papers_phrase(onto[1])}). Enter again merges ",
                    self._named(tag),
                    " into it (its papers get that tag); Esc cancels.",
                ).stylize("$text-warning")
            )

    @on(Input.Changed, "#tag-rename")
    def _rename_changed(self) -> None:
        if self._confirm_merge is not None:  # the question was about another name
            self._confirm_merge = None
            self._say(Content(""))

    def _say(self, message: Content) -> None:
        # below the list: in a short terminal the box scrolls to show it
        self.query_one("#taglist-message", MessageLine).say(message)

    def _named(self, tag: str) -> str:
        """A tag as a message names it: whole, or, longer than the message's line, cut
        there with "…". At 40×12 the merge question naming two tags near the 64-character
        limit was taller than the box; the whole names are in the list and the field."""
        return cut_to(tag_query(tag), self.query_one("#taglist-message").content_region.width)

    def action_delete(self) -> None:
        tag = self._selected_tag()
        if tag is None:
            return
        if self._confirm_delete == tag:
            self._submit(TagAction("delete", tag))
            return
        self._ask_delete(tag)

    def _ask_delete(self, tag: str) -> None:
        self._confirm_delete = tag
        count = dict(self.counts)[tag]
        self._say(
            Content(
                keyed(self.app, "Press {taglist_delete} again to remove ")
                + f"{self._named(tag)} from {papers_phrase(count)}."
            ).stylize("$text-warning")
        )

    # -- the write, with the list still open ---------------------------------------------
    def saves_with(self, save: Callable[[TagAction], None]) -> Self:
        self._save = save
        return self

    def _submit(self, action: TagAction) -> None:
        if self._save is None:
            self.dismiss(action)
            return
        if self._retry_timer is not None:  # again while waiting to try again: now, instead
            self._stop_retry()
            self._second_try = True
        self._pending = action
        self._saving = True
        try:
            self._save(action)
        finally:
            self._second_try = self._saving = False

    @property
    def retrying(self) -> bool:
        return self._second_try

    def saved(self) -> None:
        self._stop_retry()
        if self.is_attached and self.app.screen is self:
            self.dismiss(None)

    def busy(self, why: str, retry_in: float) -> None:
        self._stop_retry()
        self._say(Content(f"{why} Trying again in {retry_in:.0f} s.").stylize("$text-warning"))
        self._retry_timer = self.set_timer(retry_in, self._try_again)

    def _try_again(self) -> None:
        self._retry_timer = None
        action = self._pending
        if action is None or not (self.is_attached and self.app.screen is self):
            return
        self._second_try = True
        try:
            if action.kind == "rename":
                self._renamed()  # the name as it is in the field now
            else:
                self._submit(action)
        finally:
            self._second_try = False

    def not_saved(self, why: str) -> None:
        self._stop_retry()
        self._second_try = False
        action = self._pending
        renaming = action is not None and action.kind == "rename"
        again = "Enter" if renaming else "{taglist_delete}"
        self._say(
            Content(
                f"Not {'renamed' if renaming else 'deleted'}: {why.rstrip('.')}. "
                + keyed(self.app, f"{again} tries again, {{taglist_close}} cancels.")
            ).stylize("$text-error")
        )

    def _stop_retry(self) -> None:
        if self._retry_timer is not None:
            self._retry_timer.stop()
            self._retry_timer = None

    def action_cancel(self) -> None:
        self._stop_retry()
        if self.query_one("#tag-rename", Input).display:
            self._close_rename()
            self._say(Content(""))
            return
        self.dismiss(None)

    def _close_rename(self) -> None:
        self.query_one("#tag-rename", Input).display = False
        self._renaming = None
        self._confirm_merge = None
        self.query_one("#taglist-hint", Label).update(self._hint())
        self.set_focus(self.query_one("#taglist", OptionList))


#: The most characters the copy fallback shows. A TextArea wraps its whole text when it is
#: shown and again on keys that move far: a 3 MB abstract on one line took ~30 s to open and
#: as long for `end` (Textual 8.2.8), 100,000 characters well under a second.
SHOWN_MAX = 100_000


class CopyFallback(ModalScreen[None]):
    """Nothing could copy the text: show it so it can be selected by hand. The text is
    untrusted (an abstract, a title): sanitised, never read as markup, and cut at
    `SHOWN_MAX` characters with a line that says so."""

    BINDINGS: ClassVar[list[BindingType]] = list(DIALOG_BINDINGS["copied"])

    def __init__(self, text: str, reason: str, title: str = "Not copied") -> None:
        super().__init__()
        self.text = sanitise(text[:SHOWN_MAX])
        self.length = len(text)
        self.reason = reason
        self.title_line = title

    def compose(self) -> ComposeResult:
        with Vertical(id="copy-box", classes="modal-box"):
            yield Static(Content(self.title_line), id="copy-title", classes="modal-title")
            yield Static(
                Content(self.reason).stylize("$text-warning"), id="copy-reason", markup=False
            )
            if self.length > SHOWN_MAX:
                yield Static(
                    Content(
                        f"Only the first {SHOWN_MAX:,} of its {self.length:,} characters are shown."
                    ),
                    id="copy-cut",
                    markup=False,
                )
            yield OrderedTextArea(self.text, read_only=True, id="copy-text")
            yield Label(
                keyed(
                    self.app,
                    "Select the text with the mouse (or ctrl+a) and copy it · {copied_close}: close",
                ),
                markup=False,
                classes="modal-hint",
            )
        yield Footer()  # the dialog's own keys

    def on_mount(self) -> None:
        area = self.query_one("#copy-text", TextArea)
        area.focus()
        area.select_all()


def cut_to(text: str, width: int) -> str:
    """``text`` if it fits in ``width`` cells (or the width is not known yet: 0), else its
    start cut to ``width`` cells, the last one "…"."""
    if width <= 0 or cell_len(text) <= width:
        return text
    kept: list[str] = []
    used = 1  # the "…"
    for char in text:
        used += cell_len(char)
        if used > width:
            break
        kept.append(char)
    return "".join(kept) + "…"


def _nocase(name: str) -> str:
    """``name`` as SQLite's NOCASE compares it: ASCII letters in lower case, others as
    they are."""
    return name.translate(_ASCII_LOWER)


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")

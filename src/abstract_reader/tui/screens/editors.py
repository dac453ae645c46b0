"""Editors: tags (with completion), metadata, note."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.suggester import SuggestFromList
from textual.widgets import Input, Label, OptionList, Static, TextArea
from textual.widgets.option_list import Option

from ...library import LibraryError, Metadata, clean_tag


class TagEditor(ModalScreen[list[str] | None]):
    """Current tags in a list, an input with completion. Enter adds; Enter on empty saves."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+s", "save", "Save"),
        Binding("delete,backspace", "remove", "Remove tag", show=False),
    ]

    def __init__(self, tags: list[str], known: list[str], what: str) -> None:
        super().__init__()
        self.tags = list(tags)
        self.known = known
        self.what = what

    def compose(self) -> ComposeResult:
        with Vertical(id="tag-box", classes="modal-box"):
            yield Static(Content(f"Tags of {self.what}"), classes="modal-title", markup=False)
            yield Label("Current tags", classes="field-caption")
            yield OptionList(id="tag-current")
            yield Label("Add a tag", classes="field-caption")
            yield Input(
                placeholder="new tag — Tab completes, Enter adds, Enter on empty saves",
                suggester=SuggestFromList(self.known, case_sensitive=False),
                id="tag-input",
            )
            yield Static(id="tag-error", markup=False)
            yield Label(
                "Enter: add/save · Del: remove selected · ↑↓ move · Esc: cancel",
                classes="modal-hint",
            )

    def on_mount(self) -> None:
        self._refresh_list()
        self.query_one("#tag-input", Input).focus()

    def _refresh_list(self) -> None:
        options = self.query_one("#tag-current", OptionList)
        options.clear_options()
        if self.tags:
            options.add_options([Option(Content("#" + t), id=t) for t in self.tags])
        else:
            options.add_option(Option(Content("(no tags yet)"), disabled=True))

    def _error(self, text: str) -> None:
        self.query_one("#tag-error", Static).update(Content(text).stylize("$text-error"))

    def on_key(self, event: object) -> None:
        from textual import events

        if not isinstance(event, events.Key) or event.key != "tab":
            return
        field = self.query_one("#tag-input", Input)
        if field.has_focus and field._suggestion and field._suggestion != field.value:
            field.value = field._suggestion
            field.cursor_position = len(field.value)
            event.prevent_default()
            event.stop()

    @on(Input.Submitted, "#tag-input")
    def _submitted(self, event: Input.Submitted) -> None:
        value = event.value.strip()
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
        event.input.value = ""
        self._refresh_list()

    def action_remove(self) -> None:
        options = self.query_one("#tag-current", OptionList)
        field = self.query_one("#tag-input", Input)
        if field.has_focus and field.value:
            field.action_delete_left()
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
        self.dismiss(self.tags)

    def action_cancel(self) -> None:
        self.dismiss(None)


class MetadataEditor(ModalScreen[Metadata | None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+s", "save", "Save"),
    ]

    def __init__(self, meta: Metadata, derived_title: str) -> None:
        super().__init__()
        self.meta = meta
        self.derived_title = derived_title

    def compose(self) -> ComposeResult:
        m = self.meta
        with Vertical(id="meta-box", classes="modal-box"):
            yield Static("Real title, authors, links", classes="modal-title")
            for label, field_id, value, placeholder in (
                ("Title", "meta-title", m.title or "", self.derived_title),
                ("Authors", "meta-authors", "; ".join(m.authors), "Ada Lovelace; Alan Turing"),
                ("URL", "meta-url", m.url or "", "https://…"),
                ("DOI", "meta-doi", m.doi or "", "10.…"),
                ("Year", "meta-year", str(m.year or ""), "2026"),
            ):
                with Horizontal(classes="field"):
                    yield Label(label, classes="field-label")
                    yield Input(value=value, placeholder=placeholder, id=field_id)
            yield Static(id="meta-error", markup=False)
            yield Label(
                "Enter or ctrl+s: save · Esc: cancel · empty fields clear", classes="modal-hint"
            )

    def on_mount(self) -> None:
        self.query_one("#meta-title", Input).focus()

    @on(Input.Submitted)
    def _submitted(self) -> None:
        self.action_save()

    def action_save(self) -> None:
        def value(field_id: str) -> str:
            return self.query_one(f"#{field_id}", Input).value.strip()

        year_text = value("meta-year")
        if year_text and not (year_text.isdigit() and len(year_text) == 4):
            self.query_one("#meta-error", Static).update(
                Content("Year must have four digits").stylize("$text-error")
            )
            return
        authors = tuple(a.strip() for a in value("meta-authors").split(";") if a.strip())
        self.dismiss(
            Metadata(
                title=value("meta-title") or None,
                authors=authors,
                url=value("meta-url") or None,
                doi=value("meta-doi") or None,
                year=int(year_text) if year_text else None,
            )
        )

    def action_cancel(self) -> None:
        self.dismiss(None)


@dataclass(frozen=True, slots=True)
class NoteResult:
    text: str


class NoteEditor(ModalScreen[NoteResult]):
    """A TextArea; closing it (Esc or ctrl+s) saves."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Save & close"),
        Binding("ctrl+s", "close", "Save & close", show=False),
    ]

    def __init__(self, note: str, what: str) -> None:
        super().__init__()
        self.note = note
        self.what = what

    def compose(self) -> ComposeResult:
        with Vertical(id="note-box", classes="modal-box"):
            yield Static(Content(f"Note on {self.what}"), classes="modal-title", markup=False)
            yield TextArea(self.note, id="note-text", soft_wrap=True)
            yield Label("Esc or ctrl+s: save and close", classes="modal-hint")

    def on_mount(self) -> None:
        area = self.query_one("#note-text", TextArea)
        area.focus()
        area.move_cursor(area.document.end)

    def action_close(self) -> None:
        self.dismiss(NoteResult(self.query_one("#note-text", TextArea).text))

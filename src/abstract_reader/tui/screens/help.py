"""The `?` help screen: every key, and the query language."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from ..commands import (
    DIALOG_BINDINGS,
    NO_KEY,
    bindings,
    help_rows,
    key_label,
    keys_in_effect,
    with_keys,
)
from ..widgets.burst_scroll import BurstScroll

#: the query language's rows; ``{binding_id}`` names a key (``commands.with_keys``)
QUERY: list[tuple[str, str]] = [
    ("robust gaussian", "papers with both words (typos forgiven: robst, gausian)"),
    ("gaus", "the word being typed also matches as a prefix"),
    ("'word", "exact word: no typos, no prefix"),
    ("^word", "the title starts with word"),
    ("!word", "papers without word"),
    ("a | b", "either a or b"),
    ('"two words"', "the phrase"),
    ("Word", "an upper-case letter makes the word case-sensitive"),
    ('#tag  #"two words"', "papers with the tag"),
    ("is:bookmarked is:unread is:read", "library state"),
    ("is:tagged is:noted", "papers with any tag / with a note"),
    ("is:marked", "the papers marked for a bulk action ({mark})"),
    ("venue:neurips year:2026", "venue prefix, year or range (2024-2026)"),
    ("title:word", "the word in the title"),
    ("is:new", "papers first seen since the previous session"),
    ("like:ID  like:#tag", "every paper ranked by likeness to that paper / the tag's papers"),
    ("id:d059a4d9", "that paper alone (an id prefix of 4+ hex digits)"),
    ("@name", "a saved search ({save_search} saves the filter, {saved_searches} lists them)"),
]


KEY_COLUMN = 22
QUERY_COLUMN = 34


def _row(key: str, what: str, column: int, width: int | None) -> Content:
    """One row: the key in its column, the description after it; with a ``width``, a long
    description wraps with a hanging indent (continued under the description column, not at
    column 0). A key wider than its column gets a line of its own."""
    indent = 2 + column + 1
    head = Content.assemble("  ", (f"{key:<{column}}", "bold"), " ")
    if width is None or width - indent < 12:
        return head + what
    room = width - indent
    parts = textwrap.wrap(what, room, break_on_hyphens=False) or [""]
    if len(key) > column:  # the key alone, the description under its column
        head = Content.assemble("  ", (key, "bold"), "\n", " " * indent)
    rest = [" " * indent + part for part in parts[1:]]
    return head + Content("\n".join([parts[0], *rest]))


def _closing_keys(keys: Mapping[str, tuple[str, ...]] | None) -> str:
    """The keys in effect that close the help: "Esc, ? or q"."""
    shown = [key_label(k) for k in keys_in_effect("help_close", keys) if k != NO_KEY]
    if len(shown) < 2:
        return shown[0] if shown else "(no key)"
    return ", ".join(shown[:-1]) + " or " + shown[-1]


#: a section of the help: its title and (key, what it does) rows
Section = tuple[str, list[tuple[str, str]]]


def help_content(
    width: int | None = None,
    first: Section | None = None,
    keys: Mapping[str, tuple[str, ...]] | None = None,
) -> Content:
    """The help text; wrapped for ``width`` columns when given. ``first``: the keys of the
    screen the help was asked from (triage), before everything else. ``keys``: the keys in
    effect of the bindings the config file remapped (``keymap.KeySettings.keys``)."""
    lines: list[Content] = []
    rows_of = help_rows(keys)
    for section, rows in [first, *rows_of] if first else rows_of:
        lines.append(Content(section).stylize("bold $text-accent"))
        for key, what in rows:
            lines.append(_row(key, what, KEY_COLUMN, width))
        lines.append(Content(""))
    lines.append(Content("The filter's query language").stylize("bold $text-accent"))
    for example, what in QUERY:
        lines.append(_row(example, with_keys(what, keys), QUERY_COLUMN - 1, width))
    lines.append(Content(""))
    lines.append(Content(f"{_closing_keys(keys)} closes this screen.").stylize("$text-muted"))
    return Content("\n").join(lines)


class HelpText(Static):
    """The help, re-wrapped to its width whenever that changes."""

    def __init__(
        self,
        first: Section | None = None,
        keys: Mapping[str, tuple[str, ...]] | None = None,
        *,
        id: str | None = None,
    ) -> None:
        super().__init__(help_content(first=first, keys=keys), id=id, markup=False)
        self.first = first
        self.keys = keys

    def on_resize(self) -> None:
        self.update(help_content(self.content_region.width or None, self.first, self.keys))


class HelpBox(BurstScroll):
    """The help's scrolling box: it scrolls with the paper view's keys (j / k, g / G,
    space / shift+space, besides ↓ / ↑, PgDn / PgUp, Home / End), their bindings taken from
    the command table, so a key remapped for the paper view (``view_down`` …) is remapped
    here too."""

    BINDINGS: ClassVar[list[BindingType]] = list(bindings("view"))


class HelpScreen(ModalScreen[None]):
    #: its own keys (Esc, ?, q close it), with an id: remappable, and checked for clashes
    #: with the paper view's keys it scrolls with (``keymap.py``)
    BINDINGS: ClassVar[list[BindingType]] = list(DIALOG_BINDINGS["help"])

    def __init__(
        self, first: Section | None = None, keys: Mapping[str, tuple[str, ...]] | None = None
    ) -> None:
        """``first``: the keys of the screen the help was asked from, shown first; ``keys``:
        the keys in effect of the bindings the config file remapped."""
        super().__init__()
        self.first = first
        self.keys = keys

    def compose(self) -> ComposeResult:
        with HelpBox(id="help-box", classes="modal-box"):
            yield Static(Content("abstract-reader — keys").stylize("bold"), classes="modal-title")
            yield HelpText(self.first, self.keys, id="help-text")
        yield Footer()  # the dialog's own keys

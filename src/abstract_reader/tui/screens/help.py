"""The `?` help screen: every key, and the query language."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from ..commands import help_rows

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
    ("is:marked", "the papers marked for a bulk action (space)"),
    ("venue:neurips year:2026", "venue prefix, year or range (2024-2026)"),
    ("title:word", "the word in the title"),
]


def help_content() -> Content:
    lines: list[Content] = []
    for section, rows in help_rows():
        lines.append(Content(section).stylize("bold $text-accent"))
        for key, what in rows:
            lines.append(Content.assemble("  ", (f"{key:<22}", "bold"), " ", what))
        lines.append(Content(""))
    lines.append(Content("The filter's query language").stylize("bold $text-accent"))
    for example, what in QUERY:
        lines.append(Content.assemble("  ", (f"{example:<34}", "bold"), what))
    lines.append(Content(""))
    lines.append(Content("Esc or ? closes this screen.").stylize("$text-muted"))
    return Content("\n").join(lines)


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark,q", "dismiss", "Close"),
    ]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box", classes="modal-box"):
            yield Static(Content("abstract-reader — keys").stylize("bold"), classes="modal-title")
            yield Static(help_content(), id="help-text", markup=False)
        yield Footer()  # the dialog's own keys

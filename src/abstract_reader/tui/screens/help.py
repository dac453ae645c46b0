"""The `?` help screen: every key, and the query language."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

KEYS: list[tuple[str, list[tuple[str, str]]]] = [
    (
        "Moving",
        [
            ("j / k, ↓ / ↑", "next / previous paper"),
            ("g / G, Home / End", "first / last paper"),
            ("PgUp / PgDn", "a page up / down"),
            ("n / N", "next / previous unread paper"),
            ("Enter", "open the paper (focus the view; full screen when narrow)"),
            ("Tab / Shift+Tab", "move focus between filter, list and paper"),
            ("space (paper view)", "page the paper down"),
            ("mouse", "click a row to select it, scroll with the wheel"),
        ],
    ),
    (
        "Filtering",
        [
            ("/", "focus the filter bar"),
            ("Esc", "leave the filter / clear marks / clear the filter / close a screen"),
        ],
    ),
    (
        "Library",
        [
            ("b", "bookmark on/off (all marked papers when some are marked)"),
            ("r", "read on/off (marked papers too)"),
            ("t", "edit tags (Tab completes, Enter adds, Enter on empty saves)"),
            ("T", "tags and counts: Enter filters, r renames, d d deletes"),
            ("e", "edit the real title, authors, URL, DOI, year"),
            ("o", "edit the note (saved when you close it)"),
            ("space (list)", "mark / unmark the paper for a bulk action"),
        ],
    ),
    (
        "Citations",
        [
            ("c", "copy the citation (marked papers too) in the default format"),
            ("C", "choose a format, with a live preview"),
        ],
    ),
    (
        "App",
        [
            ("?", "this help"),
            ("ctrl+p", "command palette: every action by name"),
            ("q", "quit"),
        ],
    ),
]

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
    ("venue:neurips year:2026", "venue prefix, year or range (2024-2026)"),
    ("title:word", "the word in the title"),
]


def help_content() -> Content:
    lines: list[Content] = []
    for section, rows in KEYS:
        lines.append(Content(section).stylize("bold $text-accent"))
        for key, what in rows:
            lines.append(Content.assemble("  ", (f"{key:<22}", "bold"), what))
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

"""The load problems (`L`): every problem loading the dumps and metadata files, in the reader.

The load notice shows the first problems for a few seconds and the status keeps their count;
here they all are, for as long as the user reads them: the paths that gave nothing (errors)
before the files that loaded with warnings, each as the CLI's stderr line says it, with what
was skipped counted. File names and problem texts are untrusted (a file may be named
``[bold]\\x1b…``): they are escaped for the terminal (``escape_for_terminal``, as on stderr)
and drawn as plain ``Content``, never markup.

There may be 10,000 of them (a folder of unreadable files, a list of paths gone): the list
draws only the lines on screen (a ``ScrollView``'s ``render_line``, as the paper list does).
As one ``Static`` of 10,000 lines it took ~7 s to open and ~70 ms a scroll key.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.geometry import Size
from textual.screen import ModalScreen
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.style import Style
from textual.visual import Visual
from textual.widgets import Footer, Static

from ...corpus import LoadError
from ...plural import count_phrase
from ...text import escape_for_terminal
from ..commands import DIALOG_BINDINGS, NO_KEY, bindings, key_label, keys_in_effect
from ..widgets.burst_scroll import BurstScrolling
from ..widgets.keys_in_order import keys_follow_focus

#: a problem's line: indented under its section, continued further in (a hanging indent)
INDENT = "  "
HANGING = "      "
#: how each kind of line is drawn
MUTED = "$text-muted"
ERRORS = "bold $text-error"
WARNINGS = "bold $text-warning"

#: a line of the list: its text and its style ("" for a problem's)
Line = tuple[str, str]


def _closing_keys(keys: Mapping[str, tuple[str, ...]] | None) -> str:
    """The keys in effect that close the dialog: "Esc or q"."""
    shown = [key_label(k) for k in keys_in_effect("problems_close", keys) if k != NO_KEY]
    if len(shown) < 2:
        return shown[0] if shown else "(no key)"
    return ", ".join(shown[:-1]) + " or " + shown[-1]


def _escaped(problems: Sequence[LoadError]) -> list[str]:
    """Each problem as its line says it: path and what went wrong, escaped
    (``escape_for_terminal``: a control is ``\\x1b``, as on stderr), indented."""
    return [INDENT + escape_for_terminal(f"{e.path}: {e.message}") for e in problems]


def _wrapped(texts: Sequence[str], width: int | None) -> list[Line]:
    """The problems' lines; with a ``width``, a line too long is wrapped with a hanging
    indent."""
    if width is None or width - len(HANGING) < 12:
        return [(text, "") for text in texts]
    out: list[Line] = []
    for text in texts:
        if len(text) <= width:  # (most fit: textwrap is ~35 µs a line)
            out.append((text, ""))
            continue
        parts = textwrap.wrap(text, width, subsequent_indent=HANGING, break_on_hyphens=False)
        out.extend((part, "") for part in parts or [INDENT])
    return out


@dataclass(frozen=True, slots=True)
class Problems:
    """The problems as the list says them: ``summary`` (the notice's title), the errors'
    and the warnings' lines (escaped once: the list is wrapped again on every resize), and
    their counts."""

    summary: str
    fatal: list[str]
    warned: list[str]
    fatal_paths: int
    warned_files: int
    warned_problems: int

    @classmethod
    def of(cls, errors: Sequence[LoadError], summary: str) -> Problems:
        fatal = [e for e in errors if e.fatal]
        warned = [e for e in errors if not e.fatal]
        return cls(
            summary,
            _escaped(fatal),
            _escaped(warned),
            len({e.path for e in fatal}),
            len({e.path for e in warned}),
            sum(e.problems for e in warned),
        )


def problem_lines(
    problems: Problems,
    keys: Mapping[str, tuple[str, ...]] | None = None,
    width: int | None = None,
) -> list[Line]:
    """Every load problem: the counts, the paths that gave nothing, then the files that
    loaded with warnings (their problems counted as the CLI counts them: a line "… and 10
    more malformed records skipped" is 10), each in the order found; wrapped for ``width``
    columns when given (a line of ours at a word)."""

    def said(text: str, style: str) -> list[Line]:
        if width is None or width < 12:
            return [(text, style)]
        return [(part, style) for part in textwrap.wrap(text, width) or [""]]

    p = problems
    lines: list[Line] = [*said(p.summary, MUTED), ("", "")]
    if p.fatal:
        lines += said(f"Errors: {count_phrase(p.fatal_paths, 'path')} not loaded", ERRORS)
        lines += [*_wrapped(p.fatal, width), ("", "")]
    if p.warned:
        count = count_phrase(p.warned_problems, "problem")
        head = f"Warnings: {count} in {count_phrase(p.warned_files, 'file')} loaded"
        lines += said(head, WARNINGS)
        lines += [*_wrapped(p.warned, width), ("", "")]
    if p.fatal:
        lines += said("The errors are printed again when you quit.", MUTED)
    lines += said(f"{_closing_keys(keys)} closes this list.", MUTED)
    return lines


class ProblemsView(BurstScrolling, ScrollView, can_focus=True):
    """The problems, drawn a line at a time (only those on screen), wrapped to its width.
    It scrolls with the paper view's keys (j / k, g / G, space / shift+space, besides ↓ / ↑,
    PgDn / PgUp, Home / End), their bindings taken from the command table, as the help's
    do: a key remapped for the paper view is remapped here too."""

    BINDINGS: ClassVar[list[BindingType]] = list(bindings("view"))

    async def _on_key(self, event: events.Key) -> None:
        """Its bindings (and the dialog's Esc / q) run as the key arrives: "j j Esc" typed
        at once scrolls twice, then closes (`keys_in_order.keys_follow_focus`)."""
        await keys_follow_focus(self, event)

    def __init__(
        self,
        errors: Sequence[LoadError],
        summary: str,
        keys: Mapping[str, tuple[str, ...]] | None,
        *,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.problems = Problems.of(errors, summary)
        self.keys = keys
        self.lines: list[Line] = []  # (made for its width: `_wrap`)
        self._wrapped_for: int | None = None
        #: the lines drawn, by index, at the width and in the style they were drawn with
        self._strips: dict[int, Strip] = {}
        self._strips_for: tuple[int, Style] | None = None

    @property
    def text(self) -> str:
        """Everything it lists, as lines (wrapped to its width once laid out)."""
        return "\n".join(text for text, _ in self.lines)

    def on_mount(self) -> None:
        # (wrapped for the screen's width until laid out: its height is right at once)
        self._wrap(max(20, self.app.size.width * 8 // 10 - 8))

    def on_resize(self, _event: events.Resize) -> None:
        self._wrap(self.scrollable_content_region.width)

    def _wrap(self, width: int) -> None:
        if width <= 0 or width == self._wrapped_for:
            return
        self._wrapped_for = width
        self.lines = problem_lines(self.problems, self.keys, width)
        self._strips.clear()
        self.virtual_size = Size(width, len(self.lines))  # (a layout: its height is auto)
        self.refresh()

    def notify_style_update(self) -> None:
        self._strips.clear()  # a new theme: the same style may draw other colours
        super().notify_style_update()

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        style = self.visual_style
        if self._strips_for != (width, style):
            self._strips.clear()
            self._strips_for = (width, style)
        index = int(self.scroll_offset.y) + y
        strip = self._strips.get(index)
        if strip is None:
            if index >= len(self.lines):
                return Strip.blank(width, style.rich_style)
            text, line_style = self.lines[index]
            content = Content(text).stylize(line_style) if line_style else Content(text)
            strip = Visual.to_strips(self, content, width, 1, style, pad=True)[0]
            if len(self._strips) > 500:  # (a screenful or a few are drawn again)
                self._strips.clear()
            self._strips[index] = strip
        return strip


class LoadProblems(ModalScreen[None]):
    """Every load problem, scrollable; Esc or q closes (``problems_close``)."""

    BINDINGS: ClassVar[list[BindingType]] = list(DIALOG_BINDINGS["problems"])

    def __init__(
        self,
        errors: Sequence[LoadError],
        summary: str,
        keys: Mapping[str, tuple[str, ...]] | None = None,
    ) -> None:
        """``errors``: the corpus's load problems; ``summary``: their counts, as the load
        notice's title says them; ``keys``: the keys in effect of the bindings the config
        file remapped."""
        super().__init__()
        self.errors = list(errors)
        self.summary = summary
        self.keys = keys

    def compose(self) -> ComposeResult:
        with Vertical(id="problems-box", classes="modal-box"):
            yield Static(Content("Load problems").stylize("bold"), classes="modal-title")
            yield ProblemsView(self.errors, self.summary, self.keys, id="problems-list")
        yield Footer()  # the dialog's own keys

    def on_mount(self) -> None:
        self.query_one(ProblemsView).focus()

"""The load problems (`L`): every problem loading the dumps and metadata files, in the reader.

The load notice shows the first problems for a few seconds and the status keeps their count;
here they all are, for as long as the user reads them: the paths that gave nothing (errors)
before the files that loaded with warnings, each as the CLI's stderr line says it, with what
was skipped counted. File names and problem texts are untrusted (a file may be named
``[bold]\\x1b…``): they are escaped for the terminal (``escape_for_terminal``, as on stderr)
and shown as plain ``Content``, never markup.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from ...corpus import LoadError
from ...plural import count_phrase
from ...text import escape_for_terminal
from ..commands import DIALOG_BINDINGS, NO_KEY, bindings, key_label, keys_in_effect
from ..widgets.burst_scroll import BurstScroll


def _closing_keys(keys: Mapping[str, tuple[str, ...]] | None) -> str:
    """The keys in effect that close the dialog: "Esc or q"."""
    shown = [key_label(k) for k in keys_in_effect("problems_close", keys) if k != NO_KEY]
    if len(shown) < 2:
        return shown[0] if shown else "(no key)"
    return ", ".join(shown[:-1]) + " or " + shown[-1]


#: a problem's line: indented under its section, continued further in (a hanging indent)
INDENT = "  "
HANGING = "      "


def _line(problem: LoadError, width: int | None) -> Content:
    """One problem: its path and what went wrong, escaped (``escape_for_terminal``: a
    control is ``\\x1b``, as on stderr); with a ``width``, wrapped with a hanging indent."""
    text = f"{escape_for_terminal(problem.path)}: {escape_for_terminal(problem.message)}"
    if width is None or width - len(HANGING) < 12:
        return Content(INDENT + text)
    wrapped = textwrap.wrap(
        text,
        width,
        initial_indent=INDENT,
        subsequent_indent=HANGING,
        break_on_hyphens=False,
        drop_whitespace=True,
    )
    return Content("\n".join(wrapped or [INDENT]))


def problems_content(
    errors: Sequence[LoadError],
    summary: str,
    keys: Mapping[str, tuple[str, ...]] | None = None,
    width: int | None = None,
) -> Content:
    """Every load problem: the counts (``summary``: the notice's title), the paths that gave
    nothing, then the files that loaded with warnings (their problems counted as the CLI
    counts them: a line "… and 10 more malformed records skipped" is 10), each in the
    order found; wrapped for ``width`` columns when given."""
    fatal = [e for e in errors if e.fatal]
    warned = [e for e in errors if not e.fatal]
    lines: list[Content] = [Content(summary).stylize("$text-muted"), Content("")]
    if fatal:
        paths = len({e.path for e in fatal})
        head = f"Errors: {count_phrase(paths, 'path')} not loaded"
        lines.append(Content(head).stylize("bold $text-error"))
        lines.extend(_line(e, width) for e in fatal)
        lines.append(Content(""))
    if warned:
        files = len({e.path for e in warned})
        count = sum(e.problems for e in warned)
        head = f"Warnings: {count_phrase(count, 'problem')} in {count_phrase(files, 'file')} loaded"
        lines.append(Content(head).stylize("bold $text-warning"))
        lines.extend(_line(e, width) for e in warned)
        lines.append(Content(""))
    if fatal:
        lines.append(Content("The errors are printed again when you quit.").stylize("$text-muted"))
    lines.append(Content(f"{_closing_keys(keys)} closes this list.").stylize("$text-muted"))
    return Content("\n").join(lines)


class ProblemsText(Static):
    """The problems, wrapped again to its width whenever that changes."""

    def __init__(
        self,
        errors: Sequence[LoadError],
        summary: str,
        keys: Mapping[str, tuple[str, ...]] | None,
        *,
        id: str | None = None,
    ) -> None:
        super().__init__(problems_content(errors, summary, keys), id=id, markup=False)
        self.errors = errors
        self.summary = summary
        self.keys = keys

    def on_resize(self) -> None:
        width = self.content_region.width or None
        self.update(problems_content(self.errors, self.summary, self.keys, width))


class ProblemsBox(BurstScroll):
    """The list's scrolling box: it scrolls with the paper view's keys (j / k, g / G,
    space / shift+space, besides ↓ / ↑, PgDn / PgUp, Home / End), their bindings taken from
    the command table, as the help's do: a key remapped for the paper view is remapped
    here too."""

    BINDINGS: ClassVar[list[BindingType]] = list(bindings("view"))


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
        with ProblemsBox(id="problems-box", classes="modal-box"):
            yield Static(Content("Load problems").stylize("bold"), classes="modal-title")
            yield ProblemsText(self.errors, self.summary, self.keys, id="problems-text")
        yield Footer()  # the dialog's own keys

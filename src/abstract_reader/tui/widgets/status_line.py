"""The status line: the session's parts, most important first, fitted to the width.

What does not fit is dropped from the least important end, and the cut is shown with "…"
(never a word cut mid-way). The parts hold user text (query words, saved search names), so
they are shown as plain ``Content``, never parsed as markup.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len
from textual.content import Content
from textual.widget import Widget

SEPARATOR = " · "
MORE = "…"


def fit_status(parts: Sequence[str], width: int) -> str:
    """The parts joined, in ``width`` cells: whole parts from the first, then " · …" when
    some are left out; a first part wider than the line is cut and ends in "…". A width of
    0 or less (not laid out yet) keeps everything."""
    text = SEPARATOR.join(parts)
    if width <= 0 or cell_len(text) <= width:
        return text
    for kept in range(len(parts) - 1, 0, -1):
        text = SEPARATOR.join(parts[:kept]) + SEPARATOR + MORE
        if cell_len(text) <= width:
            return text
    first = parts[0] if parts else ""
    cut: list[str] = []
    used = cell_len(MORE)
    for char in first:
        used += cell_len(char)
        if used > width:
            break
        cut.append(char)
    kept_text = "".join(cut)
    if " " in kept_text.strip():  # whole words where there is room for one
        kept_text = kept_text.rstrip().rsplit(" ", 1)[0]
    return (kept_text.rstrip() + MORE) if width >= cell_len(MORE) else ""


class StatusLine(Widget):
    """One line at the bottom of the main screen; ``show`` gives it the parts."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._parts: tuple[str, ...] = ()

    @property
    def parts(self) -> tuple[str, ...]:
        return self._parts

    def show(self, parts: Sequence[str]) -> None:
        """New parts; repainted only when they changed."""
        new = tuple(parts)
        if new != self._parts:
            self._parts = new
            self.refresh()

    def render(self) -> Content:
        return Content(fit_status(self._parts, self.size.width))

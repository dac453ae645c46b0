"""The status line: the session's parts, most important first, fitted to the width.

What does not fit is first shortened (each part may carry shorter forms: `status.StatusPart`),
then dropped from the least important end, and the cut is shown with "…" (never a word cut
mid-way without one). The parts hold user text (query words, saved search names), so
they are shown as plain ``Content``, never parsed as markup.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len
from textual.content import Content
from textual.widget import Widget

from ...status import MORE, complete_forms_of, forms_of, is_detail

SEPARATOR = " · "


def fit_status(parts: Sequence[str], width: int) -> str:
    """The parts joined, in ``width`` cells. A width of 0 or less (not laid out yet) keeps
    everything.

    When they do not all fit: the facts (the parts before the first ``detail`` one, see
    `StatusPart`) come first. If they fit complete (whole, or in a ``complete`` form), the
    details follow as far as they fit, and the room left goes to the facts' longer complete
    forms, the first first. Else as many facts as fit in their shortest forms are kept,
    from the first, and each kept one, from the first (the most important), gets its
    longest form that leaves room for the others; the details go. What is left out shows
    as " · …". A first part wider than the line, even shortened, is cut at a word and ends
    in "…"."""
    text = SEPARATOR.join(parts)
    if width <= 0 or cell_len(text) <= width:
        return text
    first_detail = next((n for n, p in enumerate(parts) if is_detail(p)), len(parts))
    facts, details = parts[:first_detail], parts[first_detail:]
    least = [complete_forms_of(part)[-1] for part in facts]
    if facts and cell_len(SEPARATOR.join(least)) + cell_len(SEPARATOR + MORE) <= width:
        return _with_details(facts, least, details, width)
    return _shortened(facts, width, bool(details))


def _with_details(
    facts: Sequence[str], least: Sequence[str], details: Sequence[str], width: int
) -> str:
    """The facts complete (``least``: each one's shortest complete form), each detail's
    longest form while they fit, then the facts' longest complete forms the room left
    allows."""
    gap, more = cell_len(SEPARATOR), cell_len(SEPARATOR + MORE)
    used = cell_len(SEPARATOR.join(least))
    shown: list[str] = []
    for n, part in enumerate(details):
        room = width - used - gap - (0 if n == len(details) - 1 else more)
        form = next((f for f in forms_of(part) if cell_len(f) <= room), None)
        if form is None:
            shown.append(MORE)
            used += more
            break
        shown.append(form)
        used += gap + cell_len(form)
    spare = width - used
    chosen: list[str] = []
    for part, short in zip(facts, least, strict=True):
        room = cell_len(short) + spare
        form = next(f for f in complete_forms_of(part) if cell_len(f) <= room)
        spare -= cell_len(form) - cell_len(short)
        chosen.append(form)
    return SEPARATOR.join([*chosen, *shown])


def _shortened(parts: Sequence[str], width: int, more_after: bool) -> str:
    """As many ``parts`` as fit at their shortest, each then as long as leaves room for
    the others, the first first; " · …" when some (or ``more_after``) are left out."""
    gap, more = cell_len(SEPARATOR), cell_len(SEPARATOR + MORE)
    forms = [forms_of(part) for part in parts]
    shortest = [cell_len(f[-1]) for f in forms]
    kept, used = 0, 0
    for n, cells in enumerate(shortest):
        need = used + (gap if n else 0) + cells
        if need + (0 if n == len(parts) - 1 and not more_after else more) > width:
            break
        kept, used = n + 1, need
    if kept == 0:
        return _cut(forms[0][-1] if parts else "", width)
    tail = 0 if kept == len(parts) and not more_after else more
    chosen: list[str] = []
    used = 0
    for n in range(kept):
        rest = sum(shortest[n + 1 : kept]) + gap * (kept - 1 - n) + tail
        room = width - used - (gap if n else 0) - rest
        form = next((f for f in forms[n] if cell_len(f) <= room), forms[n][-1])
        used += (gap if n else 0) + cell_len(form)
        chosen.append(form)
    return SEPARATOR.join(chosen) + (SEPARATOR + MORE if tail else "")


def _cut(text: str, width: int) -> str:
    """``text`` cut to ``width`` cells at a word where one fits, ending in "…"."""
    cut: list[str] = []
    used = cell_len(MORE)
    for char in text:
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

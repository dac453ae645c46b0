"""What a frame writes to the terminal: only the cells that changed, in fewer escape sequences.

Textual repaints a widget whole when anything in it changes: a key typed into the filter
rewrites its borders, a new result rewrites every row of the list and its scrollbar, blank
rows included, though most of those cells look as they did. Each part of a line that a
widget covers (a "chop") is written with every run of text as ``ESC[style m`` text
``ESC[0m``. At 10,000 papers one key wrote ~11 KB: the terminal has to parse all of it before
the new list is on screen.

`ChangedChops` writes the same frame with two differences:

- a chop whose rendering is exactly what was last written at that place on the screen is
  left out (the terminal already shows it), and of a chop that changed only the cells from
  the first that differs to the last that differs are written: a bookmark's ★ is one cell
  (~30 bytes), not its row's ~60 cells and their escapes (~150);
- a chop sets its style once per change of style (``ESC[0;style m``: reset and set in one
  sequence) instead of setting and resetting around every run.

What the terminal shows is the same. The record of what was written (`Shown`) holds only
what this path wrote since the last full repaint; anything else that writes to the screen
(a full repaint, a resize, a return from suspension) empties it (see ``ReaderApp._display``),
and a chop is compared with what is on the screen only where the record is sure of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.cells import get_character_cell_size
from rich.color import ColorSystem
from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from textual._compositor import ChopsUpdate
from textual.strip import Strip

#: (style, colour system) → the SGR parameters that set it
_ANSI: dict[tuple[Style, ColorSystem], str] = {}

#: The runs of a chop whose characters each take one cell: (text, style) in order.
Runs = tuple[tuple[str, Style | None], ...]

#: What a chop drew: its `Runs`, or else the terminal sequences that drew it.
Drawn = Runs | str

#: row → {first column: (column after the last, what was drawn there)}
Shown = dict[int, dict[int, tuple[int, Drawn]]]

#: Characters known to take one cell (checked once each, then looked up as a set).
_ONE_CELL: set[str] = set()


def _one_cell_each(text: str) -> bool:
    if (text.isascii() and text.isprintable()) or _ONE_CELL.issuperset(text):
        return True
    if any(get_character_cell_size(character) != 1 for character in text):
        return False
    if len(_ONE_CELL) < 65536:
        _ONE_CELL.update(text)
    return True


def runs_of(strip: Strip) -> Runs | None:
    """``strip``'s runs of text and their styles, or None when a character takes other than
    one cell (wide, combining: the cells could not be cut between characters), a segment is
    a control or a link (its cells are one link: written whole)."""
    runs: list[tuple[str, Style | None]] = []
    for text, style, control in strip:
        if control or (style is not None and style._link) or not _one_cell_each(text):
            return None
        runs.append((text, style))
    return tuple(runs)


def _same_cells(old: Runs, new: Runs) -> int:
    """How many cells from the start ``old`` and ``new`` show alike (the same character in
    the same style), whatever the runs they are cut into."""
    cells = i = j = at_old = at_new = 0
    while i < len(old) and j < len(new):
        (old_text, old_style), (text, style) = old[i], new[j]
        if style is not old_style and style != old_style:
            break
        rest_old, rest = old_text[at_old:], text[at_new:]
        size = min(len(rest_old), len(rest))
        if rest_old[:size] != rest[:size]:
            return cells + next(k for k in range(size) if rest_old[k] != rest[k])
        cells += size
        at_old += size
        at_new += size
        if at_old == len(old_text):
            i, at_old = i + 1, 0
        if at_new == len(text):
            j, at_new = j + 1, 0
    return cells


def _cut(runs: Runs, start: int, end: int) -> Runs:
    """The cells ``start:end`` of ``runs``."""
    out: list[tuple[str, Style | None]] = []
    at = 0
    for text, style in runs:
        stop = at + len(text)
        if stop > start and at < end:
            out.append((text[max(0, start - at) : end - at], style))
        at = stop
        if at >= end:
            break
    return tuple(out)


def _backwards(runs: Runs) -> Runs:
    return tuple((text[::-1], style) for text, style in reversed(runs))


def changed_span(old: Runs, new: Runs) -> tuple[int, int] | None:
    """The cells ``start:end`` of ``new`` that differ from ``old`` (as wide): from the first
    that differs to the last that does; None when none differs."""
    size = sum(len(text) for text, _ in new)
    start = _same_cells(old, new)
    if start >= size:
        return None
    end = size - min(_same_cells(_backwards(old), _backwards(new)), size - start)
    return start, end


def _blank_look(style: Style | None) -> object:
    """What a run of spaces in ``style`` looks like: its background, when nothing is drawn
    across it (underline, strike, overline, a frame, reverse video, a link); else the style
    itself. The colour of the text, bold, italic, dim do not show on a space."""
    if style is None:
        return None
    if style.reverse or style.underline or style.underline2 or style.strike or style.overline:
        return style
    if style.frame or style.encircle or style.link:
        return style
    return style.bgcolor


def strip_sequence(strip: Strip | Sequence[Segment], color_system: ColorSystem) -> str:
    """``strip`` as terminal sequences, self-contained (it starts by setting its style from
    the reset state, whatever the terminal's style was): one SGR per change of style, and
    none for a run of spaces that looks the same in the style already set (or in the next
    one, which is then set before it)."""
    out: list[str] = []
    current: str | None = None
    current_look: object = ()
    render_ansi = Strip.render_ansi
    segments = list(strip) if isinstance(strip, Strip) else strip
    for index, (text, style, _control) in enumerate(segments):
        blank = not text.strip(" ")
        if blank and current is not None and _blank_look(style) == current_look:
            out.append(text)  # spaces look the same in the style set
            continue
        if blank and index + 1 < len(segments):
            following = segments[index + 1].style
            if _blank_look(following) == _blank_look(style):
                style = following  # set the next one's style now: none between them
        if style is None:
            ansi = ""
            link = None
        else:
            key = (style, color_system)
            known = _ANSI.get(key)  # (a style's own cache, `_ansi`, keeps the colour system
            if known is None:  # of whichever console rendered it first)
                if len(_ANSI) > 4096:
                    _ANSI.clear()
                known = _ANSI[key] = render_ansi(style, color_system)
            ansi = known
            link = style._link
        if ansi != current:
            out.append(f"\x1b[0;{ansi}m" if ansi else "\x1b[0m")
            current = ansi
            current_look = _blank_look(style)
        if link and style is not None:
            out.append(f"\x1b]8;id={style._link_id};{link}\x1b\\{text}\x1b]8;;\x1b\\")
        else:
            out.append(text)
    return "".join(out)


class ChangedChops(ChopsUpdate):
    """A partial update (Textual's `ChopsUpdate`) that writes only what changed on screen."""

    def __init__(self, update: ChopsUpdate, shown: Shown) -> None:
        super().__init__(update.chops, update.spans, update.chop_ends)
        self._shown = shown

    def render_segments(self, console: Console) -> str:
        try:
            return self._changed(console)
        except Exception:  # never a frame lost over this: forget what was shown, write all
            self._shown.clear()
            return super().render_segments(console)

    def _changed(self, console: Console) -> str:
        color_system = console._color_system or ColorSystem.TRUECOLOR
        shown = self._shown
        chops = self.chops
        chop_ends = self.chop_ends
        out: list[str] = []
        for y, x1, x2 in self.spans:
            line = chops[y]
            seen = shown.get(y)
            if seen is None:
                seen = shown[y] = {}
            for end, (x, strip) in zip(chop_ends[y], line.items(), strict=False):
                if strip is None or x > x2 or end <= x1:
                    continue
                runs = runs_of(strip)
                cut = None if x2 > x >= x1 and end <= x2 else min(end, x2) - x
                segments: Strip | Sequence[Segment]
                if runs is None:  # as ChopsUpdate: cut at the span's end
                    segments = strip if cut is None else strip.crop(0, cut)
                    stop = x + segments.cell_length
                else:
                    if cut is not None:
                        runs = _cut(runs, 0, cut)
                    stop = x + sum(len(text) for text, _ in runs)
                before = seen.get(x)
                at = x
                if runs is not None:
                    start, finish = 0, stop - x
                    if before is not None and before[0] == stop and isinstance(before[1], tuple):
                        if before[1] == runs:
                            continue  # the terminal shows exactly this there
                        span = changed_span(before[1], runs)
                        if span is None:  # the same cells, cut into other runs
                            seen[x] = (stop, runs)
                            continue
                        start, finish = span  # only the cells that changed
                    segments = [Segment(text, style) for text, style in _cut(runs, start, finish)]
                    at = x + start
                text = strip_sequence(segments, color_system)
                drawn: Drawn = text if runs is None else runs
                if before == (stop, drawn):
                    continue
                for other in [o for o, (o_stop, _) in seen.items() if o < stop and o_stop > x]:
                    del seen[other]  # cells written over: no longer known
                seen[x] = (stop, drawn)
                out.append(f"\x1b[{y + 1};{at + 1}H")
                out.append(text)
        if out:
            out.append("\x1b[0m")
        return "".join(out)


def changed_chops(update: Any, shown: Shown) -> Any:
    """``update`` (what Textual's compositor made of a frame) as it will be written: a
    partial update becomes a `ChangedChops`; anything else (a full repaint) is written as it
    is, and then the screen is all new: the record of what was shown is emptied."""
    if type(update) is ChopsUpdate:
        return ChangedChops(update, shown)
    if update is not None:
        shown.clear()
    return update

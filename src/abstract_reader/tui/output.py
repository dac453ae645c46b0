"""What a frame writes to the terminal: only the cells that changed, in fewer escape sequences.

Textual repaints a widget whole when anything in it changes: a key typed into the filter
rewrites its borders, a new result rewrites every row of the list and its scrollbar, blank
rows included, though most of those cells look as they did. Each part of a line that a
widget covers (a "chop") is written with every run of text as ``ESC[style m`` text
``ESC[0m``. At 10,000 papers one key wrote ~11 KB: the terminal has to parse all of it before
the new list is on screen.

`ChangedChops` writes the same frame with two differences:

- a chop whose rendering is exactly what was last written at that place on the screen is
  left out (the terminal already shows it);
- a chop sets its style once per change of style (``ESC[0;style m``: reset and set in one
  sequence) instead of setting and resetting around every run.

What the terminal shows is the same. The record of what was written (`Shown`) holds only
what this path wrote since the last full repaint; anything else that writes to the screen
(a full repaint, a resize, a return from suspension) empties it (see ``ReaderApp._display``),
and a chop is compared with what is on the screen only where the record is sure of it.
"""

from __future__ import annotations

from typing import Any

from rich.color import ColorSystem
from rich.console import Console
from rich.style import Style
from textual._compositor import ChopsUpdate
from textual.strip import Strip

#: row → {first column: (column after the last, what was written there)}
Shown = dict[int, dict[int, tuple[int, str]]]


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


def strip_sequence(strip: Strip, color_system: ColorSystem) -> str:
    """``strip`` as terminal sequences, self-contained (it starts by setting its style from
    the reset state, whatever the terminal's style was): one SGR per change of style, and
    none for a run of spaces that looks the same in the style already set (or in the next
    one, which is then set before it)."""
    out: list[str] = []
    current: str | None = None
    current_look: object = ()
    render_ansi = Strip.render_ansi
    segments = list(strip)
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
            cached: str | None = style._ansi
            ansi = render_ansi(style, color_system) if cached is None else cached
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
                if not (x2 > x >= x1 and end <= x2):  # as ChopsUpdate: cut at the span's end
                    strip = strip.crop(0, min(end, x2) - x)
                text = strip_sequence(strip, color_system)
                stop = x + strip.cell_length
                if seen.get(x) == (stop, text):
                    continue  # the terminal shows exactly this there
                for other in [o for o, (o_stop, _) in seen.items() if o < stop and o_stop > x]:
                    del seen[other]  # cells written over: no longer known
                seen[x] = (stop, text)
                out.append(f"\x1b[{y + 1};{x + 1}H")
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

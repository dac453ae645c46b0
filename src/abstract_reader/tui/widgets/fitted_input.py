"""An input whose placeholder fits its width: the longest of several, chosen on resize.

A placeholder cut by the input's edge loses its end ("… Enter o"); a narrow terminal gets
a shorter wording instead. The texts are the reader's own (or sanitised paper text), shown
as plain text by ``Input``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.cells import cell_len
from textual import events
from textual.widgets import Input

from .keys_in_order import run_own_binding

#: The most of a pasted line a one-line field takes. Textual's ``Input`` measures its whole
#: value on every frame: a 1 MB line pasted into the filter took seconds to show, and as
#: long again for each key after it. (A query uses its first 1,000 characters anyway.)
PASTE_LIMIT = 10_000


def longest_fitting(forms: Sequence[str], width: int) -> str:
    """The first (longest) of ``forms`` that fits in ``width`` cells, else the last."""
    return next((form for form in forms if cell_len(form) <= width), forms[-1] if forms else "")


def cut_paste(field: Input, event: events.Paste) -> None:
    """A paste into the one-line ``field``, which takes its first line: that line, cut at
    ``PASTE_LIMIT`` characters with a notice when longer. For every one-line field: the
    reader's own (``FittedInput``) and the command palette's (``ReaderApp.on_event``)."""
    line = event.text.partition("\n")[0]
    if len(line) > PASTE_LIMIT:
        event.text = line[:PASTE_LIMIT]
        field.notify(
            f"A field takes the first {PASTE_LIMIT:,} characters of a paste;"
            f" the line pasted had {len(line):,}.",
            title="Paste cut",
            severity="warning",
            markup=False,
        )


class FittedInput(Input):
    """An ``Input`` given ``placeholders``, longest first: it shows the longest that fits.
    Its editing keys take effect in the order typed (`keys_in_order`): every text field of
    the reader is one of these."""

    def __init__(self, *args: Any, placeholders: Sequence[str] = (), **kwargs: Any) -> None:
        if placeholders:
            kwargs["placeholder"] = placeholders[0]
        super().__init__(*args, **kwargs)
        self.placeholders = tuple(placeholders)

    async def _on_key(self, event: events.Key) -> None:
        if not await run_own_binding(self, event):
            await super()._on_key(event)

    def _on_paste(self, event: events.Paste) -> None:
        """Input's paste (the first line: ``ReaderApp.on_event`` has sanitised it), cut at
        ``PASTE_LIMIT`` characters with a notice."""
        cut_paste(self, event)
        super()._on_paste(event)
        event.prevent_default()  # (Textual would call Input's handler again)

    def on_resize(self, _event: events.Resize) -> None:
        if self.placeholders:
            self.placeholder = longest_fitting(self.placeholders, self.content_region.width)

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


def longest_fitting(forms: Sequence[str], width: int) -> str:
    """The first (longest) of ``forms`` that fits in ``width`` cells, else the last."""
    return next((form for form in forms if cell_len(form) <= width), forms[-1] if forms else "")


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

    def on_resize(self, _event: events.Resize) -> None:
        if self.placeholders:
            self.placeholder = longest_fitting(self.placeholders, self.content_region.width)

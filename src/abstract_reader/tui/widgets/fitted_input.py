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


def longest_fitting(forms: Sequence[str], width: int) -> str:
    """The first (longest) of ``forms`` that fits in ``width`` cells, else the last."""
    return next((form for form in forms if cell_len(form) <= width), forms[-1] if forms else "")


class FittedInput(Input):
    """An ``Input`` given ``placeholders``, longest first: it shows the longest that fits."""

    def __init__(self, *args: Any, placeholders: Sequence[str] = (), **kwargs: Any) -> None:
        if placeholders:
            kwargs["placeholder"] = placeholders[0]
        super().__init__(*args, **kwargs)
        self.placeholders = tuple(placeholders)

    def on_resize(self, _event: events.Resize) -> None:
        if self.placeholders:
            self.placeholder = longest_fitting(self.placeholders, self.content_region.width)

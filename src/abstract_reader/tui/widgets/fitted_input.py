"""An input whose placeholder fits its width: the longest of several, chosen on resize.

A placeholder cut by the input's edge loses its end ("… Enter o"); a narrow terminal gets
a shorter wording instead. The texts are the reader's own (or sanitised paper text), shown
as plain text by ``Input``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from rich.cells import cell_len
from textual import events
from textual.widgets import Input

from .keys_in_order import hand_on, run_dialog_binding, run_own_binding

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

    def __init__(
        self,
        *args: Any,
        placeholders: Sequence[str] = (),
        on_enter: Callable[[], object] | None = None,
        **kwargs: Any,
    ) -> None:
        if placeholders:
            kwargs["placeholder"] = placeholders[0]
        super().__init__(*args, **kwargs)
        self.placeholders = tuple(placeholders)
        #: What Enter does, called as Enter reaches the field (`action_submit`)
        self.on_enter = on_enter
        #: a key of this field (Enter, its dialog's save) took the focus away since the
        #: field last had it: the keys handed to it behind that key go on (`_on_key`)
        self._entered = False

    async def _on_key(self, event: events.Key) -> None:
        current = self.app.screen
        if self.screen is not current or (self._entered and current.focused is not self):
            # A key here (Enter, the dialog's save or cancel) closed the dialog or moved the
            # focus on, after the keys typed behind it had been handed to this field: they
            # go where the focus is now, in the order typed. (Keys handed here before a
            # focus move made elsewhere — Tab — were typed before it, and are this field's.)
            hand_on(self, event)
            return
        if await run_own_binding(self, event):
            return
        if await run_dialog_binding(self, event):  # (its save took the focus: as Enter's)
            self._entered = self.app.screen.focused is not self
            return
        await super()._on_key(event)

    async def action_submit(self) -> None:
        """Enter. With ``on_enter``, that is called at once — before the keys typed behind
        Enter reach the field — in place of posting ``Input.Submitted``, which is handled
        only after them: in a burst, "beta⏎gamma⏎" added one tag "betagamma" (the editor
        read the field once "gamma" was in it), and a second Enter then saved twice (the
        dialog was dismissed twice: a crash)."""
        if self.on_enter is not None:
            self.on_enter()
            # (the keys behind it are passed on only when it took the focus away)
            self._entered = self.app.screen.focused is not self
            return
        await super().action_submit()

    def _on_focus(self, _event: events.Focus) -> None:
        self._entered = False  # (Textual calls Input's own handler after this one)

    def _on_paste(self, event: events.Paste) -> None:
        """Input's paste (the first line: ``ReaderApp.on_event`` has sanitised it), cut at
        ``PASTE_LIMIT`` characters with a notice."""
        cut_paste(self, event)
        super()._on_paste(event)
        event.prevent_default()  # (Textual would call Input's handler again)

    def on_resize(self, _event: events.Resize) -> None:
        if self.placeholders:
            self.placeholder = longest_fitting(self.placeholders, self.content_region.width)

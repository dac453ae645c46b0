"""``OrderedTextArea``: a ``TextArea`` whose editing keys take effect in the order typed
(`keys_in_order`). A module of its own: Textual's ``TextArea`` (its documents, themes and
syntax support) costs ~8 ms to import, and only the note editor and the copy fallback use
it, so it is imported when one of them is first opened, not on the way to the first frame.
"""

from __future__ import annotations

from textual import events
from textual.widgets import TextArea

from .keys_in_order import hand_on, run_dialog_binding, run_own_binding


class OrderedTextArea(TextArea):
    """A ``TextArea`` whose editing keys, and its dialog's keys, take effect in the order
    typed (see `keys_in_order`)."""

    async def _on_key(self, event: events.Key) -> None:
        if self.screen is not self.app.screen:  # (its dialog closed: keys typed after that)
            hand_on(self, event)
            return
        if not await run_own_binding(self, event) and not await run_dialog_binding(self, event):
            await super()._on_key(event)

"""Text fields whose editing keys take effect in the order typed.

An ``Input``'s or a ``TextArea``'s editing keys (⌫, Del, ←/→, Home/End, ctrl+u/k/w …) are
the widget's own bindings, which Textual runs only once the key has gone up to the app —
after the letters queued behind it, which the widget inserts as they come. Keys typed in
one burst (a fast typist while the reader is busy, a terminal handing over several at
once) were applied out of order: "abc⌫d" showed "abc", "abc←X" "abcX", ctrl+u then letters
lost the letters. Here a widget runs its own binding as the key reaches it, between the
letters it inserts; priority bindings (the app's and the screen's: they run before any key
is handed on) and keys it has no binding for go on as before.
"""

from __future__ import annotations

from textual import events
from textual.widget import Widget
from textual.widgets import TextArea


async def run_own_binding(widget: Widget, event: events.Key) -> bool:
    """Run ``widget``'s own (not priority) binding of a key that is not text, if it has
    one that applies now; True (and the key stopped) if so."""
    if event.is_printable:
        return False
    for binding in widget._bindings.key_to_bindings.get(event.key, ()):
        if not binding.priority and await widget.app.run_action(binding.action, widget):
            event.stop()
            event.prevent_default()
            return True
    return False


class OrderedTextArea(TextArea):
    """A ``TextArea`` whose editing keys take effect in the order typed (see the module)."""

    async def _on_key(self, event: events.Key) -> None:
        if not await run_own_binding(self, event):
            await super()._on_key(event)

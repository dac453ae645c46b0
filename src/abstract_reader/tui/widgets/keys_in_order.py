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

from typing import Any, ClassVar, Protocol, runtime_checkable

from textual import events
from textual.app import App
from textual.binding import BindingsMap, BindingType
from textual.widget import Widget
from textual.widgets import OptionList

from ..commands import DIALOG_BINDINGS, EXTRA_BINDING_IDS


@runtime_checkable
class HoldsKeys(Protocol):
    """An app that holds keys while the screen they are for is being mounted (ReaderApp)."""

    def hold_handed_key(self, key: events.Key) -> bool:
        """Hold ``key``, handed on by a widget, if keys are held (or start to be): True if
        so. It goes before the keys the app itself took since then (they came later)."""
        ...


def typed_again(app: App[Any], key: str, character: str | None) -> events.Key:
    """A key to post again as if typed now: sent by the app, as a typed key is. (A key keeps
    its sender, and Textual stops a key bubbling up at its sender: one posted anew from a
    dialog's handler, with the dialog its sender, stopped at the dialog, and Esc never
    reached the app, which runs the dialog's bindings.)"""
    again = events.Key(key, character)
    again.set_sender(app)
    return again


def hand_on(widget: Widget, event: events.Key) -> None:
    """A key that reached ``widget`` after the focus had left it goes on, as if typed now: to
    the widget focused now (else its screen), or — when the focus went to a screen that is
    not mounted yet (a dialog just pushed) — to the keys the app holds for that screen, in
    the order typed. (Posted to the unmounted screen, a letter was lost there, and Enter
    bubbled back to the app behind the keys typed after it.)"""
    event.stop()
    event.prevent_default()
    app = widget.app
    if isinstance(app, HoldsKeys) and app.hold_handed_key(event):
        return
    screen = app.screen
    (screen.focused or screen).post_message(typed_again(app, event.key, event.character))


def own_bindings(widget: Widget) -> BindingsMap:
    """``widget``'s own bindings with the config file's remaps applied (``App.set_keymap``),
    as Textual applies them in a screen's binding chain: the keys in effect, not the keys
    declared (``saved_down = "ctrl+n"``: ctrl+n moves, ↓ no longer does)."""
    keymap = widget.app._keymap
    if not keymap:
        return widget._bindings
    bindings = widget._bindings.copy()
    bindings.apply_keymap(keymap)
    return bindings


async def run_own_binding(widget: Widget, event: events.Key) -> bool:
    """Run ``widget``'s own (not priority) binding of a key that is not text, if it has
    one that applies now, with the config file's remaps (`own_bindings`); True (and the
    key stopped) if so."""
    if event.is_printable:
        return False
    for binding in own_bindings(widget).key_to_bindings.get(event.key, ()):
        if not binding.priority and await widget.app.run_action(binding.action, widget):
            event.stop()
            event.prevent_default()
            return True
    return False


async def run_dialog_binding(widget: Widget, event: events.Key) -> bool:
    """In a dialog (a modal screen), run the dialog's own binding of a key that is not text
    (its save, cancel …: the reader's dialog bindings, not Textual's Tab), with the config file's remaps, as the key reaches ``widget``
    (one of its fields) — call it once the field's own bindings had their turn. True (and
    the key stopped) if one ran.

    Textual runs the screen's bindings only once the key has gone up to the app, after the
    field has typed in the keys queued behind it: "x ctrl+s j" in the note editor saved the
    note "xj", and "Esc j" left the "j" in the dialog's field."""
    if event.is_printable:
        return False
    screen = widget.screen
    if not screen.is_modal:
        return False
    for node, bindings in screen._binding_chain:
        if node is not screen:
            continue
        for binding in bindings.key_to_bindings.get(event.key, ()):
            if binding.id not in EXTRA_BINDING_IDS:  # (Textual's own: Tab's focus move …)
                continue
            if not binding.priority and await widget.app.run_action(binding.action, screen):
                event.stop()
                event.prevent_default()
                return True
    return False


async def keys_follow_focus(widget: Widget, event: events.Key) -> bool:
    """For a widget that takes no text (the list, the paper pane, a dialog's list): run the
    key's bindings as the key reaches it, and hand on the keys that reach it once the focus
    has moved. True (and the key stopped) if the key was dealt with here.

    Textual runs a widget's and its screen's bindings only once the key has gone up to the
    app, after it has handed the widget the keys queued behind it: a binding that moves the
    focus (`r` in the tag list opens its name field, Enter on the list opens the paper) did
    so after the next keys of a burst had gone to the old widget — the new name's letters
    did nothing and its Enter filtered to the old tag; a space after Enter marked a row
    instead of paging the paper. Here the bindings (the same chain, the same checks as the
    app's) run before the widget takes its next key, and a key that reaches a widget that
    is no longer focused goes on to the one that is, in the order typed."""
    app = widget.app
    screen = app.screen
    focused = screen.focused
    if focused is not widget:  # the focus moved (or a dialog opened) since it was sent here
        target = focused if focused is not None else screen
        if target is widget:
            return False
        hand_on(widget, event)
        return True
    if await app._check_bindings(event.key):  # the app's own pass, not the priority one
        event.stop()
        event.prevent_default()
        return True
    return False


class OrderedOptionList(OptionList):
    """A dialog's ``OptionList`` whose keys run in the order typed (`keys_follow_focus`).
    A key not dealt with goes on to OptionList's own handler, as Textual dispatches it.
    j / k move as in the reader's list (``dialog_list_down`` / ``dialog_list_up``)."""

    BINDINGS: ClassVar[list[BindingType]] = list(DIALOG_BINDINGS["dialog_list"])

    async def _on_key(self, event: events.Key) -> None:
        await keys_follow_focus(self, event)

"""A footer that leaves out its least wanted keys, whole, when they do not all fit.

Textual's ``Footer`` lays its keys out left to right and cuts the row at its edge: at 70
columns the main screen's showed "⏎ Open  space Mark  / Filter  s Sort  b Bookmark" and
none of "? Help" or "q Quit", the two a new user needs most. This one shows as many keys as
fit, most wanted first (``priority``), in their usual order; the others are only hidden
from the footer — their bindings are untouched, so their keys still work (and ``?`` lists
them all).
"""

from __future__ import annotations

from collections.abc import Sequence

from textual import events
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from ..commands import NO_KEY


class FittedFooter(Footer):
    """A ``Footer`` given ``priority``: the binding actions most wanted first. Keys whose
    action is not named there (a focused field's own keys) come before all of them; the
    command palette key comes right after the first ``palette_after`` named actions."""

    def __init__(
        self, *, priority: Sequence[str], palette_after: int = 0, show_command_palette: bool = True
    ) -> None:
        super().__init__(show_command_palette=show_command_palette)
        self.priority = tuple(priority)
        self.palette_after = palette_after
        self._made_for: tuple[object, ...] | None = None  #: the keys the children are of

    async def recompose(self) -> None:
        """Made again only when the keys it would show changed: Textual recomposes the
        footer whenever the screen's bindings are updated (each focus change, each
        ``refresh_bindings``), mostly to the same keys — a new set of widgets styled and
        laid out each time, ~15% of the UI thread's work in a short session."""
        if not self.is_attached:  # (its screen closed before the call came: nothing to do,
            return  # as Textual's own recompose does then)
        shown = self._keys_shown()
        if shown is not None and shown == self._made_for and self.children:
            return
        self._made_for = shown
        await super().recompose()
        self.fit_keys()

    def _keys_shown(self) -> tuple[object, ...] | None:
        """What `compose` makes its keys of (None: the bindings are not ready yet)."""
        if not self._bindings_ready:
            return None
        app = self.app
        active = self.screen.active_bindings  # (made anew on each read: every check_action)
        keys = tuple(
            (binding, app.get_key_display(binding), enabled, tooltip)
            for (_, binding, enabled, tooltip) in active.values()
            if binding.show
        )
        palette = None
        if self.show_command_palette and app.ENABLE_COMMAND_PALETTE:
            found = active.get(app.COMMAND_PALETTE_BINDING)
            if found is not None:
                _node, binding, enabled, tooltip = found
                palette = (binding, app.get_key_display(binding), enabled, tooltip)
        return (keys, palette)

    def on_resize(self, _event: events.Resize) -> None:
        self.fit_keys()

    def _rank(self, key: FooterKey) -> int:
        if key.has_class("-command-palette"):
            return self.palette_after
        if key.action in self.priority:
            rank = self.priority.index(key.action)
            return rank if rank < self.palette_after else rank + 1
        return -1

    def _width(self, key: FooterKey) -> int:
        """The cells ``key`` takes in the row (its text, padding, border and margins)."""
        styles = key.styles
        content = key.get_content_width(self.size, self.app.size)
        return content + styles.gutter.width + styles.margin.width

    def fit_keys(self) -> None:
        """Show the most wanted keys that fit the footer's width, each whole; hide the rest."""
        width = self.size.width
        keys = list(self.query_children(FooterKey))
        if not width or not keys:
            return
        room = width
        shown: set[FooterKey] = set()
        for key in sorted(keys, key=self._rank):  # (a stable sort: ties keep their order)
            if key.key == NO_KEY:  # a binding a remap left without a key (keymap.py)
                continue
            needed = self._width(key)
            if needed > room:
                break  # and every less wanted key is left out too: none comes back narrower
            room -= needed
            shown.add(key)
        for key in keys:
            key.display = key in shown

"""Scrolling whose line and page keys each count, however fast they come.

Textual's ``scroll_down`` defers its scroll until after the next refresh and starts from
the scroll target as it is then: keys that arrive in one burst (a held `j`, or `j j j`
typed quickly) are all handled before that refresh, each aims at the same line, and three
keys scrolled one line. Here each key moves the target at once, from where the keys before
it left it.
"""

from __future__ import annotations

from textual.actions import SkipAction
from textual.containers import ScrollableContainer, VerticalScroll


class BurstScrolling(ScrollableContainer):
    """The scroll actions; mixed into a container (`BurstScroll`) or a widget that draws
    its own lines (`PaperView`, a ``ScrollView``)."""

    def _scroll_by(self, lines: float) -> None:
        if not self.allow_vertical_scroll:
            raise SkipAction()
        self.scroll_to(y=self.scroll_target_y + lines, animate=False, immediate=True)

    def action_scroll_down(self) -> None:
        self._scroll_by(1)

    def action_scroll_up(self) -> None:
        self._scroll_by(-1)

    def action_page_down(self) -> None:
        self._scroll_by(self.scrollable_content_region.height)

    def action_page_up(self) -> None:
        self._scroll_by(-self.scrollable_content_region.height)


class BurstScroll(BurstScrolling, VerticalScroll):
    """A vertical scrolling container with `BurstScrolling`'s keys."""

"""The paper full screen, for narrow terminals."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.screen import Screen

from ..commands import paper_footer_priority, paper_screen_bindings
from ..widgets.fitted_footer import FittedFooter
from ..widgets.paper_view import PaperDetails, PaperView


class PaperScreen(Screen[None]):
    """Shows one paper; the library keys act on it (they run on the main screen)."""

    BINDINGS: ClassVar[list[BindingType]] = list(paper_screen_bindings())

    def __init__(self, details: PaperDetails) -> None:
        super().__init__()
        self.details = details

    def compose(self) -> ComposeResult:
        yield PaperView(id="paper-full")
        # room at 70 columns for Esc and the keys that act on the paper (ctrl+p is in `?`),
        # as on the triage screen; under 61 the least wanted are left out (they still work),
        # Esc, `? Help` and `q Quit` stay
        yield FittedFooter(priority=paper_footer_priority(), show_command_palette=False)

    def on_mount(self) -> None:
        view = self.query_one(PaperView)
        view.show(self.details)
        view.focus()

    def update(self, details: PaperDetails) -> None:
        self.details = details
        self.query_one(PaperView).show(details)

    async def action_back(self) -> None:
        await self.app.run_action("main_command('close_paper')")

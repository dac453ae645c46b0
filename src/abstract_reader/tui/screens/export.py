"""The export dialog: the current view or the marked papers to a file, in any format the
`export` command writes (``cite.export_to_file``, under outfile.py's rule for the target)."""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import Footer, Input, Label, Select, Static
from textual.worker import Worker, WorkerState

from ...formats import EXPORT_FORMATS, FORMAT_NAMES
from ...outfile import OutputError, TargetError, TargetExists
from ...plural import papers_phrase
from ...text import escape_for_terminal
from ..commands import DIALOG_BINDINGS, keyed
from ..widgets.fitted_input import FittedInput
from ..widgets.keys_in_order import typed_again
from .editors import MessageLine, _Editor

#: A file name's extension for each export format (the default name follows the format).
EXTENSIONS = {
    "bibtex": ".bib",
    "markdown": ".md",
    "csl-json": ".json",
    "csv": ".csv",
    "jsonl": ".jsonl",
    "text": ".txt",
}
_FORMAT_OF = {ext: fmt for fmt, ext in EXTENSIONS.items()}
DEFAULT_STEM = "papers"


@dataclass(frozen=True, slots=True)
class PaperSet:
    """One choice of what to export: ``key`` ("view" / "marked"), its label, its size."""

    key: str
    label: str
    count: int


@dataclass(frozen=True, slots=True)
class ExportRequest:
    fmt: str
    what: str  #: a PaperSet key
    path: Path
    force: bool


#: Runs in a thread: writes the export, returns how many papers it holds; raises OutputError.
Exporter = Callable[[ExportRequest], int]


def shown_path(path: Path) -> str:
    """An absolute path as a person reads it: ``~`` for the home folder, no control bytes."""
    absolute = Path(os.path.abspath(path))  # not resolve(): a link keeps its own name
    home = Path.home()
    text = str(absolute)
    if absolute == home or home in absolute.parents:
        text = "~" + os.sep + str(absolute.relative_to(home)) if absolute != home else "~"
    return escape_for_terminal(text)


class _FileNameField(FittedInput):
    """The file name. Focused when the dialog opens and back after the overwrite question
    (``focus_to_edit``), it has the cursor at the end of the name and nothing selected: Textual's Input selects its
    whole text when focused, and the key typed after "n" replaced the name the user meant
    to edit."""

    _keep_cursor = False  #: the next focus leaves the cursor where it is

    def focus_to_edit(self) -> None:
        """Focus now (the keys typed next come here), the cursor at the end of the name."""
        self.cursor_position = len(self.value)
        if not self.has_focus:
            self._keep_cursor = True
            self.screen.set_focus(self, scroll_visible=False)

    def _on_focus(self, event: events.Focus) -> None:
        # Textual calls this before Input's own handler, which selects everything when
        # select_on_focus is true
        self.select_on_focus = not self._keep_cursor
        self._keep_cursor = False


def _there_already(path: Path) -> str:
    """What the preview adds about the file named, before Enter: it is there already (a
    file is replaced only after asking), or it is a folder (refused)."""
    try:
        if path.is_dir():
            return " (a folder)"
        if path.is_file():
            return " (exists: Enter asks before replacing it)"
    except OSError:  # (a name too long, a folder that cannot be read: said on Enter)
        pass
    return ""


class ExportDialog(_Editor[str]):
    """Format, what, file name; Enter or ctrl+s exports. An existing file is replaced only
    after "y" to "Overwrite …? y/n". Dismissed with the success message.

    The keys typed while an export is being written (typed ahead after Enter) are held:
    if the export asks "Overwrite …? y/n", they are handled then, in order (a "n" typed
    ahead answers it); if it is written, or fails, they are dropped. None of them reaches
    the file name meanwhile."""

    # y / n only while the question is asked (check_action)
    BINDINGS: ClassVar[list[BindingType]] = list(DIALOG_BINDINGS["export"])

    def __init__(
        self, sets: list[PaperSet], default_what: str, default_format: str, exporter: Exporter
    ) -> None:
        super().__init__()
        self.sets = {s.key: s for s in sets}
        self.default_what = default_what if default_what in self.sets else sets[0].key
        self.default_format = default_format if default_format in EXPORT_FORMATS else "bibtex"
        self.exporter = exporter
        self._asking: ExportRequest | None = None  #: the overwrite waiting for y / n
        self._writing: ExportRequest | None = None  #: the export being written
        #: keys typed while an export was written (key, character), in order
        self._held: deque[tuple[str, str | None]] = deque()

    def compose(self) -> ComposeResult:
        with Vertical(id="export-box", classes="modal-box"):
            yield Static("Export papers to a file", classes="modal-title")
            with Horizontal(classes="field"):
                yield Label("Format", classes="field-label")
                yield Select(
                    [(FORMAT_NAMES[f], f) for f in EXPORT_FORMATS],
                    value=self.default_format,
                    allow_blank=False,
                    id="export-format",
                )
            with Horizontal(classes="field"):
                yield Label("Papers", classes="field-label")
                yield Select(
                    [(f"{s.label} ({papers_phrase(s.count)})", s.key) for s in self.sets.values()],
                    value=self.default_what,
                    allow_blank=False,
                    id="export-what",
                )
            with Horizontal(classes="field"):
                yield Label("File", classes="field-label")
                # Enter and ctrl+s export the name as it is when the key reaches the field,
                # never with the keys typed behind them ("⏎n" exported to "n"):
                # `FittedInput.on_enter` and `keys_in_order.run_dialog_binding`
                yield _FileNameField(
                    value=DEFAULT_STEM + EXTENSIONS[self.default_format],
                    placeholder="a file name (~ is your home folder)",
                    on_enter=self.action_save,
                    id="export-path",
                )
            yield Static(id="export-preview", markup=False)
            yield MessageLine(id="export-message")
            yield Label(
                keyed(
                    self.app,
                    "Enter or {editor_save}: export · Tab: next field · {editor_cancel}: cancel",
                ),
                classes="modal-hint",
                markup=False,
            )
        yield Footer()  # the dialog's own keys

    def on_mount(self) -> None:
        field = self.query_one("#export-path", _FileNameField)
        # the cursor at the end of the name, nothing selected (``field.focus()`` then the
        # cursor set here did not: Textual's focus, handled after this, selected it all)
        # in a short terminal the box scrolls: to the field, once it is laid out (Textual's
        # own scroll on focus comes before that and took the box to its end, the field above)
        field.focus_to_edit()
        self._preview()
        self.call_after_refresh(field.scroll_visible, animate=False)

    # -- what the fields say -----------------------------------------------------------------
    def _format(self) -> str:
        value = self.query_one("#export-format", Select).value
        return value if isinstance(value, str) else self.default_format

    def _what(self) -> str:
        value = self.query_one("#export-what", Select).value
        return value if isinstance(value, str) else self.default_what

    def _path(self) -> Path | None:
        text = self.query_one("#export-path", Input).value.strip()
        return Path(text).expanduser() if text else None

    def _preview(self) -> None:
        paper_set = self.sets[self._what()]
        path = self._path()
        where = f" → {shown_path(path)}{_there_already(path)}" if path is not None else ""
        self.query_one("#export-preview", Static).update(
            Content(
                f"{papers_phrase(paper_set.count)} as {FORMAT_NAMES[self._format()]}{where}"
            ).stylize("$text-accent")
        )

    def _say(self, text: str, style: str = "$text-error") -> None:
        self.say(Content(text).stylize(style))

    def show_message(self, message: Content) -> None:
        # below the fields: in a short terminal the box scrolls to it
        self.query_one("#export-message", MessageLine).say(message)

    @on(Select.Changed, "#export-format")
    def _format_changed(self, event: Select.Changed) -> None:
        field = self.query_one("#export-path", Input)
        new = EXTENSIONS[self._format()]
        name = field.value
        for ext in EXTENSIONS.values():  # the name follows the format while it has one of ours
            if name.endswith(ext) and len(name) > len(ext):
                field.value = name[: -len(ext)] + new
                field.cursor_position = len(field.value)
                break
        self._changed()

    @on(Input.Changed, "#export-path")
    def _path_changed(self) -> None:
        """A name typed with one of the formats' extensions (x.md, x.jsonl) chooses it."""
        suffix = Path(self.query_one("#export-path", Input).value.strip()).suffix.lower()
        fmt = _FORMAT_OF.get(suffix)
        if fmt is not None and fmt != self._format():
            self.query_one("#export-format", Select).value = fmt
        self._changed()

    @on(Select.Changed, "#export-what")
    def _changed(self) -> None:
        # A question, an error or "Not exported; … is unchanged" was about the file, format
        # or papers chosen before: it goes, so the dialog never speaks of another file.
        # ("Exporting…" stays while a write runs: its outcome is said when it ends.)
        self._asking = None
        if self._writing is None:
            self._say("")
        self._preview()

    # -- exporting ---------------------------------------------------------------------------
    def changed(self) -> bool:
        return False  # nothing of the user's is lost by cancelling: Esc just closes

    def action_cancel(self) -> None:
        if self._asking is not None:  # Esc answers the question "no"
            self.action_answer(False)
            return
        super().action_cancel()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "answer":
            return self._asking is not None
        return True

    def on_key(self, event: events.Key) -> None:
        """A key that reaches the dialog itself (no field focused: ``_run`` took the focus)
        while an export is written waits for its outcome."""
        if self._writing is not None:
            event.stop()
            event.prevent_default()
            self._held.append((event.key, event.character))

    def action_save(self) -> None:
        if self._writing is not None:
            return
        if self._asking is not None:
            return  # y or n first
        path = self._path()
        if path is None:
            self._say("Give a file name to export to.")
            return
        if str(path) == "-":
            self._say("- (standard output) is for the export command; give a file name.")
            return
        if self._nothing_to_export():
            return
        self._run(ExportRequest(self._format(), self._what(), path, force=False))

    def _nothing_to_export(self) -> bool:
        """An export of no papers would write an empty file (or empty an existing one): it is
        refused, with one line, and nothing is written."""
        paper_set = self.sets[self._what()]
        if paper_set.count > 0:
            return False
        if paper_set.key == "marked":
            self._say("Nothing to export: no marked papers. Nothing was written.")
        else:
            self._say("Nothing to export: the view is empty. Nothing was written.")
        return True

    def action_answer(self, yes: bool) -> None:
        request = self._asking
        if request is None:
            return
        self._asking = None
        # not scrolled to: what is said next, below it, is (the field stays in view above it)
        self.query_one("#export-path", _FileNameField).focus_to_edit()
        if yes:
            self._run(ExportRequest(request.fmt, request.what, request.path, force=True))
        else:
            self._say(f"Not exported; {shown_path(request.path)} is unchanged.", "$text-muted")

    def _run(self, request: ExportRequest) -> None:
        self._writing = request
        self.set_focus(None)  # the keys typed next are held (on_key), not typed into the name
        self._say("Exporting…", "$text-muted")
        self._export(request)

    @work(thread=True, exclusive=True, group="export", exit_on_error=False)
    def _export(self, request: ExportRequest) -> int:
        return self.exporter(request)

    @on(Worker.StateChanged)
    async def _export_done(self, event: Worker.StateChanged) -> None:
        if event.worker.group != "export" or event.state not in (
            WorkerState.SUCCESS,
            WorkerState.ERROR,
        ):
            return
        event.stop()  # said here, in the dialog, not as a failed background task
        request, self._writing = self._writing, None
        if request is None:
            return
        if event.state == WorkerState.SUCCESS:
            count = event.worker.result
            assert isinstance(count, int)
            self._held.clear()  # typed into a dialog that is closing: nothing to do
            self.dismiss(f"Exported {papers_phrase(count)} to {shown_path(request.path)}")
            return
        error = event.worker.error
        if isinstance(error, TargetExists) and not request.force:
            self._ask(request, error)
            await self._replay_held()  # what was typed ahead answers the question
            return
        # not a question: the keys typed ahead meant nothing here (never a file's name)
        self._held.clear()
        self.query_one("#export-path", _FileNameField).focus_to_edit()
        if isinstance(error, TargetError):
            self._say(error.reason)
        elif isinstance(error, OutputError):
            self._say(str(error))
        else:
            self._say(f"Could not export: {type(error).__name__}: {error}")

    async def _replay_held(self) -> None:
        """The keys held while the export was written, as if typed now, in order: y, n or
        Esc answer the question, and the keys after the answer go to the file name (which
        has the focus back). (Awaited by the handler: the keys reaching the dialog
        meanwhile wait in its queue, behind these.)"""
        while self._held and self._writing is None and self.is_active:
            key, character = self._held.popleft()
            if await self.app._check_bindings(key, priority=True):  # y, n
                continue
            if self.focused is not None:  # the name, after the answer
                self.focused.post_message(typed_again(self.app, key, character))
            else:
                await self.app._check_bindings(key)  # Esc: "no"

    def _ask(self, request: ExportRequest, error: TargetExists) -> None:
        self._asking = request
        self.set_focus(None)  # y and n answer; they are not typed into the file name
        name = escape_for_terminal(request.path.name)
        if error.link:
            self._say(
                f"{name} is a symbolic link: write to the file it points to? y/n", "$text-warning"
            )
        else:
            self._say(f"Overwrite {name}? y/n", "$text-warning")

"""ReaderApp: the full-screen reader. The App keeps the library, the theme and quitting; the
main screen (``screens/main.py``) holds the session and handles the commands."""

from __future__ import annotations

import contextlib
import gc
import os
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from rich.console import RenderableType
from textual import events
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.driver import Driver
from textual.geometry import Size
from textual.screen import Screen
from textual.widgets import Input

from ..config import Config, load_config, warnings_notice
from ..corpus import listed_problems, more_problems
from ..library import READER_BUSY_TIMEOUT_MS, Library, LibraryError, busy_timeout_s
from ..paths import cache_dir as default_cache_root
from ..paths import default_db_path
from ..session import Session
from ..text import escape_for_terminal, sanitise_paste
from .commands import NO_KEY, bindings, command_help, palette_commands
from .keymap import resolve_keys
from .output import Shown, changed_chops
from .screens import main as main_screen
from .screens.main import NARROW_WIDTH, MainScreen
from .widgets.fitted_input import FittedInput, cut_paste
from .widgets.keys_in_order import typed_again

if TYPE_CHECKING:
    from ..clipboard import CopyResult

#: Under this many rows dialogs are compact (`Screen.-short` in app.tcss).
SHORT_HEIGHT = 32
#: The GIL switch interval while the reader runs (see ``run``).
SWITCH_INTERVAL_S = 0.001
#: The garbage collector's first threshold while the reader runs (see ``run``).
GC_YOUNG_THRESHOLD = 20_000
#: The reader's exit status when its terminal went away, or when SIGTERM ended it (128 + the
#: signal, as a shell reports a command a signal ended).
HANGUP_EXIT = 129
TERMINATED_EXIT = 143


class ReaderApp(App[int]):
    CSS_PATH = Path(__file__).with_name("app.tcss")  # absolute: works for subclasses too
    TITLE = "abstract-reader"
    # Under NARROW_WIDTH columns the list fills the screen (`Screen.-narrow` in app.tcss).
    HORIZONTAL_BREAKPOINTS = [  # noqa: RUF012 (App declares it without ClassVar)
        (0, "-narrow"),
        (NARROW_WIDTH, "-wide"),
    ]
    # Under SHORT_HEIGHT rows (70×24) dialogs drop blank lines and fields become one line
    # high (`Screen.-short` in app.tcss): hints and messages stay on screen.
    VERTICAL_BREAKPOINTS = [(0, "-short"), (SHORT_HEIGHT, "-tall")]  # noqa: RUF012
    BINDINGS: ClassVar[list[BindingType]] = list(bindings("app"))
    #: the exit status of a session ended by SIGHUP or SIGTERM (0: it was not)
    ended_by_signal = 0
    #: When the last key arrived (`time.monotonic`): background work that can wait, waits
    #: while keys are arriving (`MainScreen.keys_arriving`).
    last_key_at = 0.0
    #: keys held until the screen they are for is ready (None while none are: `on_event`),
    #: and the keys posted again and not handled yet, by id
    _held_keys: list[events.Key] | None = None
    _replays: dict[int, events.Key] = {}  # noqa: RUF012 (replaced in __init__)
    #: the screen being mounted that the held keys wait for (None: the first frame), and how
    #: many of them were handed on by widgets (`hold_handed_key`)
    _held_for: Screen[Any] | None = None
    _handed = 0

    async def on_event(self, event: events.Event) -> None:
        """Keys typed ahead are held until the screen they are for is ready, then handled in
        the order typed, as if typed then (`release_keys`):

        - before the first frame (typed into the terminal before the reader was ready):
          Textual handed them to a main screen not mounted yet, whose `on_mount` then put the
          last session's query in the filter over what was typed — the filter showed "graph"
          while the list was the typed query's;
        - while a screen pushed by the key before them (a dialog) is being mounted: Textual's
          `push_screen` makes it the current screen at once but mounts it later, and a key
          that came meanwhile went to that screen with no widget focused, where a letter
          did nothing and Enter ran after the keys behind it ("E ⏎ n": the n typed into
          the file name, then Enter exported to "papers.bibn"). Held, they go to the widget
          the dialog focuses, in order (`_hold_keys_for`)."""
        if isinstance(event, events.Paste) and not event.is_forwarded:
            # Pasted text is untrusted (copied from the web) and Textual's fields take it
            # raw: every field gets it sanitised, controls as visible stand-ins (␛).
            event.text = sanitise_paste(event.text)
            if isinstance(self.focused, Input) and not isinstance(self.focused, FittedInput):
                # the command palette's field (the reader's own cut their pastes): Textual's
                # Input measures its whole value every frame, a 1 MB line took 2–3 s a key
                cut_paste(self.focused, event)
        if isinstance(event, events.Key) and not event.is_forwarded:
            self.last_key_at = time.monotonic()
            replayed = self._replays.pop(id(event), None) is not None
            held = self._keys_held()
            if held is not None:  # (in the order typed: see release_keys)
                held.append(event)
                return
            if not replayed and self._replays:
                self._queue_key(event)  # a newer key while held ones wait in the queue: after
                return
        await super().on_event(event)

    def get_driver_class(self) -> type[Driver]:
        """Textual's Linux (and macOS) driver, with pastes taken verbatim and an input thread
        that no byte can end (``driver.py``); Textual's choice elsewhere (Windows, or a
        driver named by ``TEXTUAL_DRIVER``)."""
        driver_class = super().get_driver_class()
        if driver_class.__module__ != "textual.drivers.linux_driver":
            return driver_class
        from .driver import ReaderDriver

        return ReaderDriver

    def _keys_held(self) -> list[events.Key] | None:
        """The keys held, if keys are held now: before the first frame, or while the current
        screen is not mounted yet (holding starts then)."""
        stack = self.screen_stack
        if self._held_for is not None and self._held_for not in stack:
            self.release_keys()  # (the screen went before it was mounted)
        if self._held_keys is None and stack and not stack[-1].is_mounted:
            self._hold_keys_for(stack[-1])
        return self._held_keys

    def hold_handed_key(self, key: events.Key) -> bool:
        """A key that reached a widget after the focus had left it (`keys_in_order.hand_on`),
        while keys are held: it goes before the keys held since the app took it (they came
        later), after the keys handed on before it."""
        held = self._keys_held()
        if held is None:
            return False
        held.insert(self._handed, key)
        self._handed += 1
        return True

    def _hold_keys_for(self, screen: Screen[Any]) -> None:
        """Hold the keys that come until ``screen``, pushed and not mounted yet, is: they are
        released by a callback in its own queue, which it runs once mounted (after its
        `on_mount`, and after the focus moves that `on_mount` asked the app for: those are
        in the app's queue before the keys released)."""
        self._held_keys = []
        self._held_for = screen
        self._handed = 0
        if not screen.call_later(self._release_keys_for, screen):  # (closed: no more keys)
            self.release_keys()

    def _release_keys_for(self, screen: Screen[Any]) -> None:
        if self._held_for is screen:
            self.release_keys()

    def release_keys(self) -> None:
        """The screen the keys wait for is ready: the keys held are handled now, in order
        (`on_event`). Each is posted again; a key that comes meanwhile is posted again
        behind them, so every key is handled in the order typed."""
        held, self._held_keys, self._held_for, self._handed = self._held_keys, None, None, 0
        for key in held or ():
            self._queue_key(key)

    def _queue_key(self, key: events.Key) -> None:
        again = typed_again(self, key.key, key.character)
        self._replays[id(again)] = again
        self.post_message(again)

    def __init__(
        self,
        paths: Sequence[str | os.PathLike[str]] | None = None,
        db: str | os.PathLike[str] | None = None,
        *,
        read_delay: float | None = None,
        cache_dir: Path | None = None,
        config: Config | None = None,
        announce_new_library: bool = False,
    ) -> None:
        super().__init__()
        if config is None:
            config, self.config_warnings = load_config()
        else:
            self.config_warnings = []
        self.config = config
        if read_delay is None:
            read_delay = config.auto_read_delay if config.auto_read else None
        self.library = Library(
            Path(db) if db is not None else default_db_path(),
            busy_timeout=busy_timeout_s(READER_BUSY_TIMEOUT_MS),  # writes on the UI thread
        )
        #: say "created a new library" when this open made it (a path the user named)
        self._announce_new_library = announce_new_library and self.library.created
        self._screen_args = (
            [str(p) for p in paths] if paths is not None else None,
            read_delay,
            cache_dir if cache_dir is not None else default_cache_root() / "index",
        )
        self._main: MainScreen | None = None
        self._held_keys = []
        self._replays = {}
        self._shown: Shown = {}  #: what the frames wrote, to write only what changed
        self._shown_size: Size | None = None
        theme = config.theme or self.library.setting("theme")
        if theme and theme in self.available_themes:
            self.theme = theme
        self._apply_keys(config)

    def _apply_keys(self, config: Config) -> None:
        """Keys remapped in the config file, by binding id (the first column of the command
        table), settled against the keys they share a place with (``keymap.py``): an unknown
        id and each clash are one warning."""
        settings = resolve_keys(config)
        self.config_warnings.extend(settings.warnings)
        #: the bindings whose keys are not their defaults: their keys in effect (the help's)
        self.keys_in_effect = settings.keys
        if settings.keymap:
            self.set_keymap(settings.keymap)

    def get_key_display(self, binding: Binding) -> str:
        if binding.key == NO_KEY:  # (a remap took its only key: see keymap.py)
            return "(no key)"
        return super().get_key_display(binding)

    def on_mount(self) -> None:
        self._end_on_hangup()
        self.app_resume_signal.subscribe(self, self._resumed)
        self.screen_change_signal.subscribe(self, self._toasts_on_the_top_screen)
        if self.config_warnings:  # (one notice, however many: config --show lists them)
            notice = warnings_notice(self.config_warnings)
            self.notify(notice, title="Config", severity="warning", timeout=15, markup=False)
        if self._announce_new_library:  # a mistyped --db must not look like an emptied library
            self.notify(
                f"Created a new library at {escape_for_terminal(str(self.library.path))}",
                title="Library",
                timeout=15,
                markup=False,
            )

    def _end_on_hangup(self) -> None:
        """The terminal went away (its window closed, the ssh link dropped: SIGHUP) or the
        reader was asked to stop (SIGTERM: ``kill``, a logout, a system shutdown): a note
        being typed is kept as a draft (`NoteEditor`), and — SIGTERM — the reader ends as
        if quit, the library closed and the terminal given back as it was, instead of dying
        mid-way (their default: the terminal left in the reader's screen, mouse reports on,
        no cursor) or — SIGHUP ignored, a reader started under ``nohup`` — spinning for good
        on a terminal whose reads all come back empty. Not in a headless (test) session."""
        import asyncio
        import signal

        if self.is_headless:
            return
        loop = asyncio.get_running_loop()
        for name, code in (("SIGHUP", HANGUP_EXIT), ("SIGTERM", TERMINATED_EXIT)):
            number = getattr(signal, name, None)
            if number is not None:
                with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                    loop.add_signal_handler(number, self._signalled, code)

    def _signalled(self, code: int) -> None:
        self.ended_by_signal = code
        if code == HANGUP_EXIT:
            # The terminal is gone: nothing can be given back to it, and Textual's shutdown
            # could wait for good on writes to it (its writer's queue full, seen once in ten
            # hangups). What was typed is kept and the process ends here. The library needs
            # no closing: every write is a transaction, and none runs now (they run on this
            # thread); closing its connection under a worker reading it could crash. The
            # helper processes end with their pipes.
            from .screens.editors import NoteEditor

            for screen in self.screen_stack:
                if isinstance(screen, NoteEditor):
                    screen.keep_now()
            os._exit(HANGUP_EXIT)
        self.exit(return_code=code)

    def _toasts_on_the_top_screen(self, _screen: Screen[object]) -> None:
        """Notifications show on the current screen only. A dialog shows them at its top
        (app.tcss): the screen under it still drew the ones it had at the bottom (over the
        dialog's hint, seen through its translucent background), until they expired; they
        come back with that screen (Textual shows the notifications left on a resumed
        screen)."""
        from textual.css.query import NoMatches

        for below in self.screen_stack[:-1]:
            try:
                rack = below.get_child_by_id("textual-toastrack")
            except NoMatches:  # (notifications off)
                continue
            if rack.display:
                rack.display = False
                below.refresh(layout=True)  # (a screen under another is not laid out again else)

    def _resumed(self, _app: App[object]) -> None:
        """Back from suspension (ctrl+z then fg, an editor): the terminal holds whatever the
        shell or the editor left, so every cell is written again, not only what changed."""
        self._shown.clear()
        self.screen.refresh(repaint=True)

    @property
    def session(self) -> Session:
        return self.main.session

    @property
    def main(self) -> MainScreen:
        """The main screen (made when the App starts, in its context)."""
        if self._main is None:
            paths, read_delay, cache_dir = self._screen_args
            self._main = MainScreen(
                self.library,
                paths,
                read_delay=read_delay,
                cache_dir=cache_dir,
                list_width=self.config.list_width,
                citation_format=self.config.citation_format,
            )
        return self._main

    def _display(self, screen: Screen[object], renderable: RenderableType | None) -> None:
        """A frame is written as the cells that changed on screen (``output.py``): a key
        typed into the filter wrote ~11 KB at 10,000 papers, mostly cells as they were."""
        if self.size != self._shown_size:  # a new size: nothing on screen is known
            self._shown.clear()
            self._shown_size = self.size
        super()._display(screen, changed_chops(renderable, self._shown))

    def get_default_screen(self) -> Screen[None]:
        return self.main

    def on_ready(self) -> None:
        self.main.first_frame()
        self.release_keys()  # (the first frame is up: keys typed ahead go on now)

    def on_app_focus(self) -> None:
        """Back in this terminal: the CLI may just have written; show it now, not at the next
        poll (terminals that report focus send this)."""
        self.main.refresh_library()

    async def action_main_command(self, action: str) -> None:
        """A main-screen command pressed on another screen (the full-screen paper)."""
        await self.main.run_action(action)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if getattr(self, "_exit", False):  # quitting: keys still queued (a paste) do nothing
            return False
        # a dialog has its own keys (Esc); q and ? are text in its fields
        return not (action in ("help", "quit") and self.screen.is_modal)

    def action_help(self) -> None:
        from .screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            # a screen with keys of its own (triage) puts them first
            keys_of = getattr(self.screen, "help_section", None)
            first = keys_of(self.keys_in_effect) if callable(keys_of) else None
            self.push_screen(HelpScreen(first, self.keys_in_effect))

    def copy_to_clipboard(self, text: str) -> None:
        """Textual's own copies (ctrl+c on a selection, in a field or a text area): OSC 52 by
        the reader's one way (`terminal_osc52`), as `c` sends it when no clipboard tool
        works. Over the limit, or with no terminal, nothing is sent and the user is told so
        — not a copy that silently never arrives. The App's own clipboard (what ctrl+v
        pastes into the reader's fields) takes the text either way, as in Textual."""
        self._clipboard = text
        result = terminal_osc52(self, text)
        if not result.ok:
            self.notify(f"The selection: {result.detail}", severity="warning", markup=False)

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        for command in palette_commands():
            target = "" if command.where == "app" else "main_command"
            action = command.action_name
            run = f"{target}({action!r})" if target else action
            # (its description names the keys in effect, as the help does)
            help_text = command_help(command, self.keys_in_effect)
            yield SystemCommand(command.title, help_text, _runner(self, run))

    def watch_theme(self, theme: str) -> None:
        library = getattr(self, "library", None)
        if library is not None and not library.read_only and library.setting("theme") != theme:
            with contextlib.suppress(LibraryError):
                library.set_setting("theme", theme)

    async def action_quit(self) -> None:
        self.main.save_place()
        self.exit(0)


def terminal_osc52(app: App[Any], text: str) -> CopyResult:
    """OSC 52 through ``app``'s terminal by `clipboard.send_osc52`'s rule (refused over the
    limit; wrapped for tmux inside tmux): the one way the reader writes it, for its own
    copies (`MainScreen._copy`) and Textual's (`ReaderApp.copy_to_clipboard`). No terminal —
    headless, no driver, TERM=dumb — is a failure, not a sequence written to nowhere."""
    from ..clipboard import send_osc52

    driver = app._driver
    if app.is_headless or driver is None or os.environ.get("TERM") == "dumb":
        return send_osc52(text, None)
    return send_osc52(text, driver.write)


def _runner(app: App[int], action: str) -> Callable[[], Awaitable[None]]:
    async def run() -> None:
        await app.run_action(action)

    return run


def run(
    paths: Sequence[str] | None, db: str | None = None, *, announce_new_library: bool = False
) -> int:
    """The bare command. Exit 1 when a path could not be loaded (as the subcommands do), or
    after an unexpected error (Textual has shown its traceback); the load errors are repeated
    on stderr once the screen is back, so they outlive the session."""
    import sys

    # The loader and index threads run long pure-Python loops; each time the UI thread wakes
    # (a key, a timer, a frame to write) it waits for the GIL up to this interval. The default
    # 5 ms, several times per key, makes the echo of a key typed while loading lag by tens of
    # ms; 1 ms roughly halves it (benchmarks: 2 ms of UI work beside a title-deriving thread
    # took 40 ms at 5 ms, 24 ms at 1 ms, on a loaded 2-core machine).
    sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL_S))
    # The imports' objects (Textual, Rich, the reader) live as long as the process: out of
    # the collector's scans from now on (see screens.main._settle_objects).
    gc.freeze()
    main_screen.SETTLE_OBJECTS = True
    # A frame makes thousands of short-lived objects (Textual's strips and their caches);
    # at the default threshold (700) the young generation was collected about twice per key
    # typed into the filter (~1.3 ms at 100,000 papers), and every ~50 keys a full
    # collection of what is not frozen (up to 15 ms) came on top. Collected less often:
    # reference counting frees nearly all of them anyway.
    thresholds = gc.get_threshold()
    gc.set_threshold(max(thresholds[0], GC_YOUNG_THRESHOLD), *thresholds[1:])
    try:
        app = ReaderApp(paths, db, announce_new_library=announce_new_library)
        code = app.run()
    finally:  # (a test may call this in its own process)
        main_screen.SETTLE_OBJECTS = False
        gc.set_threshold(*thresholds)
        gc.unfreeze()
    app.library.close()
    if app.ended_by_signal:  # (the terminal may be gone: no load errors written to it)
        return app.ended_by_signal
    if app.return_code:  # an unexpected error ended the session
        return 1
    fatal = app.main.session.corpus.fatal_errors
    listed, left = listed_problems(fatal)  # (as many as the notice and the commands list)
    for problem in listed:
        sys.stderr.write(f"abstract-reader: {problem}\n")
    if left:
        more = more_problems(left)
        sys.stderr.write(
            f"abstract-reader: {more} (abstract-reader list -v -d PATH lists them all)\n"
        )
    if fatal:
        return 1
    return code if isinstance(code, int) else 0

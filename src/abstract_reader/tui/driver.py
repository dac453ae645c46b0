"""The reader's terminal input: Textual's Linux driver, with pastes taken verbatim.

Textual 8's input thread (``LinuxDriver.run_input_thread``) failed on two kinds of paste:

- An ESC inside a bracketed paste (``ESC[200~`` … ``ESC[201~``) was taken by ``XTermParser``
  as the start of an escape sequence: the characters after it left the paste and came as
  keys (the field was garbled; nearly every character of an 18 KB paste with ESCs came as
  a key, each running the filter: seconds to minutes).
- The bytes were decoded as strict UTF-8: a byte that is not UTF-8 (0x9b, the C1 CSI) raised
  ``UnicodeDecodeError``, which ended the input thread — no key reached the reader again.

``PasteParser`` takes a paste out of the parser's hands: from ``ESC[200~`` every character
up to ``ESC[201~`` is the paste's, found with ``str.find`` (a 1 MB paste in ~5 ms), and
one ``events.Paste`` carries it. Everything else (keys, mouse, focus, the terminal's
replies) goes to ``XTermParser`` as before. ``ReaderDriver`` decodes with U+FFFD for bytes
that are not UTF-8 and keeps reading after any fault of the parser. The pasted text is
raw here; ``ReaderApp.on_event`` sanitises it (``text.sanitise_paste``) for whatever field
gets it.
"""

from __future__ import annotations

import contextlib
import os
import selectors
from codecs import getincrementaldecoder
from collections.abc import Iterable, Iterator

from textual import events
from textual._loop import loop_last
from textual._xterm_parser import BRACKETED_PASTE_END, BRACKETED_PASTE_START, XTermParser
from textual.drivers.linux_driver import LinuxDriver
from textual.message import Message

_ESC = "\x1b"


def _partial_marker(text: str, marker: str) -> int:
    """The length of the end of ``text`` that is a proper beginning of ``marker`` (which
    starts with its only ESC), else 0."""
    at = text.rfind(_ESC, max(0, len(text) - len(marker) + 1))
    return len(text) - at if at >= 0 and marker.startswith(text[at:]) else 0


class PasteParser(XTermParser):
    """``XTermParser``, except that a bracketed paste's text never reaches it (see the
    module): it still sees ``ESC[200~`` (so its own state is that of any sequence), and is
    started afresh right after it, out of its paste mode; the paste is collected here."""

    def __init__(self, debug: bool = False) -> None:
        super().__init__(debug)
        #: the start of ``ESC[200~`` that ended the input so far (split between two reads)
        self._start_seen = ""
        #: the paste's text so far, while in a paste
        self._pasted: list[str] | None = None
        #: the end of the paste so far that may be the start of ``ESC[201~``
        self._held = ""

    def feed(self, data: str) -> Iterable[Message]:
        return self._feed(data)

    def _feed(self, data: str) -> Iterator[Message]:
        if not data:  # end of input: a paste cut short is dropped
            self._pasted = None
            yield from super().feed(data)
            return
        pos = 0
        while pos < len(data):
            if self._pasted is None:
                end = self._paste_start(data, pos)
                if end < 0:
                    yield from super().feed(data[pos:])
                    return
                if end > pos:
                    yield from super().feed(data[pos:end])
                self._restart()
                self._pasted, self._held = [], ""
                pos = end
            else:
                text = self._held + data[pos:]
                at = text.find(BRACKETED_PASTE_END)
                if at < 0:
                    keep = len(text) - _partial_marker(text, BRACKETED_PASTE_END)
                    self._pasted.append(text[:keep])
                    self._held = text[keep:]
                    return
                self._pasted.append(text[:at])
                # (NUL dropped, as Textual does: https://github.com/Textualize/textual/issues/1661)
                yield events.Paste("".join(self._pasted).replace("\x00", ""))
                pos += at + len(BRACKETED_PASTE_END) - len(self._held)
                self._pasted, self._held = None, ""

    def _paste_start(self, data: str, pos: int) -> int:
        """Where in ``data`` (from ``pos``) ``ESC[200~`` ends (it may have begun in the
        previous read), else -1."""
        if self._start_seen:
            rest = BRACKETED_PASTE_START[len(self._start_seen) :]
            if data.startswith(rest, pos):
                self._start_seen = ""
                return pos + len(rest)
            if rest.startswith(data[pos:]):  # this read ends inside the marker too
                self._start_seen += data[pos:]
                return -1
            self._start_seen = ""
        at = data.find(BRACKETED_PASTE_START, pos)
        if at >= 0:
            return at + len(BRACKETED_PASTE_START)
        tail = _partial_marker(data[pos:], BRACKETED_PASTE_START)
        self._start_seen = data[len(data) - tail :] if tail else ""
        return -1

    def _restart(self) -> None:
        """Start ``XTermParser``'s state machine again: it has just read ``ESC[200~`` and
        holds nothing else (it waits for the next character, in its paste mode)."""
        self._gen.close()
        self._gen = self.parse(self._tokens.append)
        self._awaiting = next(self._gen)
        self._timeout_time = None

    def tick(self) -> Iterable[Message]:
        for token in super().tick():
            # the parser stopped waiting for the rest of a sequence and sent it as keys:
            # a start of ``ESC[200~`` seen before is keys now, not a paste
            self._start_seen = ""
            yield token


class ReaderDriver(LinuxDriver):
    """``LinuxDriver`` whose input thread parses with ``PasteParser``, decodes bytes that
    are not UTF-8 as U+FFFD and outlives a fault in parsing (the parser starts afresh:
    a sequence half read is lost, never every key after it). Otherwise this is
    ``LinuxDriver.run_input_thread`` of Textual 8.2."""

    def run_input_thread(self) -> None:
        selector = selectors.SelectSelector()
        selector.register(self.fileno, selectors.EVENT_READ)
        fileno = self.fileno
        parser = PasteParser(self._debug)
        decode = getincrementaldecoder("utf-8")(errors="replace").decode

        def dispatch(data: str | None) -> None:
            """Parse ``data`` (None: only let the parser's wait for a sequence time out)
            and send what it makes to the app."""
            nonlocal parser
            try:
                for message in parser.tick() if data is None else parser.feed(data):
                    self.process_message(message)
            except Exception:  # a fault of the parser's must not end the input thread
                parser = PasteParser(self._debug)

        def process_selector_events(
            selector_events: list[tuple[selectors.SelectorKey, int]], final: bool = False
        ) -> None:
            for last, (_key, mask) in loop_last(selector_events):
                if mask & selectors.EVENT_READ:
                    # (an OSError, the terminal gone, still ends the thread as in Textual)
                    data = decode(os.read(fileno, 1024 * 4), final=final and last)
                    if not data:  # (stdin piped; or only the start of a UTF-8 character)
                        break
                    dispatch(data)
            dispatch(None)

        try:
            while not self.exit_event.is_set():
                process_selector_events(selector.select(0.1))
            selector.unregister(self.fileno)
            process_selector_events(selector.select(0.1), final=True)
        finally:
            selector.close()
            with contextlib.suppress(Exception):
                for _message in parser.feed(""):
                    pass

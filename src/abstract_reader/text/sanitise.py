"""Sanitising untrusted text: nothing that could act as a terminal control passes."""

from __future__ import annotations

import re

#: Bidi embeddings, overrides, isolates and marks: they can reorder what a terminal shows.
_BIDI = [0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]


def _build_table() -> dict[int, str]:
    table: dict[int, str] = {}
    for code in range(0x20):
        if code in (0x09, 0x0A):
            continue
        table[code] = chr(0x2400 + code)  # ␀ … ␟ (ESC → ␛)
    table[0x7F] = "\u2421"  # ␡
    for code in range(0x80, 0xA0):
        table[code] = "\ufffd"
    for code in _BIDI:
        table[code] = "\ufffd"
    # Line/paragraph separators make terminals and Rich break lines: show them as spaces.
    table[0x2028] = " "
    table[0x2029] = " "
    # Lone surrogates: a file name's or an argument's bytes that are not UTF-8, as Python
    # decodes them (``surrogateescape``: 0x9b becomes U+DC9B). Written out they become
    # those bytes again — 0x9b is CSI — or fail to encode at all.
    table.update(_SURROGATES)
    return table


_SURROGATES = dict.fromkeys(range(0xD800, 0xE000), "\ufffd")


_SANITISE_TABLE = _build_table()


def _class_of(codes: list[int]) -> str:
    """A regex character class of exactly these code points (as ranges)."""
    parts: list[str] = []
    start = prev = codes[0]
    for code in [*codes[1:], -1]:
        if code == prev + 1:
            prev = code
            continue
        parts.append(f"\\U{start:08x}" if start == prev else f"\\U{start:08x}-\\U{prev:08x}")
        start = prev = code
    return "[" + "".join(parts) + "]"


#: any character `sanitise` replaces (the table's keys, exactly)
_UNSAFE_RE = re.compile(_class_of(sorted(_SANITISE_TABLE)))


def sanitise(text: str) -> str:
    """Replace every character that could act as a terminal control by a visible stand-in.

    C0 controls (except newline and tab), DEL, C1 controls and bidi controls never pass.
    Idempotent: the stand-ins are ordinary printable characters. Text with none of them
    (nearly all) is returned as it is after one scan in C: `str.translate` with this table
    looks each character of a text that is not ASCII up in a dict, and copies it (~10×
    slower; the library's 50,000 titles and authors took ~0.5 s at start-up).
    """
    if text.isascii():  # (translate has a fast path of its own for ASCII)
        return text if text.isprintable() else text.translate(_SANITISE_TABLE)
    if _UNSAFE_RE.search(text) is None:
        return text
    return text.translate(_SANITISE_TABLE)


def sanitise_paste(text: str) -> str:
    """Pasted text as a field takes it: the terminal's line ends (CR, CR LF) as newlines,
    then ``sanitise``d (an ESC shows as ␛, as in dump text)."""
    return sanitise(text.replace("\r\n", "\n").replace("\r", "\n"))


_ESCAPE_TABLE = {code: f"\\x{code:02x}" for code in [*range(0x20), 0x7F, *range(0x80, 0xA0)]}
_ESCAPE_TABLE.update({code: f"\\u{code:04x}" for code in [*_BIDI, 0x2028, 0x2029]})
# a byte of a name that is not UTF-8 (``surrogateescape``) as the byte; other lone surrogates
# by their code
_ESCAPE_TABLE.update({code: f"\\u{code:04x}" for code in range(0xD800, 0xE000)})
_ESCAPE_TABLE.update({0xDC00 + byte: f"\\x{byte:02x}" for byte in range(0x80, 0x100)})


def escape_for_terminal(text: str) -> str:
    """Escape a string (a file name, say) for a one-line message: controls become ``\\xNN``."""
    return text.translate(_ESCAPE_TABLE)


def valid_text(text: str) -> str:
    """``text`` with lone surrogates (bytes that were not UTF-8, kept by
    ``surrogateescape``) replaced by U+FFFD: text that can be stored and written as UTF-8."""
    return text.translate(_SURROGATES)

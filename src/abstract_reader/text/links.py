"""Web links a terminal may be handed: in OSC 8 hyperlinks (the paper view) and to
``webbrowser`` (`O`); citations link by the same rule (``cite.web_url``). Plain Python.

A link reaches the terminal inside ``ESC ] 8 ; ; URL ESC \\``, written verbatim by Rich, so a
URL with ESC, BEL or C1 controls (``\\x9c`` is ST) in it could end the sequence early and
smuggle in another one. Only ``http``/``https`` URLs with a host are accepted; one with a
control, bidi or whitespace character (or the stand-in ``sanitise`` put in the place of one)
is refused (with the reason, for the user); any other
character outside printable ASCII is percent-encoded (UTF-8), so what reaches the terminal is
printable ASCII only.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

#: Longer links are refused: terminals cap OSC 8 URIs (VTE: 2083 bytes) and drop longer ones.
MAX_LINK = 2083

#: What a URI may keep as it is (RFC 3986 reserved and unreserved characters, and ``%``).
_SAFE = "!#$&'()*+,-./:;=?@[]_~%"

#: URLs in running text: from http(s):// to the next whitespace or bracket/quote that ends it.
_URL_IN_TEXT = re.compile(r"https?://[^\s<>\"'`{}|\\^]+", re.IGNORECASE)
_TRAILING = ".,;:!?'\""  #: sentence punctuation after a URL is not part of it
_CLOSERS = {")": "(", "]": "[", "}": "{"}


class LinkRefused(ValueError):
    """The URL is not handed to a terminal or a browser; the message says why (one line)."""


@dataclass(frozen=True, slots=True)
class FoundLink:
    start: int
    end: int
    url: str  #: the safe form (``web_link``)


def _bad_character(url: str) -> str | None:
    for ch in url:
        code = ord(ch)
        if ch.isspace():
            return "it contains a space or line break"
        if code < 0x20 or code == 0x7F or 0x80 <= code < 0xA0:
            return f"it contains a control character (U+{code:04X})"
        if 0xDC80 <= code <= 0xDCFF:  # a byte that is not UTF-8 (an argument's, kept by
            # ``surrogateescape``): named as the byte typed, not as the surrogate it became
            return f"it contains a byte that is not UTF-8 (\\x{code - 0xDC00:02x})"
        if 0x2400 <= code <= 0x2421:  # what sanitise() made of a C0 control or DEL
            return f"it contains a control character (shown as {ch})"
        if code == 0xFFFD:  # what sanitise() made of a C1 or bidi control or of a byte that
            # is not UTF-8, and what `meta --url` saves for such a byte: not a control itself
            return (
                "it contains \ufffd (U+FFFD), the stand-in for a byte that was not UTF-8"
                " or a control character"
            )
        if unicodedata.category(ch) in ("Cf", "Cc", "Cs", "Co", "Cn"):
            return f"it contains an invisible or unassigned character (U+{code:04X})"
    return None


def web_link(url: str) -> str:
    """``url`` as a link safe for OSC 8 and a browser: http(s) with a host, printable ASCII
    only (other characters percent-encoded). Raises :class:`LinkRefused` saying why not."""
    if len(url) > MAX_LINK:
        raise LinkRefused(f"it is longer than {MAX_LINK} characters")
    bad = _bad_character(url)
    if bad:
        raise LinkRefused(bad)
    scheme = url.split(":", 1)[0].lower() if ":" in url else ""
    if scheme not in ("http", "https"):
        if not scheme:  # ("…, not no scheme" read as nonsense)
            raise LinkRefused("it has no scheme (only http:// and https:// links are opened)")
        raise LinkRefused(f"only http and https links are opened, not {scheme[:20]}:")
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError as exc:  # a malformed port or IPv6 literal
        raise LinkRefused(f"it is malformed ({exc})") from None
    if not host:
        raise LinkRefused("it has no host")
    safe = quote(url, safe=_SAFE)  # non-ASCII → UTF-8 %XX; '%' kept (already encoded parts)
    if len(safe) > MAX_LINK:
        raise LinkRefused(f"it is longer than {MAX_LINK} characters once encoded")
    return safe


def refusal(url: str) -> str | None:
    """Why ``url`` would be refused, or None when it is a good web link."""
    try:
        web_link(url)
    except LinkRefused as exc:
        return str(exc)
    return None


def doi_link(doi: str) -> str:
    """The doi.org link of a DOI (characters a URL cannot hold percent-encoded)."""
    return "https://doi.org/" + quote(doi.strip(), safe="/:;()._-<>")


def find_links(text: str) -> list[FoundLink]:
    """The http(s) URLs in running text, without the sentence punctuation after them (and a
    closing bracket the URL did not open); only the ones ``web_link`` accepts."""
    found: list[FoundLink] = []
    for match in _URL_IN_TEXT.finditer(text):
        start, end = match.span()
        while end > start:
            last = text[end - 1]
            unopened = last in _CLOSERS and text.count(_CLOSERS[last], start, end) < text.count(
                last, start, end
            )
            if last not in _TRAILING and not unopened:
                break
            end -= 1
        try:
            url = web_link(text[start:end])
        except LinkRefused:
            continue
        found.append(FoundLink(start, end, url))
    return found


@dataclass(frozen=True, slots=True)
class LinkChoice:
    """What `O` opens of a paper's links: the first one ``web_link`` accepts."""

    what: str | None  #: "URL", "DOI", … of the link opened; None when none is safe
    url: str | None  #: its safe form
    refused: tuple[tuple[str, str, str], ...]  #: (what, link, why) of the ones passed over


def choose_link(candidates: Sequence[tuple[str, str]]) -> LinkChoice:
    """The first of ``candidates`` ((what, link) in the order they are tried) that is a safe
    web link, with the refused ones before it."""
    refused: list[tuple[str, str, str]] = []
    for what, link in candidates:
        try:
            safe = web_link(link)
        except LinkRefused as exc:
            refused.append((what, link, str(exc)))
            continue
        return LinkChoice(what, safe, tuple(refused))
    return LinkChoice(None, None, tuple(refused))

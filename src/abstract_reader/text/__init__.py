"""Text handling: sanitising untrusted text, LaTeX math → Unicode, emphasis, stand-in titles.

Everything here is plain Python (no Textual). Rendering is lazy and memoised: the cost is
paid per abstract that is actually shown, never for a whole corpus up front.

- ``sanitise``: terminal-safe text (ingest) and one-line escapes for messages.
- ``latex``: one math span → Unicode.
- ``render``: a whole abstract → plain text with bold/italic/math spans.
- ``fold``: search forms of words (accents, Greek, case).
- ``titles``: derived stand-in titles and making them distinct; titles as shown (no BibTeX
  braces).
"""

from __future__ import annotations

from .fold import GREEK_NAMES, TEXT_COMMANDS, fold, fold_accents
from .latex import latex_to_unicode
from .render import Rendered, Style, StyleSpan, cap, render, strip_markup_fast
from .sanitise import escape_for_terminal, sanitise, sanitise_paste
from .titles import (
    TITLE_MAX,
    derive_title,
    disambiguate,
    display_title,
    shorten,
    shown_title,
    unbrace,
)

__all__ = [
    "GREEK_NAMES",
    "TEXT_COMMANDS",
    "TITLE_MAX",
    "Rendered",
    "Style",
    "StyleSpan",
    "cap",
    "derive_title",
    "disambiguate",
    "display_title",
    "escape_for_terminal",
    "fold",
    "fold_accents",
    "latex_to_unicode",
    "render",
    "sanitise",
    "sanitise_paste",
    "shorten",
    "shown_title",
    "strip_markup_fast",
    "unbrace",
]

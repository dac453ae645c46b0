"""The filter's lexer: how a query is cut into terms. A module with no imports beyond ``re``:
`saved` finds ``@name`` terms with it before the reader's first frame, and the search
package (numpy) is not imported by then.
"""

from __future__ import annotations

import re

__all__ = ["LEXER", "QUOTED", "saved_references"]

#: A quoted part: up to the next ``"`` that no backslash escapes (``\"`` is a quote in it,
#: ``\\`` a backslash: how a tag with a ``"`` is written, `library.tag_query`).
QUOTED = r'"(?:\\[\s\S]|[^"\\]|\\)*"?'
#: A quoted tag (``#"reading list"``), a quoted phrase, ``|``, an unquoted tag (running to a
#: space or ``|``: ``#a"b`` is the tag a"b), or a word with its operators.
LEXER = re.compile(rf'!?(?:like:)?#{QUOTED}|{QUOTED}|\||!?(?:like:)?#[^\s"|][^\s|]*|[^\s"|]+')
#: ``@name``, a saved search's name (saved.py: letters, digits, ``-`` and ``_``)
SAVED_REF = re.compile(r"@([\w-]+)")


def saved_references(text: str) -> list[tuple[int, int, str]]:
    """Where the query names a saved search: (start, end, name) of each term that is
    ``@name`` alone, between spaces or ``|`` — never part of a quoted phrase, a tag
    (``#"[@x]"``, ``#[@x]``) or another word (``(@1``), which are literal text. Found with
    the parser's own lexer, so the reader and the CLI expand the same parts."""
    found: list[tuple[int, int, str]] = []
    for token in LEXER.finditer(text):
        ref = SAVED_REF.fullmatch(token.group())
        start, end = token.span()
        if (
            ref is not None
            and (start == 0 or text[start - 1].isspace() or text[start - 1] == "|")
            and (end == len(text) or text[end].isspace() or text[end] == "|")
        ):
            found.append((start, end, ref.group(1)))
    return found

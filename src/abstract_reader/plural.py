"""A count in words — "1 paper", "0 papers", "1,234 papers" — for every message that counts
papers (the CLI's, the library's undo descriptions, the reader's). Plain text and nothing
imported: the CLI imports it at start-up, before it knows whether it needs the library."""

from __future__ import annotations


def count_phrase(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` and ``noun`` (``plural``, default ``noun + "s"``, unless it is 1), the
    count with thousands separators."""
    return f"{count:,} {noun_for(count, noun, plural)}"


def noun_for(count: int, noun: str, plural: str | None = None) -> str:
    """``noun`` for a count of 1, else ``plural`` (default ``noun + "s"``), for a message that
    names the things rather than counting them ("tag 'x' removed", "tags 'x', 'y' …")."""
    return noun if count == 1 else (plural or noun + "s")


def papers_phrase(count: int) -> str:
    """ "1 paper", "2 papers", "1,234 papers"."""
    return count_phrase(count, "paper")

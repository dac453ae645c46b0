"""The public value types of a corpus: a paper and where it was found."""

from __future__ import annotations

from dataclasses import dataclass, field

#: Sources a paper's view names (the reader's pane, ``show``); the rest are counted. A dump
#: that repeats one abstract a million times gives that paper a million sources: one line
#: of 20 MB, which took the reader 71 s to draw.
SOURCES_SHOWN = 10


@dataclass(frozen=True, slots=True)
class Source:
    """Where a paper was found: the dump's file name and its 1-based position in it."""

    file: str
    index: int

    def __str__(self) -> str:
        """``name.txt #3``, the file's name escaped for one line (a name may hold a
        newline, controls, or bytes that are not UTF-8: ``\\n``, ``\\x9b``)."""
        from .text.sanitise import escape_for_terminal

        return f"{escape_for_terminal(self.file)} #{self.index}"


@dataclass(slots=True)
class Paper:
    id: str
    abstract: str  #: sanitised source text (LaTeX and emphasis markers kept)
    title: str  #: the derived stand-in title, or the real one when a source has it
    title_derived: bool = True
    venue: str | None = None
    year: int | None = None
    sources: list[Source] = field(default_factory=list)
    authors: tuple[str, ...] = ()
    url: str | None = None
    doi: str | None = None
    eprint: str | None = None  #: the arXiv id, for arXiv records
    primary_class: str | None = None  #: the arXiv primary category
    record: str | None = None  #: "source:id" of the metadata record it came from, if any

    @property
    def short_id(self) -> str:
        return self.id[:12]

    @property
    def venue_year(self) -> str:
        from .metadata import venue_label

        return venue_label(self.venue, self.year)

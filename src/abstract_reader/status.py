"""The status line's parts as text, each with shorter forms for a narrow line (no UI here).

A part is a ``str`` (its full form, what a wide line shows) carrying ``shorter`` forms,
longest first, each still saying its fact (the order, the count, a partial answer); a form
that ends a text early ends in "…" (never a word cut without one). The status line
(``tui/widgets/status_line.fit_status``) keeps as many of the facts as fit, most important
first, and gives the most important ones the longest forms; ``detail`` parts (the
library's counts) show only when the facts before them show complete: whole, or in a
``complete`` form (one that drops only what matters less than the counts, such as the end
of the title in "ranked like <title> (<words>)").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from .plural import count_phrase, papers_phrase

MORE = "…"


class StatusPart(str):
    """A part of the status line: its full text, and shorter forms, most wanted first: the
    ``complete`` ones (still saying all that matters more than the library's counts), then
    the ``shorter`` ones. A ``detail`` (the library's counts) shows only when the facts
    before it show complete."""

    complete: tuple[str, ...]
    shorter: tuple[str, ...]
    detail: bool

    def __new__(
        cls,
        text: str,
        shorter: Iterable[str] = (),
        *,
        detail: bool = False,
        complete: Iterable[str] = (),
    ) -> StatusPart:
        part = super().__new__(cls, text)
        part.complete = tuple(dict.fromkeys(s for s in complete if s and s != text))
        taken = {text, *part.complete}
        part.shorter = tuple(dict.fromkeys(s for s in shorter if s and s not in taken))
        part.detail = detail
        return part

    @property
    def forms(self) -> tuple[str, ...]:
        """Every form, the full text first."""
        return (str(self), *self.complete, *self.shorter)


def forms_of(part: str) -> tuple[str, ...]:
    """A part's forms, most wanted first (a plain ``str`` has one); the last is the
    shortest."""
    return part.forms if isinstance(part, StatusPart) else (part,)


def complete_forms_of(part: str) -> tuple[str, ...]:
    """The forms of a part that let the details show (its full text, and any ``complete``
    ones), most wanted first."""
    return (str(part), *part.complete) if isinstance(part, StatusPart) else (part,)


def is_detail(part: str) -> bool:
    return isinstance(part, StatusPart) and part.detail


def detail(text: str) -> StatusPart:
    """A part that gives way to the facts before it (see `StatusPart`)."""
    return StatusPart(text, detail=True)


def word_cuts(head: str, tail: str, least: int = 1) -> list[str]:
    """``head`` followed by ``tail`` cut after fewer and fewer of its words, each cut
    ending in "…", down to ``least`` words (0: ``head`` and "…" alone)."""
    words = tail.split()
    cuts: list[str] = []
    for kept in range(len(words) - 1, least - 1, -1):
        kept_text = " ".join(words[:kept]).rstrip(",;:+(")
        cuts.append(f"{head}{kept_text}{MORE}" if kept_text else f"{head.rstrip()} {MORE}")
    return cuts


# -- the parts ---------------------------------------------------------------------------
def loading_part(done: int | None, files: int) -> StatusPart:
    """Dumps being read. ``done`` files are in (None: all at once, from the corpus cache);
    while loading, the next file is being read and its rows are already counted, so the
    line names that file: the paper count and the file number agree."""
    of = "file" if files == 1 else "files"
    if done is None:
        return StatusPart(f"loading {files:,} {of}…", ["loading…"])
    if done >= files:
        return StatusPart(f"loading {files:,}/{files:,} {of}…", ["loading…"])
    reading = done + 1
    return StatusPart(
        f"loading file {reading:,}/{files:,}…", [f"loading {reading:,}/{files:,}…", "loading…"]
    )


def indexing_part(done: int, papers: int, *, waiting: bool) -> StatusPart:
    """The index being built: papers done of all, once the first step is known (before it,
    and while none is done, plain "indexing…": no "0 / N" that seems stuck)."""
    waits = " (filter waits)" if waiting else ""  # kept: it says why the list is not filtered
    if not papers or done <= 0:
        return StatusPart("indexing…" + waits)
    percent = min(99, done * 100 // papers)
    return StatusPart(
        f"indexing {done:,} / {papers:,}…{waits}",
        [f"indexing {percent}%…{waits}", "indexing…" + waits],
    )


_PHRASE_NOTE = re.compile(
    r'"(?P<phrase>.*)" was checked in the (?P<limit>[\d,]+) best-ranked of'
    r" (?P<of>[\d,]+) papers with its words"
)


def phrase_check(note: str) -> StatusPart | None:
    """The search's note that a phrase was checked only in the best-ranked papers having
    its words, said as a partial answer; None for any other note."""
    found = _PHRASE_NOTE.fullmatch(note)
    if found is None:
        return None
    limit, of = found["limit"], found["of"]
    return StatusPart(
        f"phrase checked in the {limit} best of {of} with these words",
        [
            f"phrase checked in the {limit} best of {of}",
            f"phrase checked in {limit} best of {of}",
        ],
    )


def count_part(shown: int, loaded: int, *, filtered: bool, partial: bool) -> StatusPart:
    """How many papers the list shows. A partial answer (a phrase checked in the best-ranked
    papers only) says "shown": it is not how many papers have the phrase."""
    if partial:
        return StatusPart(f"{shown:,} shown")
    if filtered:
        return StatusPart(f"{shown:,} of {loaded:,}")
    return StatusPart(papers_phrase(loaded))


def load_problems_part(failed: int, warned: int, key: str = "") -> StatusPart | None:
    """The load problems, once the notice is gone: the paths that gave nothing ("⚠ 3 load
    errors", as the notice's title counts them), else the files that loaded with warnings;
    ``key``: the key that lists them (the reader's, as in effect), named while there is
    room — the count is the fact, every form says it. None: no problem."""
    if failed:
        text = f"⚠ {count_phrase(failed, 'load error')}"
    elif warned:
        text = f"{count_phrase(warned, 'file')} with load warnings"
    else:
        return None
    if not key:
        return StatusPart(text)
    return StatusPart(f"{text} ({key} lists them)", complete=[f"{text} ({key})", text])


#: An order's name on a narrower line (the full one is "sorted by " + ``SORTS[name]``).
_SHORT_SORTS: dict[str, tuple[str, ...]] = {
    "dump": ("dump order",),
    "title": ("by title",),
    "year": ("by year, newest first", "newest first"),
    "recent": ("by recently tagged/bookmarked", "by last tag/bookmark"),
    "unread": ("unread first",),
}


def sort_part(name: str, label: str, *, pending: bool = False) -> StatusPart:
    """The order of the list; ``pending``: it is still being made (the list is in its
    result's order until then)."""
    if pending:
        return StatusPart(f"sorting by {label}…", ("sorting…",))
    return StatusPart(f"sorted by {label}", _SHORT_SORTS.get(name, ()))


#: The ranking words a narrow line keeps before it cuts the title short.
RANKING_WORDS_KEPT = 3


def ranked_like_part(description: str, words: Sequence[str]) -> StatusPart:
    """``description`` is "ranked like <paper or tags>"; ``words`` drove the ranking.

    On a narrow line the words (why the list is in this order) and the library's counts
    matter more than the end of the title, which the user has just chosen: the title is
    cut at a word, with "…", before fewer than `RANKING_WORDS_KEPT` words show, and before
    the counts give way (the forms with at least one word and the title's first are
    ``complete``; the last of them say "like", as the query does, for "ranked like"); the
    words go only when even one of them does not fit."""
    head = "ranked like "
    titles = [description]  # the title whole, then cut after fewer and fewer words
    if description.startswith(head):
        titles.extend(word_cuts(head, description[len(head) :], least=1))

    def wanted(form: tuple[int, int]) -> tuple[int, int, int]:
        cut, kept = form  # (which cut of the title, how many words)
        return (-min(kept, RANKING_WORDS_KEPT), cut, -kept)

    with_words = sorted(
        ((cut, kept) for cut in range(len(titles)) for kept in range(len(words), 0, -1)),
        key=wanted,
    )
    forms = [f"{titles[cut]} ({', '.join(words[:kept])})" for cut, kept in with_words]
    if not forms:  # no words: the title, cut as the line needs
        return StatusPart(titles[0], complete=titles[1:])
    if description.startswith(head):  # at the narrowest, "like" as in the query (like:ID)
        forms.extend(f"{title.removeprefix('ranked ')} ({words[0]})" for title in titles)
    return StatusPart(forms[0], titles, complete=forms[1:])


def listed_part(head: str, items: Sequence[str], joiner: str = " ") -> StatusPart:
    """``head`` and the items (query words, saved search names), fewer on a narrow line."""
    listed = joiner.join(items)
    return StatusPart(head + listed, word_cuts(head, listed, least=1))


def orphans_part(orphans: int) -> StatusPart:
    return StatusPart(
        f"{count_phrase(orphans, 'saved paper')} not in these dumps",
        [f"{orphans:,} saved not loaded"],
        detail=True,
    )

"""Dump files → papers: parsing, sanitising, stable ids, de-duplication, load errors.

A paper is identified by a hash of its whitespace-normalised (sanitised) abstract, so the
same abstract in several dumps, re-ordered or re-exported, is one paper with several sources.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import itertools
import os
import re
import stat
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .infile import NotRegular, is_metadata_file, open_regular
from .paper import Paper, Source
from .papertable import PaperTable, RowBatch, as_table, id_of
from .plural import count_phrase, papers_phrase
from .text import TITLE_MAX, derive_title, disambiguate, escape_for_terminal, sanitise, shorten

if TYPE_CHECKING:
    from .sources import MetaRecord
    from .text.titler import Titler

__all__ = [
    "Corpus",
    "CorpusBuilder",
    "LoadError",
    "Paper",
    "Source",
    "files_bytes",
    "listed_problems",
    "load_corpus",
    "load_summary",
    "more_problems",
    "paper_id",
]

ID_LENGTH = 16
MIN_PREFIX = 4
#: the first bytes of a dump that say whether it is text at all (`not_text`)
BINARY_SAMPLE = 8192
FIRST_BATCH = 500  #: the rows of a table's first batch (`CorpusBuilder.add_file_in_batches`)
#: malformed records of a metadata file kept one a line (then one line counts the rest):
#: a wrong 3M-line file can be all malformed records. `CorpusBuilder(record_problems=None)`
#: keeps them all (the CLI's -v, which lists every one).
MAX_RECORD_PROBLEMS = 20
#: The most load problems (errors and warnings of all the paths) listed at once, by the
#: reader's notice and on the CLI's stderr (`-v` there lists them all); then one line counts
#: the rest. A folder of 10,000 empty files is 12 lines, not a wall that scrolls the summary
#: and the good files' output away.
LOAD_PROBLEMS_SHOWN = 12
#: The largest dump read. Its bytes, its text and its paragraphs are in memory at once while
#: it is parsed (~3x its size: 4 GB for a 1.3 GB dump); a venue's dump is a few MB, and the
#: benchmarks' million abstracts are 1.3 GB in 200 dumps. A larger file (a sparse one that
#: says 50 GB, a disk image named .txt) is refused from its size, before it is hashed or read.
MAX_DUMP_BYTES = 1 << 30
#: The longest abstract kept (characters of its paragraph's words, one space between them:
#: padding is not counted, `_fit`): a real one is a few thousand; a longer paragraph (a
#: dump with no blank lines between abstracts, 200 MB on one line) is cut here, with a
#: warning naming it. (A 4 MB abstract still loads whole.)
MAX_ABSTRACT_CHARS = 4 << 20
#: The most abstracts read from one dump: the rest is skipped, with a warning. A million
#: one-word paragraphs (a 3 MB file) cost as many rows as a million real abstracts.
MAX_DUMP_ABSTRACTS = 1_000_000


@dataclass(frozen=True, slots=True)
class LoadError:
    """A problem with one input path, worded for one line on stderr."""

    path: str
    message: str
    fatal: bool = True  #: the path was skipped (False: it loaded, with a warning)
    #: the problems this line stands for: 1, or as many as a line that counts those not kept
    #: ("… and 10 more malformed records skipped"), so that "… and N more load warnings"
    #: (`more_problems`) counts what a user counts, not lines
    problems: int = 1

    def __str__(self) -> str:
        return f"{escape_for_terminal(self.path)}: {self.message}"


def listed_problems(
    errors: Sequence[LoadError], limit: int | None = None
) -> tuple[list[LoadError], list[LoadError]]:
    """(listed, left out): at most ``limit`` (default `LOAD_PROBLEMS_SHOWN`) of ``errors`` to
    list, failed paths before warnings (a failure is never hidden behind many warnings), the
    listed ones in their order."""
    limit = LOAD_PROBLEMS_SHOWN if limit is None else limit
    if len(errors) <= limit:
        return list(errors), []
    fatal = [i for i, e in enumerate(errors) if e.fatal][:limit]
    warned = [i for i, e in enumerate(errors) if not e.fatal][: limit - len(fatal)]
    keep = set(fatal) | set(warned)
    listed = [e for i, e in enumerate(errors) if i in keep]
    return listed, [e for i, e in enumerate(errors) if i not in keep]


def more_problems(left: Sequence[LoadError], warnings: int = 0) -> str:
    """The line counting the problems not listed: "… and 28 more load errors" (warnings, or
    errors and warnings, as they are), each problem counted (`LoadError.problems`: a line
    that counts a file's malformed records not kept is that many). ``warnings``: more
    warnings, counted but not kept."""
    fatal = sum(e.problems for e in left if e.fatal)
    count = sum(e.problems for e in left) + warnings
    if fatal == count:
        return f"… and {count_phrase(count, 'more load error')}"
    if not fatal:
        return f"… and {count_phrase(count, 'more load warning')}"
    return f"… and {count:,} more load errors and warnings"


def load_summary(loaded: int, warned: int, failed: int) -> str:
    """The counts, as in "3 files loaded, 1 with warnings, 1 failed" (`Corpus.load_summary`):
    files loaded, those of them with warnings, paths that gave nothing."""
    parts = [f"{count_phrase(loaded, 'file')} loaded"]
    if warned:
        parts.append(f"{warned:,} with warnings")
    if failed:
        parts.append(f"{failed:,} failed")
    return ", ".join(parts)


@dataclass(slots=True)
class Corpus:
    #: the papers, in corpus order: a `PaperTable` (a list of `Paper` given here becomes one)
    papers: PaperTable = field(default_factory=PaperTable)
    errors: list[LoadError] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    #: metadata files loaded (``sources``), for ``match`` to read again
    metadata_files: list[str] = field(default_factory=list)
    #: records without an abstract: metadata only, not listed as papers
    metadata_only: list[MetaRecord] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.papers = as_table(self.papers)

    def __len__(self) -> int:
        return len(self.papers)

    def __iter__(self) -> Iterator[Paper]:
        return iter(self.papers)

    def get(self, paper_id: str) -> Paper | None:
        return self.papers.get(paper_id)

    def index_of(self, paper_id: str) -> int:
        """The paper's position in corpus order (KeyError if it is not loaded)."""
        return self.papers.index_of(paper_id)

    def resolve(self, prefix: str) -> Paper:
        """Find a paper by id or unambiguous id prefix (like git). Raises LookupError."""
        key = prefix.strip().lower()
        if not re.fullmatch(r"[0-9a-f]+", key):
            raise LookupError(f"{escape_for_terminal(prefix)!s}: not a paper id (hex digits)")
        exact = self.papers.get(key)
        if exact is not None:
            return exact
        if len(key) < MIN_PREFIX:
            raise LookupError(f"{key}: id prefix too short (at least {MIN_PREFIX} digits)")
        rows = self.papers.with_prefix(key)
        if not rows:
            raise LookupError(f"{key}: no paper with this id in the loaded dumps")
        if len(rows) > 1:
            shown = ", ".join(self.papers.id(r)[:12] for r in rows[:5])
            raise LookupError(f"{key}: ambiguous id prefix ({papers_phrase(len(rows))}: {shown})")
        return self.papers[rows[0]]

    @property
    def fatal_errors(self) -> list[LoadError]:
        return [e for e in self.errors if e.fatal]

    @property
    def failed(self) -> int:
        """The paths that gave nothing (a missing file, a folder with no dumps, a file that
        is not a dump): "1 failed" in `load_summary`, the reader's "⚠ 1 load error"."""
        return len({e.path for e in self.errors if e.fatal})

    @property
    def warned(self) -> int:
        """The files that loaded with warnings: "1 with warnings" in `load_summary`."""
        return len({e.path for e in self.errors if not e.fatal})

    def load_summary(self) -> str:
        """The counts, as in "3 files loaded, 1 with warnings, 1 failed", for reader and CLI.
        A file that loaded with a warning is loaded (`failed`, `warned`)."""
        return load_summary(len(self.files), self.warned, self.failed)


_ODD_SPACE_RE = re.compile(r"[^\S ]")  # whitespace other than a plain space


def paper_id(abstract: str) -> str:
    """A hash of the whitespace-normalised abstract (fast path: already normalised)."""
    return id_of(paper_key(abstract))


def paper_key(abstract: str) -> int:
    """`paper_id` as its 64-bit number (what a `PaperTable` keeps)."""
    irregular = (
        "  " in abstract
        or abstract[:1].isspace()
        or abstract[-1:].isspace()
        or (not abstract.isprintable() and _ODD_SPACE_RE.search(abstract) is not None)
    )
    normalised = " ".join(abstract.split()) if irregular else abstract
    digest = hashlib.blake2b(normalised.encode("utf-8"), digest_size=ID_LENGTH // 2).digest()
    return int.from_bytes(digest, "big")


def _normal_key(abstract: str) -> int:
    """`paper_key` of a text known to be whitespace-normalised already."""
    digest = _blake2b(abstract.encode("utf-8"), digest_size=ID_LENGTH // 2).digest()
    return int.from_bytes(digest, "big")


_blake2b = hashlib.blake2b


# ---------------------------------------------------------------------------------------
# Reading one dump file
# ---------------------------------------------------------------------------------------

_HEADER_RE = re.compile(
    r"^\s*(?P<venue>[^\d\s][^\n]{0,80}?)\s+(?P<year>(?:19|20)\d\d)\s+"
    r"(?:Accepted\s+)?(?:Papers|Abstracts|Proceedings)\s*$",
    re.IGNORECASE,
)
_PARA_SPLIT_RE = re.compile(r"\n(?:[ \t]*\n)+")
#: Sentence punctuation: ". ", "! ", "? " (or at the end), or a line ending in , ; :
_PROSE_RE = re.compile(r"[.!?](?:\s|$)|[,;:]\s*$")
_YEAR_WORD_RE = re.compile(r"(?<![\w.])(?:19|20)\d\d(?![\w.])")


def _header(paragraph: str, joined: str, more: bool) -> tuple[str, int | None] | None:
    """(venue, year) when the first paragraph of a dump is its header, else None.

    "<Venue> <Year> Papers" (or Abstracts, Proceedings); else any title line followed by
    a blank line (``more``: more text or a blank line after it): one short line (at most
    12 words, 100 characters) with no sentence punctuation, such as "My Reading List" or
    "ICML 2025 accepted orals" — kept whole as the venue, with the year it names. A
    sentence, or the only line of a file with no blank line after it, stays an abstract, so
    a one-line abstract is never taken for a header; but a file of "My Reading List" and a
    blank line is a reading list with no abstracts yet, not a paper named so.
    """
    if header := _HEADER_RE.match(joined):
        return header.group("venue").strip(), int(header.group("year"))
    if (
        more
        and "\n" not in paragraph.strip()
        and len(joined) <= 100
        and len(joined.split()) <= 12
        and not _PROSE_RE.search(joined)
        and "$" not in joined  # math: "$\frac{$" opening a dump is no venue's name
        and "\\" not in joined
    ):
        year = _YEAR_WORD_RE.search(joined)
        return joined, int(year.group()) if year else None
    return None


@dataclass(slots=True)
class _Parsed:
    venue: str | None
    year: int | None
    abstracts: list[str]
    warnings: list[str]
    normal: list[bool]  #: which abstracts are whitespace-normalised already


#: byte-order marks of the wide Unicode encodings (UTF-32's first: its LE mark starts as
#: UTF-16's), as Windows tools write them ("Unicode" in Notepad is UTF-16 LE)
_WIDE_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "UTF-32", "utf-32-be"),
    (b"\xff\xfe", "UTF-16", "utf-16-le"),
    (b"\xfe\xff", "UTF-16", "utf-16-be"),
)


def _wide_bom(data: bytes) -> tuple[int, str, str] | None:
    """(length, name, codec) of the wide byte-order mark ``data`` starts with, if any."""
    for bom, name, codec in _WIDE_BOMS:
        if data.startswith(bom):
            return len(bom), name, codec
    return None


def _decode(data: bytes) -> tuple[str, list[str]]:
    warnings: list[str] = []
    if wide := _wide_bom(data):  # UTF-16 or UTF-32 with its mark: decoded as such
        size, name, codec = wide
        text = data[size:].decode(codec, errors="replace")
        if bad := text.count("\ufffd") - data[size:].decode(codec, "ignore").count("\ufffd"):
            shown = count_phrase(bad, "sequence")
            warnings.append(f"invalid {name} ({shown} shown as \ufffd)")
        return text.replace("\x00", ""), warnings
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if b"\x00" in data:
        first = data.index(b"\x00")
        line = _line_of(data, first)
        nuls = data.count(0)
        warnings.append(f"{count_phrase(nuls, 'NUL byte')} dropped (first on line {line:,})")
        data = data.replace(b"\x00", b"")
    try:
        return data.decode("utf-8"), warnings
    except UnicodeDecodeError as exc:
        line = _line_of(data, exc.start)
        text = data.decode("utf-8", errors="replace")
        count = text.count("\ufffd") - data.decode("utf-8", "ignore").count("\ufffd")
        shown = count_phrase(count, "byte sequence")
        warnings.append(f"invalid UTF-8 on line {line:,} ({shown} shown as \ufffd)")
        return text, warnings


def _line_of(data: bytes, offset: int) -> int:
    head = data[:offset]
    crlf = head.count(b"\r\n")
    return head.count(b"\n") + head.count(b"\r") - crlf + 1


def not_text(head: bytes) -> str | None:
    """Why a dump whose first `BINARY_SAMPLE` bytes are ``head`` is refused as not text
    (its load error), or None. Those bytes alone decide it: the corpus cache's content
    digest (`corpus_cache.content_digest`) asks this before hashing the rest."""
    if not head or _wide_bom(head) is not None or not _looks_binary(head):
        return None
    if _utf16_unmarked(head):
        return "looks like UTF-16 text without a byte-order mark; save it as UTF-8"
    return "looks like a binary file, not a text dump; skipped"


def _looks_binary(data: bytes) -> bool:
    sample = data[:BINARY_SAMPLE]
    if not sample:
        return False
    bad = sum(1 for b in sample if b < 0x20 and b not in (0x09, 0x0A, 0x0D, 0x0C))
    return bad / len(sample) > 0.10


def _utf16_unmarked(data: bytes) -> bool:
    """Text in UTF-16 without its mark: every other byte NUL (ASCII letters' high or low
    halves), the bytes between them not."""
    sample = data[: BINARY_SAMPLE & ~1]
    halves = sample[0::2], sample[1::2]
    for zeros, text in (halves, halves[::-1]):
        if zeros.count(0) >= 0.9 * len(zeros) and text.count(0) <= 0.1 * len(text):
            return True
    return False


def parse_text(text: str) -> tuple[str | None, int | None, list[str]]:
    """Split dump text into (venue, year, abstracts). Abstracts are sanitised."""
    venue, year, abstracts, _normal = _parse_text(text)
    return venue, year, abstracts


#: ASCII control characters other than a line feed (and DEL): none of them in an ASCII text
#: means every line of it is printable
_ASCII_CONTROLS = bytes([*range(0x0A), *range(0x0B, 0x20), 0x7F])


def _doubled_space(text: str) -> bool:
    """Does an ASCII ``text`` hold two spaces in a row? (True, without looking, unless
    numpy is imported already: not imported for this, before the first rows are shown)"""
    if "numpy" not in sys.modules:
        return True
    # An import statement, not the module found in sys.modules: that holds numpy from the
    # start of its import, and another thread may be importing it now (a partial module,
    # with no `frombuffer` yet, stopped a 1M load); the statement waits for that import.
    import numpy as np

    step = 1 << 20
    for at in range(0, len(text), step):
        piece = text[at : at + step + 1].encode("ascii")  # (one more: a pair across the cut)
        size = len(piece)
        # each pair of bytes from an even offset, then from an odd one, as one number
        if bool((np.frombuffer(piece, "<u2", size // 2) == 0x2020).any()):
            return True
        if bool((np.frombuffer(piece, "<u2", (size - 1) // 2, 1) == 0x2020).any()):
            return True
    return False


def _parse_text(
    text: str, warnings: list[str] | None = None
) -> tuple[str | None, int | None, list[str], list[bool]]:
    """`parse_text`, and which abstracts are whitespace-normalised already (their id is the
    hash of their text as it is). What is cut or skipped (`MAX_ABSTRACT_CHARS`,
    `MAX_DUMP_ABSTRACTS`) is said in ``warnings``."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if text.startswith("\ufeff"):
        text = text[1:]
    # ASCII without controls (one C pass over its bytes): every paragraph is printable, no
    # `str.isprintable` per paragraph (which looks every character up).
    plain = text.isascii() and not any(
        len(piece) != len(piece.translate(None, _ASCII_CONTROLS))
        for piece in (text[i : i + 65536].encode("ascii") for i in range(0, len(text), 65536))
    )  # (a piece at a time: no copy of the whole text)
    # (a check for doubled spaces, or for spaces at line ends, over the whole text costs
    # more than one per paragraph: `str.find` of two characters scans them one by one; but
    # numpy, once imported, tells if an ASCII text has any doubled space ~4x faster: none, and
    # no paragraph needs its own check — its lines are joined by one space)
    doubled = not plain or _doubled_space(text)
    normal: list[bool] = []
    # (at most a header and MAX_DUMP_ABSTRACTS abstracts, then the rest unsplit)
    paragraphs = _PARA_SPLIT_RE.split(text, MAX_DUMP_ABSTRACTS + 1)
    skipped: str | None = None
    if len(paragraphs) > MAX_DUMP_ABSTRACTS + 1:
        rest = paragraphs.pop()
        at = text.count("\n", 0, len(text) - len(rest)) + 1
        skipped = f"more than {MAX_DUMP_ABSTRACTS:,} abstracts: the rest, from line {at:,}, skipped"
    # (one C pass over the lengths; a paragraph at a time only when one is too long)
    cut: list[tuple[int, int]] = []  # (paragraph, its length before the cut)
    if paragraphs and max(map(len, paragraphs)) > MAX_ABSTRACT_CHARS:
        for i, paragraph in enumerate(paragraphs):
            if len(paragraph) > MAX_ABSTRACT_CHARS:
                paragraphs[i], dropped = _fit(paragraph)
                if dropped:
                    cut.append((i, len(paragraph)))
    venue: str | None = None
    year: int | None = None
    abstracts: list[str] = []
    header = 0
    for n, paragraph in enumerate(paragraphs):
        if "\n" in paragraph:
            joined = " ".join(
                stripped for line in paragraph.split("\n") if (stripped := line.strip(" \t"))
            )
        else:
            joined = paragraph.strip(" \t")
        if not joined:
            continue
        printable = plain or joined.isprintable()
        if not printable:  # fast C check; then the real (idempotent) sanitiser
            joined = sanitise(joined)
        if not abstracts and venue is None:
            # more text after it, or a blank line (the format's mark of a header)
            more = n + 1 < len(paragraphs)
            if found := _header(paragraph, joined, more):
                venue, year = found
                header = 1
                continue
        abstracts.append(joined)
        # printable: no whitespace but spaces, none at the ends (stripped)
        normal.append(printable and not (doubled and "  " in joined))
    if warnings is not None:
        counted = start = 0  # (abstracts are numbered as their sources are: from 1)
        for i, length in cut:
            counted += sum(
                1 for p in itertools.islice(paragraphs, start, i + 1) if p.strip(" \t\n")
            )
            start = i + 1
            # (a paragraph cut is over MAX_ABSTRACT_CHARS of words: never a header)
            warnings.append(
                f"abstract {counted - header:,} is {length:,} characters long: cut to its first"
                f" {MAX_ABSTRACT_CHARS:,} (are the abstracts separated by blank lines?)"
            )
        if skipped:
            warnings.append(skipped)
    return venue, year, abstracts, normal


#: raw characters of an over-long paragraph split into words at a time (`_fit`)
_FIT_WINDOW = 1 << 20
_SPACE_RE = re.compile(r"\s")


def _fit(paragraph: str) -> tuple[str, bool]:
    """A paragraph of over `MAX_ABSTRACT_CHARS` characters as one line of its words, one
    space between them (as its id sees it), up to `MAX_ABSTRACT_CHARS`; and whether any
    were dropped (then cut at a word's end, or inside a word over 1,000 characters).

    Its words, not its characters, are what is cut: a header line padded with millions of
    spaces and followed by more words ("NeurIPS 2026 Papers<spaces>and Workshops", or an
    abstract after it with no blank line) was cut in the padding, taken as the header, and
    the words after it were lost without a word said. Now nothing is cut from a paragraph
    whose words fit: it is judged (header or abstract) as it would be without the padding.
    Read a window at a time (never a list of every word of a 200 MB line)."""
    kept: list[str] = []
    size = 0  # the length of " ".join(kept)
    at, end = 0, len(paragraph)
    while at < end:
        stop = at + _FIT_WINDOW
        if stop < end:  # (to the end of the word the window ends in)
            gap = _SPACE_RE.search(paragraph, stop)
            stop = gap.start() if gap else end
        words = paragraph[at:stop].split()
        at = stop
        length = sum(map(len, words)) + len(words) - (0 if kept else 1)
        if not words or size + length <= MAX_ABSTRACT_CHARS:
            kept += words
            size += max(length, 0)
            continue
        for word in words:  # (the window's words do not all fit: one of them ends it)
            space = 1 if kept else 0
            room = MAX_ABSTRACT_CHARS - size - space
            if len(word) > room:
                if room > 1000 or not kept:  # (a word as long as an abstract: cut inside)
                    kept.append(word[:room])
                break
            kept.append(word)
            size += space + len(word)
        return " ".join(kept), True
    return " ".join(kept), False


def _too_large(size: int) -> str:
    """The load error of a dump of ``size`` bytes, over `MAX_DUMP_BYTES`."""
    return (
        f"too large ({_size_text(size)}; a dump is read up to {_size_text(MAX_DUMP_BYTES)}:"
        " split it into smaller dumps); skipped"
    )


def _size_text(size: int) -> str:
    return f"{size / (1 << 20):,.0f} MB" if size >= 1 << 20 else f"{size:,} bytes"


def _size_and_mtime(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


def _read_dump(path: Path, listed: tuple[int, int] | None = None) -> _Parsed:
    """Read one dump file; raises _Skip with a reason for a path that cannot load.
    ``listed``: its size and mtime when the load began (a change since is said)."""
    try:
        st = os.stat(path)
    except OSError as exc:
        raise _Skip(_os_reason(exc)) from None
    if stat.S_ISDIR(st.st_mode):
        raise _Skip("is a directory, expected a dump file")
    try:
        # (the file opened is checked again: one swapped for a FIFO since would block)
        with open_regular(path) as handle:
            before = os.fstat(handle.fileno())
            size = before.st_size
            if size > MAX_DUMP_BYTES:
                raise _Skip(_too_large(size))
            # its first bytes say whether it is text at all, before the rest is read
            if refusal := not_text(handle.read(BINARY_SAMPLE)):
                raise _Skip(refusal)
            handle.seek(0)
            data = handle.read(size + 1)
            if len(data) > size:  # (grown since its size was taken, or a size of 0 in /proc)
                data += handle.read(MAX_DUMP_BYTES + 1 - len(data))
                if len(data) > MAX_DUMP_BYTES:
                    raise _Skip(_too_large(len(data)))
            changed = _changed_while_read(
                listed or (before.st_size, before.st_mtime_ns),
                before,
                os.fstat(handle.fileno()),
                len(data),
            )
    except NotRegular as exc:
        raise _Skip(f"{exc}; skipped") from None
    except OSError as exc:
        raise _Skip(_os_reason(exc)) from None
    if not data:
        raise _Skip("empty file")
    try:
        text, warnings = _decode(data)
        if changed:
            warnings.insert(0, changed)
        venue, year, abstracts, normal = _parse_text(text, warnings)
    except Exception as exc:  # a fault of ours on this text: this dump is skipped, named
        raise _Skip(f"could not be parsed ({fault_text(exc)}); skipped") from exc
    if not abstracts:
        raise _Skip("no abstracts in this file (only whitespace or a header)")
    return _Parsed(venue, year, abstracts, warnings, normal)


def _changed_while_read(
    listed: tuple[int, int], before: os.stat_result, after: os.stat_result, read: int
) -> str:
    """The warning of a dump whose size or mtime changed between the start of the load
    (``listed``) or its opening (``before``) and the end of its reading (a file cut short,
    or still being written): what was read is loaded, and may end mid-word; "" when it did
    not change."""
    now = (after.st_size, after.st_mtime_ns)
    if listed == now and (before.st_size, before.st_mtime_ns) == now:
        return ""
    sizes = (
        f"{_size_text(listed[0])} when the load began, {_size_text(after.st_size)} after"
        if listed[0] != after.st_size
        else f"{_size_text(before.st_size)} when opened, {_size_text(after.st_size)} after"
        if before.st_size != after.st_size
        else "written to"
    )
    return (
        f"changed while it was read ({sizes}); loaded as it was when read"
        f" ({_size_text(read)}), its last abstract possibly cut short — reload to read it again"
    )


class _Skip(Exception):
    pass


def fault_text(exc: BaseException) -> str:
    """An exception as one line of a load error: its type and message, sanitised (a message
    may quote the text it failed on) and shortened."""
    text = sanitise(f"{type(exc).__name__}: {exc}").replace("\n", " ")
    return text if len(text) <= 200 else text[:199] + "…"


def _os_reason(exc: OSError) -> str:
    if exc.errno == errno.ENOENT:
        return "no such file or directory"
    if exc.errno == errno.ELOOP:
        return "symlink loop (too many levels of symbolic links)"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if exc.errno == errno.ENOTDIR:
        return "not a directory (a file was given where a directory was expected)"
    if exc.errno == errno.EISDIR:
        return "is a directory, expected a dump file"
    return (exc.strerror or str(exc)).lower()


# ---------------------------------------------------------------------------------------
# Paths → files
# ---------------------------------------------------------------------------------------

#: Readers by file suffix. Other formats (arXiv JSON Lines, BibTeX) plug in here.
DUMP_SUFFIXES = (".txt",)


def expand_paths(paths: Iterable[str | os.PathLike[str]]) -> tuple[list[Path], list[LoadError]]:
    """Files to read, in order: a folder means its dumps sorted by name. A file named twice
    (``-d x -d x``, or by name and through its folder, or by another path to it) is read
    and reported once, where it first comes."""
    files: list[Path] = []
    errors: list[LoadError] = []
    seen: set[object] = set()

    def first_time(path: Path, st: os.stat_result | None) -> bool:
        # the file itself (a hard link or another spelling is the same file), else its path
        key: object = (st.st_dev, st.st_ino) if st is not None else os.path.abspath(path)
        if key in seen:
            return False
        seen.add(key)
        return True

    for raw in paths:
        path = Path(raw)
        try:
            st = os.stat(path)
        except OSError as exc:
            if first_time(path, None):
                errors.append(LoadError(str(raw), _os_reason(exc)))
            continue
        if not first_time(path, st):
            continue
        if stat.S_ISDIR(st.st_mode):
            try:
                entries = sorted(
                    (p for p in path.iterdir() if p.suffix.lower() in DUMP_SUFFIXES),
                    key=lambda p: p.name,
                )
            except OSError as exc:
                errors.append(LoadError(str(raw), _os_reason(exc)))
                continue
            if not entries:
                errors.append(LoadError(str(raw), "directory has no *.txt dumps"))
            for entry in entries:
                try:
                    entry_st: os.stat_result | None = os.stat(entry)
                except OSError:  # (reading it says why it cannot be)
                    entry_st = None
                if not first_time(entry, entry_st):
                    continue
                if entry_st is not None and _refused_for_size(entry, entry_st, errors):
                    continue
                files.append(entry)
        elif not _refused_for_size(path, st, errors):
            files.append(path)
    return files, errors


def _refused_for_size(path: Path, st: os.stat_result, errors: list[LoadError]) -> bool:
    """Is ``path`` a dump over `MAX_DUMP_BYTES`? Then its load error is in ``errors``: it
    is not hashed for the corpus cache nor read (a sparse file may say 50 GB)."""
    if is_metadata_file(path) or not stat.S_ISREG(st.st_mode) or st.st_size <= MAX_DUMP_BYTES:
        return False
    errors.append(LoadError(str(path), _too_large(st.st_size)))
    return True


def bundled_dumps() -> Path:
    """The NeurIPS 2026 dumps shipped with the package (or the checkout's seeds/)."""
    # A plain path beside this module (importlib.resources costs ~15 ms at start-up; the
    # package is never imported from a zip).
    packaged = Path(__file__).resolve().parent / "data" / "seeds"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "seeds"


def files_bytes(files: Iterable[Path]) -> int:
    """The files' sizes added up (a file that cannot be read counts 0: loading says why)."""
    total = 0
    for path in files:
        with contextlib.suppress(OSError):
            total += path.stat().st_size
    return total


#: Dumps at least this large in all have their titles derived by a second process
#: (`Titler`: the other core), from the second dump on.
TITLER_MIN_BYTES = 48 * 1024 * 1024
#: Dumps parsed ahead of the one being added, their titles under way in the `Titler`.
TITLER_AHEAD = 2
#: The share of a dump's titles this process derives itself (the first ones, while the
#: title process derives the rest), at first; then it adapts (`_balance`): up when this
#: process had to wait for the title process, down when it did not.
TITLER_OWN_SHARE = 0.25
_OWN_STEP_UP, _OWN_STEP_DOWN, _OWN_MAX = 0.1, 0.05, 0.9
#: a wait for the title process longer than this means it is behind (the other core is busy)
_TITLER_LATE_S = 0.005


class CorpusBuilder:
    """Loads a corpus file by file, so that a reader can show papers as they arrive."""

    def __init__(
        self,
        paths: Iterable[str | os.PathLike[str]] | None = None,
        *,
        titler: bool | None = None,
        record_problems: int | None = MAX_RECORD_PROBLEMS,
    ) -> None:
        """``titler``: derive titles in a second process (None: when the dumps are at least
        `TITLER_MIN_BYTES`); the papers are the same either way. ``record_problems``: the
        malformed records of each metadata file kept as load errors (None: all)."""
        self._record_problems = record_problems
        path_list = [bundled_dumps()] if paths is None else list(paths)
        self.files, errors = expand_paths(path_list)
        #: each dump's size and mtime when the load began: one cut short before it is
        #: opened (while the corpus cache hashes it, or another dump is read) is said too
        self._listed = {path: _size_and_mtime(path) for path in self.files}
        self.corpus = Corpus(errors=errors)
        self._use_titler = titler
        self._titler: Titler | None = None
        #: dumps parsed ahead: their parse (or why they are skipped), their titles' batch in
        #: the title process and the first abstract it has the title of (those before: here)
        self._ahead: dict[Path, tuple[_Parsed | _Skip, int | None, int]] = {}
        self._own_share = TITLER_OWN_SHARE

    def _wants_titler(self) -> bool:
        if self._use_titler is None:
            self._use_titler = files_bytes(self.files) >= TITLER_MIN_BYTES and len(self.files) > 1
        return self._use_titler

    def _parse_ahead(self, path: Path) -> None:
        """Parse the dumps after ``path`` (up to `TITLER_AHEAD`) and send their abstracts to
        the title process, which derives them while this thread adds ``path``'s rows."""
        titler = self._titler
        if titler is None and not self._wants_titler():
            return
        from .text.titler import Titler, TitlerFailed  # (large dumps only: not at start-up)

        if titler is None:
            try:
                titler = self._titler = Titler()
            except OSError:
                self._use_titler = False
        if titler is None:
            return
        try:
            at = self.files.index(path)
        except ValueError:
            return
        for later in self.files[at + 1 : at + 1 + TITLER_AHEAD]:
            if later in self._ahead or is_metadata_file(later):
                continue
            try:
                parsed = _read_dump(later, self._listed.get(later))
            except _Skip as skip:
                self._ahead[later] = (skip, None, 0)
                continue
            # this process derives the first titles of the dump while the title process
            # derives the rest: both cores work, and neither waits long for the other
            cut = int(len(parsed.abstracts) * self._own_share)
            try:
                self._ahead[later] = (parsed, titler.send(parsed.abstracts[cut:]), cut)
            except TitlerFailed:
                self._ahead[later] = (parsed, None, 0)
                self._stop_titler()
                return

    def _titles_from(self, batch: int | None, count: int) -> list[str] | None:
        if batch is None or self._titler is None:
            return None
        from .text.titler import TitlerFailed

        began = time.perf_counter()
        try:
            titles = self._titler.receive(batch, count)
        except TitlerFailed:
            self._stop_titler()  # (derived here from now on)
            return None
        self._balance(time.perf_counter() - began > _TITLER_LATE_S)
        return titles

    def _balance(self, waited: bool) -> None:
        """The next dumps' share of titles derived here: more when this process waited for
        the title process (the other core is busy: the index's helper, other programs), less
        when it did not. Either way the titles are `derive_title`'s."""
        if waited:
            self._own_share = min(_OWN_MAX, self._own_share + _OWN_STEP_UP)
        else:
            self._own_share = max(0.0, self._own_share - _OWN_STEP_DOWN)

    def _stop_titler(self) -> None:
        titler, self._titler = self._titler, None
        self._use_titler = False
        if titler is not None:
            titler.close()

    def close(self) -> None:
        """Stop the title process, if any (`finish` does; a load given up calls this)."""
        self._stop_titler()
        self._ahead.clear()

    def add_file(self, path: Path) -> int:
        """Read one dump; returns how many papers it added (duplicates only gain a source)."""
        return sum(len(rows) for rows in self.add_file_in_batches(path))

    def add_file_in_batches(self, path: Path, batch: int = 5000) -> Iterator[range]:
        """Read one dump, adding its papers ``batch`` at a time (a reader shows each batch
        as it comes: one enormous file need not be finished before its first rows show);
        yields the rows each batch added."""
        if is_metadata_file(path):
            yield from self._add_records(path, batch)
            return
        corpus = self.corpus
        shown = str(path)
        ahead = self._ahead.pop(path, None)
        parsed: _Parsed | _Skip
        if ahead is not None:
            parsed, sent, cut = ahead
        else:
            sent, cut = None, 0
            try:
                parsed = _read_dump(path, self._listed.get(path))
            except _Skip as skip:
                parsed = skip
        if isinstance(parsed, _Skip):
            corpus.errors.append(LoadError(shown, str(parsed)))
            self._parse_ahead(path)
            return
        titles: list[str] | None = None  # (from the title process, from ``cut`` on)
        corpus.errors.extend(LoadError(shown, w, fatal=False) for w in parsed.warnings)
        corpus.files.append(shown)
        name = sanitise(path.name)  # file names are untrusted text too
        table = corpus.papers
        abstracts = parsed.abstracts
        normal = parsed.normal
        venue, year = parsed.venue, parsed.year
        first = 0
        while first < len(abstracts):
            # the table's first rows come in a small batch: a screen shows a few dozen, and
            # 5,000 cost ~0.2 s (ids, derived titles) before the first frame could show any
            last = min(first + (batch if len(table) else min(batch, FIRST_BATCH)), len(abstracts))
            texts = abstracts[first:last]
            abstracts[first:last] = [""] * (last - first)  # the table keeps their UTF-8 bytes
            keys = [
                _normal_key(text) if ok else paper_key(text)
                for text, ok in zip(texts, normal[first:last], strict=True)
            ]
            found = table.find_many(keys)  # (the rows loaded before this batch)
            rows = RowBatch()
            positions = rows.positions
            for index, abstract, key, existing in zip(
                range(first + 1, last + 1), texts, keys, found, strict=True
            ):
                pending = positions.get(key)
                if pending is not None:
                    rows.more.append((pending, Source(name, index)))
                elif existing >= 0:
                    table.add_source(existing, Source(name, index))
                else:
                    if index > cut and titles is None and sent is not None:
                        # (the first titles were derived here meanwhile)
                        titles = self._titles_from(sent, len(abstracts) - cut)
                        sent = None
                    if index <= cut or titles is None:
                        title = derive_title(abstract)
                    else:
                        title = titles[index - 1 - cut]
                    rows.add(key, abstract, title, Source(name, index), venue=venue, year=year)
            del texts
            start = table.extend(rows)
            yield range(start, start + len(rows))
            first = last
        if sent is not None:  # (every row after ``cut`` was a duplicate: answers come in turn)
            self._titles_from(sent, len(abstracts) - cut)
        # the next dumps are parsed and their titles started once this one is added: not
        # while the first rows are drawn (a process starting then, and parsing ahead, made
        # them later on a busy machine)
        self._parse_ahead(path)

    def _add_records(self, path: Path, batch: int) -> Iterator[range]:
        """Read a metadata file: records with an abstract are papers with real metadata (or
        give it to the same paper from a dump); the others are kept for matching only."""
        corpus = self.corpus
        shown = str(path)
        try:
            st = os.stat(path)
        except OSError as exc:
            corpus.errors.append(LoadError(shown, _os_reason(exc)))
            return
        if not stat.S_ISREG(st.st_mode):
            corpus.errors.append(LoadError(shown, f"{NotRegular(st.st_mode)}; skipped"))
            return
        from .sources import RecordProblem, SourceError, read_records  # (named files only)

        table = corpus.papers
        rows = RowBatch()
        problems = 0
        kept = self._record_problems
        started = False
        try:
            for item in read_records(path):
                if not started:
                    started = True
                    corpus.files.append(shown)
                    corpus.metadata_files.append(shown)
                if isinstance(item, RecordProblem):
                    problems += 1
                    if kept is None or problems <= kept:
                        corpus.errors.append(LoadError(shown, str(item), fatal=False))
                    continue
                if not item.abstract:
                    corpus.metadata_only.append(item)
                    continue
                self._add_record(item, rows)
                if len(rows) >= batch:
                    start = table.extend(rows)
                    yield range(start, start + len(rows))
                    rows = RowBatch()
        except SourceError as exc:
            corpus.errors.append(LoadError(shown, str(exc)))
        except Exception as exc:  # a fault of ours or a parser's: this file stops, named
            corpus.errors.append(LoadError(shown, f"could not be read ({fault_text(exc)})"))
        if kept is not None and problems > kept:
            more = problems - kept
            said = f"… and {count_phrase(more, 'more malformed record')} skipped"
            corpus.errors.append(LoadError(shown, said, fatal=False, problems=more))
        start = table.extend(rows)
        yield range(start, start + len(rows))

    def _add_record(self, rec: MetaRecord, rows: RowBatch) -> None:
        """A new paper for ``rec`` in ``rows``; when the same abstract is already loaded, it
        gains the record's metadata if its own title is derived, and a source."""
        abstract = rec.abstract or ""
        key = paper_key(abstract)
        source = Source(sanitise(rec.file), rec.index)
        pending = rows.positions.get(key)
        if pending is not None:  # its title is a record's already: only a source
            rows.more.append((pending, source))
            return
        table = self.corpus.papers
        existing = table.find(key)
        if existing >= 0:
            if table.is_derived(existing):
                table.adopt(existing, rec)
            table.add_source(existing, source)
            return
        rows.add(
            key,
            abstract,
            rec.title or "",
            source,
            derived=False,
            venue=rec.venue,
            year=rec.year,
            meta=(rec.authors, rec.url, rec.doi, rec.eprint, rec.primary_class, rec.label),
        )

    def _merge_normalised(self) -> None:
        """A record whose abstract equals a dump paper's after normalisation (quotes,
        emphasis, LaTeX vs Unicode, hyphenation, …: `match.merge_key`) is that paper: it keeps its id (the library's
        marks are keyed by it) and gains the record's metadata and source."""
        table = self.corpus.papers
        if not table.has_meta:
            return
        records = [
            i
            for i in range(len(table))
            if table.record(i) is not None and table.source_count(i) == 1
        ]
        derived = table.derived_rows()
        if not records or not derived:
            return
        from .match import merge_key  # (the form `match` normalises to, spacing and
        # punctuation left out: LaTeX and its Unicode space and bracket math differently)

        by_key: dict[str, int] = {}
        for row in derived:
            by_key.setdefault(merge_key(table.abstract(row)), row)
        gone: set[int] = set()
        for rec_row in records:
            target = by_key.get(merge_key(table.abstract(rec_row)))
            if target is None or not table.is_derived(target):
                continue
            table.merge_into(target, rec_row)
            gone.add(rec_row)
        if gone:
            table.drop(gone)

    def finish(self) -> Corpus:
        """Merge records into the same dump papers; make the derived titles distinct."""
        self.close()
        self._merge_normalised()
        table = self.corpus.papers
        if len(table) >= _DISTINCT_WITH_NUMPY:
            for row, title in distinct_titles(table).items():
                table.set_title(row, title)
            return self.corpus
        rows = table.derived_rows()  # (small: no numpy import, as the CLI's quick commands)
        if rows:
            titles, ids = table.titles(), table.ids()
            shown = [titles[i] for i in rows]
            distinct = disambiguate(shown, [ids[i] for i in rows])
            for row, before, title in zip(rows, shown, distinct, strict=True):
                if title != before:
                    table.set_title(row, title)
        return self.corpus


#: papers from which `finish` makes titles distinct with `distinct_titles` (numpy)
_DISTINCT_WITH_NUMPY = 20_000


def distinct_titles(table: PaperTable) -> dict[int, str]:
    """The derived titles that `disambiguate` changes (row → its new title), as it would
    over every derived title, without holding a string per paper: each title's casefold is
    hashed into one numpy array, and only titles whose hash repeats are decoded again and
    grouped by their text (at a million papers the lists of every title and id held ~750 MB
    at the end of a cold load)."""
    import numpy as np

    rows = np.flatnonzero(table.derived())
    if not rows.size:
        return {}
    title = table.title
    hashes = np.fromiter(
        (hash(title(row).casefold()) for row in rows.tolist()), np.int64, rows.size
    )
    order = np.argsort(hashes, kind="stable")
    ordered = hashes[order]
    same = ordered[1:] == ordered[:-1]
    repeated = np.zeros(rows.size, bool)
    repeated[1:] |= same
    repeated[:-1] |= same
    # the titles that may clash, grouped exactly, in the order of their first row (as
    # `disambiguate` meets them)
    groups: dict[str, list[int]] = {}
    for row in rows[np.sort(order[repeated])].tolist():
        groups.setdefault(title(row).casefold(), []).append(row)
    added: set[str] = set()

    def taken(folded: str) -> bool:
        """Is this (casefolded) title one of the derived titles, or given to one here?"""
        if folded in added:
            return True
        h = np.int64(hash(folded))
        first = int(np.searchsorted(ordered, h, side="left"))
        last = int(np.searchsorted(ordered, h, side="right"))
        return any(title(int(rows[order[k]])).casefold() == folded for k in range(first, last))

    changed: dict[int, str] = {}
    for members in groups.values():
        if len(members) < 2:
            continue
        ids = {row: table.id(row) for row in members}
        members.sort(key=ids.__getitem__)
        for row in members[1:]:  # (as `disambiguate`: more of the title, then the id)
            key = ids[row]
            before = title(row)
            base = before.rstrip("…")
            suffix = f" [{key[:6]}]"
            candidate = shorten(base, TITLE_MAX - len(suffix)) + suffix
            n = 7
            while taken(candidate.casefold()) and n <= len(key):
                suffix = f" [{key[:n]}]"
                candidate = shorten(base, TITLE_MAX - len(suffix)) + suffix
                n += 1
            if candidate != before:
                changed[row] = candidate
            added.add(candidate.casefold())
    return changed


def load_corpus(
    paths: Iterable[str | os.PathLike[str]] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Corpus:
    """Load dumps (files or folders; None: the bundled dumps). Never raises for bad input:
    every problem is in ``corpus.errors`` and the good files load."""
    builder = CorpusBuilder(paths)
    for n, path in enumerate(builder.files):
        builder.add_file(path)
        if progress is not None:
            progress(n + 1, len(builder.files))
    return builder.finish()

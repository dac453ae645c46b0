"""Command line: the reader (bare command) and scriptable subcommands.

Argument parsing, output and exit codes only — the work is done by the core modules.
Exit codes: 0 ok, 1 failure (including bad input files, after the good ones are shown),
2 usage. Subcommands never import Textual.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import textwrap
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

from . import __version__
from .plural import count_phrase, noun_for, papers_phrase
from .sorting import SORTS, canonical_sort

if TYPE_CHECKING:
    from .config import Config
    from .corpus import Corpus, LoadError, Paper
    from .library import Library, Snapshot
    from .library.interchange import Imported, Kept
    from .record import Record
    from .search import Query

PROG = "abstract-reader"
SHOW_LIMIT = 50_000  # characters of an abstract that `show` prints without --full
#: `meta`'s caps, in characters (within what `library import` takes back: interchange's
#: FIELD_MAX); the longest arXiv titles are ~300 characters
TITLE_MAX, AUTHOR_MAX, URL_MAX, DOI_MAX = 1_000, 300, 2_000, 300
SUBCOMMANDS = (
    "list",
    "show",
    "tag",
    "untag",
    "bookmark",
    "read",
    "tags",
    "note",
    "meta",
    "cite",
    "export",
    "library",
    "match",
    "config",
    "completion",
    "digest",
    "searches",
)


class Failure(Exception):
    """A user-level error: one line on stderr, exit 1."""


def _say(stream: TextIO, text: str) -> None:
    from .text import sanitise

    if not text.isprintable():  # every character sanitise replaces is unprintable
        text = sanitise(text)
    stream.write(text.replace("\u240a", "\n") + "\n")


def _error(text: str) -> None:
    from .text import escape_for_terminal

    sys.stderr.write(f"{PROG}: {escape_for_terminal(text)}\n")


def _note(text: str) -> None:
    """A one-line report on stderr (not an error), its names escaped like _error's."""
    from .text import escape_for_terminal

    sys.stderr.write(f"{escape_for_terminal(text)}\n")


def _write_file(name: str, text: str, *, force: bool) -> None:
    """Write an output file under outfile.py's target rule; a refusal or failure is a Failure."""
    from .outfile import OutputError, write_file

    try:
        write_file(Path(name), text, force=force)
    except OutputError as exc:
        raise Failure(str(exc)) from None


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        from .text import escape_for_terminal

        self.print_usage(sys.stderr)
        sys.stderr.write(f"{self.prog}: error: {escape_for_terminal(message)}\n")
        raise SystemExit(2)


class _CommandParser(_Parser):
    """A command's parser: an argument it does not know is its own usage error, with its usage
    line and name (`abstract-reader list: error: …`), as a bad value already was. argparse
    hands a subcommand's unknown arguments up to the top-level parser, which printed its own
    usage (`abstract-reader [-h] [--version] COMMAND ...`) as if the command were wrong."""

    #: shown after the options as written, not re-wrapped (a table); the description still is
    raw_epilog: str | None = None

    def format_help(self) -> str:
        text = super().format_help()
        return f"{text}\n{self.raw_epilog}" if self.raw_epilog else text

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed, extras


QUERY_HELP = """\
the query language (-q QUERY, searches --add NAME QUERY, the reader's filter;
docs/query-language.md):
  robust gaussian      papers with both words; typos forgiven (one edit in words of 5-8
                       letters, two from 9); the last word also matches as a prefix
  'word                exact: no typos, no prefix
  ^word                the title starts with the word
  !word                papers without any word starting with it
  a | b                either
  "two words"          the words next to each other, in this order
  #tag  #"two words"   papers with the tag (in quotes, \\" is a " and \\\\ a \\)
  is:STATE             bookmarked, unread, read, tagged, noted, new, or marked (the
                       reader's marks: refused here, as the CLI has none)
  venue:V  year:2026  year:2024-2026  title:word  id:d059a4d9   (the year as shown:
                       the one set with meta --year, else the record's, else the dump's;
                       the venue as shown: the one match found, else the record's or dump's)
  like:ID  like:#tag   every paper ranked by likeness to the paper (the tagged papers)
  @name                a saved search (abstract-reader searches)
A part that cannot be used (a lone ", a bare !, an unknown is:) is a usage error here:
one line saying which part and why, exit 2, nothing printed, written or saved. (The
reader's filter ignores such a part and says so in its status line.)
"""


#: why a command cannot use ``is:marked``: marks are made in a reader and live as long as it
NO_MARKS = "marks are the reader's; the CLI has none"


def _refuse_query(
    query: Query, command: str, nothing: str, also: Sequence[tuple[str, str]] = ()
) -> _Usage:
    """The usage error for a query with parts that cannot be used (``Query.mistakes``, then
    ``also``: parts only the reader can use): each part and why, and where the language is
    described."""
    parts = ", ".join(
        repr(part) + (f" ({why})" if why else "")
        for part, why in (*query.explained_mistakes(), *also)
    )
    return _Usage(
        f"the query cannot use {parts}; {nothing} (the query language: {PROG} {command} --help)"
    )


def _path_argument(raw: str) -> str:
    """A file or folder given to ``--db`` or ``-d``: an empty one (``--db "$UNSET"``) is a
    usage error, not the default library or the current folder."""
    if not raw.strip():
        raise argparse.ArgumentTypeError(
            f"{raw!r} is not a file name (leave the option out for the default)"
        )
    return raw


def _common(parser: argparse.ArgumentParser, dumps: bool = True) -> None:
    from .corpus import LOAD_PROBLEMS_SHOWN  # (build_parser imports it anyway: cite does)

    if dumps:
        parser.add_argument(
            "-d",
            "--dump",
            action="append",
            metavar="PATH",
            dest="dumps",
            type=_path_argument,
            help="a dump file or folder (repeatable; default: the bundled NeurIPS 2026 dumps)",
        )
        parser.add_argument(
            "-v",
            "--verbose",
            action="store_true",
            help=f"list every problem loading the dumps (default: the first {LOAD_PROBLEMS_SHOWN},"
            " then a count)",
        )
    parser.add_argument(
        "--db",
        metavar="FILE",
        type=_path_argument,
        help="the library file (default: $ABSTRACT_READER_DB or the user data dir); a new "
        "one is made only in an existing folder",
    )


def _tag_argument(raw: str) -> str:
    """A tag given to ``--tag``, read as ``tag ID TAG`` stores one (`clean_tag`: ``#hash`` is
    the tag ``hash``); one that cannot be a tag is a usage error."""
    from .library import LibraryError, clean_tag

    try:
        return clean_tag(raw)
    except LibraryError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _date_argument(raw: str) -> str:
    """``digest --since``: a date (``YYYY-MM-DD``, or an ISO date and time), given back as
    typed; anything else is a usage error quoting it."""
    from datetime import datetime

    from .text import escape_for_terminal

    try:
        datetime.fromisoformat(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{escape_for_terminal(repr(raw))} is not a date (YYYY-MM-DD, such as 2026-01-31)"
        ) from None
    return raw


def _tag_checked(raw: str) -> str:
    """A tag given to ``tag``/``untag``: one that cannot be a tag is a usage error, as for
    ``--tag``; given back as typed (the library reads it: ``##x`` is the tag ``#x``)."""
    _tag_argument(raw)
    return raw


def _capped(what: str, limit: int) -> Callable[[str], str]:
    """An argument type: text of at most ``limit`` characters (runs of white space counted
    as one, as the library stores them), else a usage error saying both lengths."""

    def check(raw: str) -> str:
        length = len(" ".join(raw.split()))
        if length > limit:
            raise argparse.ArgumentTypeError(
                f"too long ({length:,} characters; {what} is at most {limit:,})"
            )
        return raw

    return check


def _doi_argument(raw: str) -> str:
    """``meta --doi``: a DOI (``10.NNNN/…``, also as a doi.org link or ``doi:…``), given
    back normalised; blank clears the field, as ``--title ''`` does. Anything else is a
    usage error quoting it and saying what a DOI looks like."""
    from .metadata import normalise_doi
    from .text import escape_for_terminal

    raw = _capped("a DOI", DOI_MAX)(raw)
    if not raw.strip():
        return ""
    try:
        return normalise_doi(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{escape_for_terminal(repr(raw))} is not a DOI (a DOI is 10.NNNN/…, such as "
            "10.1145/3368089, also as https://doi.org/10.… or doi:10.…; '' clears it)"
        ) from None


def _year_argument(raw: str) -> int:
    """``meta --year``: a year of four digits (0 for blank: clears the field, as
    ``--title ''`` does); anything else is a usage error quoting it."""
    from .text import escape_for_terminal

    text = raw.strip()
    if not text:
        return 0
    if text.isascii() and text.isdigit() and len(text) == 4 and text[0] != "0":
        return int(text)
    raise argparse.ArgumentTypeError(
        f"{escape_for_terminal(repr(raw))} is not a year (four digits, such as 2026; '' clears it)"
    )


def _id_argument(raw: str) -> str:
    """A paper id given as an argument: hex digits, a whole id or a prefix of one long
    enough to look up (`Corpus.resolve`); anything else is a usage error quoting it."""
    from .corpus import MIN_PREFIX
    from .text import escape_for_terminal

    if re.fullmatch(rf"[0-9a-f]{{{MIN_PREFIX},16}}", raw.strip().lower()):
        return raw
    raise argparse.ArgumentTypeError(
        f"{escape_for_terminal(repr(raw))} is not a paper id (ids are 16 hex digits, as "
        f"`list --json` gives them; the first {MIN_PREFIX} or more are enough when no other "
        "id starts with them)"
    )


def _filters(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-q", "--query", help="only papers matching this search query")
    parser.add_argument(
        "--tag",
        action="append",
        type=_tag_argument,
        help="only papers with this tag (repeatable; a leading # is optional, as for tag)",
    )
    parser.add_argument("--bookmarked", action="store_true", help="only bookmarked papers")
    parser.add_argument("--unread", action="store_true", help="only unread papers")


_EXAMPLES = (
    ("", "the reader on the bundled NeurIPS 2026 dumps"),
    ("~/dumps/icml2025/", "the reader on every *.txt in a folder"),
    ("list -q 'robst gausian'", "search from a script (typos forgiven)"),
    ("list --tag 'to read' --json", "JSON Lines, one paper per line"),
    ("show d059a4d9", "one paper; an unambiguous id prefix is enough"),
    ("tag d059a4d9 'to read'", "add a tag (quotes for spaces)"),
    ("cite d059a4d9 -f bibtex --copy", ""),
    ("export -f bibtex --bookmarked -o reading.bib", ""),
    ("library export backup.json", "everything you recorded, as JSON"),
    ("config --show", "the settings in effect, and where they come from"),
    ("completion bash > ~/.local/share/bash-completion/completions/abstract-reader", ""),
)
HELP_EPILOG = (
    "examples:\n"
    + "".join(f"  {PROG} {cmd:<29} {what}".rstrip() + "\n" for cmd, what in _EXAMPLES)
    + """
environment:
  ABSTRACT_READER_DB              the library file (default: library.sqlite3 in the user data dir)
  ABSTRACT_READER_CACHE           the cache folder (search index, parsed dumps, last-error.txt)
  ABSTRACT_READER_CONFIG          the config file (default: config.toml in the user config dir)
  ABSTRACT_READER_OPENREVIEW_URL  the OpenReview API to ask for metadata (for tests, mirrors)
  ABSTRACT_READER_ARXIV_URL       the arXiv API to ask for metadata
  ABSTRACT_READER_ARXIV_INTERVAL  seconds between arXiv requests (default 3, as arXiv asks)
  ABSTRACT_READER_DEBUG=1         print the traceback of an unexpected error
  VISUAL, EDITOR                  the editor for notes
  BROWSER                         the browser that opens a paper's link

exit codes:
  0 ok; 1 failure (bad input files are reported, the good ones still processed); 2 usage
  (also: the reader without a terminal); 130 interrupted; 141 output pipe closed early
"""
)


def _abstract_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--abstract",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="BibTeX and CSL-JSON: include the abstract and the tags (keywords); default: "
        "the library's cite_abstract setting (on/off), else off",
    )


def _with_abstract(args: argparse.Namespace, library: Library, fmt: str) -> bool:
    from .cite import abstract_flag_unused, abstract_setting

    if args.abstract is not None:
        if unused := abstract_flag_unused(fmt, bool(args.abstract)):
            _error(unused)  # a flag that changes nothing is said, not silently ignored
        return bool(args.abstract)
    return abstract_setting(library)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description="A keyboard-driven terminal reader for dumps of conference abstracts.\n"
        "With no command, opens the reader on PATHs (default: the bundled NeurIPS 2026 dumps).",
        epilog=HELP_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    # (the reader's usage shows them before any word: they work before a command too)
    parser.add_argument(
        "--db",
        dest="top_db",
        metavar="FILE",
        type=_path_argument,
        help="the library file, for the command that follows (as its own --db)",
    )
    parser.add_argument(
        "-d",
        "--dump",
        dest="top_dumps",
        action="append",
        metavar="PATH",
        type=_path_argument,
        help="a dump file or folder, for the command that follows (as its own -d)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_CommandParser)

    p = sub.add_parser(
        "list",
        help="one line per paper (or JSON Lines)",
        description="One line per paper: id, flags (★ bookmarked, • unread), venue and year "
        '("unknown venue" when neither is known; --json: null), title, [tags].',
    )
    p.raw_epilog = QUERY_HELP
    _common(p)
    _filters(p)
    p.add_argument("--json", action="store_true", help="JSON Lines with every field")
    p.add_argument(
        "--sort",
        choices=list(SORTS),
        type=canonical_sort,  # `bookmarked`, the former name of `recent`, still works
        default="relevance",
        metavar="ORDER",
        help="the order, as the reader's `s` key cycles through them: "
        + ", ".join(name + (f" ({m})" if m != name else "") for name, m in SORTS.items())
        + " (default: relevance, which is the dumps' order without -q)",
    )

    p = sub.add_parser("show", help="show one paper, rendered")
    _common(p)
    p.add_argument(
        "id", type=_id_argument, metavar="ID", help="a paper id or an unambiguous prefix"
    )
    p.add_argument(
        "--full", action="store_true", help="do not cap very long abstracts or many sources"
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="the paper as one JSON object, with the fields of its `list --json` line "
        "(the whole abstract: --full is implied)",
    )

    for name, helptext in (("tag", "add tags to a paper"), ("untag", "remove tags from a paper")):
        p = sub.add_parser(name, help=helptext)
        _common(p)
        p.add_argument("id", type=_id_argument, metavar="ID")
        p.add_argument("tags", nargs="+", metavar="TAG", type=_tag_checked)

    for name, helptext in (("bookmark", "bookmark papers"), ("read", "mark papers read")):
        p = sub.add_parser(name, help=helptext)
        _common(p)
        p.add_argument("ids", nargs="+", metavar="ID", type=_id_argument)
        p.add_argument("--off", action="store_true", help="undo (unbookmark / mark unread)")

    p = sub.add_parser("tags", help="every tag with its count; records of unloaded papers")
    _common(p)
    p.add_argument(
        "--rename",
        nargs=2,
        metavar=("OLD", "NEW"),
        type=_tag_checked,
        help="rename a tag on every paper",
    )
    p.add_argument(
        "--merge", action="store_true", help="with --rename onto an existing tag: merge the two"
    )
    p.add_argument(
        "--delete", metavar="TAG", type=_tag_argument, help="remove a tag from every paper"
    )
    p.add_argument(
        "--json",
        action="store_true",
        help='JSON Lines, one {"tag": NAME, "count": N} a tag (papers not loaded: on stderr)',
    )

    p = sub.add_parser("note", help="print or set a paper's note")
    _common(p)
    p.add_argument("id", type=_id_argument, metavar="ID")
    p.add_argument("text", nargs="?", help="the new note ('' clears it)")

    p = sub.add_parser(
        "meta",
        help="print or set a paper's real title, authors, URL, DOI, year",
        description="With no option, print the paper's metadata overrides; with options, set"
        " those fields (the others are kept) and print the result. '' clears a field"
        " (--doi '', --year '').",
    )
    _common(p)
    p.add_argument("id", type=_id_argument, metavar="ID")
    p.add_argument("--title", type=_capped("a title", TITLE_MAX))
    p.add_argument(
        "--author",
        action="append",
        metavar="NAME",
        type=_capped("an author's name", AUTHOR_MAX),
        help="repeatable, in order",
    )
    p.add_argument("--url", type=_capped("a URL", URL_MAX))
    p.add_argument("--doi", type=_doi_argument, help="10.NNNN/…, or a https://doi.org/ link to one")
    p.add_argument("--year", type=_year_argument, help="four digits, such as 2026")
    p.add_argument(
        "--venue",
        type=_capped("a venue", AUTHOR_MAX),
        help="the venue as shown and cited ('' clears it: match's or the dump's shows again)",
    )
    p.add_argument("--clear", action="store_true", help="remove every override first")

    from .formats import EXPORT_FORMATS, FORMATS

    p = sub.add_parser("cite", help="print (and copy) citations")
    _common(p)
    p.add_argument("ids", nargs="+", metavar="ID", type=_id_argument)
    p.add_argument(
        "--format",
        "-f",
        choices=FORMATS,
        default=None,
        help="default: the library's setting, else bibtex",
    )
    p.add_argument("--copy", action="store_true", help="also copy to the clipboard")
    _abstract_flag(p)

    p = sub.add_parser("export", help="export a reading list")
    p.raw_epilog = QUERY_HELP
    _common(p)
    _filters(p)
    p.add_argument("--format", "-f", choices=EXPORT_FORMATS, required=True)
    p.add_argument("-o", "--output", metavar="FILE", help="write here (atomically)")
    p.add_argument("--force", action="store_true", help="overwrite an existing FILE")
    _abstract_flag(p)

    p = sub.add_parser(
        "match",
        help="give dump papers their real metadata from metadata files, OpenReview, arXiv",
        description="For each loaded dump paper (its title derived, or only a loaded metadata "
        "file's), find the record that is the "
        "same paper (same abstract after normalisation, tolerant of a sentence added or "
        "dropped) and store its title, authors, year, URL and DOI in the library. Ambiguous "
        "cases are listed with their scores, never written; metadata set by hand is kept "
        "unless --force. Only this command uses the network (--openreview, --arxiv).",
    )
    _common(p)
    p.add_argument(
        "files", nargs="*", metavar="FILE", help="metadata files (.jsonl, .json, .bib, .ris)"
    )
    p.add_argument(
        "--openreview",
        action="append",
        default=[],
        metavar="VENUE_ID",
        help="download (once; then cached) a venue's notes, e.g. NeurIPS.cc/2025/Conference",
    )
    p.add_argument(
        "--arxiv", action="store_true", help="search arXiv for papers still unmatched (slow)"
    )
    p.add_argument("--refresh", action="store_true", help="download OpenReview notes again")
    p.add_argument("--dry-run", action="store_true", help="write nothing; say what would change")
    p.add_argument("--force", action="store_true", help="replace metadata set by hand")
    p.add_argument("--json", action="store_true", help="one JSON line per paper")

    from .formats import DIGEST_FORMATS

    p = sub.add_parser(
        "digest",
        help="a reading digest of the matching papers, grouped by tag",
        description="The matching papers grouped by tag, a paper with several tags under each. "
        "When the selection names tags (-q '#a | #b', --tag a), only those tags are groups: a "
        "paper is under each of them it has, one matched otherwise (-q '#a | word') under "
        '"Other matches". When papers are listed more than once, the heading counts papers and '
        'entries ("5 papers, 7 entries") and says why.',
    )
    p.raw_epilog = QUERY_HELP
    _common(p)
    _filters(p)
    p.add_argument(
        "--since",
        metavar="DATE",
        type=_date_argument,
        help="only papers whose dumps were first seen on or after DATE (YYYY-MM-DD)",
    )
    p.add_argument("--format", "-f", choices=DIGEST_FORMATS, default="markdown")
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write here ('-': standard output); a digest of no paper is refused (exit 1), "
        "FILE left alone",
    )
    p.add_argument("--force", action="store_true", help="overwrite an existing FILE")

    p = sub.add_parser(
        "searches",
        help="saved searches: list them, save one, delete one (-q @NAME runs one)",
        description="Saved searches are named queries kept in the library, shared with the "
        "reader (S names the filter there, @ lists them). `-q @NAME` in list, export and "
        "digest (and @NAME in the reader's filter) stands for the saved query.",
    )
    p.raw_epilog = QUERY_HELP
    _common(p, dumps=False)
    which = p.add_mutually_exclusive_group()
    which.add_argument(
        "--add",
        nargs=2,
        metavar=("NAME", "QUERY"),
        help="save QUERY as NAME (a leading @ is optional, here and in --delete)",
    )
    which.add_argument("--delete", metavar="NAME", help="forget a saved search")
    p.add_argument(
        "--force", action="store_true", help="with --add: replace a search saved with another query"
    )
    p.add_argument("--json", action="store_true", help="JSON Lines: name and query")

    p = sub.add_parser("library", help="export or import the whole library as JSON")
    lib_sub = p.add_subparsers(
        dest="library_command", metavar="ACTION", parser_class=_CommandParser
    )
    lib_sub.required = True
    q = lib_sub.add_parser("export", help="write the library as JSON")
    _common(q, dumps=False)
    q.add_argument("file", help="'-' for standard output")
    q.add_argument("--force", action="store_true")
    q = lib_sub.add_parser(
        "import",
        help="merge a library JSON export (never drops anything; a value the library has is "
        "kept, and a different one in the file is said)",
    )
    _common(q, dumps=False)
    q.add_argument("file")
    q.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help=f"list every value kept over the file's (default: the first {_KEPT_SHOWN} papers)",
    )

    p = sub.add_parser("config", help="the config file: where it is, the settings in effect")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--path", action="store_true", help="print the config file's path")
    which.add_argument(
        "--show", action="store_true", help="print the settings in effect, as TOML (default)"
    )

    from .completion import SHELLS

    p = sub.add_parser(
        "completion",
        help="print a shell completion script",
        description="Print a completion script for SHELL. bash: add "
        f"'source <({PROG} completion bash)' to ~/.bashrc; zsh: "
        f"'source <({PROG} completion zsh)' in ~/.zshrc; fish: "
        f"'{PROG} completion fish > ~/.config/fish/completions/{PROG}.fish'.",
    )
    p.add_argument("shell", choices=SHELLS)
    return parser


def build_reader_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description="Open the reader on dump files or folders (default: the bundled "
        f"NeurIPS 2026 dumps).\nCommands: {', '.join(SUBCOMMANDS)} (see {PROG} --help).",
        epilog=HELP_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    parser.add_argument("paths", nargs="*", metavar="PATH", help="dump files or folders")
    parser.add_argument(
        "-d", "--dump", action="append", metavar="PATH", dest="dumps", type=_path_argument
    )
    parser.add_argument(
        "--bundled",
        action="store_true",
        help="the bundled NeurIPS 2026 dumps too (with PATHs: metadata files to match, say)",
    )
    parser.add_argument("--db", metavar="FILE", type=_path_argument, help="the library file")
    return parser


_JSON_ESCAPES: dict[int, str] = {}


def _json_line(value: object) -> str:
    """One JSON Lines row, readable UTF-8 but with every character that could act on a
    terminal (C1 controls, bidi overrides, line separators) as a \\u escape: json.dumps
    escapes only C0 controls. Those characters can only occur inside strings."""
    text = json.dumps(value, ensure_ascii=False)
    if text.isascii():
        return text + "\n"
    if not _JSON_ESCAPES:
        from .text import escape_for_terminal

        candidates = [*range(0x7F, 0xA0), *range(0x600, 0x700), *range(0x2000, 0x2070)]
        candidates += range(0xD800, 0xE000)  # lone surrogates: bytes of a name not UTF-8
        _JSON_ESCAPES.update(
            (c, f"\\u{c:04x}") for c in candidates if escape_for_terminal(chr(c)) != chr(c)
        )
    return text.translate(_JSON_ESCAPES) + "\n"


def _first_word(argv: Sequence[str]) -> str | None:
    skip = False
    for arg in argv:
        if skip:
            skip = False
            continue
        if arg in ("--db", "-d", "--dump"):
            skip = True
            continue
        if arg == "--":
            return None
        if not arg.startswith("-"):
            return arg
    return None


# ---------------------------------------------------------------------------------------
# Shared steps
# ---------------------------------------------------------------------------------------


def _load(args: argparse.Namespace, *, report: bool = True) -> Corpus:
    """The dumps loaded; their problems reported (`_report_problems`) unless ``report`` is
    False (the caller reports them with its own)."""
    from .corpus import MAX_RECORD_PROBLEMS
    from .corpus_cache import load_corpus_cached
    from .paths import cache_dir

    # -v lists every malformed record of a metadata file (-d); else a file keeps a few
    every = getattr(args, "verbose", False)
    corpus = load_corpus_cached(
        args.dumps,
        cache_dir() / "corpus",
        record_problems=None if every else MAX_RECORD_PROBLEMS,
    )
    if report:
        _report_problems(corpus.errors, args.verbose, corpus.load_summary())
    return corpus


def _report_problems(errors: Sequence[LoadError], verbose: bool, summary: str) -> None:
    """Every command's rule for its load problems: at most `LOAD_PROBLEMS_SHOWN` lines,
    failed paths before warnings, then "… and N more load errors (-v lists them all)",
    then ``summary`` when there are several; -v lists them all (`_MatchProblems` says
    them the same way, as they come)."""
    from .corpus import listed_problems, more_problems

    # (a folder of 10,000 empty files: a dozen lines and a count, not 10,000; -v: all)
    listed, left = listed_problems(errors, len(errors) if verbose else None)
    for problem in listed:
        _error(str(problem) if problem.fatal else f"warning: {problem}")
    if left:
        _error(f"{more_problems(left)} (-v lists them all)")
    if len(errors) > 1:  # one problem is its own line; several get the count too
        _error(summary)


def _open_library(args: argparse.Namespace, *, announce: bool = True) -> Library:
    """The library; its problem (why it is read-only) is printed unless ``announce`` is
    False — a command that writes says it once, with the failed write, via ``_announce``."""
    from .library import Library

    path, named = _library_location(args.db)
    library = Library(path)
    if library.problem and announce:
        _error(library.problem)
    if library.created and named:  # a typo in --db must not look like a library emptied
        _error(f"created a new library at {path}")
    return library


def _library_location(given: str | None) -> tuple[Path, str | None]:
    """The library file (see ``paths.library_location``); a path named by ``--db`` or
    ``ABSTRACT_READER_DB`` in a folder that does not exist is a Failure, nothing created."""
    from .paths import library_location, missing_library_folder

    path, named = library_location(given)
    if named:
        why = missing_library_folder(path)
        if why:
            shown = f"--db {path}" if named == "--db" else f"{named}={path}"
            raise Failure(
                f"{shown}: {why}; a new library is made only in an existing folder "
                "(nothing was created)"
            )
    return path, named


def _resolve(corpus: Corpus, ident: str, *, writing: bool = True) -> str:
    """A paper id from an id or prefix. A full id of an unloaded paper is accepted, with a
    warning (``writing``: that what is written is kept anyway)."""
    import re

    try:
        return corpus.resolve(ident).id
    except LookupError as exc:
        key = ident.strip().lower()
        if re.fullmatch(r"[0-9a-f]{16}", key):
            kept = "; the record is kept anyway" if writing else ""
            _error(f"warning: {key} is not in the loaded dumps{kept}")
            return key
        raise Failure(str(exc)) from None


def _records(corpus: Corpus, library: Library, args: argparse.Namespace) -> list[Record]:
    return list(_iter_records(corpus, library, args))


def _iter_records(
    corpus: Corpus, library: Library, args: argparse.Namespace, *, abstracts: bool = True
) -> Iterator[Record]:
    """The records of the papers asked for, in order, made one at a time (a million-paper
    `list` holds one paper at a time, never a list of them). ``abstracts=False``: records
    with an empty abstract, for output that shows none."""
    from .record import record

    snapshot = library.snapshot
    papers = corpus.papers
    paper = papers.__getitem__ if abstracts else papers.without_abstract
    for row in _rows(corpus, library, args):
        yield record(paper(row), snapshot)


def _rows(corpus: Corpus, library: Library, args: argparse.Namespace) -> Sequence[int]:
    """The corpus rows of the papers asked for (the query, the order, the filters), found
    from the table's columns and the library's entries: no `Paper` is built here."""
    snapshot = library.snapshot
    papers = corpus.papers
    rows: Any = range(len(papers))
    ranked_like = ""
    if getattr(args, "query", None):
        from .saved import SavedSearchError, expand
        from .search import (
            SearchIndex,
            cache_key_for,
            default_cache_dir,
            parse_query,
            parts_asking,
        )

        try:
            parsed = parse_query(expand(library, args.query))  # -q @name: a saved search
        except SavedSearchError as exc:
            raise Failure(str(exc)) from None
        # A script's typo (`is:bookmarkd`) must not turn `export` or `digest` into "every
        # paper": a query with a part that cannot be used is a usage error here (the reader
        # shows such parts in its status line instead). `is:marked` is one here: marks live
        # in a running reader, so it matched nothing, silently (`!is:marked`: everything).
        marks = [(part, NO_MARKS) for part in parts_asking(parsed, "marked")]
        if parsed.mistakes or marks:
            raise _refuse_query(parsed, args.command, "nothing done", marks)
        index = SearchIndex(
            corpus, cache_dir=default_cache_dir(), cache_key=cache_key_for(corpus.files)
        )
        from .metadata import title_overrides, venue_overrides, year_overrides
        from .seen import WithNew

        index.set_title_overrides(title_overrides(snapshot))
        index.set_year_overrides(year_overrides(snapshot))
        index.set_venue_overrides(venue_overrides(snapshot))
        # exact for export (no phrase limit); WithNew answers is:new
        result = index.search(parsed, WithNew(library, corpus), phrase_limit=None)
        if result.query.mistakes:  # (`like:` of no paper is found searching)
            raise _refuse_query(result.query, args.command, "nothing done")
        for part in result.ignored:
            _error(f"warning: {part}")
        if result.ranked_like and getattr(args, "command", "") == "list":
            ranked_like = result.ranked_like
        rows = result.order
    found = _filtered_rows(rows, library, papers, args)
    if ranked_like:  # said with --json too (on stderr); the count is of the papers listed
        _note(f"{papers_phrase(len(found))}, {ranked_like}")
    return found


def _filtered_rows(
    rows: Any, library: Library, papers: Any, args: argparse.Namespace
) -> Sequence[int]:
    """``rows`` (the query's order, or every row) in the order asked for, only the papers
    with the tags and marks asked for."""
    snapshot = library.snapshot
    sort = getattr(args, "sort", "relevance")
    wanted_tags = [t.casefold() for t in (getattr(args, "tag", None) or [])]
    if wanted_tags:  # a mistyped --tag matches nothing: say so, with the nearest names
        from .tagnames import no_paper_tagged

        for tag in dict.fromkeys(args.tag):
            ids = library.ids_with_tag(tag)
            if not ids or not papers.rows_of(ids):
                _error(f"warning: {no_paper_tagged(tag, library.tag_names(), loaded=bool(ids))}")
    bookmarked = getattr(args, "bookmarked", False)
    unread = getattr(args, "unread", False)
    if sort == "relevance" and not (wanted_tags or bookmarked or unread):
        return rows if isinstance(rows, range) else rows.tolist()
    import numpy as np

    rows = np.asarray(rows, np.int64)
    if sort != "relevance":  # the reader's orders (sorting.sort_rows), stable
        from .sorting import sort_rows

        rows = rows[sort_rows(sort, rows, snapshot, papers)]
    keep = np.ones(len(papers), bool)

    def only(ids: Iterable[str], *, inside: bool) -> None:
        mask = np.zeros(len(papers), bool)
        mask[papers.rows_of(ids)] = True
        keep[...] &= mask if inside else ~mask

    if bookmarked:
        only(snapshot.bookmarks, inside=True)
    if unread:
        only(snapshot.read, inside=False)
    if wanted_tags:
        only(
            (
                pid
                for pid, names in snapshot.tags.items()
                if all(t in {n.casefold() for n in names} for t in wanted_tags)
            ),
            inside=True,
        )
    return rows[keep[rows]].tolist()  # type: ignore[no-any-return]


# ---------------------------------------------------------------------------------------
# Subcommands
# ---------------------------------------------------------------------------------------


def cmd_list(args: argparse.Namespace) -> int:
    corpus = _load(args)
    library = _open_library(args)
    records = _iter_records(corpus, library, args, abstracts=args.json)
    out = sys.stdout
    from .metadata import venue_label
    from .text import shown_title

    if args.json:
        from .cite import json_record

        for rec in records:
            out.write(_json_line(json_record(rec)))
    else:
        for rec in records:
            venue = venue_label(rec.venue, rec.year)
            flags = ("★" if rec.bookmarked else " ") + (" " if rec.read else "•")
            tags = f"  [{', '.join(rec.tags)}]" if rec.tags else ""
            title = shown_title(rec.title)
            _say(out, f"{rec.id[:12]}  {flags}  {venue:<13}  {title}{tags}")
    return 1 if corpus.fatal_errors else 0


def cmd_show(args: argparse.Namespace) -> int:
    from .metadata import venue_label
    from .paper import SOURCES_SHOWN
    from .record import record
    from .text import cap, escape_for_terminal, render, shown_title

    corpus = _load(args)
    library = _open_library(args)
    try:
        paper = corpus.resolve(args.id)
    except LookupError as exc:
        raise Failure(str(exc)) from None
    rec = record(paper, library.snapshot)
    if args.json:  # the paper's `list --json` line, by the same serialiser
        from .cite import json_record

        sys.stdout.write(_json_line(json_record(rec)))
        return 1 if corpus.fatal_errors else 0
    width = min(100, shutil.get_terminal_size((100, 24)).columns)
    lines = [shown_title(rec.title) + ("   (derived title)" if rec.title_derived else "")]
    lines.append("=" * min(width, len(lines[0])))
    lines.append(f"id:        {rec.id}")
    lines.append(f"venue:     {venue_label(rec.venue, rec.year)}")
    # a name escaped: it may hold a newline (a fake line after it); a paper found a
    # million times (one abstract repeated in a dump) names SOURCES_SHOWN, unless --full
    shown = rec.sources if args.full else rec.sources[:SOURCES_SHOWN]
    more = len(rec.sources) - len(shown)
    lines.append(
        "sources:   "
        + ", ".join(f"{escape_for_terminal(s['file'])} #{s['index']}" for s in shown)
        + (f", … and {more:,} more (--full names them all)" if more else "")
    )
    if rec.authors:
        lines.append("authors:   " + ", ".join(rec.authors))
    if rec.url:
        lines.append(f"url:       {rec.url}")
    if rec.doi:
        lines.append(f"doi:       {rec.doi}")
    if rec.eprint:
        category = f" [{rec.primary_class}]" if rec.primary_class else ""
        lines.append(f"arXiv:     {rec.eprint}{category}")
    lines.append(f"metadata:  {_origin(rec)}")
    lines.append(f"tags:      {', '.join(rec.tags) if rec.tags else '-'}")
    lines.append(
        f"state:     {'bookmarked, ' if rec.bookmarked else ''}{'read' if rec.read else 'unread'}"
    )
    lines.append("")
    rendered = render(paper.abstract, None if args.full else SHOW_LIMIT)  # cut, then render
    text, cut = cap(rendered.text, SHOW_LIMIT) if not args.full else (rendered.text, 0)
    cut += rendered.cut
    lines.extend(textwrap.wrap(text, width=width) or [""])
    if cut:
        lines.append(f"… {cut:,} more characters (use --full to show everything)")
    if rec.note:
        lines.append("")
        lines.append("note:")
        lines.extend("  " + line for line in rec.note.splitlines())
    _say(sys.stdout, "\n".join(lines))
    return 1 if corpus.fatal_errors else 0


def _origin(rec: Record) -> str:
    """Where the shown metadata comes from, for ``show``."""
    prov = rec.provenance
    if rec.origin == "match" and prov is not None:
        return prov.describe()
    if rec.origin == "hand":
        was = (
            f" (first matched from {prov.source} record {prov.record})"
            if prov is not None and prov.source != "hand"  # (not a venue set by hand alone)
            else ""
        )
        return "set by hand" + was
    if rec.origin == "record":
        return "from the paper's source record"
    return "none (title derived from the abstract)"


def _write_action(args: argparse.Namespace, action: Callable[[Library, list[str]], str]) -> int:
    from .library import LibraryError

    corpus = _load(args)
    library = _open_library(args, announce=False)
    raw_ids = [args.id] if hasattr(args, "id") and not hasattr(args, "ids") else args.ids
    # a paper named twice (`bookmark A A`, an id and its prefix) is one paper, counted once
    raw_ids = list(dict.fromkeys(i.strip().lower() for i in raw_ids))
    # (`note ID`, `meta ID` with nothing to set only read: no "record kept anyway")
    reading = args.command == "note" and args.text is None
    reading = reading or (args.command == "meta" and not _meta_changes(args))
    ids = list(dict.fromkeys(_resolve(corpus, i, writing=not reading) for i in raw_ids))
    if args.command in ("tag", "untag"):
        _refuse_ids_as_tags(corpus, args.command, args.tags)
    try:
        message = action(library, ids)
    except LibraryError as exc:
        raise Failure(str(exc)) from None  # a read-only library's reason is in it, once
    if library.problem:  # nothing needed writing: still say the library is read-only
        _error(library.problem)
    if message:
        _say(sys.stdout, message)
    return 1 if corpus.fatal_errors else 0


#: a tag argument this long, all hex digits, naming a loaded paper is taken for an id
_ID_LIKE_TAG = re.compile(r"[0-9a-f]{8,16}")


def _refuse_ids_as_tags(corpus: Corpus, command: str, tags: Sequence[str]) -> None:
    """``tag A B x`` reads as "tag A and B with x" but tagged A with "B" and "x": a tag
    argument that is a loaded paper's id (8 or more hex digits) is a usage error."""
    for raw in tags:
        if not _ID_LIKE_TAG.fullmatch(raw.strip().lower()):
            continue
        try:
            paper = corpus.resolve(raw)
        except LookupError:
            continue
        raise _Usage(
            f"{raw!r} is the id of a loaded paper ({paper.id[:12]}), not a tag: {command} "
            f"takes one paper, then its tags ({command} ID1 TAG, then {command} ID2 TAG); "
            "nothing changed"
        )


#: tag names match as the library's do (SQLite NOCASE: only ASCII letters fold)
_TAG_NOCASE = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def cmd_tag(args: argparse.Namespace) -> int:
    def act(library: Library, ids: list[str]) -> str:
        from .library import clean_tag

        had = {name.translate(_TAG_NOCASE) for name in library.snapshot.tags.get(ids[0], [])}
        names: dict[str, str] = {}
        for raw in args.tags:  # (the arguments are valid tags: `_tag_checked`)
            names.setdefault(clean_tag(raw).translate(_TAG_NOCASE), clean_tag(raw))
        if args.command == "tag":
            library.add_tags(ids, args.tags)
            same = [name for key, name in names.items() if key in had]
            state, verb = "already had", "added"
        else:
            library.remove_tags(ids, args.tags)
            same = [name for key, name in names.items() if key not in had]
            state, verb = "had no", "removed"
        if same:  # nothing to add or remove is no failure (exit 0), but said
            noun = noun_for(len(same), "tag")
            left = f"nothing {verb}" if len(same) == len(names) else f"the rest {verb}"
            _error(f"{ids[0][:12]} {state} {noun} {', '.join(repr(m) for m in same)}; {left}")
        return f"{ids[0][:12]}: {', '.join(library.snapshot.tags.get(ids[0], [])) or '(no tags)'}"

    return _write_action(args, act)


#: papers named by id in one line (`bookmark` of papers already so) before "and N more"
_IDS_NAMED = 12


def _ids_named(ids: Sequence[str]) -> str:
    """Short ids for a one-line message: the first `_IDS_NAMED`, then how many more."""
    named = ", ".join(pid[:12] for pid in ids[:_IDS_NAMED])
    more = len(ids) - _IDS_NAMED
    return f"{named} and {count_phrase(more, 'other paper')}" if more > 0 else named


def cmd_bookmark(args: argparse.Namespace) -> int:
    def act(library: Library, ids: list[str]) -> str:
        if args.command == "bookmark":
            changed = library.set_bookmark(ids, not args.off)
            verb = "unbookmarked" if args.off else "bookmarked"
            state = "not bookmarked" if args.off else "already bookmarked"
        else:
            changed = library.set_read(ids, not args.off)
            verb = "marked unread" if args.off else "marked read"
            state = "already unread" if args.off else "already read"
        done = set(changed)
        same = [pid for pid in ids if pid not in done]
        if same:  # nothing to do is no failure (exit 0), but said, as `untag` says it
            was = "was" if len(same) == 1 else "were"
            left = f"the rest {verb}" if changed else "nothing changed"
            _error(f"{_ids_named(same)} {was} {state}; {left}")
        # the count is of what changed: stdout says nothing when nothing did
        return f"{papers_phrase(len(changed))} {verb}" if changed else ""

    return _write_action(args, act)


def cmd_tags(args: argparse.Namespace) -> int:
    from .library import LibraryError, TagExists

    if args.merge and not args.rename:
        raise _Usage("--merge goes with --rename OLD NEW (a rename onto an existing tag)")
    corpus = _load(args)
    writing = bool(args.rename or args.delete)
    library = _open_library(args, announce=not writing)
    try:
        if args.rename:
            from .library import clean_tag

            old = clean_tag(args.rename[0])
            if old.translate(_TAG_NOCASE) not in {
                name.translate(_TAG_NOCASE) for name, _count in library.tag_counts()
            }:  # as `--delete` of a missing name: nothing to do is said, not a failure
                _error(f"no tag named {old!r}; nothing renamed")
            else:
                library.rename_tag(*args.rename, merge=args.merge)
        before = library.tag_counts()
        names = {name.translate(_TAG_NOCASE) for name, _count in before}
        if args.delete and args.delete.translate(_TAG_NOCASE) not in names:
            _error(f"no tag named {args.delete!r}; nothing removed")  # (done: not a failure)
        elif args.delete:
            library.delete_tag(args.delete)
            left = {name for name, _count in library.tag_counts()}
            for name, count in before:  # said: the list below simply no longer shows it
                if name not in left:
                    _error(f"tag {name!r} removed from {papers_phrase(count)}")
    except TagExists as exc:
        raise Failure(
            f"a tag named {exc.new!r} already exists; pass --merge to merge {exc.old!r} into it"
        ) from None
    except LibraryError as exc:
        raise Failure(str(exc)) from None
    counts = library.tag_counts()
    if not counts and not writing:  # (on stderr, with --json too: stdout stays empty)
        _note(f"no tags yet (tag a paper: {PROG} tag ID NAME)")
    loaded = set(corpus.papers.ids())
    orphans = sorted(library.snapshot.paper_ids() - loaded)
    if args.json:  # JSON Lines, as list --json and searches --json; the rest on stderr
        for name, count in counts:
            sys.stdout.write(_json_line({"tag": name, "count": count}))
        if orphans:
            are, them = ("is", "it") if len(orphans) == 1 else ("are", "them")
            _note(
                f"{papers_phrase(len(orphans))} with records {are} not in the loaded dumps"
                f" (tags without --json lists {them})"
            )
        return 1 if corpus.fatal_errors else 0
    for name, count in counts:
        _say(sys.stdout, f"{count:6d}  {name}")
    if orphans:
        are = "is" if len(orphans) == 1 else "are"
        _say(
            sys.stdout, f"{papers_phrase(len(orphans))} with records {are} not in the loaded dumps:"
        )
        for pid in orphans:
            _say(sys.stdout, f"  {pid}  {_kept_for(pid, library.snapshot)}")
    return 1 if corpus.fatal_errors else 0


def _kept_for(paper_id: str, snapshot: Snapshot) -> str:
    """What the library holds for a paper (its title when it has one, tags, marks, note), to
    know a paper that is not in the loaded dumps again."""
    from .text import shorten, shown_title

    said: list[str] = []
    meta = snapshot.metadata.get(paper_id)
    if meta is not None and meta.title:
        said.append(f"“{shorten(shown_title(meta.title), 60)}”")
    tags = snapshot.tags.get(paper_id, [])
    if tags:
        said.append("tags: " + ", ".join(tags))
    marks = (
        ("bookmarked", paper_id in snapshot.bookmarks),
        ("read", paper_id in snapshot.read),
        ("a note", paper_id in snapshot.notes),
        ("metadata", meta is not None and not meta.title and not meta.empty),
    )
    said += [mark for mark, on in marks if on]
    return " · ".join(said)


def _was(text: str) -> str:
    """Text a write replaced, for the line that says so: quoted, on one line (line breaks as
    \\n), whole when short enough to copy back, else its start and its length."""
    if len(text) > 500:
        return json.dumps(text[:200], ensure_ascii=False)[:-1] + f'…" ({len(text):,} characters)'
    return json.dumps(text, ensure_ascii=False)


def cmd_note(args: argparse.Namespace) -> int:
    def act(library: Library, ids: list[str]) -> str:
        pid = ids[0]
        before = library.snapshot.notes.get(pid, "")
        if args.text is None:
            return before
        library.set_note(pid, args.text)
        after = library.snapshot.notes.get(pid, "")
        # Said on stderr: an empty shell variable (`note ID "$TEXT"`) must not wipe a note
        # without a word. The CLI has no undo (the reader's `u` undoes only its own changes).
        if before and not after:
            _error(
                f"note cleared on {pid[:12]}; it was {_was(before)} (the CLI has no undo; "
                f"`{PROG} note {pid[:12]} TEXT` sets it again)"
            )
        elif before and after != before:
            _error(f"note replaced on {pid[:12]}; it was {_was(before)}")
        elif not before and not after:
            _error(f"{pid[:12]} had no note; nothing cleared")
        return ""

    return _write_action(args, act)


def _meta_changes(args: argparse.Namespace, *, venue: bool = True) -> bool:
    """Whether `meta` was asked to set anything (else it prints the paper's metadata);
    without ``venue``, anything but the venue (kept apart, with match's provenance)."""
    fields = [args.title, args.author, args.url, args.doi, args.year]
    if venue:
        fields.append(args.venue)
    return bool(args.clear) or any(v is not None for v in fields)


def _hand_venue(library: Library, pid: str) -> str | None:
    from .metadata import provenance

    prov = provenance(library.snapshot, pid)
    return prov.hand_venue if prov is not None else None


def _set_venue(library: Library, pid: str, venue: str | None, clear: bool) -> None:
    """``meta --venue`` (``--clear`` clears a venue set by hand too, then sets this one)."""
    from .metadata import set_venue

    if venue is not None or _hand_venue(library, pid):
        set_venue(library, pid, venue if venue is not None else None)


def cmd_meta(args: argparse.Namespace) -> int:
    from .library import Metadata

    def act(library: Library, ids: list[str]) -> str:
        pid = ids[0]
        current = library.snapshot.metadata.get(pid, Metadata())
        if _meta_changes(args, venue=False):
            base = Metadata() if args.clear else current
            library.set_metadata(
                pid,
                Metadata(
                    title=args.title if args.title is not None else base.title,
                    authors=tuple(args.author) if args.author is not None else base.authors,
                    url=args.url if args.url is not None else base.url,
                    doi=args.doi if args.doi is not None else base.doi,
                    year=(args.year or None) if args.year is not None else base.year,
                ),
            )
            if args.url:  # saved as given, but said now rather than only when `O` refuses it
                from .text.links import refusal
                from .text.sanitise import valid_text

                why = refusal(args.url)
                if why and valid_text(args.url) != args.url:  # a byte not UTF-8: named as
                    why += ", saved as \ufffd"  # typed (\x9b), and as what the library keeps
                if why:
                    _error(
                        "warning: --url is saved, but the reader will not open it"
                        f" and citations leave it out: {why}"
                    )
        if args.venue is not None or args.clear:  # (kept with match's provenance)
            _set_venue(library, pid, args.venue, args.clear)
        meta = library.snapshot.metadata.get(pid, Metadata())
        return (
            "\n".join(
                f"{key + ':':9} {', '.join(value) if isinstance(value, list) else value}"
                for key, value in {**meta.as_dict(), "venue": _hand_venue(library, pid)}.items()
                if value
            )
            or f"{pid[:12]}: no metadata overrides"
        )

    return _write_action(args, act)


def cmd_cite(args: argparse.Namespace) -> int:
    from .cite import format_records
    from .clipboard import copy
    from .formats import FORMAT_NAMES, FORMATS
    from .record import record

    corpus = _load(args)
    library = _open_library(args)
    # a paper named twice (an id and its prefix) is cited once: one BibTeX key, one count
    papers: dict[str, Paper] = {}
    for ident in args.ids:
        try:
            paper = corpus.resolve(ident)
        except LookupError as exc:
            raise Failure(str(exc)) from None
        papers.setdefault(paper.id, paper)
    # `d` in the reader's citation picker, else the config file's, else BibTeX (as `c`)
    fmt = args.format or library.setting("cite_format") or _config_citation_format() or "bibtex"
    if fmt not in FORMATS:  # a setting written by another tool or version
        _error(f"warning: unknown citation format {fmt!r} in the library's settings; using bibtex")
        fmt = "bibtex"
    text = format_records(
        [record(p, library.snapshot) for p in papers.values()],
        fmt,
        with_abstract=_with_abstract(args, library, fmt),
    )
    sys.stdout.write(text)
    if args.copy:
        sys.stdout.flush()
        result = copy(text)
        count = papers_phrase(len(papers))
        if not result.ok:
            raise Failure(f"could not copy: {result.detail}")
        _note(f"Copied {FORMAT_NAMES[fmt]} for {count} ({result.method})")
    return 1 if corpus.fatal_errors else 0


def cmd_export(args: argparse.Namespace) -> int:
    from .cite import export_to_file, format_records
    from .outfile import OutputError

    corpus = _load(args)
    library = _open_library(args)
    records = _records(corpus, library, args)
    with_abstract = _with_abstract(args, library, args.format)
    to_file = bool(args.output and args.output != "-")
    if not records:  # an export of nothing would empty the file (an old export, say); on
        # standard output a blank line or a bare CSV header, exit 0, read as "it worked"
        where = f"{args.output} not written" if to_file else "nothing written"
        raise Failure(f"nothing to export: no paper matches; {where}")
    if to_file:
        try:  # the reader's export dialog writes through the same function
            export_to_file(
                records,
                args.format,
                Path(args.output),
                force=args.force,
                with_abstract=with_abstract,
            )
        except OutputError as exc:
            raise Failure(str(exc)) from None
        _note(f"Exported {papers_phrase(len(records))} to {args.output}")
    else:
        sys.stdout.write(format_records(records, args.format, with_abstract=with_abstract))
    return 1 if corpus.fatal_errors else 0


def cmd_library(args: argparse.Namespace) -> int:
    from .library import LibraryError, ReadOnlyLibrary
    from .library.interchange import parse_export

    if args.library_command == "export":
        library = _open_library(args)
        # allow_nan=False: only valid JSON leaves (the store never yields NaN or Infinity).
        text = json.dumps(library.export_data(), ensure_ascii=False, indent=2, allow_nan=False)
        if args.file == "-":
            sys.stdout.write(text + "\n")
        else:
            _write_file(args.file, text + "\n", force=args.force)
            _note(f"Exported the library to {args.file}")
        return 0
    from .infile import NotRegular, TooLarge, read_limited, read_whole

    try:  # (a regular file, or standard input, of at most infile.MAX_WHOLE_BYTES)
        data = read_limited(sys.stdin.buffer) if args.file == "-" else read_whole(args.file)
    except (OSError, NotRegular, TooLarge) as exc:
        raise Failure(
            f"{args.file}: cannot read ({getattr(exc, 'strerror', None) or exc})"
        ) from None
    try:
        raw = data.decode("utf-8")
    except UnicodeDecodeError as exc:  # (Python's wording names a codec, not the file)
        if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
            raise Failure(f"{args.file}: UTF-16 text, not UTF-8; save it as UTF-8") from None
        raise Failure(
            f"{args.file}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset "
            f"{exc.start:,}); a library export is UTF-8 JSON"
        ) from None
    try:
        data = parse_export(raw)
    except LibraryError as exc:
        raise Failure(f"{args.file}: {exc}") from None
    library = _open_library(args, announce=False)
    try:
        imported = library.import_data(data)
    except ReadOnlyLibrary as exc:
        raise Failure(str(exc)) from None
    except LibraryError as exc:
        raise Failure(f"{args.file}: {exc}") from None
    _report_kept(imported.kept, args.verbose)
    _report_refused(imported, args.verbose)
    summary = f"Merged records of {papers_phrase(imported.papers)} from {args.file}"
    if imported.changed < imported.papers:  # (an import run twice: not a claim of changes)
        summary += (
            f" ({imported.changed:,} changed here, the rest had nothing new)"
            if imported.changed
            else " (nothing new: this library had all of them)"
        )
    papers_kept = sum(1 for key in imported.kept if key)
    if papers_kept:
        fields = any(
            k.what != "match record" for key, kept in imported.kept.items() if key for k in kept
        )
        how = f"; `{PROG} meta ID` sets any of them" if fields else ""
        summary += (
            f"; where {papers_phrase(papers_kept)} had other values in the file, this "
            f"library's were kept (listed above{how})"
        )
    _note(summary)
    return 0


_KEPT_SHOWN = 12  #: papers whose kept values `library import` lists without -v


def _report_kept(kept: dict[str, list[Kept]], verbose: bool) -> None:
    """One line per paper (and one for the settings) naming each value the library kept over
    the import's different one, and the import's, so it can be typed back."""

    def values(items: list[Kept]) -> str:
        return "; ".join(f"{k.what} {_was(k.ours)} (the file's: {_was(k.theirs)})" for k in items)

    papers = [pid for pid in kept if pid]
    shown = papers if verbose else papers[:_KEPT_SHOWN]
    for pid in shown:
        _error(f"{pid[:12]} kept its {values(kept[pid])}")
    if len(papers) > len(shown):
        _error(f"… and {len(papers) - len(shown):,} more (-v lists every paper)")
    if "" in kept:
        _error(f"kept this library's {values(kept[''])}")


def _report_refused(imported: Imported, verbose: bool) -> None:
    """The papers the file listed more than once (their records merged), then one line per
    value not imported (a DOI or URL `meta` refuses, a repeated record's other value): the
    first `_KEPT_SHOWN` of each unless -v, then how many more."""
    repeated = list(imported.repeated.items())
    shown = repeated if verbose else repeated[:_KEPT_SHOWN]
    for pid, times in shown:
        _error(f"{pid[:12]} is in the file {times} times; its records were merged")
    if len(repeated) > len(shown):
        _error(
            f"… and {len(repeated) - len(shown):,} more papers listed more than once (-v lists them)"
        )
    lines = [
        f"{pid[:12] + ': ' if pid else ''}{r.what} {_was(r.value)} not imported: {r.why}"
        for pid, values in imported.refused.items()
        for r in values
    ]
    for line in lines if verbose else lines[:_KEPT_SHOWN]:
        _error(line)
    if not verbose and len(lines) > _KEPT_SHOWN:
        _error(f"… and {len(lines) - _KEPT_SHOWN:,} more values not imported (-v lists them)")


def _progress(text: str) -> None:
    _say(sys.stderr, text)


def cmd_match(args: argparse.Namespace) -> int:
    # the dumps' problems and the metadata files' malformed records are reported together,
    # under the rule of every command's load problems (`_report_problems`): the dumps' at
    # once, before the matching (which can take minutes), the files' as they are read
    corpus = _load(args, report=False)
    problems = _MatchProblems(corpus, args.verbose)
    problems.start()
    try:
        return _match(args, corpus, problems)
    finally:
        problems.report()


class _MatchProblems:
    """The load problems of `match`, said as they are known: the dumps' (with the metadata
    files loaded with -d) before the matching starts, then each metadata file's malformed
    records as warnings naming the file, while it is read; at the end, the count of those
    not listed and the summary. The rule is `_report_problems`'s: at most
    `LOAD_PROBLEMS_SHOWN` lines, failed paths first; -v lists every one. Nothing is kept
    (a wrong 3M-line file can be all malformed records): the others are counted."""

    def __init__(self, corpus: Corpus, verbose: bool) -> None:
        self.corpus = corpus
        self.verbose = verbose
        self.listed = 0  #: problem lines said so far
        self.count = 0  #: problems, said or not
        self.left: list[LoadError] = []  #: the dumps' problems not listed
        self.unkept = 0  #: the files' problems not listed
        self.warned = {e.path for e in corpus.errors if not e.fatal}
        self.read: list[str] = []  #: metadata files read that the dumps' load did not

    def _say(self, problem: LoadError) -> None:
        _error(str(problem) if problem.fatal else f"warning: {problem}")
        self.listed += 1

    def start(self) -> None:
        """Say the dumps' problems (as many as the rule lists), before any matching."""
        from .corpus import listed_problems

        errors = self.corpus.errors
        listed, self.left = listed_problems(errors, len(errors) if self.verbose else None)
        for problem in listed:
            self._say(problem)
        self.count = len(errors)

    def add(self, shown: str, message: str) -> None:
        from .corpus import LOAD_PROBLEMS_SHOWN, LoadError

        self.warned.add(shown)
        self.count += 1
        if self.verbose or self.listed < LOAD_PROBLEMS_SHOWN:
            self._say(LoadError(shown, message, fatal=False))
        else:
            self.unkept += 1

    def report(self) -> None:
        """The count of the problems not listed, then the summary (as `_report_problems`)."""
        from .corpus import load_summary, more_problems

        if self.left or self.unkept:
            _error(f"{more_problems(self.left, self.unkept)} (-v lists them all)")
        if self.count > 1:  # one problem is its own line; several get the count too
            failed = len({e.path for e in self.corpus.errors if e.fatal})
            loaded = len(self.corpus.files) + len(self.read)
            _error(load_summary(loaded, len(self.warned), failed))


def _match(args: argparse.Namespace, corpus: Corpus, problems: _MatchProblems) -> int:
    from . import match, net
    from .library import LibraryError
    from .paths import cache_dir
    from .sources import RecordProblem, SourceError
    from .text import render

    if not (args.files or args.openreview or args.arxiv or corpus.metadata_files):
        raise _Usage("match: give metadata FILEs, --openreview VENUE_ID or --arxiv")
    library = _open_library(args)
    snapshot = library.snapshot
    todo, kept = match.targets(corpus, snapshot, args.force)
    matcher = match.Matcher((p.id, p.abstract) for p in todo)

    def feed(path: Path, shown: str, *, loaded: bool = False) -> None:
        """``loaded``: a metadata file the dumps' load read (-d): its problems are among
        theirs already."""

        def problem(item: RecordProblem) -> None:
            problems.add(shown, str(item))

        try:
            match.feed_file(matcher, path, None if loaded else problem)
        except SourceError as exc:
            raise Failure(f"{shown}: {exc}") from None
        if not loaded:
            problems.read.append(shown)

    for name in args.files:
        feed(Path(name), name)
    for name in corpus.metadata_files:
        feed(Path(name), name, loaded=True)
    for venue in args.openreview:
        try:
            cache, fresh = net.openreview_notes(
                venue, cache_dir() / "net", _progress, refresh=args.refresh
            )
        except net.NetworkError as exc:
            raise Failure(f"{exc} (nothing written)") from None
        if fresh:
            _progress(f"OpenReview {venue}: downloaded; cached in {cache}")
        else:
            _progress(f"OpenReview {venue}: using the cached download {cache} (--refresh to renew)")
        feed(cache, str(cache))
    verdicts = {v.paper_id: v for v in matcher.verdicts()}
    if args.arxiv:
        client = net.ArxivClient(_progress)
        pending = [p for p in todo if verdicts[p.id].status == "unmatched"]
        found = 0
        for n, paper in enumerate(pending, start=1):
            phrase = net.distinctive_phrase(render(paper.abstract).text)
            if phrase is None:
                continue
            try:
                results = client.search_phrase(phrase)
            except net.NetworkError as exc:
                raise Failure(f"{exc} (nothing written)") from None
            one = match.Matcher([(paper.id, paper.abstract)])
            for rec in results:
                one.feed(rec)
            verdict = match.decide(paper.id, matcher.found[paper.id] + one.found[paper.id])
            verdicts[paper.id] = verdict
            found += verdict.status == "matched"
            _progress(f"arXiv: {n}/{len(pending)} searched, {found} matched")
    planned = match.outcomes(todo, verdicts, snapshot, kept)
    written = 0
    if not args.dry_run:
        try:
            written = match.write(library, planned)
        except LibraryError as exc:
            raise Failure(str(exc)) from None
    _match_report(planned, args, written)
    return 1 if corpus.fatal_errors else 0


def _match_report(planned: list[Any], args: argparse.Namespace, written: int) -> None:
    out = sys.stdout
    counts = dict.fromkeys(("matched", "ambiguous", "unmatched", "kept"), 0)
    due = 0
    for o in planned:
        counts[o.status] += 1
        due += o.changed
        cands = [
            {
                "source": c.record.source,
                "record": c.record.record_id,
                "score": c.score,
                "title": c.record.title,
            }
            for c in o.verdict.candidates
        ]
        if args.json:
            best = o.verdict.best if o.status == "matched" else None
            line = {
                "id": o.paper.id,
                "status": o.status,
                "change": o.changed,
                "written": o.changed and not args.dry_run,
                "score": best.score if best else None,
                "record": cands[0] if best else None,
                "candidates": cands,
                **({"reason": o.reason} if o.reason else {}),
            }
            out.write(json.dumps(line, ensure_ascii=False) + "\n")
        elif o.status == "matched" and o.changed:
            best = o.verdict.best
            verb = "would write" if args.dry_run else "matched"
            _say(
                out,
                f"{verb:<11} {o.paper.short_id}  {best.record.title}  ← "
                f"{best.record.source}:{best.record.record_id} (score {best.score:.0f})",
            )
        elif o.status == "ambiguous":
            _say(out, f"ambiguous   {o.paper.short_id}  {o.paper.title}")
            if o.reason:
                _say(out, f"    not written: {o.reason}")
            for c in cands:
                _say(out, f"    {c['score']:5.1f}  {c['source']}:{c['record']}  {c['title']}")
    total = len(planned)
    done = (
        f"{due} would be written" if args.dry_run else
        f"{written} written, {counts['matched'] - written} already there"
    )  # fmt: skip
    summary = (
        f"{papers_phrase(total)} from the dumps: {counts['matched']} matched ({done}), "
        f"{counts['ambiguous']} ambiguous, {counts['unmatched']} unmatched, "
        f"{counts['kept']} kept (set by hand; --force replaces)"
    )
    if args.dry_run:
        summary += "; dry run: nothing written"
    _say(sys.stderr if args.json else out, summary)


class _Usage(Exception):
    """A usage error found after parsing: exit 2."""


def cmd_completion(args: argparse.Namespace) -> int:
    from .completion import script, spec

    sys.stdout.write(script(args.shell, spec(build_parser(), build_reader_parser())))
    return 0


def _complete_helper(argv: list[str]) -> int:
    """``__complete tags [--db FILE]``: tag names, one a line, for the completion scripts.
    Fast and quiet: no dumps, no library upgrade, nothing on stderr, exit 0 regardless."""
    from .completion import tag_names
    from .paths import default_db_path

    if argv[:1] != ["tags"]:
        return 0
    db = default_db_path()
    if len(argv) >= 3 and argv[1] == "--db":
        db = Path(argv[2]).expanduser()
    for name in tag_names(db):
        sys.stdout.write(name + "\n")
    return 0


def _config_citation_format() -> str | None:
    """The config file's ``citation_format``; its problems are said (one line each), as
    the reader says them: a broken file must not pass for a BibTeX default unexplained."""
    from .config import config_path, load_config

    config, warnings = load_config(config_path())
    for warning in warnings:
        _error(f"warning: {warning}")
    return config.citation_format


def cmd_config(args: argparse.Namespace) -> int:
    from .config import config_path, file_state, load_config, to_toml

    path = config_path()
    if args.path:
        _say(sys.stdout, str(path))
        return 0
    config, warnings = load_config(path)
    notes: dict[str, tuple[bool, str]] = {}
    effects: list[str] = []  # what a remap did, the file in effect as written: not a failure
    if config.keys:  # checked against the reader's bindings, as the reader does at start-up
        from .tui.keymap import not_in_effect, resolve_keys  # (Textual's key names)

        settings = resolve_keys(config)
        warnings += settings.warnings
        effects = settings.notes
        notes = not_in_effect(config, settings)  # (an ignored entry is not shown as set)
    for warning in warnings:
        _error(warning)
    state = file_state(path)
    exists = "" if state is None else f" ({state}: these are the defaults)"
    _say(sys.stdout, f"# {path}{exists}\n" + to_toml(config, notes).rstrip("\n"))
    kept = _reader_settings(config)
    if kept:
        _say(sys.stdout, "\n" + kept.rstrip("\n"))
    return 1 if any(w not in effects for w in warnings) else 0


def _reader_settings(config: Config) -> str:
    """The settings the reader keeps in the library (`d` in the citation picker, the
    palette's auto-read toggle, the last theme) where they change what is in effect, as
    TOML comments naming what wins; "" when none does. The library is only read: a
    missing one is not made."""
    from .config import toml_value
    from .library import Library
    from .paths import default_db_path

    db = default_db_path()
    if not db.is_file():
        return ""
    with Library(db) as library:
        cite, auto, theme = (library.setting(k) for k in ("cite_format", "auto_read", "theme"))
    lines: list[str] = []
    if cite:
        lines.append(
            f"# citation_format = {toml_value(cite)}  (C, then d, in the reader: what c copies"
            " and cite prints, over the file's)"
        )
    if auto == "off" and config.auto_read:
        lines.append(
            "# auto_read = false  (the palette's Toggle auto-read: no paper is marked read"
            " by being shown, whatever the file says)"
        )
    if theme and not config.theme:
        lines.append(f"# theme = {toml_value(theme)}  (the last theme chosen in the reader)")
    if not lines:
        return ""
    return f"# In effect, set in the reader and kept in the library ({db}):\n" + "\n".join(lines)


def cmd_digest(args: argparse.Namespace) -> int:
    from datetime import UTC, datetime

    from .digest import digest
    from .seen import ids_seen_since, record_seen

    since = None
    if args.since:  # (a date: `_date_argument` checked it)
        since = datetime.fromisoformat(args.since)
        since = since if since.tzinfo else since.replace(tzinfo=UTC)
    corpus = _load(args)
    library = _open_library(args)
    record_seen(library, corpus.files)  # dumps never seen before are new as of now
    records = _records(corpus, library, args)
    # a digest of nothing is refused as `export` refuses it: it would replace last week's
    # digest (with --force), or print a heading over no paper, exit 0, read as "it worked"
    to_file = bool(args.output and args.output != "-")
    where = f"{args.output} not written" if to_file else "nothing written"
    if not records:
        raise Failure(f"nothing to digest: no paper matches; {where}")
    subtitle = [f"query: {args.query}"] if args.query else []
    if since is not None:
        fresh = ids_seen_since(library, corpus, since)
        matching = len(records)
        records = [r for r in records if r.id in fresh]
        if not records:
            are = "is" if matching == 1 else "are"
            raise Failure(
                f"nothing to digest: the {papers_phrase(matching)} matching {are} from dumps "
                f"first seen before {args.since}; {where}"
            )
        subtitle.append(f"dumps first seen since {args.since}")
    text = digest(
        records, args.format, subtitle=" · ".join(subtitle), named=_named_tags(library, args)
    )
    if to_file:
        _write_file(args.output, text, force=args.force)
        _note(f"Wrote a digest of {papers_phrase(len(records))} to {args.output}")
    else:
        sys.stdout.write(text)
    return 1 if corpus.fatal_errors else 0


def _named_tags(library: Library, args: argparse.Namespace) -> list[str]:
    """The tags the selection asks for: ``--tag``, and ``#tag`` in ``-q`` (a saved search
    expanded); the digest groups by these only."""
    named = list(args.tag or [])
    if args.query:
        from .saved import expand
        from .search import named_tags, parse_query

        named += named_tags(parse_query(expand(library, args.query)))  # (`_rows` checked it)
    return named


def _search_name(raw: str) -> str:
    """A saved search's name as given to --add or --delete: a leading @ is optional (as
    ``-q @NAME`` names it); a bad name is a SavedSearchError quoting what was typed."""
    from .saved import SavedSearchError, check_name

    try:
        return check_name(raw.strip().removeprefix("@"))
    except SavedSearchError:
        return check_name(raw)  # (raises too: the message quotes the name as typed)


def cmd_searches(args: argparse.Namespace) -> int:
    """List the saved searches; --add saves one (a different query under a taken name only
    with --force), --delete forgets one."""
    import json

    from .library import LibraryError
    from .saved import (
        SavedSearchError,
        delete,
        exists,
        expand_known,
        problems,
        save,
        saved,
        saving_problem,
    )

    library = _open_library(args, announce=not (args.add or args.delete))
    try:
        if args.add:
            name, query = args.add
            query = " ".join(query.split())
            try:
                name = _search_name(name)
            except SavedSearchError as exc:
                raise _Usage(str(exc)) from None
            if not query:
                raise _Usage("an empty query cannot be saved")
            from .search import parse_query

            parsed = parse_query(query)
            if parsed.mistakes:
                raise _refuse_query(parsed, "searches", "nothing saved")
            problem = saving_problem(saved(library), name, query)
            if problem is not None:  # @a using @b using @a would match nothing, ever
                raise _Usage(f"{problem}; nothing saved")
            stored = exists(library, name)
            if stored is not None and stored != query and not args.force:
                raise Failure(f"@{name} is saved as {stored!r}; pass --force to replace it")
            if stored == query:  # nothing to do is no failure, but said
                _error(f"@{name} is already saved as {_was(query)}; nothing changed")
                if library.problem:  # (no write failed to say it)
                    _error(library.problem)
            else:
                save(library, name, query)
            if stored is not None and stored != query:
                _error(f"@{name} replaced; it was {_was(stored)}")
            for missing in expand_known(saved(library), "@" + name).unknown:
                _error(
                    f"warning: no saved search @{missing} yet: @{name} matches nothing until it is saved"
                )
        if args.delete:
            try:
                name = _search_name(args.delete)
            except SavedSearchError as exc:
                raise _Usage(str(exc)) from None
            forgotten = exists(library, name)
            if forgotten is None:  # (done: not a failure)
                _error(f"no saved search named {name!r}; nothing deleted")
            else:
                delete(library, name)
                _error(f"@{name} deleted; it was {_was(forgotten)}")
    except SavedSearchError as exc:
        raise Failure(str(exc)) from None
    except LibraryError as exc:
        raise Failure(str(exc)) from None
    searches = saved(library)
    for name, problem in problems(searches).items():  # (an older library, another program)
        _error(f"warning: @{name} matches nothing: {problem}")
    if args.json:
        for name, query in searches.items():
            _say(sys.stdout, json.dumps({"name": name, "query": query}, ensure_ascii=False))
    else:
        width = max((len(name) for name in searches), default=0) + 1
        for name, query in searches.items():
            _say(sys.stdout, f"{'@' + name:<{width}}  {query}")
    if not searches and not args.delete:  # (on stderr: with --json too)
        _note("no saved searches (save one with --add NAME QUERY, or S in the reader)")
    return 0


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "searches": cmd_searches,
    "config": cmd_config,
    "completion": cmd_completion,
    "list": cmd_list,
    "show": cmd_show,
    "tag": cmd_tag,
    "untag": cmd_tag,
    "bookmark": cmd_bookmark,
    "read": cmd_bookmark,
    "tags": cmd_tags,
    "note": cmd_note,
    "meta": cmd_meta,
    "cite": cmd_cite,
    "export": cmd_export,
    "library": cmd_library,
    "match": cmd_match,
    "digest": cmd_digest,
}


# ---------------------------------------------------------------------------------------
# The process: standard streams, exit codes, unexpected errors
# ---------------------------------------------------------------------------------------

EXIT_BROKEN_PIPE = 128 + 13  # what a shell reports for `yes | head`: 128 + SIGPIPE


class _OutputError(Exception):
    """Writing to standard output failed (not a broken pipe): closed, disk full, I/O error."""


class _GuardedOutput:
    """Standard output as the subcommands see it: a failed write is an _OutputError, so it is
    told apart from failures of the library or input files. A broken pipe stays one."""

    def __init__(self, stream: TextIO | None) -> None:
        self._stream = stream

    def _target(self) -> TextIO:
        if self._stream is None:
            raise _OutputError("standard output is closed")
        return self._stream

    def write(self, text: str) -> int:
        try:
            return self._target().write(text)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise _OutputError(exc.strerror or str(exc)) from None

    def flush(self) -> None:
        if self._stream is None:
            return
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise _OutputError(exc.strerror or str(exc)) from None

    def __getattr__(self, name: str) -> object:
        return getattr(self._target(), name)


def _fill_closed_standard_fds() -> bool:
    """Put /dev/null on closed fds 0-2 (as git does), so no file the program opens later
    (the library!) becomes "standard output". True when standard output was closed."""
    closed = []
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            closed.append(fd)
    for fd in closed:
        null = os.open(os.devnull, os.O_RDWR)
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
    # Python leaves sys.stderr/stdin None when their fd was closed at start; Textual's driver
    # uses sys.__stderr__ and sys.__stdin__.
    if sys.stderr is None:
        sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115
        setattr(sys, "__stderr__", sys.stderr)  # noqa: B010
    if sys.stdin is None:
        sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115
        setattr(sys, "__stdin__", sys.stdin)  # noqa: B010
    return 1 in closed or sys.stdout is None


def _escape_unencodable(exc: UnicodeError) -> tuple[str, int]:
    """A codec error handler: what the encoding lacks as ``\\uXXXX`` (UTF-16 code units, so
    that ``--json`` stays valid JSON: backslashreplace's ``\\xe9`` is not)."""
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    units = exc.object[exc.start : exc.end].encode("utf-16-be", "surrogatepass")
    return "".join(f"\\u{units[k]:02x}{units[k + 1]:02x}" for k in range(0, len(units), 2)), exc.end


def _lenient_encodings() -> None:
    """Standard output and error in an encoding without characters the output uses (•, —,
    CJK: PYTHONIOENCODING=latin-1, a Latin-1 locale) write those as ``\\u2022`` rather than
    failing the command with a UnicodeEncodeError. UTF-8 streams are left alone."""
    import codecs
    import io

    codecs.register_error("abstract-reader-escape", _escape_unencodable)
    for stream in (sys.stdout, sys.stderr):
        if not isinstance(stream, io.TextIOWrapper) or stream.errors != "strict":
            continue
        try:
            if codecs.lookup(stream.encoding).name != "utf-8":
                stream.reconfigure(errors="abstract-reader-escape")
        except (LookupError, ValueError, OSError):
            pass


def _silence_stdout() -> None:
    """After a broken pipe: nothing more can reach the reader, and the interpreter's final
    flush must not fail again (that would print "Exception ignored" and exit 120)."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.__stdout__.fileno() if sys.__stdout__ else 1)
        os.close(null)
    except (OSError, ValueError):
        pass


def _traceback_file() -> Path:
    from .paths import cache_dir

    return cache_dir() / "last-error.txt"


def _unexpected(exc: BaseException) -> int:
    """A bug, not a user mistake: one line, the traceback kept in a file (or printed with
    ABSTRACT_READER_DEBUG=1), exit 1."""
    import traceback

    text = "".join(traceback.format_exception(exc))
    first = (str(exc).strip().splitlines() or [""])[0][:300]
    summary = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
    if os.environ.get("ABSTRACT_READER_DEBUG"):
        sys.stderr.write(text)
        hint = "traceback above"
    else:
        try:
            path = _traceback_file()
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            hint = f"traceback in {path}; ABSTRACT_READER_DEBUG=1 prints it"
        except OSError:
            hint = "ABSTRACT_READER_DEBUG=1 prints the traceback"
    _error(f"unexpected error: {summary} ({hint})")
    return 1


def main(argv: Sequence[str] | None = None) -> int:
    """The console script. Exit codes: 0 ok, 1 failure, 2 usage, 130 interrupted, 141 when
    the reader of the output went away (`abstract-reader list | head -1`)."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    stdout_closed = _fill_closed_standard_fds()
    _lenient_encodings()
    real_stdout = sys.stdout
    guarded = _GuardedOutput(None if stdout_closed else real_stdout)
    sys.stdout = guarded
    try:
        try:
            code = _dispatch(args_list, real_stdout)
        except SystemExit as exc:  # argparse: --help, --version and usage errors
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
        guarded.flush()
        return code
    except Failure as exc:
        _error(str(exc))
        return 1
    except _Usage as exc:
        _error(str(exc))
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except _OutputError as exc:
        _error(f"cannot write to standard output: {exc}")
        return 1
    except Exception as exc:
        from .library import LibraryError

        if isinstance(exc, LibraryError):  # e.g. LibraryBusy: one line, not a traceback
            _error(str(exc))
            return 1
        return _unexpected(exc)
    finally:
        sys.stdout = real_stdout


def _dispatch(args_list: list[str], real_stdout: TextIO) -> int:
    if args_list[:1] == ["__complete"]:
        return _complete_helper(args_list[1:])
    word = _first_word(args_list)
    if word in SUBCOMMANDS or any(a in ("-h", "--help") for a in args_list[:1]):
        parser = build_parser()
        args = parser.parse_args(args_list)
        if args.command is not None:
            _options_before_command(parser, args)
            return COMMANDS[args.command](args)
    if word == "help":
        build_parser().print_help()
        return 0
    if word is not None and not os.path.lexists(word) and _COMMAND_LIKE.fullmatch(word):
        _usage_error(_not_a_command(word))
    reader_args = build_reader_parser().parse_args(args_list)
    sys.stdout = real_stdout  # the reader (Textual) gets the real stream
    return run_reader(reader_args)


def _options_before_command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """`--db FILE` and `-d PATH` given before the command (`abstract-reader --db x list`) are
    the command's own; a command that takes neither is a usage error naming it."""
    top_db, top_dumps = args.__dict__.pop("top_db", None), args.__dict__.pop("top_dumps", None)
    if top_db is not None:
        if not hasattr(args, "db"):
            parser.error(f"{args.command} opens no library: --db does not apply to it")
        if args.db is not None and args.db != top_db:
            parser.error(f"--db given twice, with different files ({top_db!r}, {args.db!r})")
        args.db = top_db
    if top_dumps:
        if not hasattr(args, "dumps"):
            parser.error(f"{args.command} reads no dumps: -d/--dump does not apply to it")
        args.dumps = top_dumps + (args.dumps or [])


# A bare word (no folder separator, no extension) that names no file is a mistyped command.
_COMMAND_LIKE = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")


def _not_a_command(word: str) -> str:
    import difflib

    close = difflib.get_close_matches(word.lower(), SUBCOMMANDS, n=2, cutoff=0.6)
    if close:
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?"
    else:
        hint = f" (commands: {', '.join(SUBCOMMANDS)}; see {PROG} --help)"
    return f"{word!r} is not a command, and no file or folder has that name{hint}"


def _usage_error(message: str) -> NoReturn:
    build_reader_parser().error(message)


def _unopenable(path: str) -> str | None:
    """Why the reader could not load anything from ``path`` (missing, unreadable, a FIFO or
    a device), from a look at it (not a load: the reader loads it), else None."""
    import errno
    import stat

    from .infile import kind_of

    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            return "no such file or directory"
        return (exc.strerror or str(exc)).lower()
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        return f"is {kind_of(mode)}, not a regular file"
    if not os.access(path, os.R_OK | (os.X_OK if stat.S_ISDIR(mode) else 0)):
        return "permission denied"
    return None


def _reader_terminal() -> dict[int, int] | None:
    """The reader draws on stderr and reads stdin (Textual's driver). When either is not a
    terminal (`abstract-reader 2>log`, `... | tee`, `< file`), use the controlling terminal
    for both, so no escape code lands in a file or pipe. Returns the fds to restore after
    the session (copies of the redirected ones), None when there is no terminal at all."""
    if os.isatty(0) and os.isatty(2):
        return {}
    try:
        tty = os.open("/dev/tty", os.O_RDWR | getattr(os, "O_NOCTTY", 0))
    except OSError:
        return None
    saved = {fd: os.dup(fd) for fd in (0, 2) if not os.isatty(fd)}
    for fd in saved:
        os.dup2(tty, fd)
    os.close(tty)
    return saved


def run_reader(args: argparse.Namespace) -> int:
    paths = list(args.paths or []) + list(args.dumps or [])
    if args.bundled and paths:
        from .corpus import bundled_dumps

        paths.insert(0, str(bundled_dumps()))
    problems = [_unopenable(path) for path in paths]
    if paths and all(problems):  # a mistyped name is one line, never an empty reader
        for path, problem in zip(paths, problems, strict=True):
            _error(f"{path}: {problem}")
        failed = "it cannot" if len(paths) == 1 else f"none of those {len(paths):,} can"
        _error(f"nothing to read: {failed} be loaded, so no reader was opened")
        return 1
    db, named = _library_location(args.db)  # as the commands: no library in a missing folder
    saved = _reader_terminal()
    if saved is None:
        _error(
            "the reader needs a terminal, and there is none (stdin or stderr is redirected and"
            f" there is no controlling terminal); for scripts use a command: {PROG} list, show,"
            " export, …"
        )
        return 2
    try:
        from .tui.app import run

        return run(paths or None, db=str(db), announce_new_library=named is not None)
    finally:
        sys.stderr.flush()
        for fd, copy in saved.items():
            os.dup2(copy, fd)
            os.close(copy)

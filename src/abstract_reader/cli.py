"""Command line: the reader (bare command) and scriptable subcommands.

Argument parsing, output and exit codes only — the work is done by the core modules.
Exit codes: 0 ok, 1 failure (including bad input files, after the good ones are shown),
2 usage. Subcommands never import Textual.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, TextIO

from . import __version__

if TYPE_CHECKING:
    from .cite import Record
    from .corpus import Corpus, Paper
    from .library import Library

PROG = "abstract-reader"
SHOW_LIMIT = 50_000  # characters of an abstract that `show` prints without --full
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
    "digest",
)


class Failure(Exception):
    """A user-level error: one line on stderr, exit 1."""


def _say(stream: TextIO, text: str) -> None:
    from .text import sanitise

    stream.write(sanitise(text).replace("\u240a", "\n") + "\n")


def _error(text: str) -> None:
    from .text import escape_for_terminal

    sys.stderr.write(f"{PROG}: {escape_for_terminal(text)}\n")


def _note(text: str) -> None:
    """A one-line report on stderr (not an error), its names escaped like _error's."""
    from .text import escape_for_terminal

    sys.stderr.write(f"{escape_for_terminal(text)}\n")


def _write_file(name: str, text: str, *, force: bool) -> None:
    """Write an output file under outfile.py's target rule; a refusal or failure is a Failure."""
    from .outfile import TargetError, write_output
    from .text import escape_for_terminal

    try:
        write_output(Path(name), text, force=force)
    except TargetError as exc:
        raise Failure(str(exc)) from None
    except OSError as exc:
        raise Failure(f"{escape_for_terminal(name)}: {exc.strerror or exc}") from None


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(2)


def _common(parser: argparse.ArgumentParser, dumps: bool = True) -> None:
    if dumps:
        parser.add_argument(
            "-d",
            "--dump",
            action="append",
            metavar="PATH",
            dest="dumps",
            help="a dump file or folder (repeatable; default: the bundled NeurIPS 2026 dumps)",
        )
    parser.add_argument(
        "--db",
        metavar="FILE",
        help="the library file (default: $ABSTRACT_READER_DB or the user data dir)",
    )


def _filters(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-q", "--query", help="only papers matching this search query")
    parser.add_argument("--tag", action="append", help="only papers with this tag (repeatable)")
    parser.add_argument("--bookmarked", action="store_true", help="only bookmarked papers")
    parser.add_argument("--unread", action="store_true", help="only unread papers")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description="A keyboard-driven terminal reader for dumps of conference abstracts. "
        "With no command, opens the reader on PATHs (default: the bundled NeurIPS 2026 dumps).",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    p = sub.add_parser("list", help="one line per paper (or JSON Lines)")
    _common(p)
    _filters(p)
    p.add_argument("--json", action="store_true", help="JSON Lines with every field")

    p = sub.add_parser("show", help="show one paper, rendered")
    _common(p)
    p.add_argument("id", help="a paper id or an unambiguous prefix")
    p.add_argument("--full", action="store_true", help="do not cap very long abstracts")

    for name, helptext in (("tag", "add tags to a paper"), ("untag", "remove tags from a paper")):
        p = sub.add_parser(name, help=helptext)
        _common(p)
        p.add_argument("id")
        p.add_argument("tags", nargs="+", metavar="TAG")

    for name, helptext in (("bookmark", "bookmark papers"), ("read", "mark papers read")):
        p = sub.add_parser(name, help=helptext)
        _common(p)
        p.add_argument("ids", nargs="+", metavar="ID")
        p.add_argument("--off", action="store_true", help="undo (unbookmark / mark unread)")

    p = sub.add_parser("tags", help="every tag with its count; records of unloaded papers")
    _common(p)
    p.add_argument("--rename", nargs=2, metavar=("OLD", "NEW"), help="rename a tag on every paper")
    p.add_argument("--delete", metavar="TAG", help="remove a tag from every paper")

    p = sub.add_parser("note", help="print or set a paper's note")
    _common(p)
    p.add_argument("id")
    p.add_argument("text", nargs="?", help="the new note ('' clears it)")

    p = sub.add_parser("meta", help="print or set a paper's real title, authors, URL, DOI, year")
    _common(p)
    p.add_argument("id")
    p.add_argument("--title")
    p.add_argument("--author", action="append", metavar="NAME", help="repeatable, in order")
    p.add_argument("--url")
    p.add_argument("--doi")
    p.add_argument("--year", type=int)
    p.add_argument("--clear", action="store_true", help="remove every override first")

    from .cite import EXPORT_FORMATS, FORMATS

    p = sub.add_parser("cite", help="print (and copy) citations")
    _common(p)
    p.add_argument("ids", nargs="+", metavar="ID")
    p.add_argument(
        "--format",
        "-f",
        choices=FORMATS,
        default=None,
        help="default: the library's setting, else bibtex",
    )
    p.add_argument("--copy", action="store_true", help="also copy to the clipboard")

    p = sub.add_parser("export", help="export a reading list")
    _common(p)
    _filters(p)
    p.add_argument("--format", "-f", choices=EXPORT_FORMATS, required=True)
    p.add_argument("-o", "--output", metavar="FILE", help="write here (atomically)")
    p.add_argument("--force", action="store_true", help="overwrite an existing FILE")

    from .digest import FORMATS as DIGEST_FORMATS

    p = sub.add_parser("digest", help="a reading digest of the matching papers, grouped by tag")
    _common(p)
    _filters(p)
    p.add_argument(
        "--since",
        metavar="DATE",
        help="only papers whose dumps were first seen on or after DATE (YYYY-MM-DD)",
    )
    p.add_argument("--format", "-f", choices=DIGEST_FORMATS, default="markdown")
    p.add_argument("-o", "--output", metavar="FILE", help="write here ('-': standard output)")
    p.add_argument("--force", action="store_true", help="overwrite an existing FILE")

    p = sub.add_parser("library", help="export or import the whole library as JSON")
    lib_sub = p.add_subparsers(dest="library_command", metavar="ACTION", parser_class=_Parser)
    lib_sub.required = True
    q = lib_sub.add_parser("export", help="write the library as JSON")
    _common(q, dumps=False)
    q.add_argument("file", help="'-' for standard output")
    q.add_argument("--force", action="store_true")
    q = lib_sub.add_parser("import", help="merge a library JSON export (never drops anything)")
    _common(q, dumps=False)
    q.add_argument("file")
    return parser


def build_reader_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description="Open the reader on dump files or folders (default: the bundled "
        f"NeurIPS 2026 dumps). Commands: {', '.join(SUBCOMMANDS)} (see {PROG} --help).",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    parser.add_argument("paths", nargs="*", metavar="PATH", help="dump files or folders")
    parser.add_argument("-d", "--dump", action="append", metavar="PATH", dest="dumps")
    parser.add_argument("--db", metavar="FILE", help="the library file")
    return parser


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


def _load(args: argparse.Namespace) -> Corpus:
    from .corpus_cache import load_corpus_cached
    from .paths import cache_dir

    corpus = load_corpus_cached(args.dumps, cache_dir() / "corpus")
    for problem in corpus.errors:
        _error(str(problem) if problem.fatal else f"warning: {problem}")
    return corpus


def _open_library(args: argparse.Namespace) -> Library:
    from .library import Library
    from .paths import default_db_path

    path = Path(args.db).expanduser() if args.db else default_db_path()
    library = Library(path)
    if library.problem:
        _error(library.problem)
    return library


def _resolve(corpus: Corpus, ident: str) -> str:
    """A paper id from an id or prefix. A full id of an unloaded paper is accepted."""
    import re

    try:
        return corpus.resolve(ident).id
    except LookupError as exc:
        key = ident.strip().lower()
        if re.fullmatch(r"[0-9a-f]{16}", key):
            _error(f"warning: {key} is not in the loaded dumps; the record is kept anyway")
            return key
        raise Failure(str(exc)) from None


def _records(corpus: Corpus, library: Library, args: argparse.Namespace) -> list[Record]:
    from .cite import record

    snapshot = library.snapshot
    papers: list[Paper]
    if getattr(args, "query", None):
        from .search import SearchIndex, cache_key_for, default_cache_dir

        index = SearchIndex(
            corpus, cache_dir=default_cache_dir(), cache_key=cache_key_for(corpus.files)
        )
        from .metadata import title_overrides

        index.set_title_overrides(title_overrides(snapshot))
        from .saved import SavedSearchError, expand
        from .seen import WithNew

        try:
            query = expand(library, args.query)  # -q @name: a saved search
        except SavedSearchError as exc:
            raise Failure(str(exc)) from None
        result = index.search(query, WithNew(library, corpus))
        for part in result.ignored:
            _error(f"warning: ignored {part!r} in the query")
        if result.ranked_like and getattr(args, "command", "") == "list" and not args.json:
            _note(f"{len(result):,} papers, {result.ranked_like}")
        papers = [result.paper_at(i) for i in range(len(result))]
    else:
        papers = list(corpus.papers)
    wanted_tags = [t.casefold() for t in (getattr(args, "tag", None) or [])]
    out: list[Record] = []
    for paper in papers:
        if getattr(args, "bookmarked", False) and paper.id not in snapshot.bookmarks:
            continue
        if getattr(args, "unread", False) and paper.id in snapshot.read:
            continue
        if wanted_tags:
            have = {t.casefold() for t in snapshot.tags.get(paper.id, [])}
            if not all(t in have for t in wanted_tags):
                continue
        out.append(record(paper, snapshot))
    return out


# ---------------------------------------------------------------------------------------
# Subcommands
# ---------------------------------------------------------------------------------------


def cmd_list(args: argparse.Namespace) -> int:
    corpus = _load(args)
    library = _open_library(args)
    records = _records(corpus, library, args)
    out = sys.stdout
    if args.json:
        from .cite import json_record

        for rec in records:
            out.write(json.dumps(json_record(rec), ensure_ascii=False) + "\n")
    else:
        for rec in records:
            venue = " ".join(p for p in (rec.venue, str(rec.year) if rec.year else None) if p)
            flags = ("★" if rec.bookmarked else " ") + (" " if rec.read else "•")
            tags = f"  [{', '.join(rec.tags)}]" if rec.tags else ""
            _say(out, f"{rec.id[:12]}  {flags}  {venue or '?':<13}  {rec.title}{tags}")
    return 1 if corpus.fatal_errors else 0


def cmd_show(args: argparse.Namespace) -> int:
    from .cite import record
    from .text import cap, render

    corpus = _load(args)
    library = _open_library(args)
    try:
        paper = corpus.resolve(args.id)
    except LookupError as exc:
        raise Failure(str(exc)) from None
    rec = record(paper, library.snapshot)
    width = min(100, shutil.get_terminal_size((100, 24)).columns)
    lines = [rec.title + ("   (derived title)" if rec.title_derived else "")]
    lines.append("=" * min(width, len(lines[0])))
    venue = " ".join(p for p in (rec.venue, str(rec.year) if rec.year else None) if p)
    lines.append(f"id:        {rec.id}")
    lines.append(f"venue:     {venue or 'unknown'}")
    lines.append("sources:   " + ", ".join(f"{s['file']} #{s['index']}" for s in rec.sources))
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
    text, cut = cap(render(paper.abstract).text, 10**12 if args.full else SHOW_LIMIT)
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
        was = f" (first matched from {prov.source} record {prov.record})" if prov else ""
        return "set by hand" + was
    if rec.origin == "record":
        return "from the paper's source record"
    return "none (title derived from the abstract)"


def _write_action(args: argparse.Namespace, action: Callable[[Library, list[str]], str]) -> int:
    from .library import LibraryError

    corpus = _load(args)
    library = _open_library(args)
    raw_ids = [args.id] if hasattr(args, "id") and not hasattr(args, "ids") else args.ids
    ids = [_resolve(corpus, i) for i in raw_ids]
    try:
        message = action(library, ids)
    except LibraryError as exc:
        raise Failure(str(exc)) from None
    if message:
        _say(sys.stdout, message)
    return 1 if corpus.fatal_errors else 0


def cmd_tag(args: argparse.Namespace) -> int:
    def act(library: Library, ids: list[str]) -> str:
        if args.command == "tag":
            library.add_tags(ids, args.tags)
        else:
            library.remove_tags(ids, args.tags)
        return f"{ids[0][:12]}: {', '.join(library.snapshot.tags.get(ids[0], [])) or '(no tags)'}"

    return _write_action(args, act)


def cmd_bookmark(args: argparse.Namespace) -> int:
    def act(library: Library, ids: list[str]) -> str:
        if args.command == "bookmark":
            library.set_bookmark(ids, not args.off)
            verb = "unbookmarked" if args.off else "bookmarked"
        else:
            library.set_read(ids, not args.off)
            verb = "marked unread" if args.off else "marked read"
        return f"{len(ids)} paper{'s' if len(ids) != 1 else ''} {verb}"

    return _write_action(args, act)


def cmd_tags(args: argparse.Namespace) -> int:
    from .library import LibraryError

    corpus = _load(args)
    library = _open_library(args)
    try:
        if args.rename:
            library.rename_tag(*args.rename)
        if args.delete:
            library.delete_tag(args.delete)
    except LibraryError as exc:
        raise Failure(str(exc)) from None
    for name, count in library.tag_counts():
        _say(sys.stdout, f"{count:6d}  {name}")
    loaded = {p.id for p in corpus.papers}
    orphans = sorted(library.snapshot.paper_ids() - loaded)
    if orphans:
        noun = "paper" if len(orphans) == 1 else "papers"
        _say(sys.stdout, f"{len(orphans)} {noun} with records are not in the loaded dumps:")
        for pid in orphans:
            tags = ", ".join(library.snapshot.tags.get(pid, []))
            _say(sys.stdout, f"  {pid}  {tags}")
    return 1 if corpus.fatal_errors else 0


def cmd_note(args: argparse.Namespace) -> int:
    def act(library: Library, ids: list[str]) -> str:
        if args.text is None:
            return library.snapshot.notes.get(ids[0], "")
        library.set_note(ids[0], args.text)
        return ""

    return _write_action(args, act)


def cmd_meta(args: argparse.Namespace) -> int:
    from .library import Metadata

    doi = args.doi
    if doi:
        from .metadata import normalise_doi

        try:
            doi = normalise_doi(doi)
        except ValueError as exc:
            raise Failure(f"--doi: {exc}") from None

    def act(library: Library, ids: list[str]) -> str:
        pid = ids[0]
        current = library.snapshot.metadata.get(pid, Metadata())
        changing = args.clear or any(
            v is not None for v in (args.title, args.author, args.url, args.doi, args.year)
        )
        if changing:
            base = Metadata() if args.clear else current
            library.set_metadata(
                pid,
                Metadata(
                    title=args.title if args.title is not None else base.title,
                    authors=tuple(args.author) if args.author is not None else base.authors,
                    url=args.url if args.url is not None else base.url,
                    doi=doi if doi is not None else base.doi,
                    year=args.year if args.year is not None else base.year,
                ),
            )
        meta = library.snapshot.metadata.get(pid, Metadata())
        return (
            "\n".join(
                f"{key + ':':9} {', '.join(value) if isinstance(value, list) else value}"
                for key, value in meta.as_dict().items()
                if value
            )
            or f"{pid[:12]}: no metadata overrides"
        )

    return _write_action(args, act)


def cmd_cite(args: argparse.Namespace) -> int:
    from .cite import FORMAT_NAMES, format_records, record
    from .clipboard import copy

    corpus = _load(args)
    library = _open_library(args)
    papers = []
    for ident in args.ids:
        try:
            papers.append(corpus.resolve(ident))
        except LookupError as exc:
            raise Failure(str(exc)) from None
    fmt = args.format or library.setting("cite_format") or "bibtex"
    text = format_records([record(p, library.snapshot) for p in papers], fmt)
    sys.stdout.write(text)
    if args.copy:
        sys.stdout.flush()
        result = copy(text)
        count = f"{len(papers)} paper{'s' if len(papers) != 1 else ''}"
        if not result.ok:
            raise Failure(f"could not copy: {result.detail}")
        _note(f"Copied {FORMAT_NAMES[fmt]} for {count} ({result.method})")
    return 1 if corpus.fatal_errors else 0


def cmd_export(args: argparse.Namespace) -> int:
    from .cite import format_records

    corpus = _load(args)
    library = _open_library(args)
    records = _records(corpus, library, args)
    text = format_records(records, args.format)
    if args.output and args.output != "-":
        _write_file(args.output, text, force=args.force)
        _note(f"Exported {len(records)} papers to {args.output}")
    else:
        sys.stdout.write(text)
    return 1 if corpus.fatal_errors else 0


def cmd_library(args: argparse.Namespace) -> int:
    from .library import LibraryError

    library = _open_library(args)
    if args.library_command == "export":
        text = json.dumps(library.export_data(), ensure_ascii=False, indent=2) + "\n"
        if args.file == "-":
            sys.stdout.write(text)
        else:
            _write_file(args.file, text, force=args.force)
            _note(f"Exported the library to {args.file}")
        return 0
    try:
        raw = sys.stdin.read() if args.file == "-" else Path(args.file).read_text("utf-8")
        data = json.loads(raw)
    except (OSError, UnicodeDecodeError) as exc:
        raise Failure(
            f"{args.file}: cannot read ({getattr(exc, 'strerror', None) or exc})"
        ) from None
    except json.JSONDecodeError as exc:
        raise Failure(f"{args.file}: not valid JSON (line {exc.lineno}: {exc.msg})") from None
    try:
        touched = library.import_data(data)
    except LibraryError as exc:
        raise Failure(f"{args.file}: {exc}") from None
    _note(f"Merged records of {touched} papers from {args.file}")
    return 0


def cmd_digest(args: argparse.Namespace) -> int:
    from datetime import UTC, datetime

    from .digest import digest
    from .seen import ids_seen_since, record_seen

    since = None
    if args.since:
        try:
            since = datetime.fromisoformat(args.since)
        except ValueError:
            raise Failure(f"--since {args.since!r}: not a date (YYYY-MM-DD)") from None
        since = since if since.tzinfo else since.replace(tzinfo=UTC)
    corpus = _load(args)
    library = _open_library(args)
    record_seen(library, corpus.files)  # dumps never seen before are new as of now
    records = _records(corpus, library, args)
    subtitle = [f"query: {args.query}"] if args.query else []
    if since is not None:
        fresh = ids_seen_since(library, corpus, since)
        records = [r for r in records if r.id in fresh]
        subtitle.append(f"dumps first seen since {args.since}")
    text = digest(records, args.format, subtitle=" · ".join(subtitle))
    if args.output and args.output != "-":
        _write_file(args.output, text, force=args.force)
        _note(f"Wrote a digest of {len(records)} papers to {args.output}")
    else:
        sys.stdout.write(text)
    return 1 if corpus.fatal_errors else 0


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
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
    "digest": cmd_digest,
}


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    word = _first_word(args_list)
    try:
        if word in SUBCOMMANDS or any(a in ("-h", "--help") for a in args_list[:1]):
            args = build_parser().parse_args(args_list)
            if args.command is None:
                return run_reader(build_reader_parser().parse_args(args_list))
            return COMMANDS[args.command](args)
        return run_reader(build_reader_parser().parse_args(args_list))
    except Failure as exc:
        _error(str(exc))
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `abstract-reader list | head`: the reader of our output went away.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


def run_reader(args: argparse.Namespace) -> int:
    paths = list(args.paths or []) + list(args.dumps or [])
    from .tui.app import run

    return run(paths or None, db=args.db)

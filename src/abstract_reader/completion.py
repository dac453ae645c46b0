"""Shell completion scripts (bash, zsh, fish), generated from the argument parser.

The commands, options, option values (formats, files) and positional arguments come from the
parser itself, so a new subcommand or option completes without touching this file. Tag names
are the only thing read at completion time: the scripts call the hidden ``abstract-reader
__complete tags [--db FILE]``, which reads the library's tag table read-only and loads no dump.
"""

from __future__ import annotations

import argparse
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

SHELLS = ("bash", "zsh", "fish")

# How the value of an option, or a positional argument, is completed, by its dest.
_FILE_DESTS = {"dumps", "db", "output", "file", "files", "paths", "path"}
_TAG_DESTS = {"tag", "tags", "delete", "rename"}


@dataclass
class Option:
    flags: list[str]
    value: str  # "" (a flag), "file", "tag", "text" or "choice:a b c"
    help: str = ""


@dataclass
class Command:
    name: str
    help: str = ""
    options: list[Option] = field(default_factory=list)
    positionals: list[str] = field(default_factory=list)  # kinds; the last one may end in "+"
    subcommands: list[Command] = field(default_factory=list)


def _kind(action: argparse.Action) -> str:
    if action.nargs == 0:
        return ""
    if action.choices:
        return "choice:" + " ".join(str(c) for c in action.choices)
    if action.dest in _FILE_DESTS or action.metavar in ("FILE", "PATH"):
        return "file"
    if action.dest in _TAG_DESTS or action.metavar == "TAG":
        return "tag"
    return "text"


def _command(name: str, parser: argparse.ArgumentParser, helptext: str = "") -> Command:
    command = Command(name, helptext)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            command.subcommands = [
                _command(sub, subparser, helps.get(sub, ""))
                for sub, subparser in action.choices.items()
                if not sub.startswith("_")
            ]
        elif action.option_strings:
            if action.help == argparse.SUPPRESS:
                continue
            command.options.append(
                Option(list(action.option_strings), _kind(action), action.help or "")
            )
        else:
            kind = _kind(action)
            repeat = action.nargs in ("+", "*")
            command.positionals.append(kind + ("+" if repeat else ""))
    return command


def spec(parser: argparse.ArgumentParser, reader: argparse.ArgumentParser) -> Command:
    """The whole command line as data: the subcommands, and the reader's own options and
    PATHs at the top level."""
    top = _command("", parser)
    reader_top = _command("", reader)
    top.options = reader_top.options
    top.positionals = reader_top.positionals
    return top


# ---------------------------------------------------------------------------------------
# bash (and zsh through bashcompinit)
# ---------------------------------------------------------------------------------------


def _sh_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def _bash_tables(top: Command) -> str:
    value_cases: list[str] = []
    option_cases: list[str] = []
    positional_cases: list[str] = []
    sub_cases: list[str] = []

    def walk(command: Command, path: str) -> None:
        flags = " ".join(f for o in command.options for f in o.flags)

        def enc(kind: str) -> str:  # kinds are space-separated words in the bash tables
            return kind.replace(" ", ",")

        option_cases.append(f"        {_sh_quote(path)}) echo {_sh_quote(flags)} ;;")
        for option in command.options:
            if option.value:
                pattern = "|".join(_sh_quote(f"{path} {f}") for f in option.flags)
                value_cases.append(f"        {pattern}) echo {_sh_quote(enc(option.value))} ;;")
        if command.positionals:
            kinds = " ".join(enc(k) for k in command.positionals)
            positional_cases.append(f"        {_sh_quote(path)}) echo {_sh_quote(kinds)} ;;")
        if command.subcommands:
            names = " ".join(s.name for s in command.subcommands)
            sub_cases.append(f"        {_sh_quote(path)}) echo {_sh_quote(names)} ;;")
        for sub in command.subcommands:
            walk(sub, f"{path} {sub.name}".strip())

    walk(top, "")
    return f"""\
_abstract_reader_options() {{  # $1: the command path -> its options
    case "$1" in
{chr(10).join(option_cases)}
    esac
}}
_abstract_reader_value() {{  # $1: command path, $2: option -> how its value completes
    case "$1 $2" in
{chr(10).join(value_cases)}
    esac
}}
_abstract_reader_positionals() {{  # $1: command path -> kinds of its positional arguments
    case "$1" in
{chr(10).join(positional_cases)}
    esac
}}
_abstract_reader_subcommands() {{  # $1: command path -> its subcommands
    case "$1" in
{chr(10).join(sub_cases)}
    esac
}}
"""


_BASH_BODY = r"""
_abstract_reader_complete_kind() {  # $1: kind, $2: the word so far, $3: --db value or ''
    local IFS=$'\n' tag
    case "$1" in
        file)
            COMPREPLY=( $(compgen -f -- "$2") )
            if type compopt >/dev/null 2>&1; then compopt -o filenames 2>/dev/null; fi ;;
        tag)
            local -a dbarg=()
            if [[ -n "$3" ]]; then dbarg=(--db "$3"); fi
            COMPREPLY=()
            while IFS= read -r tag; do
                case "$tag" in "$2"*) COMPREPLY+=( "$(printf '%q' "$tag")" ) ;; esac
            done < <(abstract-reader __complete tags "${dbarg[@]}" 2>/dev/null)
            ;;
        choice:*)
            IFS=$' \n'
            local choices="${1#choice:}"
            COMPREPLY=( $(compgen -W "${choices//,/ }" -- "$2") ) ;;
        *) COMPREPLY=() ;;
    esac
}

_abstract_reader() {
    local cur="${COMP_WORDS[COMP_CWORD]}" cmdpath="" db="" pending="" word kind subs
    local -i i npos=0
    COMPREPLY=()
    for (( i = 1; i < COMP_CWORD; i++ )); do
        word="${COMP_WORDS[i]}"
        case "$word" in
            --) continue ;;
            -*)
                kind="$(_abstract_reader_value "$cmdpath" "$word")"
                if [[ -n "$kind" ]]; then
                    if (( i + 1 == COMP_CWORD )); then pending="$kind"; break; fi
                    i=i+1
                    if [[ "$word" == --db ]]; then db="${COMP_WORDS[i]}"; fi
                fi
                continue ;;
        esac
        subs=" $(_abstract_reader_subcommands "$cmdpath") "
        if (( npos == 0 )) && [[ "$subs" == *" $word "* ]]; then
            cmdpath="${cmdpath:+$cmdpath }$word"
        else
            npos=npos+1
        fi
    done
    if [[ -n "$pending" ]]; then
        _abstract_reader_complete_kind "$pending" "$cur" "$db"
        return 0
    fi
    if [[ "$cur" == -* ]]; then
        local IFS=$' \n'
        COMPREPLY=( $(compgen -W "$(_abstract_reader_options "$cmdpath")" -- "$cur") )
        return 0
    fi
    subs="$(_abstract_reader_subcommands "$cmdpath")"
    if (( npos == 0 )) && [[ -n "$subs" ]]; then
        local IFS=$' \n'
        COMPREPLY=( $(compgen -W "$subs" -- "$cur") )
        if [[ -z "$cmdpath" ]]; then  # the reader also takes dump files and folders here
            local IFS=$'\n'
            COMPREPLY+=( $(compgen -f -- "$cur") )
            if type compopt >/dev/null 2>&1; then compopt -o filenames 2>/dev/null; fi
        fi
        return 0
    fi
    local k="" last=""
    local -i n=0
    kind=""
    for k in $(_abstract_reader_positionals "$cmdpath"); do
        if (( n == npos )); then kind="$k"; fi
        last="$k"
        n=n+1
    done
    if [[ -z "$kind" && "$last" == *+ ]]; then kind="$last"; fi
    _abstract_reader_complete_kind "${kind%+}" "$cur" "$db"
    return 0
}
complete -F _abstract_reader abstract-reader
"""


def bash_script(top: Command) -> str:
    return (
        "# bash completion for abstract-reader (abstract-reader completion bash)\n"
        + _bash_tables(top)
        + _BASH_BODY
    )


def zsh_script(top: Command) -> str:
    return (
        "# zsh completion for abstract-reader (abstract-reader completion zsh):\n"
        "# the bash completion, through zsh's bashcompinit\n"
        "autoload -U +X compinit && { (( ${+_comps} )) || compinit -u; }\n"
        "autoload -U +X bashcompinit && bashcompinit\n" + _bash_tables(top) + _BASH_BODY
    )


# ---------------------------------------------------------------------------------------
# fish
# ---------------------------------------------------------------------------------------


def _fish_quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


_FISH_HEAD = r"""# fish completion for abstract-reader (abstract-reader completion fish)
function __abstract_reader_tags
    set -l tokens (commandline -opc)
    set -l at (contains -i -- --db $tokens)
    if test -n "$at"; and test (count $tokens) -gt $at
        abstract-reader __complete tags --db $tokens[(math $at + 1)] 2>/dev/null
    else
        abstract-reader __complete tags 2>/dev/null
    end
end
complete -c abstract-reader -e
"""


def fish_script(top: Command) -> str:
    lines = [_FISH_HEAD]

    def value_args(value: str) -> str:
        if value == "file":
            return " -r -F"
        if value == "tag":
            return " -x -a '(__abstract_reader_tags)'"
        if value.startswith("choice:"):
            return " -x -a " + _fish_quote(value.removeprefix("choice:"))
        if value:
            return " -x"
        return ""

    def option_line(condition: str, option: Option) -> str:
        parts = []
        for flag in option.flags:
            if flag.startswith("--"):
                parts.append(f"-l {flag[2:]}")
            elif len(flag) == 2:
                parts.append(f"-s {flag[1]}")
            else:
                parts.append(f"-o {flag[1:]}")
        desc = f" -d {_fish_quote(option.help[:60])}" if option.help else ""
        return (
            f"complete -c abstract-reader -n {_fish_quote(condition)} "
            + " ".join(parts)
            + value_args(option.value)
            + desc
        )

    top_cond = "__fish_use_subcommand"
    for sub in top.subcommands:
        lines.append(
            f"complete -c abstract-reader -n {top_cond} -a {sub.name}"
            f" -d {_fish_quote(sub.help[:60])}"
        )
    lines.extend(option_line(top_cond, o) for o in top.options)
    for sub in top.subcommands:
        cond = f"__fish_seen_subcommand_from {sub.name}"
        if sub.subcommands:
            inner = " ".join(s.name for s in sub.subcommands)
            lines.append(
                f"complete -c abstract-reader -n {_fish_quote(f'{cond}; and not __fish_seen_subcommand_from {inner}')}"
                f" -f -a {_fish_quote(inner)}"
            )
            for inner_sub in sub.subcommands:
                inner_cond = f"{cond}; and __fish_seen_subcommand_from {inner_sub.name}"
                lines.extend(option_line(inner_cond, o) for o in inner_sub.options)
                if "file" in inner_sub.positionals:
                    lines.append(f"complete -c abstract-reader -n {_fish_quote(inner_cond)} -F")
            continue
        lines.extend(option_line(cond, o) for o in sub.options)
        kinds = {k.rstrip("+") for k in sub.positionals}
        choices = [k.removeprefix("choice:") for k in kinds if k.startswith("choice:")]
        if choices:
            lines.append(
                f"complete -c abstract-reader -n {_fish_quote(cond)} -f -a {_fish_quote(' '.join(choices))}"
            )
        elif "tag" in kinds:
            lines.append(
                f"complete -c abstract-reader -n {_fish_quote(cond)} -f -a '(__abstract_reader_tags)'"
            )
        elif "file" not in kinds:
            lines.append(f"complete -c abstract-reader -n {_fish_quote(cond)} -f")
    return "\n".join(lines) + "\n"


def script(shell: str, top: Command) -> str:
    return {"bash": bash_script, "zsh": zsh_script, "fish": fish_script}[shell](top)


# ---------------------------------------------------------------------------------------
# The hidden helper: tag names, fast
# ---------------------------------------------------------------------------------------


def tag_names(db: Path) -> list[str]:
    """The library's tag names, read-only (never creates, migrates or locks the library);
    [] when there is no readable library. Names that could not be typed as one word on a
    command line (control characters) are left out."""
    if not db.is_file():
        return []
    rows: list[tuple[object]] = []
    # mode=ro first (sees the WAL); immutable=1 when that cannot open (no -shm, a read-only
    # folder): possibly a little stale, fine for completion
    for query in ("mode=ro", "mode=ro&immutable=1"):
        try:
            conn = sqlite3.connect(f"{db.resolve().as_uri()}?{query}", uri=True, timeout=0.5)
        except (sqlite3.Error, ValueError):
            continue
        try:
            rows = conn.execute("SELECT name FROM tags ORDER BY name COLLATE NOCASE").fetchall()
            break
        except sqlite3.Error:
            continue
        finally:
            conn.close()
    return [
        name
        for (name,) in rows
        if isinstance(name, str) and name.isprintable()  # no controls, no bidi (Cf)
    ]

"""Citation formats, export, round trips through real parsers."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import bibtexparser
import pytest

from abstract_reader.cite import (
    bibtex_key,
    format_records,
    record,
    write_atomic,
)
from abstract_reader.corpus import Corpus, load_corpus
from abstract_reader.library import Library, Metadata

from .conftest import paper_with, write_dump

TRICKY_TITLES = [
    "Fast & Furious: 100% Robust Ranking",
    "Learning with $O(\\sqrt{n})$ Regret and the {Braced} Term",
    "Köhler–Šmíd Bounds for ℓ₂ Regression under_score #1 ~ ^",
    "Back\\slash and } Unbalanced { Braces",
]


def _unescape_bibtex(value: str) -> str:
    """Undo BibTeX escaping (the inverse of what a LaTeX reader would do for these)."""
    replacements = {
        r"\textbackslash{}": "\\",
        r"\textasciitilde{}": "~",
        r"\textasciicircum{}": "^",
        r"\&": "&",
        r"\%": "%",
        r"\#": "#",
        r"\_": "_",
        r"\{": "{",
        r"\}": "}",
        r"\$": "$",
    }
    out = []
    i = 0
    while i < len(value):
        for escaped, plain in replacements.items():
            if value.startswith(escaped, i):
                out.append(plain)
                i += len(escaped)
                break
        else:
            out.append(value[i])
            i += 1
    return "".join(out)


@pytest.fixture
def library(tmp_path: Path) -> Library:
    return Library(tmp_path / "lib.sqlite3")


def test_bibtex_of_seeds_parses_with_unique_keys(seeds: Corpus) -> None:
    text = format_records([record(p) for p in seeds.papers], "bibtex")
    parsed = bibtexparser.parse_string(text)
    assert not parsed.failed_blocks
    assert len(parsed.entries) == 55
    keys = [e.key for e in parsed.entries]
    assert len(set(keys)) == 55
    for entry in parsed.entries:
        assert entry.entry_type == "inproceedings"
        fields = {f.key: f.value for f in entry.fields}
        assert fields["year"] == "2026"
        assert "Neural Information Processing Systems" in fields["booktitle"]
        assert "author" not in fields  # never invented
        assert "derived" in fields["note"].lower()


def test_bibtex_key_is_readable_and_stable(seeds: Corpus) -> None:
    rse = record(paper_with(seeds, "Robust Satisficing Ensemble (RSE)"))
    key = bibtex_key(rse)
    assert key.startswith("neurips2026")
    assert key.endswith(rse.id[:6])
    assert key == bibtex_key(rse)
    assert key.isascii() and " " not in key


@pytest.mark.parametrize("title", TRICKY_TITLES)
def test_bibtex_round_trips_real_metadata(seeds: Corpus, library: Library, title: str) -> None:
    paper = seeds.papers[0]
    authors = ("Ada Lovelace", "Jürgen Schmidhuber", "O'Neil, Cathy")
    library.set_metadata(
        paper.id,
        Metadata(title=title, authors=authors, url="https://example.org/p?a=1&b=2", doi="10.1/x_y"),
    )
    text = format_records([record(paper, library.snapshot)], "bibtex")
    parsed = bibtexparser.parse_string(text)
    assert not parsed.failed_blocks
    fields = {f.key: f.value for f in parsed.entries[0].fields}
    assert _unescape_bibtex(fields["title"]) == title
    assert _unescape_bibtex(fields["author"]).split(" and ") == list(authors)
    assert fields["url"] == "https://example.org/p?a=1&b=2"
    assert fields["doi"] == "10.1/x_y"
    assert "note" not in fields  # a real title needs no "derived" note


def test_bibtex_keeps_math(seeds: Corpus, library: Library) -> None:
    paper = seeds.papers[0]
    library.set_metadata(paper.id, Metadata(title="Bounds of $O(\\sqrt{n})$ and 50% more"))
    text = format_records([record(paper, library.snapshot)], "bibtex")
    assert "$O(\\sqrt{n})$" in text and "50\\%" in text


def test_csl_json_round_trips(seeds: Corpus, library: Library) -> None:
    paper = seeds.papers[1]
    title = TRICKY_TITLES[2]
    library.set_metadata(paper.id, Metadata(title=title, authors=("Ada Lovelace",), year=2025))
    items = json.loads(format_records([record(paper, library.snapshot)], "csl-json"))
    assert items[0]["title"] == title
    assert items[0]["author"] == [{"family": "Lovelace", "given": "Ada"}]
    assert items[0]["issued"] == {"date-parts": [[2025]]}
    assert items[0]["type"] == "paper-conference"
    assert items[0]["id"] == paper.id


def test_plain_and_markdown(seeds: Corpus, library: Library) -> None:
    paper = paper_with(seeds, "Robust Satisficing Ensemble (RSE)")
    plain = format_records([record(paper)], "text").strip()
    assert paper.title in plain and "2026" in plain and paper.id[:12] in plain
    assert "derived" in plain
    md = format_records([record(paper)], "markdown").strip()
    assert md.startswith("- **") and paper.id[:12] in md
    library.set_metadata(
        paper.id, Metadata(title="A [bracketed] snake_case title", url="https://x.org/a")
    )
    md = format_records([record(paper, library.snapshot)], "markdown")
    assert "[A \\[bracketed\\] snake\\_case title](https://x.org/a)" in md


def test_csv_and_jsonl_exports(seeds: Corpus, library: Library) -> None:
    library.add_tags([seeds.papers[0].id], ["toread"])
    library.set_note(seeds.papers[0].id, "line one\nline two")
    records = [record(p, library.snapshot) for p in seeds.papers]
    rows = list(csv.DictReader(io.StringIO(format_records(records, "csv"))))
    assert len(rows) == 55 and rows[0]["tags"] == "toread"
    assert rows[0]["note"] == "line one\nline two"
    lines = format_records(records, "jsonl").splitlines()
    assert len(lines) == 55 and json.loads(lines[0])["tags"] == ["toread"]


def test_outputs_carry_no_control_characters(tmp_path: Path, library: Library) -> None:
    dump = write_dump(tmp_path / "evil.txt", "We propose \x1b]52;c;ZXZpbA==\x07Evil, a thing.")
    paper = load_corpus([dump]).papers[0]
    library.set_note(paper.id, "note \x1b[2J")
    for fmt in ("bibtex", "text", "markdown", "csl-json", "csv", "jsonl"):
        out = format_records([record(paper, library.snapshot)], fmt)
        assert not any(ord(c) < 32 and c not in "\n\t" for c in out), fmt
        assert not any(0x80 <= ord(c) <= 0x9F for c in out), fmt


def test_write_atomic_refuses_to_overwrite(tmp_path: Path) -> None:
    target = tmp_path / "out.bib"
    write_atomic(target, "one")
    with pytest.raises(FileExistsError):
        write_atomic(target, "two")
    assert target.read_text() == "one"
    write_atomic(target, "two", force=True)
    assert target.read_text() == "two"
    assert list(tmp_path.iterdir()) == [target]  # no temporary left behind

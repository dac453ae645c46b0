"""A paper with no venue and no year reads "unknown venue" wherever a person reads it — the
reader (`EffectiveMetadata.venue_label`), `list`, `show`, the digest — and machine formats
keep the field empty."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from abstract_reader.corpus import load_corpus
from abstract_reader.digest import digest
from abstract_reader.metadata import UNKNOWN_VENUE, effective
from abstract_reader.record import record

from .conftest import cli, write_dump

ABSTRACT = "A paper about robust estimation with no header line above it in its dump."


@pytest.fixture
def dump(tmp_path: Path) -> Path:
    return write_dump(tmp_path / "bare.txt", ABSTRACT, header=None)


def test_the_reader_says_unknown_venue(dump: Path) -> None:
    paper = load_corpus([dump]).papers[0]
    assert (paper.venue, paper.year) == (None, None)
    assert effective(paper, None).venue_label == UNKNOWN_VENUE == "unknown venue"
    assert paper.venue_year == UNKNOWN_VENUE


def test_list_and_show_say_it_as_the_reader_does(dump: Path) -> None:
    listed = cli("list", "-d", str(dump))
    assert listed.returncode == 0, listed.stderr
    (line,) = listed.stdout.splitlines()
    assert line.split("  ")[2] == UNKNOWN_VENUE and " ? " not in line
    shown = cli("show", line.split()[0], "-d", str(dump))
    assert f"venue:     {UNKNOWN_VENUE}\n" in shown.stdout


def test_machine_formats_keep_the_field_empty(dump: Path) -> None:
    (row,) = [json.loads(x) for x in cli("list", "--json", "-d", str(dump)).stdout.splitlines()]
    assert row["venue"] is None and row["year"] is None
    csv = cli("export", "--format", "csv", "-d", str(dump)).stdout.splitlines()
    assert csv[0].split(",")[3:5] == ["venue", "year"] and csv[1].split(",")[3:5] == ["", ""]


@pytest.mark.parametrize("fmt", ["markdown", "text", "html"])
def test_the_digest_says_it_too(dump: Path, fmt: str) -> None:
    paper = load_corpus([dump]).papers[0]
    text = digest([record(paper, None)], fmt)
    assert UNKNOWN_VENUE in text and "venue unknown" not in text

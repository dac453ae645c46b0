"""What a citation carries (QA s17 #4, #7, #10, #12): the BibTeX abstract is the abstract's
own LaTeX, read back by a BibTeX parser and never able to end its field; CSL-JSON carries
the abstract only when asked, as BibTeX does, and a flag that changes nothing says so; an
"arXiv preprint" journal is no venue; every digest format names the authors."""

from __future__ import annotations

import json
from pathlib import Path

import bibtexparser
import pytest

from abstract_reader.cite import format_records, record
from abstract_reader.corpus import Corpus, load_corpus
from abstract_reader.library import Library, Metadata
from abstract_reader.sources import MetaRecord, read_records

from .conftest import SEEDS, cli, paper_with, write_dump

SENSITIVITY = "we call empirical sensitivity"
MATH = r"$X = (X_1, \dots, X_n) \sim \mathcal{D}^{\otimes n}$"


def _fields(bib: str) -> list[dict[str, str]]:
    """The entries of ``bib`` as BibTeX itself splits them (no LaTeX decoding)."""
    parsed = bibtexparser.parse_string(bib)
    assert not parsed.failed_blocks
    return [{f.key: f.value for f in e.fields} for e in parsed.entries]


def _read_back(bib: str, tmp_path: Path) -> list[MetaRecord]:
    """``bib`` read by the reader's own BibTeX source, as a user's .bib is."""
    path = tmp_path / "back.bib"
    path.write_text(bib, encoding="utf-8")
    items = list(read_records(path))
    assert all(isinstance(i, MetaRecord) for i in items), items
    return [i for i in items if isinstance(i, MetaRecord)]


# ---------------------------------------------------------------------------------------
# BibTeX: the abstract's own LaTeX
# ---------------------------------------------------------------------------------------


def test_the_bibtex_abstract_is_the_latex_source(seeds: Corpus, tmp_path: Path) -> None:
    paper = paper_with(seeds, SENSITIVITY)
    bib = format_records([record(paper)], "bibtex", with_abstract=True)
    (fields,) = _fields(bib)
    assert MATH in fields["abstract"]
    assert r"$\hat \mu$" in fields["abstract"]
    assert "textasciicircum" not in fields["abstract"] and "𝒟" not in fields["abstract"]
    (back,) = _read_back(bib, tmp_path)
    assert back.abstract == " ".join(paper.abstract.split())  # the source, as it was


def test_every_seed_abstract_reads_back_as_itself(seeds: Corpus, tmp_path: Path) -> None:
    """LaTeX outside math (``\\%``, ``\\textbf{…}``, ``StarCraft~II``), Markdown emphasis and
    bare ``%`` / ``&``: each abstract read back by a BibTeX reader is the same text."""
    from abstract_reader.match import normalise

    bib = format_records([record(p) for p in seeds.papers], "bibtex", with_abstract=True)
    assert len(_fields(bib)) == 55
    back = _read_back(bib, tmp_path)
    assert [normalise(r.abstract or "") for r in back] == [
        normalise(p.abstract) for p in seeds.papers
    ]
    spike = paper_with(seeds, "we propose \\textbf{Spike-SFT}")
    (fields,) = _fields(format_records([record(spike)], "bibtex", with_abstract=True))
    assert "\\textbf{Spike-SFT}" in fields["abstract"]
    resilience = paper_with(seeds, "**Resilience**")
    (fields,) = _fields(format_records([record(resilience)], "bibtex", with_abstract=True))
    assert "\\textbf{Resilience}" in fields["abstract"] and "**" not in fields["abstract"]


HOSTILE = [
    "Evil } , title = {Pwned}, note = { more",
    "Math $\\}$, title={Pwned} and text",
    "Opened { never closed , title = {Pwned",
    "Closed } first { then opened",
    "Style \\textbf{never closed, title = {Pwned}",
    "Run \\input{/etc/passwd} and $\\input{/etc/passwd}$ and \\write18{rm -rf x}",
    "Stray \\} brace \\{ and 50% & #1 x_1 a^b $ alone",
]


@pytest.mark.parametrize("hostile", HOSTILE)
def test_a_hostile_abstract_cannot_end_its_field(tmp_path: Path, hostile: str) -> None:
    corpus = load_corpus([write_dump(tmp_path / "d.txt", hostile)])
    (paper,) = corpus.papers
    bib = format_records([record(paper)], "bibtex", with_abstract=True)
    (fields,) = _fields(bib)  # one entry, no field added (the title is derived from it)
    assert set(fields) == {"title", "booktitle", "year", "note", "abstract"}
    for name in ("title", "abstract"):
        depth = 0  # BibTeX counts every brace, escaped or not
        for ch in fields[name]:
            depth += {"{": 1, "}": -1}.get(ch, 0)
            assert depth >= 0, (name, fields[name])
        assert depth == 0, (name, fields[name])
    assert "\\input" not in fields["abstract"] and "\\write" not in fields["abstract"]
    (back,) = _read_back(bib, tmp_path)
    assert "Pwned" not in (back.title or "") or "Pwned" in paper.title
    assert back.abstract is not None and back.abstract.startswith(hostile.split(maxsplit=1)[0])
    # the whole abstract, to its end (its brace characters read back as braces, or, where
    # they were the user's grouping, dropped)
    last = hostile.rsplit(maxsplit=1)[-1]
    assert back.abstract.split()[-1] in (last, last.strip("{}"))


# ---------------------------------------------------------------------------------------
# CSL-JSON follows --abstract; a flag that changes nothing says so
# ---------------------------------------------------------------------------------------


def test_csl_json_carries_the_abstract_and_tags_only_when_asked(
    seeds: Corpus, tmp_path: Path
) -> None:
    db = tmp_path / "lib.db"
    pid = paper_with(seeds, SENSITIVITY).id
    Library(db)  # (made first: its "created" line is not a notice about the flags)
    assert cli("tag", pid, "robustness", "to read", db=db).returncode == 0

    def item(*args: str) -> dict[str, object]:
        run = cli("cite", pid, "--format", "csl-json", *args, db=db)
        assert run.returncode == 0 and run.stderr == "", run.stderr
        (one,) = json.loads(run.stdout)
        assert isinstance(one, dict)
        return one

    assert "abstract" not in item() and "keyword" not in item()
    assert "abstract" not in item("--no-abstract")
    full = item("--abstract")
    assert SENSITIVITY in str(full["abstract"]) and "𝒟" in str(full["abstract"])
    assert full["keyword"] == "robustness, to read"
    Library(db).set_setting("cite_abstract", "on")
    assert "abstract" in item()
    assert "abstract" not in item("--no-abstract")
    exported = cli("export", "-f", "csl-json", "-q", f"id:{pid}", "--no-abstract", db=db)
    assert exported.returncode == 0 and "abstract" not in json.loads(exported.stdout)[0]
    exported = cli("export", "-f", "csl-json", "-q", f"id:{pid}", db=db)
    assert "abstract" in json.loads(exported.stdout)[0]


@pytest.mark.parametrize(
    ("command", "flag", "said"),
    [
        (("cite", "{pid}", "--format", "markdown"), "--abstract", "has no effect on Markdown"),
        (("cite", "{pid}", "--format", "text"), "--no-abstract", "has no effect on plain text"),
        (("export", "-f", "csv", "-q", "id:{pid}"), "--no-abstract", "always carries"),
        (("export", "-f", "jsonl", "-q", "id:{pid}"), "--no-abstract", "always carries"),
        (("export", "-f", "markdown", "-q", "id:{pid}"), "--abstract", "no effect on Markdown"),
    ],
)
def test_a_flag_that_changes_nothing_says_so(
    seeds: Corpus, tmp_path: Path, command: tuple[str, ...], flag: str, said: str
) -> None:
    pid = seeds.papers[0].id
    Library(tmp_path / "lib.db")  # (made first: its "created" line is not the notice)
    args = [a.format(pid=pid) for a in command]
    run = cli(*args, flag, db=tmp_path / "lib.db")
    assert run.returncode == 0 and run.stdout
    (line,) = run.stderr.splitlines()
    assert flag in line and said in line
    quiet = cli(*args, db=tmp_path / "lib.db")  # no flag, nothing to say
    assert quiet.returncode == 0 and quiet.stderr == ""
    used = cli("cite", pid, "--format", "bibtex", flag, db=tmp_path / "lib.db")
    assert used.returncode == 0 and used.stderr == ""


# ---------------------------------------------------------------------------------------
# "arXiv preprint" is no venue
# ---------------------------------------------------------------------------------------


def test_an_arxiv_preprint_journal_is_no_venue(seeds: Corpus, tmp_path: Path) -> None:
    paper = paper_with(seeds, SENSITIVITY)
    bib = tmp_path / "mine.bib"
    bib.write_text(
        "@article{zhang2025spik,\n  title = {Empirical Sensitivity},\n"
        "  author = {Zhang, Wei},\n  journal = {arXiv preprint arXiv:2501.01234},\n"
        "  year = {2025},\n  abstract = {" + paper.abstract + "}\n}\n\n"
        "@article{alone2025,\n  title = {Only a Preprint},\n  author = {Turing, Alan},\n"
        "  journal = {CoRR},\n  volume = {abs/2502.00002},\n  year = {2025},\n"
        "  abstract = {A paper in no dump loaded here, only on arXiv.}\n}\n",
        encoding="utf-8",
    )
    db = tmp_path / "lib.db"
    assert cli("match", str(bib), db=db).returncode == 0
    shown = cli("show", paper.id, db=db).stdout
    assert "venue:     NeurIPS 2026" in shown and "arXiv preprint" not in shown
    (fields,) = _fields(cli("cite", paper.id, db=db).stdout)
    assert "preprint" not in fields["booktitle"] and "Neural Information" in fields["booktitle"]
    assert fields["year"] == "2026"
    text = cli("cite", paper.id, "--format", "text", db=db).stdout
    assert "In arXiv preprint" not in text
    listed = cli("list", "--json", "-d", str(bib), db=tmp_path / "other.db").stdout
    alone = next(p for p in map(json.loads, listed.splitlines()) if p["title"] == "Only a Preprint")
    assert alone["venue"] is None and alone["eprint"] == "2502.00002"
    cited = cli("cite", alone["id"], "-d", str(bib), db=tmp_path / "other.db").stdout
    assert cited.startswith("@misc{") and "booktitle" not in cited


# ---------------------------------------------------------------------------------------
# Digest: the same fields in every format
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["markdown", "text", "html"])
def test_every_digest_format_names_the_authors(tmp_path: Path, fmt: str) -> None:
    seeds = load_corpus([SEEDS])
    library = Library(tmp_path / "lib.sqlite3")
    paper, other = seeds.papers[0], seeds.papers[1]
    library.set_metadata(
        paper.id, Metadata(title="Real", authors=("Jana Müller", "Ada Lovelace"), year=2026)
    )
    library.add_tags([paper.id, other.id], ["to-read"])
    from abstract_reader.digest import digest

    page = digest([record(paper, library.snapshot), record(other, library.snapshot)], fmt)
    assert "Jana Müller, Ada Lovelace" in page
    assert "derived title" in page  # the other paper's title is still derived
    assert page.count("derived title") == 1

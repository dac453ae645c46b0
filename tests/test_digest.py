"""What's new: the digest (read back as Markdown), is:new across sessions, saved searches."""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from abstract_reader.cite import record
from abstract_reader.corpus import load_corpus
from abstract_reader.digest import digest, first_sentences
from abstract_reader.library import Library
from abstract_reader.saved import SavedSearchError, delete, expand, save, saved
from abstract_reader.search import SearchIndex
from abstract_reader.seen import WithNew, begin_session, ids_seen_since, new_ids

from .conftest import cli, write_dump

HOSTILE = "Robust *bold* [link](http://x) <b>tag</b> #heading | pipe $x$ & co_var"


def _rendered_text(text: str) -> str:
    """The visible text of the Markdown once rendered to HTML."""

    class Text(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.parts: list[str] = []

        def handle_data(self, data: str) -> None:
            self.parts.append(data)

    html = MarkdownIt("commonmark").render(text)
    parser = Text()
    parser.feed(html)
    return "".join(parser.parts)


@pytest.mark.parametrize("fmt", ["markdown", "text", "html"])
def test_digest_never_repeats_the_year_of_a_venue(tmp_path: Path, fmt: str) -> None:
    import dataclasses

    corpus = load_corpus([write_dump(tmp_path / "d.txt", "Graph networks pass messages.")])
    library = Library(tmp_path / "lib.sqlite3")
    rec = record(corpus.papers[0], library.snapshot)
    posters = [
        dataclasses.replace(rec, venue="NeurIPS 2026 poster", year=2026),
        dataclasses.replace(rec, venue="ICML oral", year=2025),
    ]
    text = digest(posters, fmt)
    assert "NeurIPS 2026 poster" in text and "ICML 2025 oral" in text
    assert "poster 2026" not in text and "oral 2025" not in text


def test_markdown_digest_reads_back_grouped_by_tag(tmp_path: Path) -> None:
    dump = write_dump(
        tmp_path / "d.txt",
        f"{HOSTILE}. Second sentence here. Third one is not shown.",
        "Graph networks pass messages. They are neat.",
        "Nobody tagged this one. It stays untagged.",
    )
    corpus = load_corpus([dump])
    library = Library(tmp_path / "lib.sqlite3")
    a, b, c = (p.id for p in corpus.papers)
    library.add_tags([a], ["robust"])
    library.add_tags([a, b], ["reading list"])
    library.set_note(a, "Check *this*\n1. against the baseline")
    library.set_bookmark([b])
    records = [record(p, library.snapshot) for p in corpus.papers]
    text = digest(records, "markdown", subtitle="query: is:tagged")

    md = MarkdownIt("commonmark")
    tokens = md.parse(text)
    headings = [
        (tokens[i].tag, tokens[i + 1].content)
        for i, t in enumerate(tokens)
        if t.type == "heading_open"
    ]
    h2 = [content for tag, content in headings if tag == "h2"]
    assert h2 == ["\\#reading list (2)", "\\#robust (1)", "Untagged (1)"]
    h3 = [content for tag, content in headings if tag == "h3"]
    assert len(h3) == 4  # the robust paper is under both of its tags
    # untrusted text stays text: no emphasis, link, HTML or heading made from it
    kinds = {t.type for t in tokens} | {c.type for t in tokens for c in t.children or []}
    assert not kinds & {"link_open", "html_inline", "html_block", "ordered_list_open"}
    emphasised = set(re.findall(r"<em>(.*?)</em>", md.render(text)))
    # the digest's own, only (the robust paper is under two tags: said under the heading)
    assert emphasised == {
        "query: is:tagged",
        "derived title",
        "a paper with several tags is listed under each",
    }
    assert text.startswith("# Reading digest: 3 papers, 4 entries\n")
    shown = _rendered_text(text)
    # rendered as the reader shows it: emphasis markers dropped, the math span becomes x
    assert HOSTILE.replace("$x$", "x").replace("*bold*", "bold") in shown
    assert "Third one" not in shown  # two sentences only
    assert "Check *this* 1. against the baseline" in " ".join(shown.split())
    assert "cite as " in shown and "★ bookmarked" in shown
    assert "query: is:tagged" in shown
    assert sum(t.type == "blockquote_open" for t in tokens) == 4


def test_text_and_html_digests(tmp_path: Path) -> None:
    dump = write_dump(tmp_path / "d.txt", f"{HOSTILE}. More.")
    corpus = load_corpus([dump])
    library = Library(tmp_path / "lib.sqlite3")
    library.add_tags([corpus.papers[0].id], ["<script>"])
    records = [record(p, library.snapshot) for p in corpus.papers]
    text = digest(records, "text")
    assert text.startswith("Reading digest: 1 paper\n") and "#<script> (1)" in text
    page = digest(records, "html")
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "<b>tag</b>" not in page


@pytest.mark.parametrize(
    ("url", "href"),
    [
        ("https://example.org/p?a=1&b=2", "https://example.org/p?a=1&b=2"),
        ("https://example.org/Köhler", "https://example.org/K%C3%B6hler"),
        ("https://", None),  # no host
        ("https://example.org/\u202egnp.exe", None),  # a bidi control: a spoofed name
        ("javascript:alert(1)", None),
    ],
)
def test_digest_links_only_what_the_reader_would_open(
    tmp_path: Path, url: str, href: str | None
) -> None:
    import dataclasses

    corpus = load_corpus([write_dump(tmp_path / "d.txt", "Graph networks pass messages.")])
    rec = dataclasses.replace(record(corpus.papers[0]), title="A Title", url=url)
    md = MarkdownIt("commonmark").parse(digest([rec], "markdown"))
    links = [c.attrs["href"] for t in md for c in t.children or [] if c.type == "link_open"]
    assert links == ([href] if href else [])
    page = digest([rec], "html")
    assert page.count("<a href=") == (1 if href else 0)
    if href:
        assert f'<a href="{html.escape(href)}">A Title</a>' in page


@pytest.mark.parametrize("fmt", ["markdown", "text", "html"])
def test_digest_titles_drop_bibtex_braces(tmp_path: Path, fmt: str) -> None:
    import dataclasses

    corpus = load_corpus([write_dump(tmp_path / "d.txt", "Graph networks pass messages.")])
    rec = record(corpus.papers[0])
    braced = dataclasses.replace(rec, title="A Dataset for {GAN} Background", title_derived=False)
    text = digest([braced], fmt)
    shown = _rendered_text(text) if fmt == "markdown" else text
    assert "A Dataset for GAN Background" in shown and "{" not in text


def test_first_sentences_render_math_and_cap() -> None:
    assert first_sentences(r"We bound $\hat \mu$ well. Then more. Not this.") == (
        "We bound μ̂ well. Then more."
    )
    assert len(first_sentences("word " * 500)) <= 400


# -- is:new ---------------------------------------------------------------------------------


def test_is_new_across_two_sessions(tmp_path: Path) -> None:
    first = write_dump(tmp_path / "icml.txt", "Old paper about graphs.", "Shared paper.")
    library = Library(tmp_path / "lib.sqlite3")
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    corpus = load_corpus([first])
    begin_session(library, corpus.files, t0)
    assert new_ids(library, corpus) == set()  # no previous session: nothing is new

    second = write_dump(tmp_path / "neurips.txt", "Brand new paper.", "Shared paper.")
    corpus = load_corpus([first, second])
    begin_session(library, corpus.files, t0 + timedelta(days=1))
    fresh = new_ids(library, corpus)
    assert {corpus.get(i).abstract for i in fresh if corpus.get(i)} == {"Brand new paper."}

    index = SearchIndex(corpus)
    result = index.search("is:new", WithNew(library, corpus))
    assert [h.paper.abstract for h in result] == ["Brand new paper."]

    begin_session(library, corpus.files, t0 + timedelta(days=2))
    assert new_ids(library, corpus) == set()  # seen in the previous session: not new now

    since = ids_seen_since(library, corpus, t0 + timedelta(hours=12))
    assert {corpus.get(i).abstract for i in since if corpus.get(i)} == {"Brand new paper."}


def test_is_new_in_the_cli_and_digest_since(tmp_path: Path) -> None:
    db = tmp_path / "lib.sqlite3"
    old = write_dump(tmp_path / "old.txt", "An old abstract about graphs.")
    new = write_dump(tmp_path / "new.txt", "A new abstract about bandits.")
    library = Library(db)
    begin_session(library, [str(old)], datetime(2026, 1, 1, tzinfo=UTC))
    begin_session(library, [str(old), str(new)], datetime(2026, 2, 1, tzinfo=UTC))
    library.close()
    done = cli("list", "-d", str(old), "-d", str(new), "-q", "is:new", db=db)
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == 1 and "bandits" in done.stdout.lower()

    done = cli("digest", "-d", str(old), "-d", str(new), "--since", "2026-01-15", db=db)
    assert done.returncode == 0, done.stderr
    assert "bandits" in done.stdout and "graphs" not in done.stdout
    bad = cli("digest", "-d", str(old), "--since", "last week", db=db)
    assert bad.returncode == 2  # a malformed value on the command line: usage
    assert bad.stderr.strip().endswith(
        "argument --since: 'last week' is not a date (YYYY-MM-DD, such as 2026-01-31)"
    )


# -- saved searches --------------------------------------------------------------------------


def test_saved_searches_save_list_expand_delete(tmp_path: Path) -> None:
    library = Library(tmp_path / "lib.sqlite3")
    save(library, "reading", "like:#robust is:unread")
    save(library, "Graphs", "graph | gnn")
    assert saved(library) == {"Graphs": "graph | gnn", "reading": "like:#robust is:unread"}
    assert expand(library, "@reading venue:icml") == "like:#robust is:unread venue:icml"
    assert expand(library, "mail@reading") == "mail@reading"  # not a reference
    with pytest.raises(SavedSearchError, match="no saved search named 'nope'"):
        expand(library, "@nope")
    with pytest.raises(SavedSearchError):
        save(library, "two words", "x")
    delete(library, "Graphs")
    assert saved(library) == {"reading": "like:#robust is:unread"}
    with pytest.raises(SavedSearchError):
        delete(library, "Graphs")
    # another process sees them
    assert saved(Library(tmp_path / "lib.sqlite3")) == {"reading": "like:#robust is:unread"}


def test_cli_query_at_name(tmp_path: Path) -> None:
    db = tmp_path / "lib.sqlite3"
    library = Library(db)
    save(library, "snn", "spiking")
    library.close()
    done = cli("list", "-q", "@snn", db=db)
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == 2  # the two spiking-network papers
    done = cli("list", "-q", "@missing", db=db)
    assert done.returncode == 1 and "no saved search named 'missing'" in done.stderr


# -- the digest command ----------------------------------------------------------------------


def test_cli_digest_writes_a_file_only_with_force(tmp_path: Path) -> None:
    db = tmp_path / "lib.sqlite3"
    assert cli("tag", "91429572", "snn", db=db).returncode == 0
    out = tmp_path / "digest.md"
    done = cli("digest", "-q", "#snn", "-o", str(out), db=db)
    assert done.returncode == 0, done.stderr
    assert "Spike-SFT" in out.read_text("utf-8")
    out.write_text("keep me", encoding="utf-8")
    again = cli("digest", "-q", "#snn", "-o", str(out), db=db)
    assert again.returncode == 1 and out.read_text("utf-8") == "keep me"
    forced = cli("digest", "-q", "#snn", "-o", str(out), "--force", "--format", "html", db=db)
    assert forced.returncode == 0 and out.read_text("utf-8").startswith("<!DOCTYPE html>")


def test_a_digest_of_no_paper_is_refused_as_an_export_of_none(tmp_path: Path) -> None:
    """`digest -q zzzzqq` wrote "# Reading digest: 0 papers", exit 0 (and over an existing
    file with --force) while `export` of nothing exits 1: now the same refusal."""
    for target in ((), ("-o", "-")):
        result = cli("digest", "-q", "zzzzqq", *target)
        assert result.returncode == 1, result.stderr
        assert result.stdout == ""
        assert result.stderr.splitlines() == [
            "abstract-reader: nothing to digest: no paper matches; nothing written"
        ]
    out = tmp_path / "digest.md"
    out.write_text("last week's digest", encoding="utf-8")
    for force in ((), ("--force",)):
        result = cli("digest", "-q", "zzzzqq", "-o", str(out), *force)
        assert result.returncode == 1
        assert result.stderr.splitlines() == [
            f"abstract-reader: nothing to digest: no paper matches; {out} not written"
        ]
        assert out.read_text("utf-8") == "last week's digest"
    fresh = tmp_path / "new.md"
    assert cli("digest", "-q", "zzzzqq", "-o", str(fresh)).returncode == 1
    assert not fresh.exists()


def test_a_digest_emptied_by_since_says_it_was_since(tmp_path: Path) -> None:
    db = tmp_path / "lib.sqlite3"
    old = write_dump(tmp_path / "old.txt", "An old abstract about graphs.")
    library = Library(db)
    begin_session(library, [str(old)], datetime(2026, 1, 1, tzinfo=UTC))
    library.close()
    out = tmp_path / "digest.md"
    result = cli("digest", "-d", str(old), "--since", "2026-02-01", "-o", str(out), db=db)
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        "abstract-reader: nothing to digest: the 1 paper matching is from dumps first seen "
        f"before 2026-02-01; {out} not written"
    ]
    assert not out.exists()


def _tagged_library(tmp_path: Path) -> tuple[Path, Path]:
    """Five papers tagged `reading`, one of them also `robust`, one also `ensemble`, and a
    sixth tagged `later` only."""
    dump = write_dump(
        tmp_path / "d.txt",
        *(f"Paper number {n} is about topic {n}. More." for n in range(1, 7)),
    )
    db = tmp_path / "lib.sqlite3"
    library = Library(db)
    ids = [p.id for p in load_corpus([dump]).papers]
    library.add_tags(ids[:5], ["reading"])
    library.add_tags(ids[:1], ["robust"])
    library.add_tags(ids[1:2], ["ensemble"])
    library.add_tags(ids[5:], ["later"])
    library.close()
    return dump, db


def _h2(text: str) -> list[str]:
    tokens = MarkdownIt("commonmark").parse(text)
    return [
        tokens[i + 1].content
        for i, t in enumerate(tokens)
        if t.type == "heading_open" and t.tag == "h2"
    ]


@pytest.mark.parametrize("selection", [("-q", "#reading"), ("--tag", "reading")])
def test_a_digest_of_a_tag_groups_under_that_tag_only(
    tmp_path: Path, selection: tuple[str, str]
) -> None:
    """`digest -q '#reading'` had groups for #ensemble and #robust too, and 7 entries under
    a header of "5 papers": the tag asked for is the one grouped by."""
    dump, db = _tagged_library(tmp_path)
    result = cli("digest", "-d", str(dump), *selection, db=db)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("# Reading digest: 5 papers\n")
    assert _h2(result.stdout) == ["\\#reading (5)"]
    assert result.stdout.count("\n### ") == 5
    # the paper's other tags are still said, on its line of facts
    assert "tags: reading, robust" in result.stdout


@pytest.mark.parametrize("fmt", ["markdown", "text", "html"])
def test_a_paper_under_two_tags_asked_for_is_counted_as_entries_too(
    tmp_path: Path, fmt: str
) -> None:
    """A paper with two of the tags asked for is under both: the header counts papers and
    entries, and says why they differ."""
    dump, db = _tagged_library(tmp_path)
    result = cli("digest", "-d", str(dump), "-q", "#reading | #robust", "-f", fmt, db=db)
    assert result.returncode == 0, result.stderr
    head = "Reading digest: 5 papers, 6 entries"
    why = "a paper with several of the tags asked for is listed under each"
    if fmt == "markdown":
        assert result.stdout.startswith(f"# {head}\n")
        assert f"*{why}*" in result.stdout
        assert _h2(result.stdout) == ["\\#reading (5)", "\\#robust (1)"]
    elif fmt == "text":
        assert result.stdout.startswith(f"{head}\n")
        assert f"\n{why}\n" in result.stdout
        assert "#ensemble" not in result.stdout
    else:
        assert f"<title>{head}</title>" in result.stdout and f"<h1>{head}</h1>" in result.stdout
        assert why in result.stdout
        assert re.findall(r"<h2>(.*?)</h2>", result.stdout) == ["#reading (5)", "#robust (1)"]


def test_a_digest_of_a_tag_or_a_word_puts_the_others_last(tmp_path: Path) -> None:
    """A paper matched by the word, not the tag, is under "Other matches", not its own tags."""
    dump, db = _tagged_library(tmp_path)
    result = cli("digest", "-d", str(dump), "-q", "#robust | '6", db=db)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("# Reading digest: 2 papers\n")
    assert _h2(result.stdout) == ["\\#robust (1)", "Other matches (1)"]


def test_a_digest_without_tags_in_the_query_counts_its_entries(tmp_path: Path) -> None:
    """Grouped by every tag, as before; the header no longer says "6 papers" over 8 entries."""
    dump, db = _tagged_library(tmp_path)
    result = cli("digest", "-d", str(dump), "-q", "!#robust", db=db)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("# Reading digest: 5 papers, 6 entries\n")
    assert "*a paper with several tags is listed under each*" in result.stdout
    assert _h2(result.stdout) == ["\\#ensemble (1)", "\\#later (1)", "\\#reading (4)"]
    alone = cli("digest", "-d", str(dump), "-q", "#later", db=db)
    assert alone.stdout.startswith("# Reading digest: 1 paper\n")
    assert "listed under each" not in alone.stdout


def test_a_tag_named_untagged_is_a_group_of_its_own(tmp_path: Path) -> None:
    """A tag named "Untagged" was merged with the papers that have no tag."""
    corpus = load_corpus([write_dump(tmp_path / "d.txt", "Tagged paper here.", "Bare one.")])
    library = Library(tmp_path / "lib.sqlite3")
    library.add_tags([corpus.papers[0].id], ["Untagged"])
    text = digest([record(p, library.snapshot) for p in corpus.papers], "markdown")
    assert _h2(text) == ["\\#Untagged (1)", "Untagged (1)"]

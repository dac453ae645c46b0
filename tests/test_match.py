"""Matching: the normalisation (hypothesis), the calibration fixture (precision 100%, recall
≥ 95%, decoys never matched), and the `match` command's rules (dry run, idempotence, hand-set
metadata kept, ambiguous never written, errors write nothing)."""

from __future__ import annotations

import json
import os
import re
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from abstract_reader.corpus import Corpus
from abstract_reader.match import (
    CONSIDER_AT,
    MATCH_AT,
    Matcher,
    candidates,
    merge_key,
    normalise,
    score,
)
from abstract_reader.sources import MetaRecord

from .conftest import SEEDS, cli
from .match_fixture import Item, as_unicode, build, split_sentences, wrapped_at_hyphen

# ---------------------------------------------------------------------------------------
# Normalisation
# ---------------------------------------------------------------------------------------

words = st.text(alphabet=st.characters(categories=["L", "N"]), min_size=1, max_size=12)
prose = st.lists(words, min_size=1, max_size=40).map(" ".join)


@given(st.text(max_size=300))
def test_normalise_is_idempotent(text: str) -> None:
    once = normalise(text)
    assert normalise(once) == once


@given(prose, st.lists(st.sampled_from([" ", "\n", "\n  ", "  ", "\t"]), min_size=1))
def test_hard_wraps_and_spaces_do_not_matter(text: str, gaps: list[str]) -> None:
    tokens = text.split(" ")
    wrapped = "".join(t + gaps[i % len(gaps)] for i, t in enumerate(tokens))
    assert normalise(wrapped) == normalise(text)


@given(prose)
def test_quotes_and_emphasis_do_not_matter(text: str) -> None:
    parts = text.split(" ")
    straight = " ".join(f'"{w}"' if i % 3 == 0 else f"'{w}'" for i, w in enumerate(parts))
    curly = " ".join(f"“{w}”" if i % 3 == 0 else f"‘{w}’" for i, w in enumerate(parts))
    emphasis = " ".join(f"**{w}**" if i % 2 else f"*{w}*" for i, w in enumerate(parts))
    assert normalise(straight) == normalise(curly) == normalise(text) == normalise(emphasis)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ('M\\"uller and Sch{\\"o}lkopf', "Müller and Schölkopf"),
        ("an estimator $\\hat \\mu$ with $\\alpha$", "an estimator μ̂ with α"),
        ("pre-\n  trained models", "pretrained models"),
        ("state-of-the-art", "state of the art".replace(" ", "")),
        ("robust---and fast", "robust — and fast"),
        ("the \\emph{key} idea", "the *key* idea"),
    ],
)
def test_latex_unicode_and_hyphenation(a: str, b: str) -> None:
    assert normalise(a) == normalise(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("a $k$-input Boolean function", "a k-input Boolean function"),
        ("the $\\pm$ILIF spiking neuron", "the ±ILIF spiking neuron"),
        ("$\\kappa$-regular spaces", "κ-regular spaces"),  # (not \\k on "a", then "ppa")
        ("$(x_1, \\dots, x_n)$", "(x₁, …, xₙ)"),  # (not \\dot on "s")
        ("from \\textasciitilde 750 people", "from ~750 people"),  # (not \\text)
        ("within $\\sim$500 episodes", "within ∼500 episodes"),
        ("a rate $O(\\sqrt{d/n})$", "a rate O(√(d/n))"),
        ("training- free", "training-free"),  # a wrap at a hyphen, as a record stores it
    ],
)
def test_latex_and_its_unicode_have_one_merge_key(a: str, b: str) -> None:
    assert merge_key(a) == merge_key(b)
    assert score(a, b) == 100.0


def _arxiv_lines(path: Path, abstracts: dict[str, str]) -> Path:
    path.write_text(
        "".join(
            json.dumps({"id": f"2601.{n:05d}", "title": f"Real {pid}", "abstract": text}) + "\n"
            for n, (pid, text) in enumerate(abstracts.items())
        ),
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize("edit", ["unicode", "hyphen"])
def test_a_record_differing_only_in_latex_or_a_wrap_at_a_hyphen_is_the_dump_paper(
    seeds: Corpus, tmp_path: Path, edit: str
) -> None:
    """QA (s17, 5): 9926's abstract with ``$k$`` → ``k`` (or Spik-NeRF's ``$\\pm$`` → ``±``,
    or a break at "training-\\nfree"), loaded beside the dumps, was a second paper, though
    `match` scored it 100."""
    from abstract_reader.corpus import load_corpus

    made = {
        p.id: as_unicode(p.abstract) if edit == "unicode" else wrapped_at_hyphen(p.abstract)
        for p in seeds.papers
    }
    records = {pid: text for pid, text in made.items() if text is not None}
    if edit == "unicode":
        with_math = {p.id for p in seeds.papers if "$" in p.abstract}
        records = {pid: t for pid, t in records.items() if pid in with_math}
    assert len(records) >= 15  # (17 abstracts with math; 55 with a hyphen)
    loaded = load_corpus([SEEDS, _arxiv_lines(tmp_path / "records.jsonl", records)])
    assert len(loaded.papers) == len(seeds.papers)  # one paper each, not two
    for pid, text in records.items():
        paper = loaded.get(pid)  # the dump's id: the library's marks are keyed by it
        assert paper is not None and paper.title == f"Real {pid}" and not paper.title_derived
        assert score(paper.abstract, text) >= MATCH_AT  # and `match` agrees


@settings(max_examples=50)
@given(st.data())
def test_a_dropped_sentence_still_matches_and_two_shared_do_not(
    seeds: Corpus, data: st.DataObject
) -> None:
    long = [p for p in seeds.papers if len(split_sentences(p.abstract)) >= 7]
    paper = data.draw(st.sampled_from(long))
    sentences = split_sentences(paper.abstract)
    drop = data.draw(st.integers(1, len(sentences) - 1))
    assert score(paper.abstract, " ".join(sentences[:drop] + sentences[drop + 1 :])) >= MATCH_AT
    other = data.draw(st.sampled_from([p for p in seeds.papers if p.id != paper.id]))
    decoy = " ".join(sentences[:2] + split_sentences(other.abstract)[2:])
    assert score(paper.abstract, decoy) < MATCH_AT


# ---------------------------------------------------------------------------------------
# Calibration on the fixture built from the bundled dumps
# ---------------------------------------------------------------------------------------


def _records(items: list[Item]) -> list[MetaRecord]:
    return [
        MetaRecord("csl-json", i.record_id, "fixture", n, title=i.record_id, abstract=i.abstract)
        for n, i in enumerate(items, start=1)
    ]


def test_calibration_precision_and_recall(seeds: Corpus) -> None:
    items = build(seeds)
    truth = {i.record_id: i.truth for i in items}
    assert sum(1 for i in items if i.truth is None) >= 50  # hard decoys
    matcher = Matcher((p.id, p.abstract) for p in seeds.papers)
    for rec in _records(items):
        matcher.feed(rec)
    verdicts = matcher.verdicts()
    matched = [v for v in verdicts if v.status == "matched"]
    right = [
        v for v in matched if v.best is not None and truth[v.best.record.record_id] == v.paper_id
    ]
    assert len(right) == len(matched)  # precision 100%
    assert len(right) / len(seeds.papers) >= 0.95  # recall


def test_decoys_alone_are_never_matched(seeds: Corpus) -> None:
    decoys = [i for i in build(seeds) if i.truth is None]
    matcher = Matcher((p.id, p.abstract) for p in seeds.papers)
    for rec in _records(decoys):
        matcher.feed(rec)
    verdicts = matcher.verdicts()
    assert not [v for v in verdicts if v.status == "matched"]
    for v in verdicts:
        assert all(c.score < MATCH_AT for c in v.candidates)


def test_one_paper_candidates_for_the_reader(seeds: Corpus) -> None:
    paper = seeds.papers[3]
    items = [i for i in build(seeds) if i.truth == paper.id]
    verdict = candidates(paper.abstract, _records(items))
    assert verdict.status == "matched" and verdict.best is not None
    assert verdict.best.score >= MATCH_AT


# ---------------------------------------------------------------------------------------
# The command
# ---------------------------------------------------------------------------------------


def _csl(path: Path, items: list[Item]) -> Path:
    path.write_text(
        json.dumps(
            [
                {
                    "id": i.record_id,
                    "type": "paper-conference",
                    "title": f"Real Title {i.record_id}",
                    "author": [{"given": "Ada", "family": "Lovelace"}],
                    "issued": {"date-parts": [[2026]]},
                    "DOI": f"10.5555/{i.record_id}",
                    "abstract": i.abstract,
                }
                for i in items
            ]
        ),
        encoding="utf-8",
    )
    return path


def _metadata_rows(db: Path) -> list[tuple[str, str]]:
    if not db.exists():
        return []
    with sqlite3.connect(db) as conn:
        return list(conn.execute("SELECT paper_id, title FROM metadata ORDER BY paper_id"))


@pytest.fixture
def fixture_file(seeds: Corpus, tmp_path: Path) -> Path:
    return _csl(tmp_path / "fixture.json", build(seeds))


def test_match_dry_run_then_write_then_idempotent(fixture_file: Path, tmp_path: Path) -> None:
    db = tmp_path / "lib.db"
    dry = cli("match", str(fixture_file), "--dry-run", db=db)
    assert dry.returncode == 0, dry.stderr
    assert "would write" in dry.stdout and "dry run: nothing written" in dry.stdout
    assert _metadata_rows(db) == []
    first = cli("match", str(fixture_file), db=db)
    assert first.returncode == 0, first.stderr
    summary = first.stdout.strip().splitlines()[-1]
    found = re.search(r"55 papers from the dumps: (\d+) matched \((\d+) written", summary)
    assert found and int(found.group(1)) >= 53 and found.group(1) == found.group(2)
    rows = _metadata_rows(db)
    assert len(rows) == int(found.group(1))
    assert all(title.startswith("Real Title real") for _, title in rows)  # never a decoy
    again = cli("match", str(fixture_file), db=db)
    assert f"({0} written, {len(rows)} already there)" in again.stdout
    shown = cli("show", rows[0][0], db=db)
    assert "metadata:  csl-json record real" in shown.stdout and "(matched, score" in shown.stdout
    listed = [json.loads(x) for x in cli("list", "--json", db=db).stdout.splitlines()]
    mine = next(p for p in listed if p["id"] == rows[0][0])
    assert mine["title_derived"] is False and mine["authors"] == ["Ada Lovelace"]
    assert mine["provenance"]["source"] == "csl-json"


def test_hand_set_metadata_is_kept_unless_force(fixture_file: Path, tmp_path: Path) -> None:
    db = tmp_path / "lib.db"
    pid = next(iter(_paper_ids()))
    assert cli("meta", pid, "--title", "My Own Title", db=db).returncode == 0
    run = cli("match", str(fixture_file), db=db)
    assert "1 kept (set by hand" in run.stdout
    assert dict(_metadata_rows(db))[pid] == "My Own Title"
    # editing a matched paper by hand makes it hand-set too
    other = sorted(set(dict(_metadata_rows(db))) - {pid})[0]
    assert cli("meta", other, "--year", "2024", db=db).returncode == 0
    run = cli("match", str(fixture_file), db=db)
    assert "2 kept (set by hand" in run.stdout
    forced = cli("match", str(fixture_file), "--force", db=db)
    assert "0 kept" in forced.stdout
    assert dict(_metadata_rows(db))[pid].startswith("Real Title real")


def _paper_ids() -> list[str]:
    from abstract_reader.corpus import load_corpus

    return [p.id for p in load_corpus([SEEDS]).papers]


def test_json_lines_and_ambiguous_never_written(seeds: Corpus, tmp_path: Path) -> None:
    paper = seeds.papers[0]
    sentences = split_sentences(paper.abstract)
    half = " ".join(
        [
            *sentences[: len(sentences) // 2],
            "We instead study a contrastive objective on graph data.",
            "Experiments on molecular benchmarks confirm the gains of this approach.",
        ]
    )
    items = [Item("near", half, None, "half shared")]
    path = _csl(tmp_path / "near.json", items)
    db = tmp_path / "lib.db"
    run = cli("match", str(path), "--json", db=db)
    assert run.returncode == 0, run.stderr
    lines = [json.loads(x) for x in run.stdout.splitlines()]
    assert len(lines) == 55
    mine = next(x for x in lines if x["id"] == paper.id)
    assert mine["status"] == "ambiguous" and mine["written"] is False
    assert CONSIDER_AT <= mine["candidates"][0]["score"] < MATCH_AT
    assert "1 ambiguous" in run.stderr
    assert _metadata_rows(db) == []
    plain = cli("match", str(path), db=db)
    assert f"ambiguous   {paper.short_id}" in plain.stdout and "source:" not in plain.stdout
    assert re.search(r"\n\s+\d+\.\d  csl-json:near  Real Title near", plain.stdout)


def test_a_bad_file_writes_nothing(fixture_file: Path, tmp_path: Path) -> None:
    db = tmp_path / "lib.db"
    bad = tmp_path / "broken.json"
    bad.write_text("{oops", encoding="utf-8")
    run = cli("match", str(fixture_file), str(bad), db=db)
    assert run.returncode == 1
    assert "broken.json: not valid JSON" in run.stderr
    assert _metadata_rows(db) == []


def test_match_needs_a_source(tmp_path: Path) -> None:
    run = cli("match", db=tmp_path / "lib.db")
    assert run.returncode == 2 and "give metadata FILEs" in run.stderr


def _malformed(path: Path, count: int) -> Path:
    """arXiv JSON Lines: one good record (not any dump paper's), then ``count`` lines that
    are not JSON (lines 2 to count + 1)."""
    good = {"id": "2601.00001", "title": "Elsewhere", "abstract": "A paper on other things."}
    path.write_text(
        "\n".join([json.dumps(good), *(f"{{oops {n}" for n in range(count))]) + "\n",
        encoding="utf-8",
    )
    return path


def test_malformed_records_follow_the_load_problems_rule(
    fixture_file: Path, tmp_path: Path
) -> None:
    """`match FILE…` listed 20 malformed records per file, then its own count, outside the
    rule of every command's load problems. Now: at most 12 lines (failed paths first), then
    "… and N more load warnings (-v lists them all)", then the summary; -v lists them all;
    a metadata file loaded with the dumps (-d) is reported once, not again by `match`."""
    bad = _malformed(tmp_path / "bad.jsonl", 30)
    db = Path(os.environ["ABSTRACT_READER_DB"])  # (there already: no "created" line)
    said = [f"abstract-reader: warning: {bad}: line {n}: not valid JSON" for n in range(2, 32)]

    run = cli("match", str(fixture_file), str(bad), "--dry-run")
    assert run.returncode == 0, run.stderr
    assert run.stderr.splitlines() == [
        *said[:12],
        "abstract-reader: … and 18 more load warnings (-v lists them all)",
        "abstract-reader: 5 files loaded, 1 with warnings",  # the 3 bundled dumps, 2 FILEs
    ]
    assert "would be written" in run.stdout  # (the good records were matched all the same)

    verbose = cli("match", str(fixture_file), str(bad), "--dry-run", "-v")
    assert verbose.returncode == 0
    assert verbose.stderr.splitlines() == [
        *said,
        "abstract-reader: 5 files loaded, 1 with warnings",
    ]
    assert verbose.stdout == run.stdout

    # a dump that failed to load is listed first, and is a failure (exit 1); the rest works
    missing = tmp_path / "missing.txt"
    failed = cli("match", str(fixture_file), str(bad), "-d", str(missing), "-d", str(SEEDS))
    assert failed.returncode == 1
    assert failed.stderr.splitlines() == [
        f"abstract-reader: {missing}: no such file or directory",
        *said[:11],
        "abstract-reader: … and 19 more load warnings (-v lists them all)",
        "abstract-reader: 5 files loaded, 1 with warnings, 1 failed",
    ]
    assert len(_metadata_rows(db)) > 40  # (the matches were written)

    once = cli("match", "-d", str(SEEDS), "-d", str(bad), "--dry-run", "-v")
    assert once.returncode == 0
    assert once.stderr.count(said[0]) == 1


def test_minus_v_lists_every_malformed_record_of_a_file_loaded_with_d(tmp_path: Path) -> None:
    """A metadata file given with -d kept at most 20 malformed records, -v or not: -v listed
    20 and "… and 10 more malformed records skipped". Now -v lists every one (in `list` and
    `match` alike); without -v a file still keeps 20 (a wrong 3M-line file is not held)."""
    from abstract_reader.corpus import MAX_RECORD_PROBLEMS, CorpusBuilder

    bad = _malformed(tmp_path / "bad.jsonl", 30)
    said = [f"abstract-reader: warning: {bad}: line {n}: not valid JSON" for n in range(2, 32)]
    for args in (["list"], ["match", "--dry-run"]):
        verbose = cli(*args, "-d", str(SEEDS), "-d", str(bad), "-v")
        assert verbose.returncode == 0, verbose.stderr
        assert verbose.stderr.splitlines() == [
            *said,
            "abstract-reader: 4 files loaded, 1 with warnings",
        ], args
    quiet = cli("list", "-d", str(SEEDS), "-d", str(bad))
    assert quiet.stderr.splitlines()[:12] == said[:12]
    assert "(-v lists them all)" in quiet.stderr
    builder = CorpusBuilder([bad])
    builder.add_file(bad)
    assert len(builder.finish().errors) == MAX_RECORD_PROBLEMS + 1  # (+ the count's line)


def test_load_problems_are_said_before_the_matching(seeds: Corpus, tmp_path: Path) -> None:
    """`match` said every load problem after matching (minutes against the arXiv snapshot):
    now the dumps' problems come before the matching starts, and a FILE's malformed records
    as it is read — before the next source (here a cached OpenReview download, whose
    "using the cached download" line is said while matching) — the count and summary last."""
    from abstract_reader.net import openreview_cache

    venue = "Test.cc/2026/Conference"
    cache = openreview_cache(Path(os.environ["ABSTRACT_READER_CACHE"]) / "net", venue)
    cache.parent.mkdir(parents=True)
    paper = seeds.papers[0]
    note = {
        "id": "n1",
        "forum": "n1",
        "content": {"title": {"value": "T"}, "abstract": {"value": paper.abstract}},
    }
    cache.write_text(json.dumps({"notes": [note]}), encoding="utf-8")
    bad = _malformed(tmp_path / "bad.jsonl", 2)
    missing = tmp_path / "missing.txt"
    run = cli(
        "match", str(bad), "--openreview", venue, "-d", str(SEEDS), "-d", str(missing),
        "--dry-run",
    )  # fmt: skip
    assert run.returncode == 1  # (a dump that failed to load)
    assert run.stderr.splitlines() == [
        f"abstract-reader: {missing}: no such file or directory",
        f"abstract-reader: warning: {bad}: line 2: not valid JSON",
        f"abstract-reader: warning: {bad}: line 3: not valid JSON",
        f"OpenReview {venue}: using the cached download {cache} (--refresh to renew)",
        "abstract-reader: 5 files loaded, 1 with warnings, 1 failed",  # (3 dumps, 2 sources)
    ]
    assert "1 matched" in run.stdout


def _bib(path: Path, entries: list[tuple[str, str, str]]) -> Path:
    """A BibTeX file of (key, title, abstract) entries, as Zotero writes them."""
    path.write_text(
        "".join(
            f"@inproceedings{{{key},\n  title = {{{title}}},\n"
            f"  author = {{Lovelace, Ada and Turing, Alan}},\n  year = {{2026}},\n"
            f"  abstract = {{{abstract}}}\n}}\n\n"
            for key, title, abstract in entries
        ),
        encoding="utf-8",
    )
    return path


def test_a_paper_a_file_loaded_with_the_dumps_titles_is_matched_and_written(
    seeds: Corpus, tmp_path: Path
) -> None:
    """The same abstract in a metadata file loaded beside the dumps (-d, as the reader's
    files) gives the dump paper its title in memory only; `match` writes it to the library,
    as it does with the file given as `match FILE` (QA: 0 matched, 'metadata: none'). A
    record with no dump paper is not written."""
    plain = [p for p in seeds.papers if not re.search(r"[$\\{}%*_]", p.abstract)]
    same, wrapped = plain[0], plain[1]
    rewrapped = ".\n  ".join(wrapped.abstract.split(". "))  # hard-wrapped: the same paper
    bib = _bib(
        tmp_path / "m.bib",
        [
            ("same2026", "The Same Abstract", same.abstract),
            ("wrapped2026", "A Rewrapped Abstract", rewrapped),
            ("alone2026", "Only A Record", "A record whose paper is in no dump at all here."),
        ],
    )
    db = tmp_path / "lib.db"
    dry = cli("match", "-d", str(SEEDS), "-d", str(bib), "--dry-run", db=db)
    assert dry.returncode == 0, dry.stderr
    assert f"would write {same.short_id}  The Same Abstract" in dry.stdout
    assert f"would write {wrapped.short_id}  A Rewrapped Abstract" in dry.stdout
    assert "55 papers from the dumps: 2 matched" in dry.stdout
    done = cli("match", "-d", str(SEEDS), "-d", str(bib), db=db)
    assert done.returncode == 0, done.stderr
    assert "2 matched (2 written, 0 already there)" in done.stdout
    assert _metadata_rows(db) == sorted(
        [(same.id, "The Same Abstract"), (wrapped.id, "A Rewrapped Abstract")]
    )
    shown = cli("show", same.id, db=db)  # the bundled dumps alone: the title was kept
    assert "The Same Abstract" in shown.stdout and "bibtex record same2026" in shown.stdout
    again = cli("match", "-d", str(SEEDS), "-d", str(bib), db=db)
    assert "2 matched (0 written, 2 already there)" in again.stdout


# ---------------------------------------------------------------------------------------
# Two papers cannot be the same arXiv id or DOI (QA s17 #6)
# ---------------------------------------------------------------------------------------


def _arxiv(path: Path, records: list[tuple[str, str]], doi: str | None = None) -> Path:
    lines = [
        json.dumps(
            {
                "id": arxiv_id,
                "title": f"Real Title {n}",
                "authors": "Ada Lovelace",
                "abstract": abstract,
                "update_date": "2026-01-01",
                **({"doi": doi} if doi else {}),
            }
        )
        for n, (arxiv_id, abstract) in enumerate(records)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("shared", ["arxiv", "doi"])
def test_two_papers_matched_to_one_arxiv_id_or_doi_are_ambiguous_not_written(
    seeds: Corpus, tmp_path: Path, shared: str
) -> None:
    """Both were written, and both cited the same arXiv id: one of them the wrong paper."""
    first, second, third = seeds.papers[0], seeds.papers[1], seeds.papers[2]
    if shared == "arxiv":
        records = [("2601.00001", first.abstract), ("2601.00001v2", second.abstract)]
        path = _arxiv(tmp_path / "twice.jsonl", [*records, ("2601.00003", third.abstract)])
        named = "arXiv id 2601.00001"
    else:
        records = [("2601.00001", first.abstract), ("2601.00002", second.abstract)]
        path = _arxiv(tmp_path / "twice.jsonl", records, doi="10.5555/Same")
        _arxiv(tmp_path / "third.jsonl", [("2601.00003", third.abstract)])
        named = "DOI 10.5555/same"
    db = tmp_path / "lib.db"
    files = [str(path)] if shared == "arxiv" else [str(path), str(tmp_path / "third.jsonl")]
    run = cli("match", *files, db=db)
    assert run.returncode == 0, run.stderr
    assert dict(_metadata_rows(db)) == {
        third.id: "Real Title 2" if shared == "arxiv" else "Real Title 0"
    }
    out = run.stdout
    assert f"ambiguous   {first.short_id}" in out and f"ambiguous   {second.short_id}" in out
    assert f"    not written: its record's {named} is also matched to paper {second.id[:12]}" in out
    assert f"    not written: its record's {named} is also matched to paper {first.id[:12]}" in out
    assert "1 matched (1 written, 0 already there), 2 ambiguous" in out
    listed = [json.loads(x) for x in cli("match", *files, "--json", db=db).stdout.splitlines()]
    mine = next(x for x in listed if x["id"] == first.id)
    assert mine["status"] == "ambiguous" and mine["written"] is False
    assert named in mine["reason"]


def test_a_match_to_an_arxiv_id_the_library_gives_another_paper_is_not_written(
    seeds: Corpus, tmp_path: Path
) -> None:
    from abstract_reader.library import Library, Metadata

    paper = seeds.papers[0]
    other = "00000000000000aa"  # a paper of the library, not in the loaded dumps
    db = tmp_path / "lib.db"
    with Library(db, backups=False) as lib:
        lib.set_metadata(other, Metadata(title="Theirs", url="https://arxiv.org/abs/2601.00001v3"))
    path = _arxiv(tmp_path / "one.jsonl", [("2601.00001", paper.abstract)])
    run = cli("match", str(path), db=db)
    assert run.returncode == 0, run.stderr
    assert dict(_metadata_rows(db)) == {other: "Theirs"}
    assert (
        f"    not written: its record's arXiv id 2601.00001 is paper {other[:12]}'s in the library"
        in run.stdout
    )

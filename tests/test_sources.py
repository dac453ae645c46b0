"""Metadata sources (arXiv JSON Lines, OpenReview / CSL-JSON, BibTeX, RIS), loaded through the
CLI as a user would: real metadata, malformed records reported and skipped, records without
an abstract kept out of the list, the same abstract in a dump and a record one paper."""

from __future__ import annotations

import json
from collections.abc import Generator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from abstract_reader.corpus import load_corpus
from abstract_reader.sources import MetaRecord, RecordProblem, SourceError, read_records

from .conftest import DATA, SEEDS, cli

SOURCES = DATA / "sources"


def _listed(*paths: Path) -> tuple[list[dict[str, object]], str, int]:
    """``list --json`` of the paths, with the test's own library (conftest)."""
    args: list[str] = []
    for path in paths:
        args += ["-d", str(path)]
    result = cli("list", "--json", *args)
    return (
        [json.loads(line) for line in result.stdout.splitlines()],
        result.stderr,
        result.returncode,
    )


def test_arxiv_snapshot_records(tmp_path: Path) -> None:
    papers, err, code = _listed(SOURCES / "arxiv.jsonl")
    assert code == 0  # a malformed line is a warning: the rest loads
    assert err.strip().splitlines() == [
        f"abstract-reader: warning: {SOURCES / 'arxiv.jsonl'}: line 2: not valid JSON"
    ]
    assert len(papers) == 2  # the record without an abstract is not listed
    first = papers[0]
    assert (
        first["title"]
        == "Empirical Sensitivity: A New Measure of Robustness for Statistical Estimators"
    )
    assert first["title_derived"] is False
    assert first["authors"] == ["Ada Lovelace", "Jürgen Müller", "María de la Cruz"]
    assert first["year"] == 2026  # the first version's date
    assert first["doi"] == "10.48550/arXiv.2601.01234"
    assert first["url"] == "https://arxiv.org/abs/2601.01234"
    assert first["eprint"] == "2601.01234" and first["primary_class"] == "stat.ML"
    assert "\n" not in str(first["abstract"]) and "  " not in str(first["abstract"])


def test_openreview_notes_merge_with_the_dump_paper(tmp_path: Path) -> None:
    """The RSE note's abstract differs from the dump's only by curly quotes: one paper, the
    dump's id (marks are keyed by it), the record's metadata, both sources."""
    seeds = load_corpus([SEEDS])
    rse = next(p for p in seeds.papers if "(RSE)" in p.abstract)
    papers, err, code = _listed(SEEDS, SOURCES / "openreview.json")
    assert code == 0
    assert "note 3 (bad0000001): no content" in err
    assert len(papers) == 56  # 55 from the dumps, one new, the RSE note merged
    merged = next(p for p in papers if p["id"] == rse.id)
    assert (
        merged["title"]
        == "RSE: Robust Satisficing Ensembles for Out-of-Distribution Generalization"
    )
    assert merged["authors"] == ["Grace Hopper", "Émilie du Châtelet"]
    assert merged["venue"] == "NeurIPS 2025 poster" and merged["year"] == 2025
    assert merged["url"] == "https://openreview.net/forum?id=rSe2025abc"
    assert [s["file"] for s in merged["sources"]][-1] == "openreview.json"  # type: ignore[index]


def test_csl_json_items(tmp_path: Path) -> None:
    papers, err, code = _listed(SOURCES / "csl.json")
    assert code == 0 and "item 2: not a JSON object" in err
    assert len(papers) == 1
    (item,) = papers
    assert item["authors"] == ["María de la Cruz", "Andrew Ng"]
    assert item["doi"] == "10.5555/ICLR.2026.42"  # https://doi.org/ stripped
    assert item["venue"] == "International Conference on Learning Representations"


def test_bibtex_latex_decoded_braces_removed(tmp_path: Path) -> None:
    papers, err, code = _listed(SOURCES / "zotero.bib")
    assert code == 0
    assert err.strip().splitlines() == [
        f"abstract-reader: warning: {SOURCES / 'zotero.bib'}: entry 2 (line 15): "
        "cannot be parsed (unbalanced braces?)"
    ]
    shapley = papers[0]
    assert shapley["title"] == "Shapley Values for XAI: A Unifying View of SHAP, LIME and Friends"
    assert shapley["authors"] == ["Ada Lovelace", "Jürgen Müller", "María de la Cruz"]
    assert "über-popular" in str(shapley["abstract"]) and "50% faster" in str(shapley["abstract"])
    assert "$O(\\sqrt{n})$" in str(shapley["abstract"])  # math kept for rendering
    godel = papers[1]
    assert godel["eprint"] == "2512.09876" and godel["authors"] == ["Kurt Gödel"]


def test_bibtex_titles_read_as_their_authors_meant(tmp_path: Path) -> None:
    r"""Protective braces go, accents become letters, \& is &, and a bare % is a percent
    sign (not a LaTeX comment that cut "50% Fewer GPU Hours" down to "50")."""
    bib = tmp_path / "refs.bib"
    bib.write_text(
        "@inproceedings{devlin2019,\n"
        r"  title = {{BERT}: 50% Fewer {GPU} Hours for {\"U}ber-{R}obust Caf{\'e}s {\&} Co},"
        "\n  author = {Devlin, Jacob},\n  year = {2019},\n"
        r"  abstract = {We cut 50% of the cost, and 10\% more with {BERT}.},"
        "\n}\n",
        encoding="utf-8",
    )
    papers, err, code = _listed(bib)
    assert code == 0 and err == ""
    (paper,) = papers
    assert paper["title"] == "BERT: 50% Fewer GPU Hours for Über-Robust Cafés & Co"
    assert paper["abstract"] == "We cut 50% of the cost, and 10% more with BERT."


def test_bibtex_quotes_corporate_names_and_brace_characters(tmp_path: Path) -> None:
    r"""A quoted field's \" is a quote, not an umlaut eating the next letter (QA s17 #7);
    "{Procter and Gamble}" is one author and an escape after " and " keeps its letter
    (bibtexparser's splitter lost it); \textbraceleft{} / \textbraceright{}, as the
    BibTeX export writes a lone brace, read as the braces, and \textasciicircum{} as ^."""
    bib = tmp_path / "refs.bib"
    bib.write_text(
        "@misc{q,\n"
        r'  title = "Quote \" title, {\"U}ber \textbraceleft{}x \textbraceright{} 2\textasciicircum{}n",'
        "\n"
        r"  author = {{Procter and Gamble} and Lovelace, Ada and \"Uber, Bob},"
        "\n  year = {2026}\n}\n",
        encoding="utf-8",
    )
    (record,) = list(read_records(bib))
    assert isinstance(record, MetaRecord)
    assert record.title == 'Quote " title, Über {x } 2^n'
    assert record.authors == ("Procter and Gamble", "Ada Lovelace", "Bob Über")


def test_ris_records(tmp_path: Path) -> None:
    papers, err, code = _listed(SOURCES / "refs.ris")
    assert code == 0 and "record 2 (line 14): no 'ER  -' line" in err
    (portal,) = papers
    assert portal["authors"] == ["Grace Hopper", "Jürgen Müller", "Ada Lovelace"]
    assert portal["doi"] == "10.5555/neurips.2026.777" and portal["year"] == 2026
    assert portal["venue"] == "Advances in Neural Information Processing Systems"


def test_show_prints_real_metadata(tmp_path: Path) -> None:
    result = cli("show", "8c5eb828", "-d", str(SOURCES / "openreview.json"))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.startswith("Calibrated Conformal Prediction under Covariate Shift\n")
    assert "(derived title)" not in out
    assert "authors:   Ada Lovelace, Jürgen Müller" in out
    assert "venue:     NeurIPS 2025 poster\n" in out
    assert "metadata:  from the paper's source record" in out


@pytest.mark.parametrize(
    ("name", "content", "problem"),
    [
        ("notes.json", '{"hello": 1}', "neither OpenReview notes"),
        ("notes.json", "{not json", "not valid JSON (line 1"),
        ("snap.jsonl", '{"a": 1}\n', "not arXiv metadata records"),
        ("snap.jsonl", "hello\n", "not JSON Lines"),
        ("refs.ris", "just text\n", "not RIS"),
        ("refs.bib", "no entries here\n", "no BibTeX entries"),
        ("refs.bib", b"\xff\xfe@misc{", "not UTF-8 text"),
    ],
)
def test_a_file_that_is_not_its_format_is_one_line_and_skipped(
    tmp_path: Path, name: str, content: str | bytes, problem: str
) -> None:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    result = cli("list", "-d", str(path), "-d", str(SEEDS))
    assert result.returncode == 1  # a skipped input is a failure, after the good ones show
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and problem in lines[0] and name in lines[0]
    assert len(result.stdout.splitlines()) == 55


def test_untrusted_record_text_is_sanitised(tmp_path: Path) -> None:
    note = {
        "id": "evil",
        "forum": "evil",
        "content": {
            "title": {"value": "Evil \x1b]52;c;ZXZpbA==\x07 title \u202e"},
            "authors": {"value": ["Mallory \x1b[2J"]},
            "abstract": {"value": "We propose \x9b31m a thing.\nWrapped."},
        },
    }
    path = tmp_path / "evil.json"
    path.write_text(json.dumps([note]), encoding="utf-8")
    (record,) = list(read_records(path))
    assert not isinstance(record, RecordProblem)
    text = repr(record)
    for value in (record.title, *record.authors, record.abstract):
        assert value is not None
        assert not any(ord(c) < 32 or 0x7F <= ord(c) <= 0x9F for c in value), text
        assert "\u202e" not in value


def test_the_snapshot_is_streamed(tmp_path: Path) -> None:
    """Records come one at a time: the first arrives before the file is read to its end
    (a 4 GB snapshot never sits in memory)."""
    path = tmp_path / "big.jsonl"
    line = json.dumps({"id": "2601.00001", "title": "T", "abstract": "A b c."}) + "\n"
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(line)
        handle.write("x" * 10)  # a broken tail: reached only if we read that far
    records = read_records(path)
    assert isinstance(records, Generator)
    first = next(records)
    assert getattr(first, "record_id", None) == "2601.00001"
    records.close()  # closes the file


def test_a_missing_file_is_a_source_error(tmp_path: Path) -> None:
    with pytest.raises(SourceError):
        list(read_records(tmp_path / "absent.json"))


@given(st.text(max_size=200))
def test_arxiv_lines_never_crash(text: str) -> None:
    from abstract_reader.sources.arxiv import record_from

    record_from({"id": "1", "title": text, "abstract": text, "authors": text}, "f", 1)

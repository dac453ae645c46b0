"""Rendering, sanitising and stand-in titles."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from abstract_reader.corpus import Corpus
from abstract_reader.text import TITLE_MAX, derive_title, render, sanitise, titles

from .conftest import paper_with


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (r"an $\ell_2$-error", "an ℓ₂-error"),
        (r"$O(L^6)$ time", "O(L⁶) time"),
        (r"estimator $\hat \mu$ here", "estimator μ̂ here"),
        (r"rate $O(\sqrt{d/n})$", "rate O(√(d/n))"),
        (r"$\eta^{-1}$", "η⁻¹"),
        (r"\(x_1\) inline", "x₁ inline"),
    ],
)
def test_math_spans_become_unicode(source: str, expected: str) -> None:
    assert render(source).text == expected


@pytest.mark.parametrize(
    "prose",
    ["reduces cost by 42.94%, with ~ 3 runs", "see [1] and a[i] = b[j]", "price is $5 only"],
)
def test_prose_outside_math_is_left_alone(prose: str) -> None:
    assert render(prose).text == prose


def test_unbalanced_dollar_leaves_text_as_is() -> None:
    assert render(r"costs $x and \alpha").text == r"costs $x and \alpha"


def test_superscript_only_when_every_character_has_one() -> None:
    # '/' has no superscript form: the exponent stays as it is
    assert "⁄" not in render(r"$r^{1/3}$").text
    assert render(r"$r^{1/3}$").text.startswith("r^")


def test_emphasis_becomes_spans_and_plain_text() -> None:
    rendered = render("a **Resilience** and *regularized* term")
    assert rendered.text == "a Resilience and regularized term"
    styles = {(rendered.text[s.start : s.end], s.style) for s in rendered.spans}
    assert ("Resilience", "bold") in styles
    assert ("regularized", "italic") in styles


def test_math_span_is_styled() -> None:
    rendered = render(r"bound $\ell_2$ here")
    assert [(rendered.text[s.start : s.end], s.style) for s in rendered.spans] == [("ℓ₂", "math")]


def test_seed_math_renderings(seeds: Corpus) -> None:
    paper = paper_with(seeds, "empirical sensitivity")
    text = render(paper.abstract).text
    assert "μ̂" in text and "ℓ₂-error" in text and "O(√(d/n))" in text
    assert "$" not in text and "\\hat" not in text
    percent = paper_with(seeds, "reduce recovery cost by 42.94%")
    assert "42.94%" in render(percent.abstract).text


@given(st.text())
def test_sanitise_leaves_no_control_character_and_is_idempotent(text: str) -> None:
    clean = sanitise(text)
    assert sanitise(clean) == clean
    for ch in clean:
        code = ord(ch)
        assert code in (9, 10) or not (code < 32 or 0x7F <= code <= 0x9F)
        assert not (0x202A <= code <= 0x202E or 0x2066 <= code <= 0x2069)


def test_escape_becomes_a_visible_stand_in() -> None:
    assert sanitise("a\x1b]52;c;ZXZpbA==\x07b") == "a\u241b]52;c;ZXZpbA==\u2407b"


@given(st.text(max_size=400))
def test_render_never_raises_and_emits_no_controls(text: str) -> None:
    out = render(sanitise(text)).text
    assert not any(ord(c) < 32 and c not in "\t\n" for c in out)


def test_titles_name_what_the_abstract_introduces(seeds: Corpus) -> None:
    rse = paper_with(seeds, "Robust Satisficing Ensemble (RSE)")
    assert "RSE" in rse.title and "Robust Satisficing Ensemble" in rse.title
    rcrl = paper_with(seeds, "We introduce Reward-Conditioned Reinforcement Learning (RCRL)")
    assert "RCRL" in rcrl.title


def test_titles_are_short_distinct_whole_words_and_marked_derived(seeds: Corpus) -> None:
    titles = [p.title for p in seeds.papers]
    assert len(set(titles)) == len(titles) == 55
    for paper in seeds.papers:
        assert paper.title_derived
        assert 0 < len(paper.title) <= TITLE_MAX
        words = paper.abstract.replace("*", "").split()  # the text as read: no ** markers
        last = paper.title.rstrip("…").split()[-1]
        # never cut mid-word: the last word of the title is a whole word somewhere in the text
        assert any(last.strip(",.:;()") in w for w in words) or "[" in paper.title


def test_title_falls_back_to_first_clause() -> None:
    title = derive_title("Shapley values are a cornerstone of explainable AI, yet they differ.")
    assert title == "Shapley values are a cornerstone of explainable AI"


def test_long_title_is_cut_at_a_word_boundary() -> None:
    abstract = " ".join(["representation"] * 30) + "."
    title = derive_title(abstract)
    assert len(title) <= TITLE_MAX and not title.endswith("…")
    assert all(w == "representation" for w in title.split())


def test_identical_titles_are_made_distinct() -> None:
    import tempfile
    from pathlib import Path

    from abstract_reader.corpus import load_corpus

    with tempfile.TemporaryDirectory() as tmp:
        dump = Path(tmp) / "d.txt"
        dump.write_text(
            "We propose FooNet, a thing. It works.\n\nWe propose FooNet, a thing. It also works.\n"
        )
        corpus = load_corpus([dump])
    assert len({p.title for p in corpus.papers}) == 2
    assert all(p.title.startswith("FooNet") for p in corpus.papers)


def test_titles_use_what_the_abstract_says_about_a_name(seeds: Corpus) -> None:
    # "we propose RADAR (Residual Aggregation and Dense Alignment Representations)"
    radar = paper_with(seeds, "we propose RADAR (")
    assert radar.title == "RADAR: Residual Aggregation and Dense Alignment Representations"
    # "a fully 3D scene completion framework, called InvisiSplat"
    invisi = paper_with(seeds, "called InvisiSplat")
    assert (
        invisi.title.startswith("InvisiSplat:") and "3D scene completion framework" in invisi.title
    )
    # "StarCraft Motion, a large-scale dataset for agent simulation built from …":
    # the description stops before the trailing clause
    starcraft = paper_with(seeds, "we introduce StarCraft Motion")
    assert starcraft.title == "StarCraft Motion: Large-scale dataset for agent simulation"


def test_unnamed_contributions_make_the_title(seeds: Corpus) -> None:
    # "we propose a unified framework for robust domain generalization under …"
    dg = paper_with(seeds, "Domain generalization (DG) aims to learn")
    assert dg.title.lower().startswith("framework for robust domain generalization")
    # "we propose new DPPs on the Euclidean space based on wavelets"
    dpp = paper_with(seeds, "based on wavelets")
    assert dpp.title.startswith("DPPs on the Euclidean space")
    # an abstract that introduces nothing keeps its first clause
    shapley = paper_with(seeds, "Shapley values are a cornerstone")
    assert shapley.title == "Shapley values are a cornerstone of explainable AI"


@pytest.mark.parametrize(
    ("phrase", "title"),
    [
        # "we give X": what the paper makes, ended on a whole phrase
        (
            "we give adversarially robust ANN",
            "Adversarially robust ANN algorithms with sublinear query time",
        ),
        # "Our main finding is that X"
        ("representability does not imply", "Representability does not imply learnability"),
        # "we consider the problem of X", cut before "under …" to fit 80 characters
        (
            "We consider the problem of *regularized*",
            "Regularized best-response max-regret minimization in online RLHF",
        ),
        # "we find that X"
        (
            "concurrent fMRI recordings",
            "Frontier LRMs most closely match human behavioral patterns during game discovery",
        ),
        # "we critically evaluate X" → "Evaluating X"
        (
            "we critically evaluate DD methods",
            "Evaluating DD methods through large-scale experiments",
        ),
        # a long name + expansion ends on a whole phrase, no "…"
        ("we propose DexDICE", "DexDICE: Dual-expert offline imitation learning"),
        # named without "we propose": "realized in X (X)", "the resulting method, X,"
        ("This view is realized in", "RSDP: Resolution-Aware Structural Density Peak Clustering"),
        ("the resulting method, Rescaled ASGD,", "Rescaled ASGD"),
        # a coined name used throughout, with its apposition's adjectives
        ("These lessons motivate LoHi", "LoHi: Training-free, single-pass framework"),
        # a version is part of a name
        ("we present \\textit{Spik-NeRF v2}", "Spik-NeRF v2"),
        # "… and propose a novel X": the subject is earlier in the sentence
        ("and propose a novel resilience", "Resilience evaluation framework"),
        # a description is kept to its whole phrase ("of cited web sources")
        (
            "We introduce SourceBench",
            "SourceBench: Benchmark for measuring the quality of cited web sources",
        ),
    ],
)
def test_stand_in_titles_say_what_the_paper_does(seeds: Corpus, phrase: str, title: str) -> None:
    assert paper_with(seeds, phrase).title == title


def test_no_seed_title_ends_with_an_ellipsis(seeds: Corpus) -> None:
    assert not [p.title for p in seeds.papers if p.title.endswith("…")]


# -- the fast cue finders find what the plain scans find --------------------------------------

_SEED_SENTENCES = [
    sentence
    for path in sorted((Path(__file__).parents[1] / "seeds").glob("*.txt"))
    for paragraph in path.read_text(encoding="utf-8").split("\n\n")[1:]
    for sentence in paragraph.strip().split(". ")
    if sentence
]


@given(
    st.lists(st.sampled_from(_SEED_SENTENCES), min_size=1, max_size=8),
    st.sampled_from([" ", "  ", "\t", "\u00a0", "\n"]),
    st.integers(min_value=0, max_value=40),
)
def test_fast_title_cues_agree_with_plain_scans(
    sentences: list[str], space: str, where: int
) -> None:
    """Whatever the whitespace: the regex passes that find subjects, intro phrases and the
    patterns of `_what_it_does` agree with scanning every subject and verb with str.find."""
    text = ". ".join(sentences)
    spaces = [i for i, ch in enumerate(text) if ch == " "]
    if spaces:  # one space made odd: the fast path must notice and step aside
        i = spaces[where % len(spaces)]
        text = text[:i] + space + text[i + 1 :]
    head = text[:1500]
    lowered = head.lower()
    cues = titles._subject_cues(head, lowered)
    assert cues.intro == titles._intro_starts(head, lowered)
    expected = titles._what_it_does(head, lowered, None)
    assert titles._what_it_does(head, lowered, cues.what) == expected


@pytest.mark.parametrize("space", [" ", "  ", "\t", "\u00a0"])
def test_titles_read_through_any_whitespace(space: str) -> None:
    """A tab or a no-break space between words is whitespace like any other."""
    abstract = f"Graphs are hard. We{space}propose FooNet, a graph network. FooNet wins."
    assert derive_title(abstract).startswith("FooNet")
    abstract = f"Graphs are hard. This paper{space}also{space}introduces BarNet for graphs."
    assert derive_title(abstract).startswith("BarNet")


@pytest.mark.parametrize(
    ("abstract", "title"),
    [
        # the paragraph starts with its own title; "https:" is no "Name: description" colon
        (
            "Linked Paper One: Testing URLs in abstracts. We release code at"
            " https://example.org/x and more.",
            "Linked Paper One",
        ),
        # "Title: sentence" gives the title whatever its length (3 words as well as 5)
        ("A Paper In My List: This abstract is about lists.", "A Paper In My List"),
        ("Another Listed Paper: Diffusion models are studied.", "Another Listed Paper"),
        # a URL is never part of a title ("Code at https" / "Benchmark at http" before)
        ("Graphs are hard. We release code at https://example.org/x and more.", "Graphs are hard"),
        (
            "Graphs are hard to search. We release a benchmark at http://example.org/b for them.",
            "Graphs are hard to search",
        ),
        (
            "Graphs are hard. We propose FooNet, a graph tool at https://x.org/y for graphs.",
            "FooNet: Graph tool",
        ),
        (
            "Graphs are hard. We propose a tool, called FooTool at https://x.org/y, for all.",
            "FooTool",
        ),
        # the colon of "e.g.:", a time or a ratio does not end a clause
        (
            "Many graph methods exist e.g.: spectral ones and spatial ones.",
            "Many graph methods exist e.g.: spectral ones and spatial ones",
        ),
        (
            "We study meetings held at 10:30 in the morning across offices.",
            "Meetings held at 10:30 in the morning across offices",
        ),
        (
            "We propose a 1:2 mixing scheme for contrastive pretraining of encoders.",
            "1:2 mixing scheme for contrastive pretraining of encoders",
        ),
        # a heading or a lower-case lead-in before a colon is no title
        ("Background: Deep learning is studied here.", "Background: Deep learning is studied here"),
        ("We ask: when does wider fan-in help?", "We ask: when does wider fan-in help?"),
    ],
)
def test_colons_in_titles(abstract: str, title: str) -> None:
    assert derive_title(abstract) == title


@pytest.mark.parametrize(
    ("stored", "shown"),
    [
        ("Sparkle: A Dataset for {GAN} Background", "Sparkle: A Dataset for GAN Background"),
        ("{RSE}: {GAN}s and {Gaussian {Nested}} Words", "RSE: GANs and Gaussian Nested Words"),
        ("Bounds of $x^{10}$ for {GAN}s", "Bounds of $x^{10}$ for GANs"),  # math keeps its own
        ("$\\frac{a}{b}$ only", "$\\frac{a}{b}$ only"),
        ("Back\\slash and } Unbalanced { Braces", "Back\\slash and } Unbalanced { Braces"),
        ("One { open", "One { open"),
        ("Escaped \\{ and {X}", "Escaped \\{ and X"),
        ("No braces at all", "No braces at all"),
    ],
)
def test_shown_title_drops_bibtex_protection_braces(stored: str, shown: str) -> None:
    assert titles.shown_title(stored) == shown


def test_unbrace_marks_the_groups() -> None:
    marked = titles.unbrace("A {GAN} for {Gaussian {Nested}} $x^{2}$", "<", ">")
    assert marked == "A <GAN> for <Gaussian Nested> $x^{2}$"


def test_sanitise_replaces_exactly_the_tables_characters_in_any_text() -> None:
    """Text with nothing to replace is returned without a per-character pass (a regex scan,
    or ASCII's own check): every code point, alone, in ASCII and in text that is not ASCII,
    still comes out as the table says — a control missed by the fast check would reach the
    terminal."""
    from abstract_reader.text.sanitise import _SANITISE_TABLE, _UNSAFE_RE

    # the check that lets text through: exactly the table's characters stop it
    assert [c for c in range(0x110000) if _UNSAFE_RE.search(chr(c))] == sorted(_SANITISE_TABLE)
    for code in [*range(0x2100), *_SANITISE_TABLE, 0x10FFFF]:  # (ASCII's own path included)
        ch = chr(code)
        want = _SANITISE_TABLE.get(code, ch)
        for before, after in (("", ""), ("ab", "cd"), ("é", "μ")):
            assert sanitise(before + ch + after) == before + want + after, hex(code)

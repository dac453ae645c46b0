"""Rendering that loses nothing (issue #13) and stays linear and bounded (issue #10).

The table holds every LaTeX / Markdown construct found by reading the 55 bundled abstracts,
with the text a reader should see, decided by reading the source (not by running the code).
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from abstract_reader.corpus import Corpus
from abstract_reader.text import render
from abstract_reader.text.latex import latex_to_unicode

from .conftest import cli

# (source as in the seeds, what the reader reads)
SEED_MATH = [
    (r"$\hat \mu$", "μ̂"),
    (r"$X = (X_1, \dots, X_n) \sim \mathcal{D}^{\otimes n}$", "X = (X₁, …, Xₙ) ∼ 𝒟^(⊗n)"),
    (r"$\eta n$", "η n"),
    (r"$\hat \mu(Y)$", "μ̂(Y)"),
    (r"$\ell_2$-error", "ℓ₂-error"),
    (r"$O(\sqrt{d/n})$", "O(√(d/n))"),
    (r"$\Omega(\eta + \sqrt{\eta d/n})$", "Ω(η + √(η d/n))"),
    (r"$P(X\mid Y)$", "P(X | Y)"),
    (r"$k$-input", "k-input"),
    (r"$k{=}2$", "k=2"),
    (r"$2^k$", "2ᵏ"),
    (r"$L \geq \lceil \log_k d \rceil$", "L ≥ ⌈logₖ d⌉"),  # the log is kept
    (r"$k{>}2$", "k>2"),
    (r"$10$ to $20\%$", "10 to 20%"),
    (r"$\gamma$-ranking", "γ-ranking"),
    (r"($\Delta C_{\mathrm{rec}}=25.2$)", "(Δ C_(rec)=25.2)"),
    (r"$99.8\%$", "99.8%"),
    (r"$\\kappa$-regular", "κ-regular"),  # an escaped backslash in the dump
    (r"within $\sim$500 episodes", "within ∼500 episodes"),
    (r"from $\textasciitilde$750 participants", "from ~750 participants"),
    (r"$2.23\times$ higher", "2.23× higher"),
    (r"$\tilde{O}(\sqrt{T}+\sqrt{D})$", "Õ(√T+√D)"),
    (r"$\tilde{O}(1)$", "Õ(1)"),
    (r"rank-$2r$", "rank-2r"),
    (
        r"$\tilde{\mathcal{O}}(\eta d^4 (\log T)^2 \wedge d^2 \sqrt{T})$",
        "𝒪̃(η d⁴ (log T)² ∧ d² √T)",
    ),
    (r"$\mathrm{poly}(d)$-free", "poly(d)-free"),
    (
        r"$\tilde{\mathcal{O}}(\sqrt{\eta r T} \wedge r^{1/3} T^{2/3})$",
        "𝒪̃(√(η r T) ∧ r^(1/3) T^(2/3))",
    ),
    (r"$\eta^{-1}$", "η⁻¹"),
    (r"$O(L^6)$", "O(L⁶)"),
    (r"the $\pm$I-LIF", "the ±I-LIF"),
    (r"spikes $\{-1, 0, 1\}$", "spikes {-1, 0, 1}"),
    (r"$t/2$ timesteps", "t/2 timesteps"),
]

SEED_PROSE = [
    # TeX quotes
    ("a strong ``for-all'' guarantee", "a strong “for-all” guarantee"),
    ("can be ``sponsored,'' i.e.", "can be “sponsored,” i.e."),
    # escapes in prose
    (r"only 31\% of people", "only 31% of people"),
    (r"explains 76.6\% of regressions", "explains 76.6% of regressions"),
    # dashes and ties
    ("the depth--fan-in bound", "the depth–fan-in bound"),
    ("a stability--plasticity pattern", "a stability–plasticity pattern"),
    ("two axes unused --- per-frame", "two axes unused — per-frame"),
    ("of EAS -- which we define", "of EAS – which we define"),
    ("human StarCraft~II replays", "human StarCraft II replays"),
    ("a dataset of ~140K video pairs", "a dataset of ~140K video pairs"),
    # text-mode commands
    (r"we propose \textbf{Spike-SFT}, a", "we propose Spike-SFT, a"),
    (r"we present \textit{Spik-NeRF v2} to", "we present Spik-NeRF v2 to"),
    (r"(\textbf{Selective Parameter Enhancement}, SPE)", "(Selective Parameter Enhancement, SPE)"),
    # Markdown emphasis, inside words too
    ("(**D**ual-**ex**pert offline", "(Dual-expert offline"),
    ("stationary **DI**stribution **C**orrection **E**stimation)", None),
    ("we propose **RankE**, the first", "we propose RankE, the first"),
    ("the *regularized* best-response", "the regularized best-response"),
    ("*e.g.,* Kiwi-Edit", "e.g., Kiwi-Edit"),
    (
        "adopt the *Generalized Bilinear Preference Model (GBPM)*—capturing",
        "adopt the Generalized Bilinear Preference Model (GBPM)—capturing",
    ),
    ("We introduce **Spectral-Spatial Interpretation (SSI)**, a", None),
    # left alone
    ("'semantic shift' and the \"out\" distribution", None),
    ("reduces recovery cost by 42.94%, increase", None),
    ("33% - 82% higher", None),
]


@pytest.mark.parametrize(("source", "expected"), SEED_MATH)
def test_seed_math_renders_without_losing_anything(source: str, expected: str) -> None:
    assert render(source).text == expected


@pytest.mark.parametrize(("source", "expected"), SEED_PROSE)
def test_seed_prose_constructs(source: str, expected: str | None) -> None:
    if expected is None:  # markers only: the text is the source without them
        expected = source.replace("**", "") if "**" in source else source
    assert render(source).text == expected


def test_every_seed_abstract_renders_with_no_markup_left(seeds: Corpus) -> None:
    for paper in seeds.papers:
        text = render(paper.abstract).text
        for leftover in ("$", "\\", "**", "``", "''", "%s", "textbf"):
            assert leftover not in text, (paper.id, leftover, text)


def test_emphasis_inside_words_is_styled() -> None:
    rendered = render("(**D**ual-**ex**pert offline imitation")
    bold = [rendered.text[s.start : s.end] for s in rendered.spans if s.style == "bold"]
    assert bold == ["D", "ex"]


def test_text_mode_commands_become_styles() -> None:
    rendered = render(r"a \textbf{Spike-SFT} and \textit{Spik-NeRF v2} and \emph{this}")
    styles = [(rendered.text[s.start : s.end], s.style) for s in rendered.spans]
    assert styles == [("Spike-SFT", "bold"), ("Spik-NeRF v2", "italic"), ("this", "italic")]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (r"$\frac$", r"\frac"),  # no arguments: shown as written
        (r"$\frac{1}{2}$", "1/2"),
        (r"$\frac{a+b}{c}$", "(a+b)/c"),
        (r"$\max_x f$ and $\arg\min$", "maxₓ f and argmin"),
        (r"$\sqrt[3]{x}$", "³√x"),
        (r"$\mathbb{R}^d$", "ℝᵈ"),
        (r"$\unknownmacro{x}$", r"\unknownmacro{x}"),
        (r"$x_{i,j}$", "x_(i,j)"),
        (r"$a^*$", "a^*"),
        (r"$\left( x \right.$", "(x"),
        (r"\(x_1\) inline", "x₁ inline"),
        (r"\[ \alpha \]", "α"),
        (r"$$\beta$$", "β"),
    ],
)
def test_math_mechanisms(source: str, expected: str) -> None:
    assert render(source).text == expected


@pytest.mark.parametrize(
    "source",
    [
        "price is $5 only",
        "$5 and $10 later",
        r"costs $x and \alpha",
        "5 * 3 * 2",
        "a ** b",
        "unclosed **bold and *italic",
        r"\textbf{never closed",
        "a '' b and a ` c",
        "use --full or ---",
        "x ~ y and ~3",
    ],
)
def test_what_does_not_pair_up_is_shown_as_written(source: str) -> None:
    assert render(source).text == source


def test_math_and_emphasis_have_their_own_spans() -> None:
    rendered = render(r"the **bound** $\ell_2$ *here*")
    assert [(rendered.text[s.start : s.end], s.style) for s in rendered.spans] == [
        ("bound", "bold"),
        ("ℓ₂", "math"),
        ("here", "italic"),
    ]


# ---------------------------------------------------------------------------------------
# Bounded and linear (issue #10)
# ---------------------------------------------------------------------------------------

HOSTILE = ["**x ", "*x ", "x** ", "\\( ", "$a ", "$x$ ", "``q ", "\\textbf{", "{ } ", "a--b~c "]


def _cpu(source: str) -> float:
    best = float("inf")
    for _ in range(5):
        render.cache_clear()
        latex_to_unicode.cache_clear()
        start = time.process_time()
        render(source)
        best = min(best, time.process_time() - start)
    return best


@pytest.mark.parametrize("unit", HOSTILE)
def test_render_time_grows_linearly(unit: str) -> None:
    small = (unit * 8192)[:8192]
    large = (unit * 131072)[:131072]
    # 16 times the text: linear is ~16x, quadratic ~256x; the bound is very generous
    assert _cpu(large) < 64 * max(_cpu(small), 1e-3)


def test_the_limit_is_applied_before_rendering_at_a_safe_boundary() -> None:
    source = "word $x^2$ **b** " * 20_000  # 340,000 characters
    rendered = render(source, 1_000)
    assert len(rendered.text) <= 1_000
    assert rendered.cut > 300_000
    assert "$" not in rendered.text and "**" not in rendered.text
    assert rendered.text.rstrip().endswith(("word", "x²", "b"))
    # what is shown is exactly the start of the whole rendering
    assert render(source).text.startswith(rendered.text)


def test_a_huge_math_span_is_shown_as_written() -> None:
    inner = "x+" * 5_000
    assert render(f"a ${inner}$ b").text == f"a ${inner}$ b"  # too long to be math
    deep = "{" * 100 + "x" + "}" * 100
    assert latex_to_unicode(deep) == deep  # too deep: as written


def test_no_pylatexenc_warning_reaches_stderr(
    capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    for source in [r"$\frac$", r"$\sqrt$", r"$}{$", r"$\begin{x}$", r"$\\$", r"$^_$", "$\\"]:
        render(source)
        render(source + " tail")
    assert capfd.readouterr().err == ""
    assert not [r for r in caplog.records if r.name.startswith("pylatexenc")]


def test_show_of_a_hostile_abstract_is_capped_and_quiet(tmp_path: Path) -> None:
    dump = tmp_path / "hostile.txt"
    dump.write_text("NeurIPS 2026 Papers\n\n" + "**x \\( $a ``q " * 12_000 + "\n")
    listed = cli("list", "-d", str(dump))
    assert listed.returncode == 0, listed.stderr
    paper_id = listed.stdout.split()[0]
    shown = cli("show", paper_id, "-d", str(dump))
    assert shown.returncode == 0 and shown.stderr == ""
    assert "more characters (use --full" in shown.stdout
    full = cli("show", paper_id, "--full", "-d", str(dump))
    assert full.returncode == 0 and full.stderr == ""
    assert "more characters" not in full.stdout and full.stdout.count("**x") > 10_000


_MARKUP = st.text(alphabet="$\\*`'~{}-_^()[]% abcXY12\n", max_size=300)


@given(_MARKUP, st.integers(min_value=0, max_value=120))
def test_render_with_a_limit_never_raises_and_stays_near_it(source: str, limit: int) -> None:
    whole = render(source)
    shown = render(source, limit)
    for rendered in (whole, shown):
        assert all(0 <= s.start < s.end <= len(rendered.text) for s in rendered.spans)
    first_is_math = (
        bool(shown.spans) and shown.spans[0].start == 0 and shown.spans[0].style == "math"
    )
    assert len(shown.text) <= limit + 32 or first_is_math
    assert whole.cut == 0
    if shown.cut == 0:  # nothing left out: exactly the whole rendering
        assert shown == whole


def test_a_flood_of_emphasis_keeps_its_text_and_a_bounded_number_of_spans() -> None:
    rendered = render("**x** " * 30_000)
    assert rendered.text == "x " * 30_000
    assert 0 < len(rendered.spans) <= 1_000


def test_a_product_inside_a_word_is_not_emphasis() -> None:
    """`2*3` and `a*b*c` are arithmetic: nothing is lost (found by trying hostile dumps)."""
    assert render("2*3 = 6 and a*b*c").text == "2*3 = 6 and a*b*c"
    assert render("2*3 = 6 and a*b*c").spans == ()
    bold = render("**D**ual-**ex**pert")  # intra-word strong emphasis still works
    assert bold.text == "Dual-expert" and len(bold.spans) == 2


def test_the_stored_symbol_table_is_pylatexenc_s() -> None:
    """The reader uses a stored copy of pylatexenc's symbol table (no import at start-up);
    after an upgrade of pylatexenc, `python -m abstract_reader.text.latex` stores it again."""
    from abstract_reader.text._symbol_table import PYLATEXENC_SYMBOLS
    from abstract_reader.text.latex import pylatexenc_symbols

    assert pylatexenc_symbols() == PYLATEXENC_SYMBOLS
    assert render(r"$\alpha \le \beta$").text == "α ≤ β"
    # not a symbol but a date (pylatexenc's is the day its table was made): as written
    assert "today" not in PYLATEXENC_SYMBOLS
    assert r"\today" in render(r"Compiled $\today$").text

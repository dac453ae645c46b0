"""Search: a judged query set over the seeds, the query language, properties, the cache."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from abstract_reader.corpus import Corpus, load_corpus
from abstract_reader.search import SearchIndex, cache_key_for, parse_query, typo_budget
from abstract_reader.text import fold

from .conftest import SEEDS, paper_with


@pytest.fixture(scope="module")
def index(seeds: Corpus) -> SearchIndex:
    return SearchIndex(seeds)


# Each query was written by reading the abstracts: the phrase names the paper that must be
# the top hit (a phrase from its abstract, so the test does not depend on derived titles).
JUDGED_TOP = [
    ("empirical sensitivity", "which we call empirical sensitivity"),
    ("satisficing", "Robust Satisficing Ensemble (RSE)"),
    ("robst satisficing", "Robust Satisficing Ensemble (RSE)"),  # typo
    ("nearest neighbor search", "Approximate Nearest Neighbor Search (ANN)"),
    ("roadmapbench", "ROADMAPBENCH"),
    ("logic gate networks", "learnable logic gate networks"),
    ("reward conditioned", "Reward-Conditioned Reinforcement Learning (RCRL)"),
    ("shapley", "Shapley values are a cornerstone"),
    ("monosemantic", "Sparse autoencoders (SAEs) were originally motivated"),
    ("projector initialization", "we propose PORTAL"),
    ("density peak", "Density Peak Clustering (DPC)"),
    ("resilience embodied", "As Embodied Agents System (EAS)"),
    ("face recognition gallery", "Upgrading a deployed face-recognition model"),
    ("repository documentation", "we propose RepoScope"),
    ("muon shampoo", "such as Muon"),
    ("segmentaton preference", "Direct Preference Optimization (DPO) has recently"),  # typo
    ("sponsored", "sponsored"),
    ("starcraft", "StarCraft Motion"),
    ("gausian splatting", "3D Gaussian Splatting"),  # typo
    ("wavelets", "based on wavelets"),
    ("decision trees", "We introduce Split-RL"),
    ("background guidance", "a lack of precise background guidance"),
    ("cited web sources", "SourceBench"),
    ('"gaussian mean"', "which we call empirical sensitivity"),  # phrase
    ("mu estimator", "which we call empirical sensitivity"),  # LaTeX-aware: $\hat \mu$
    ("μ estimator", "which we call empirical sensitivity"),
    ("^RSE", "Robust Satisficing Ensemble (RSE)"),  # title starts with
    ("title:satisficing", "Robust Satisficing Ensemble (RSE)"),
    ("identity disclosure", "We present RealityTest"),
    ("federated momentum", "we propose FedSEMA"),
    ("satisf", "Robust Satisficing Ensemble (RSE)"),  # prefix while typing
    ("efron-stein", "Efron-Stein argument"),
    ("bürmann", "Bürmann"),  # accent folding
]


@pytest.mark.parametrize(("query", "phrase"), JUDGED_TOP)
def test_judged_top_result(index: SearchIndex, seeds: Corpus, query: str, phrase: str) -> None:
    expected = paper_with(seeds, phrase)
    hits = index.search(query)
    assert len(hits) > 0, query
    assert hits[0].paper.id == expected.id, [h.paper.title for h in hits[:3]]


def _ids(index: SearchIndex, query: str) -> set[str]:
    return {h.paper.id for h in index.search(query)}


def test_words_are_anded(index: SearchIndex, seeds: Corpus) -> None:
    both = _ids(index, "robust gaussian")
    assert both == _ids(index, "robust") & _ids(index, "gaussian")
    assert paper_with(seeds, "which we call empirical sensitivity").id in both


def test_negation_excludes(index: SearchIndex, seeds: Corpus) -> None:
    # "graph" is in two abstracts, neither of which mentions robustness
    found = _ids(index, "!robust graph")
    assert found == {
        paper_with(seeds, "Density Peak Clustering (DPC)").id,
        paper_with(seeds, "we propose RepoScope").id,
    }
    assert _ids(index, "!robust") & _ids(index, "robust ") == set()


def test_or_takes_either(index: SearchIndex, seeds: Corpus) -> None:
    found = _ids(index, "starcraft | wavelets")
    assert found == {
        paper_with(seeds, "StarCraft Motion").id,
        paper_with(seeds, "based on wavelets").id,
    }


def test_exact_operator_disables_typos_and_prefix(index: SearchIndex) -> None:
    assert _ids(index, "'robst") == set()
    assert len(_ids(index, "'satisf")) == 0
    assert len(_ids(index, "'satisficing")) == 1


def test_typo_budget_by_length() -> None:
    assert [typo_budget(w) for w in ("robs", "robst", "segmenta", "segmentat")] == [0, 1, 1, 2]


def test_short_words_get_no_typos(index: SearchIndex) -> None:
    # "mea" is not "mean" with a typo: 3 letters allow no edits (only the prefix)
    assert _ids(index, "mea ") == set() or all(
        "mea" in h.paper.abstract.lower() for h in index.search("mea ")
    )


def test_prefix_only_for_the_word_being_typed(index: SearchIndex) -> None:
    typing = index.search("satisf")
    assert len(typing) >= 2  # satisficing, satisfies, …
    for hit in typing:
        assert any(w.startswith("satisf") for w in _words_of(hit.paper.abstract))
    assert _ids(index, "satisf ") == set()  # a finished word: no prefix


def test_smart_case(index: SearchIndex, seeds: Corpus) -> None:
    lower = _ids(index, "rse ")
    upper = _ids(index, "RSE ")
    assert paper_with(seeds, "Robust Satisficing Ensemble (RSE)").id in upper
    assert upper <= lower
    # "Gaussian" with a capital only finds papers writing it so
    for hit in index.search("Gaussian "):
        assert re.search(r"\bGaussian", hit.paper.abstract + hit.paper.title)


def test_accents_folded(tmp_path: Path) -> None:
    dump = tmp_path / "a.txt"
    dump.write_text("Results of Köhler on estimation.\n\nNothing else here at all.\n")
    idx = SearchIndex(load_corpus([dump]))
    assert len(idx.search("Kohler")) == 1
    assert len(idx.search("köhler")) == 1


def test_latex_command_names_are_not_words(index: SearchIndex) -> None:
    for command in ("mathcal ", "hat ", "sqrt "):
        for hit in index.search(command):
            # only prose occurrences may match
            prose = re.sub(r"\$[^$]*\$", " ", hit.paper.abstract).lower()
            assert command.strip() in prose


def test_field_filters(index: SearchIndex) -> None:
    assert len(index.search("venue:neur")) == 55
    assert len(index.search("venue:icml")) == 0
    assert len(index.search("year:2026")) == 55
    assert len(index.search("year:2020-2025")) == 0


class FakeLibrary:
    """The two questions search asks the library, answered from plain dicts."""

    def __init__(self, tags: dict[str, set[str]], states: dict[str, set[str]]) -> None:
        self.tags, self.states = tags, states

    def ids_with_tag(self, tag: str) -> set[str]:
        return self.tags.get(tag, set())

    def ids_with_state(self, state: str) -> set[str]:
        return self.states.get(state, set())


def test_library_filters(index: SearchIndex, seeds: Corpus) -> None:
    marked = {seeds.papers[1].id}
    state = FakeLibrary({"toread": {seeds.papers[0].id}}, {"bookmarked": marked, "read": marked})
    assert [h.paper.id for h in index.search("#toread", state)] == [seeds.papers[0].id]
    assert [h.paper.id for h in index.search("is:bookmarked", state)] == [seeds.papers[1].id]
    assert len(index.search("is:unread", state)) == 54
    assert len(index.search("is:read", state)) == 1


@pytest.mark.parametrize(
    "query", ['"', "!", "|", "a |", "is:nonsense", '"unclosed phrase', "#", "year:abc", "title:"]
)
def test_malformed_queries_never_raise(index: SearchIndex, query: str) -> None:
    result = index.search(query)
    assert isinstance(len(result), int)


def test_ignored_parts_are_reported(index: SearchIndex) -> None:
    assert "is:nonsense" in index.search("robust is:nonsense").ignored


@pytest.mark.parametrize(
    ("query", "explained"),
    [
        ('"', [('"', "a lone quote")]),
        ('""', [('""', "a quote with no word in it")]),
        ("!", [("!", "a ! with no word after it")]),
        (
            "is:foo",
            [("is:foo", "is: takes bookmarked, unread, read, tagged, noted, marked or new")],
        ),
        ("| robust |", [("|", "a | with nothing before it"), ("|", "a | with nothing after it")]),
        ("#", [("#", "a # with no tag name")]),
        ("year:20", [("year:20", "year: takes a year or a range, 2026 or 2024-2026")]),
        ("venue:", [("venue:", "venue: with nothing after it")]),
        ("!like:#x", [("!like:#x", "like: cannot be negated")]),
        ("like:#x | robust", [("like:#x", "like: cannot be one side of |")]),
        ("like:zz", [("like:zz", "like: takes an id prefix, #tag or is:STATE")]),
        ("id:zz", [("id:zz (an id prefix is 4 or more hex digits)", "")]),  # says it itself
        ("--", [("--", "no letter or digit in it")]),
    ],
)
def test_each_part_that_cannot_be_used_says_why(
    query: str, explained: list[tuple[str, str]]
) -> None:
    """What the CLI's refusal of a malformed query names: the part and why."""
    parsed = parse_query(query)
    assert list(parsed.explained_mistakes()) == explained
    assert list(parsed.mistakes) == [part for part, _ in explained]


def test_a_like_of_no_paper_says_why(index: SearchIndex) -> None:
    result = index.search("robust like:ffff")
    assert result.query.explained_mistakes() == (("like:ffff", "no paper's id starts with it"),)


def test_empty_query_is_corpus_order(index: SearchIndex, seeds: Corpus) -> None:
    assert [h.paper.id for h in index.search("")] == [p.id for p in seeds.papers]


def test_ranking_exact_before_prefix_before_typo(tmp_path: Path) -> None:
    dump = tmp_path / "r.txt"
    dump.write_text(
        "A paper on robustly stated results.\n\n"  # prefix hit for "robust"
        "A paper on robost results.\n\n"  # typo hit
        "A paper on robust results.\n"  # exact hit, last in corpus order
    )
    idx = SearchIndex(load_corpus([dump]))
    order = [h.paper.abstract for h in idx.search("robust")]
    assert order == [
        "A paper on robust results.",
        "A paper on robustly stated results.",
        "A paper on robost results.",
    ]


def test_title_hits_rank_before_abstract_hits(index: SearchIndex, seeds: Corpus) -> None:
    # "ensemble" is in RSE's title; other abstracts mention ensembles only in their text
    hits = index.search("ensemble ")
    assert hits[0].paper.id == paper_with(seeds, "Robust Satisficing Ensemble (RSE)").id


def test_spans_cover_matched_words_in_title_and_rendered_text(index: SearchIndex) -> None:
    hit = index.search("satisficing ensemble")[0]
    title = hit.paper.title
    assert {title[s:e].lower() for s, e in hit.title_spans} >= {"satisficing", "ensemble"}
    from abstract_reader.text import render

    text = render(hit.paper.abstract).text
    words = {fold(text[s:e]) for s, e in hit.text_spans}
    assert words <= {"satisficing", "ensemble", "ensembles"}
    mu = index.search("mu ")[0]
    rendered = render(mu.paper.abstract).text
    assert any(rendered[s:e] == "μ" for s, e in mu.text_spans)


def test_title_overrides_are_searched(seeds: Corpus) -> None:
    idx = SearchIndex(seeds)
    target = paper_with(seeds, "Robust Satisficing Ensemble (RSE)")
    idx.set_title_overrides({target.id: "Zanzibar Ensembles for Everyone"})
    assert [h.paper.id for h in idx.search("^zanzibar")] == [target.id]
    assert [h.paper.id for h in idx.search("title:zanzibar")] == [target.id]


# -- properties ------------------------------------------------------------------------------

_WORD = st.text(alphabet="abcdefghijklmnoprstuvwy", min_size=1, max_size=12)


def _words_of(text: str) -> list[str]:
    return [fold(w) for w in re.findall(r"[^\W_]+", text)]


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(words=st.lists(_WORD, min_size=1, max_size=3), negated=st.lists(_WORD, max_size=1))
def test_property_every_hit_satisfies_the_query(
    index: SearchIndex, words: list[str], negated: list[str]
) -> None:
    from rapidfuzz.distance import Levenshtein

    query = " ".join(words + ["!" + n for n in negated]) + " "
    for hit in index.search(query):
        vocab = _words_of(hit.paper.abstract) + _words_of(hit.paper.title)
        greek = {"mu", "eta", "ell", "omega", "sigma", "alpha", "gamma", "delta", "kappa", "pm"}
        vocab += [w for w in greek if "\\" + w in hit.paper.abstract]
        for word in words:
            budget = typo_budget(word)
            assert any(
                Levenshtein.distance(word, v) <= budget
                and (budget == 0 or v[:1] == word[:1] or v == word)
                for v in vocab
            ), (word, hit.paper.title)
        # a LaTeX command's name (`\otimes`, `\pm`) is markup, not a word of the paper: it
        # may or may not be indexed, so the negation is checked against the words around it
        plain = re.sub(r"\\[A-Za-z]+", " ", hit.paper.abstract)
        plain_vocab = _words_of(plain) + _words_of(hit.paper.title)
        for word in negated:
            assert not any(v.startswith(word) for v in plain_vocab)


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    prefix=st.text(alphabet="abcdefghilmnoprstu", min_size=1, max_size=8),
    extra=st.sampled_from(list("aeiorstn")),
)
def test_property_adding_a_character_never_widens_exact_only_results(
    index: SearchIndex, prefix: str, extra: str
) -> None:
    shorter = {h.paper.id for h in index.search(prefix, typos=False)}
    longer = {h.paper.id for h in index.search(prefix + extra, typos=False)}
    assert longer <= shorter


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(query=st.text(max_size=40))
def test_property_search_never_raises(index: SearchIndex, query: str) -> None:
    result = index.search(query)
    for hit in result[:3]:
        assert isinstance(hit.title_spans, list) and isinstance(hit.text_spans, list)
    parse_query(query)


# -- the cache ---------------------------------------------------------------------------------


def test_cache_is_used_on_unchanged_dumps_and_gives_same_results(tmp_path: Path) -> None:
    corpus = load_corpus([SEEDS])
    key = cache_key_for(corpus.files)
    first = SearchIndex(corpus, cache_dir=tmp_path, cache_key=key)
    assert not first.loaded_from_cache
    second = SearchIndex(load_corpus([SEEDS]), cache_dir=tmp_path, cache_key=key)
    assert second.loaded_from_cache
    for q in ("robst estimation", "gaus", "!robust graph", "^RSE"):
        assert [h.paper.id for h in first.search(q)] == [h.paper.id for h in second.search(q)]


def _resident_pages_of(path: Path) -> int:
    """Resident kB of this process's mappings of ``path`` (Linux ``/proc/self/smaps``)."""
    total, inside = 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        fields = line.split()
        if fields and "-" in fields[0] and len(fields) >= 5:  # a mapping's header line
            inside = len(fields) >= 6 and fields[5] == str(path)
        elif inside and fields[:1] == ["Rss:"]:
            total += int(fields[1])
    return total


@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="Linux /proc only")
def test_an_index_from_its_cache_keeps_no_pages_it_does_not_use(tmp_path: Path) -> None:
    """Opening the index cache checks every byte of it, and the similarity model reads every
    posting: afterwards those pages leave the reader's memory (at 1M the file is ~660 MB),
    and searches and ``like:`` answer as before."""
    from abstract_reader.search.similar import prepare

    corpus = load_corpus([SEEDS])
    key = cache_key_for(corpus.files)
    built = SearchIndex(corpus, cache_dir=tmp_path, cache_key=key)
    index = SearchIndex(load_corpus([SEEDS]), cache_dir=tmp_path, cache_key=key)
    assert index.loaded_from_cache
    (cache_file,) = [p for p in tmp_path.iterdir() if p.name.startswith(key)]
    assert _resident_pages_of(cache_file) <= 8  # checked, then released (a page may be read again)
    prepare(index)
    assert _resident_pages_of(cache_file) <= 8
    first = corpus.papers.ids()[0]
    for q in ("robst estimation", "gaus", "!robust graph", f"like:{first}"):
        assert [h.paper.id for h in built.search(q)] == [h.paper.id for h in index.search(q)]


def test_stale_or_corrupt_cache_is_rebuilt(tmp_path: Path) -> None:
    dump = tmp_path / "d.txt"
    dump.write_text("First abstract about kernels.\n")
    cache = tmp_path / "cache"
    corpus = load_corpus([dump])
    SearchIndex(corpus, cache_dir=cache, cache_key=cache_key_for(corpus.files))
    # the dump changes: a new key, a rebuilt index
    dump.write_text("A different abstract about wavelets.\n")
    changed = load_corpus([dump])
    idx = SearchIndex(changed, cache_dir=cache, cache_key=cache_key_for(changed.files))
    assert not idx.loaded_from_cache and len(idx.search("wavelets")) == 1
    # a corrupt cache file under the right key is never trusted
    key = cache_key_for(changed.files)
    assert key is not None
    (cache / f"{key}.idx").write_bytes(b"garbage")
    idx = SearchIndex(changed, cache_dir=cache, cache_key=key)
    assert not idx.loaded_from_cache and len(idx.search("wavelets")) == 1
    # a valid cache for other papers (same key forged) is not trusted either
    other = load_corpus([SEEDS])
    SearchIndex(other, cache_dir=cache, cache_key="forged")
    (cache / "forged.idx").replace(cache / f"{key}.idx")
    idx = SearchIndex(changed, cache_dir=cache, cache_key=key)
    assert not idx.loaded_from_cache and len(idx.search("wavelets")) == 1


def test_text_showing_latex_commands_are_words(tmp_path: Path) -> None:
    dump = tmp_path / "m.txt"
    dump.write_text("A bound of $O(\\log T)$ regret.\n\nA plain abstract about lemons.\n")
    idx = SearchIndex(load_corpus([dump]))
    assert [h.paper.abstract[:7] for h in idx.search("log ")] == ["A bound"]


def test_pieces_without_words_do_not_leak_into_other_words(tmp_path: Path) -> None:
    # "=" holds no word; it must not be counted as the vocabulary's last word ("gamma")
    dump = tmp_path / "p.txt"
    dump.write_text("alpha = beta here.\n\nonly gamma here.\n")
    idx = SearchIndex(load_corpus([dump]))
    assert [h.paper.abstract for h in idx.search("gamma ")] == ["only gamma here."]


def test_a_phrase_never_runs_from_the_abstract_into_the_title(tmp_path: Path) -> None:
    dump = tmp_path / "x.txt"
    dump.write_text(
        "An abstract that ends with the word of\n\nAnother about the mean of the data.\n"
    )
    corpus = load_corpus([dump])
    idx = SearchIndex(corpus)
    idx.set_title_overrides({corpus.papers[0].id: "The Title"})
    assert [h.paper.abstract for h in idx.search('"of the"')] == [
        "Another about the mean of the data."
    ]
    big = [f"Paper {n} is about of the sort." for n in range(2500)]  # more than the limit
    dump.write_text("\n\n".join([*big, "It ends with of"]) + "\n")
    corpus = load_corpus([dump])
    idx = SearchIndex(corpus)
    idx.set_title_overrides({corpus.papers[-1].id: "The End"})
    assert len(idx.search('"of the"', phrase_limit=None)) == 2500


def test_tags_with_spaces_and_negated_exact_words(index: SearchIndex, seeds: Corpus) -> None:
    state = FakeLibrary({"reading list": {seeds.papers[0].id}}, {})
    found = index.search('#"reading list"', state)
    assert [h.paper.id for h in found] == [seeds.papers[0].id]
    assert len(index.search('!#"reading list"', state)) == 54
    # !'robust excludes the exact word only: papers with just "robustness" stay
    exact_out = _ids(index, "!'robust")
    prefix_out = _ids(index, "!robust")
    assert prefix_out < exact_out
    for hit in index.search("!'robust"):
        assert "robust" not in _words_of(hit.paper.abstract)


def test_title_overrides_score_each_word_as_the_title_itself_would(seeds: Corpus) -> None:
    """The titles set in the library are scored through their words' papers (not title by
    title, which cost ~0.8 s a key at 50,000 of them): each paper's score of each query word
    is the one `_score_in_text` gives its title — exact, prefix, typos, case — and a title
    changed is scored anew."""
    from abstract_reader.search.engine import _positive_words, _score_in_text

    idx = SearchIndex(seeds)
    papers = seeds.papers
    titles = {
        papers[i].id: " ".join(papers[(i * 7 + 3) % len(papers)].abstract.split()[2:9])
        for i in range(0, len(papers), 2)
    }
    titles[papers[0].id] = "Robüst Gaussian Estimation of GAUSSIANS"
    queries = ["robust", "robst", "gausian mean", "Gaussian", "estim", "'gaussian", "the of"]
    queries += ["title:model", "graph neural", "Robust Estimation", "learnin", "diffusion"]
    for _round in range(2):
        idx.set_title_overrides(titles)
        rows = {papers.rows_for([pid]).tolist()[0]: title for pid, title in titles.items()}
        for query in queries:
            for end in range(1, len(query) + 1):
                for word in _positive_words(parse_query(query[:end])):
                    scores = idx._word_scores(word, set(), False, title=True)
                    match = idx.match_word(word, True)
                    postings = idx.titles.cased if word.case_sensitive else idx.titles.folded
                    for doc, title in rows.items():
                        want = _score_in_text(word, title, match, postings)
                        assert scores[doc] == want, (query[:end], title)
        titles = {pid: f"Robust {title}" for pid, title in list(titles.items())[::3]}


_TITLE_WORDS = ["Robust", "robust", "Robüst", "Gaussian", "GAUSSIAN", "graph", "Graphs", "mean"]
_TITLE_WORDS += ["estimation", "μ", "of", "the", "learning", "learned", "Zanzibar", "zanzibars"]
_TITLE = st.lists(st.sampled_from(_TITLE_WORDS), min_size=1, max_size=5).map(" ".join)


@settings(max_examples=40, deadline=None)
@given(
    steps=st.lists(
        st.dictionaries(st.integers(0, 11), st.one_of(st.none(), _TITLE), min_size=1),
        min_size=1,
        max_size=6,
    )
)
def test_titles_changed_a_few_at_a_time_search_as_if_set_at_once(
    seeds: Corpus, steps: list[dict[int, str | None]]
) -> None:
    """Real titles edited a few at a time (the metadata editor, another process's `match`,
    a title cleared) are searched — ranked, ``^word``, ``title:``, typos, case — exactly as
    when the final titles are set at once in a new index (the words of the titles are
    patched for the changed ones, not built anew on the next key: ~1.7 s at 50,000)."""
    papers = seeds.papers
    ids = [papers[i].id for i in range(0, 24, 2)]
    queries = ["robust", "robst", "Robust", "'Gaussian", "gaus", "^rob", "^Graph", "^zanzibar"]
    queries += ["title:mean", "title:learn", "^mu", "estimation of", "zanzibar", "!graph robust"]

    def ranked(idx: SearchIndex) -> list[list[tuple[str, float]]]:
        return [[(h.paper.id, round(h.score, 4)) for h in idx.search(q)] for q in queries]

    edited = SearchIndex(seeds)
    titles = {ids[0]: "Robust Graph Learning", ids[1]: "Zanzibar of the Gaussian"}
    edited.set_title_overrides(titles)
    ranked(edited)  # (builds the words of the titles, in both case modes)
    fresh = SearchIndex(seeds)  # given the titles at once (all of them replaced each time)
    for step in steps:
        change = {ids[k]: title for k, title in step.items()}
        edited.update_overrides(titles=change)
        for pid, title in change.items():
            if title is None:
                titles.pop(pid, None)
            else:
                titles[pid] = title
        fresh.set_title_overrides(dict(titles))
        assert ranked(edited) == ranked(fresh)


#: words as the dumps give them: text, so no lone surrogate (and no newline, the
#: vocabulary's separator)
_WORD_CHARS = st.characters(blacklist_categories=("Cs",), blacklist_characters="\n")


@given(
    vocabulary=st.sets(st.text(_WORD_CHARS, min_size=1), max_size=60),
    asked=st.lists(st.text(_WORD_CHARS, max_size=4), max_size=80),
)
def test_words_looked_up_together_are_found_as_one_at_a_time(
    vocabulary: set[str], asked: list[str]
) -> None:
    """A vocabulary's bulk look-up (the first words of every title, looked up together)
    answers as a look-up of each word does, with few words (bisected) or many (mapped)."""
    from abstract_reader.search.postings import Vocabulary

    words = Vocabulary.from_sorted(sorted(vocabulary, key=lambda w: w.encode()))
    known = sorted(vocabulary)[:3]
    for query in (asked, [*asked, *known], known[:1]):
        assert words.find_many(query) == [words.find(w) for w in query]
        assert [words[i] if i >= 0 else None for i in words.find_many(query)] == [
            w if w in vocabulary else None for w in query
        ]

"""Reading dumps: format, line endings, encodings, ids, duplicates, bad paths."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from abstract_reader import corpus as corpus_module
from abstract_reader.corpus import Corpus, load_corpus, paper_id, parse_text

from .conftest import DATA, SEEDS, cli, paper_with, world_dir, write_dump

# -- the seeds ------------------------------------------------------------------------------


def test_seeds_hold_55_papers_from_57_paragraphs(seeds: Corpus) -> None:
    assert len(seeds.papers) == 55
    assert sum(len(p.sources) for p in seeds.papers) == 57
    assert seeds.errors == []
    assert {(p.venue, p.year) for p in seeds.papers} == {("NeurIPS", 2026)}


def test_two_seed_papers_have_two_sources(seeds: Corpus) -> None:
    doubles = [p for p in seeds.papers if len(p.sources) == 2]
    assert len(doubles) == 2
    eas = paper_with(seeds, "As Embodied Agents System (EAS) move into physical domains")
    assert eas in doubles
    assert {s.file for s in eas.sources} == {"000_3c75c79d335d4311.txt", "001_d9e28358a154ea35.txt"}


def test_ids_are_stable_hex_and_independent_of_file_order(seeds: Corpus) -> None:
    files = sorted(SEEDS.glob("*.txt"))
    reversed_corpus = load_corpus(list(reversed(files)))
    assert {p.id for p in reversed_corpus.papers} == {p.id for p in seeds.papers}
    for paper in seeds.papers:
        assert len(paper.id) >= 12 and int(paper.id, 16) >= 0
    # whitespace does not change identity
    assert paper_id("a  b\n c") == paper_id("a b c")


def test_bundled_dumps_load_by_default(seeds: Corpus) -> None:
    assert {p.id for p in load_corpus().papers} == {p.id for p in seeds.papers}


# -- format -----------------------------------------------------------------------------------


def test_hard_wrapped_lines_are_joined_and_header_parsed() -> None:
    corpus = load_corpus([DATA / "wrapped.txt"])
    assert [p.venue for p in corpus.papers] == ["ICML", "ICML"]
    assert corpus.papers[0].year == 2024
    assert corpus.papers[0].abstract.startswith(
        "We propose a hard-wrapped abstract whose lines are"
    )
    assert "\n" not in corpus.papers[0].abstract
    assert corpus.papers[1].abstract.endswith(r"math in $\alpha_1$.")


def test_file_without_header_loads_with_unknown_venue() -> None:
    corpus = load_corpus([DATA / "noheader.txt"])
    assert len(corpus.papers) == 1
    assert corpus.papers[0].venue is None and corpus.papers[0].year is None
    assert corpus.errors == []


@pytest.mark.parametrize(
    ("header", "venue", "year"),
    [
        ("My Reading List", "My Reading List", None),
        ("ICML 2025 accepted orals", "ICML 2025 accepted orals", 2025),
        ("Spotlights from COLT", "Spotlights from COLT", None),
        ("NeurIPS 2026 Papers", "NeurIPS", 2026),
    ],
)
def test_a_title_line_first_is_the_dumps_header_not_a_paper(
    tmp_path: Path, header: str, venue: str, year: int | None
) -> None:
    dump = write_dump(tmp_path / "d.txt", "We study X. It works.", "Y helps.", header=header)
    corpus = load_corpus([dump])
    assert [p.abstract for p in corpus.papers] == ["We study X. It works.", "Y helps."]
    assert {(p.venue, p.year) for p in corpus.papers} == {(venue, year)}


@pytest.mark.parametrize(
    "first",
    [
        "Transformers learn in context.",  # a sentence
        "Do transformers learn in context?",
        "We study in-context learning, and find that it is Bayesian inference in disguise "
        "over a latent concept shared by the prompt examples",  # too long for a heading
    ],
)
def test_a_one_line_abstract_is_never_taken_for_a_header(tmp_path: Path, first: str) -> None:
    dump = write_dump(tmp_path / "d.txt", first, "A second abstract.", header=None)
    corpus = load_corpus([dump])
    assert [p.abstract for p in corpus.papers] == [first, "A second abstract."]
    assert corpus.papers[0].venue is None
    # the only paragraph of a file is its abstract, heading-like or not
    alone = load_corpus(
        [write_dump(tmp_path / "e.txt", "Graph networks for molecules", header=None)]
    )
    assert [p.abstract for p in alone.papers] == ["Graph networks for molecules"]


@pytest.mark.parametrize("text", ["My Reading List\n\n", "Title Only\r\n\r\n\r\n"])
def test_a_title_line_and_a_blank_line_is_a_list_with_no_abstracts_yet(
    tmp_path: Path, text: str
) -> None:
    """The README's own header example, alone with the blank line that marks a header: a
    reading list begun, not a paper named "My Reading List"."""
    path = tmp_path / "list.txt"
    path.write_bytes(text.encode())
    corpus = load_corpus([path])
    assert len(corpus.papers) == 0
    assert [e.message for e in corpus.errors] == [
        "no abstracts in this file (only whitespace or a header)"
    ]


def test_a_line_of_math_is_no_venue(tmp_path: Path) -> None:
    dump = write_dump(tmp_path / "m.txt", "$\\frac{$", "We bound the error.", header=None)
    corpus = load_corpus([dump])
    assert {p.venue for p in corpus.papers} == {None}
    assert [p.abstract for p in corpus.papers] == ["$\\frac{$", "We bound the error."]


def test_folder_means_its_txt_files_sorted_by_name(tmp_path: Path) -> None:
    write_dump(tmp_path / "b.txt", "Second file abstract text.")
    write_dump(tmp_path / "a.txt", "First file abstract text.")
    (tmp_path / "notes.md").write_text("not a dump")
    corpus = load_corpus([tmp_path])
    assert [p.sources[0].file for p in corpus.papers] == ["a.txt", "b.txt"]


def _variants(text: str) -> list[bytes]:
    lf = text.encode()
    return [
        lf,
        text.replace("\n", "\r\n").encode(),
        text.replace("\n", "\r").encode(),
        b"\xef\xbb\xbf" + lf,
        b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode(),
    ]


def test_line_endings_and_bom_give_identical_papers(tmp_path: Path) -> None:
    text = (DATA / "wrapped.txt").read_text()
    results = []
    for n, data in enumerate(_variants(text)):
        path = tmp_path / f"v{n}.txt"
        path.write_bytes(data)
        corpus = load_corpus([path])
        results.append([(p.id, p.abstract, p.venue) for p in corpus.papers])
    assert all(r == results[0] for r in results)


_TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\r"), max_size=300)


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=_TEXT)
def test_property_line_ending_variants_are_identical(body: str) -> None:
    parsed = [parse_text(v.decode("utf-8-sig")) for v in _variants(body)]
    assert all(p == parsed[0] for p in parsed)


@settings(max_examples=150)
@given(
    before=st.text(alphabet="abc ", min_size=1, max_size=20),
    sep=st.sampled_from(["\u2028", "\u2029", "\u0085", "\x0c", "\x0b", "\x1c", "\x1d", "\x1e"]),
    after=st.text(alphabet="xyz ", min_size=1, max_size=20),
)
def test_property_unicode_separators_never_split_an_abstract(
    before: str, sep: str, after: str
) -> None:
    _, _, abstracts = parse_text(f"a{before}{sep}{after}z\n")
    assert len(abstracts) == 1


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=2000))
def test_property_parser_never_raises_on_arbitrary_bytes(data: bytes) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fuzz.txt"
        path.write_bytes(data)
        corpus = load_corpus([path])
    for paper in corpus.papers:
        assert not any(
            (ord(c) < 32 and c != "\t") or 0x7F <= ord(c) <= 0x9F for c in paper.abstract
        )
    for error in corpus.errors:
        assert "fuzz.txt" in str(error)


def test_invalid_utf8_is_replaced_and_reported_once_with_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.txt"
    path.write_bytes(b"Conf 2024 Papers\n\nGood abstract.\n\nBad \xff\xfe bytes here \xc3.\n")
    corpus = load_corpus([path])
    assert len(corpus.papers) == 2
    assert "\ufffd" in corpus.papers[1].abstract
    warnings = [e for e in corpus.errors if not e.fatal]
    assert len(warnings) == 1
    assert "line 5" in str(warnings[0]) and "bad.txt" in str(warnings[0])


def test_nul_bytes_are_dropped_and_reported(tmp_path: Path) -> None:
    path = tmp_path / "nul.txt"
    path.write_bytes(b"An abs\x00tract with a NUL.\n")
    corpus = load_corpus([path])
    assert corpus.papers[0].abstract == "An abstract with a NUL."
    assert any("NUL" in str(e) for e in corpus.errors)


def test_controls_are_sanitised_at_ingest(tmp_path: Path) -> None:
    path = write_dump(tmp_path / "evil.txt", "Title \x1b]52;c;ZXZpbA==\x07 and \x1b[2J \u202eevil")
    paper = load_corpus([path]).papers[0]
    assert "\x1b" not in paper.abstract and "\x07" not in paper.abstract
    assert "\u202e" not in paper.abstract and "\u241b" in paper.abstract


def test_several_megabyte_abstract_loads(tmp_path: Path) -> None:
    big = "word " * 800_000  # 4 MB in one paragraph
    path = write_dump(tmp_path / "big.txt", big.strip())
    corpus = load_corpus([path])
    assert len(corpus.papers) == 1 and len(corpus.papers[0].abstract) > 3_900_000
    assert len(corpus.papers[0].title) <= 80


@pytest.mark.parametrize("where", [0, 1 << 20, (1 << 20) - 1, (1 << 20) + 1, 3_000_000])
def test_a_doubled_space_anywhere_in_a_large_dump_gives_the_same_id(
    tmp_path: Path, where: int
) -> None:
    """An ASCII dump is searched for a doubled space once (numpy, a megabyte at a time):
    wherever one is (either side of a cut), its abstract's id is still that of its text
    with whitespace normalised, as in a dump read paragraph by paragraph."""
    import numpy  # noqa: F401  (imported: the one-pass check is used)

    filler = [f"abstract number {n} about robust estimation of things." for n in range(80_000)]
    body = "\n\n".join(["TestConf 2025 Papers", *filler]) + "\n"
    at = body.index(" ", where + 30)  # a space in an abstract, around ``where``
    if where:
        body = body[:at] + " " + body[at:]
    path = tmp_path / "big.txt"
    path.write_text(body, encoding="ascii")
    corpus = load_corpus([path])
    papers = list(corpus.papers)
    assert len(papers) == len(filler)
    doubled = [p for p in papers if "  " in p.abstract]
    assert len(doubled) == (1 if where else 0)
    for paper in doubled + papers[:3]:
        assert paper.id == paper_id(paper.abstract) == paper_id(" ".join(paper.abstract.split()))


def test_the_doubled_space_check_waits_for_numpy_being_imported_by_another_thread() -> None:
    """sys.modules holds numpy from the start of its import: a thread importing it while
    another parses a dump (the reader's index thread beside its loading thread) left a
    partial module, with no `frombuffer`, and a 1M load stopped. The check waits for the
    import instead, as an import statement does, and answers right."""
    import importlib._bootstrap as bootstrap
    import threading
    import time
    import types

    import numpy

    partial = types.ModuleType("numpy")  # as numpy is while its import runs
    partial.__spec__ = numpy.__spec__
    locked = threading.Event()
    parsing = threading.get_ident()
    waited: list[bool] = []

    def importing() -> None:  # what the import system does while it imports numpy
        with bootstrap._ModuleLockManager("numpy"):  # type: ignore[attr-defined]
            numpy.__spec__._initializing = True  # type: ignore[attr-defined]
            sys.modules["numpy"] = partial
            locked.set()
            # the import ends once the parsing thread waits for it (Python's record of
            # threads waiting for a module's lock), or after 10 s
            deadline = time.monotonic() + 10
            while parsing not in bootstrap._blocking_on and time.monotonic() < deadline:  # type: ignore[attr-defined]
                time.sleep(0.001)
            waited.append(parsing in bootstrap._blocking_on)  # type: ignore[attr-defined]
            vars(partial).update(vars(numpy))  # (the module's code has run: all is there)
            numpy.__spec__._initializing = False  # type: ignore[attr-defined]

    thread = threading.Thread(target=importing)
    thread.start()
    try:
        assert locked.wait(10)
        text = "TestConf 2025 Papers\n\nOne plain abstract.\n\nAnother  with two spaces.\n"
        venue, _year, abstracts, normal = corpus_module._parse_text(text)
    finally:
        thread.join()
        sys.modules["numpy"] = numpy
    assert waited == [True]  # the parse waited for the import, and then:
    assert venue == "TestConf"
    assert abstracts == ["One plain abstract.", "Another  with two spaces."]
    assert normal == [True, False]


# -- bad paths: each one reported on one line; the good file still loads ------------------


def _good(tmp_path: Path) -> Path:
    return write_dump(tmp_path / "good.txt", "A perfectly good abstract about robust estimation.")


def _check(tmp_path: Path, bad: Path | str, reason: str) -> None:
    corpus = load_corpus([bad, _good(tmp_path)])
    assert len(corpus.papers) == 1
    fatal = corpus.fatal_errors
    assert len(fatal) == 1
    message = str(fatal[0])
    assert str(bad) in message and reason in message
    assert "\n" not in message
    # and through the CLI: the good paper printed, one line on stderr, exit 1
    result = cli("list", "-d", str(bad), "-d", str(tmp_path / "good.txt"))
    assert result.returncode == 1
    assert "robust estimation" in result.stdout or "perfectly good" in result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and reason in lines[0] and str(bad) in lines[0]


def test_missing_file(tmp_path: Path) -> None:
    _check(tmp_path, tmp_path / "missing.txt", "no such file")


def test_directory_without_dumps(tmp_path: Path) -> None:
    empty = tmp_path / "empty_dir"
    empty.mkdir()
    _check(tmp_path, empty, "no *.txt dumps")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifo_does_not_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    _check(tmp_path, fifo, "FIFO")


def test_device(tmp_path: Path) -> None:
    _check(tmp_path, Path("/dev/null"), "device")


def test_symlink_loop(tmp_path: Path) -> None:
    loop = tmp_path / "loop.txt"
    loop.symlink_to(loop)
    _check(tmp_path, loop, "symlink loop")


@pytest.mark.skipif(os.geteuid() == 0 if hasattr(os, "geteuid") else True, reason="root reads all")
def test_permission_denied(tmp_path: Path) -> None:
    locked = write_dump(tmp_path / "locked.txt", "Secret.")
    locked.chmod(0)
    _check(tmp_path, locked, "permission denied")


def test_permission_denied_even_as_root(tmp_path: Path) -> None:
    """As root, chmod cannot deny reading; simulate with a directory we cannot list."""
    if hasattr(os, "geteuid") and os.geteuid() != 0:
        pytest.skip("covered by test_permission_denied")
    # root bypasses permission bits: run the check as an unprivileged user if one exists
    import pwd

    try:
        nobody = pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("no unprivileged user")
    base = world_dir("ar-perm-")  # /tmp: reachable by nobody
    locked = write_dump(base / "locked.txt", "Secret.")
    locked.chmod(0)
    good = _good(base)
    # import everything as root (the interpreter lives in root's home), then drop to nobody
    script = (
        "import os,sys,sqlite3,json,textwrap,shutil,argparse,gettext,locale,errno,stat,mmap;"
        "import abstract_reader.cli, abstract_reader.corpus, abstract_reader.library,"
        " abstract_reader.cite, abstract_reader.text, abstract_reader.paths;"
        "abstract_reader.cli.build_parser();gettext.translation('x',fallback=True);"
        "os.setgid(%d);os.setuid(%d);"
        "sys.exit(abstract_reader.cli.main(['list','-d',%r,'-d',%r]))"
        % (nobody.pw_gid, nobody.pw_uid, str(locked), str(good))
    )
    env = dict(os.environ, ABSTRACT_READER_DB=str(base / "nobody.db"))
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60
    )
    assert result.returncode == 1, result.stderr
    assert "perfectly good" in result.stdout
    lines = [line for line in result.stderr.splitlines() if "locked.txt" in line]
    assert len(lines) == 1 and "permission denied" in lines[0]


def test_empty_file(tmp_path: Path) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    _check(tmp_path, empty, "empty file")


def test_whitespace_only_file(tmp_path: Path) -> None:
    blank = tmp_path / "blank.txt"
    blank.write_text("  \n\t\n   \n")
    _check(tmp_path, blank, "no abstracts")


def test_directory_where_a_file_was_expected(tmp_path: Path) -> None:
    good = _good(tmp_path)
    _check(tmp_path, Path(str(good) + "/inner.txt"), "not a directory")


def test_binary_file_is_skipped(tmp_path: Path) -> None:
    binary = tmp_path / "image.txt"
    binary.write_bytes(bytes(range(256)) * 40)
    _check(tmp_path, binary, "binary")


def test_file_name_with_escape_is_escaped_in_messages(tmp_path: Path) -> None:
    evil = tmp_path / "evil\x1b[2Jname.txt"
    result = cli("list", "-d", str(evil), "-d", str(_good(tmp_path)))
    assert result.returncode == 1
    assert "\x1b" not in result.stderr
    assert "\\x1b[2Jname.txt" in result.stderr


def test_a_file_can_be_added_in_batches(tmp_path: Path) -> None:
    from abstract_reader.corpus import CorpusBuilder

    dump = write_dump(
        tmp_path / "b.txt",
        *[f"Abstract {n} about batches." for n in range(7)],
        "Abstract 3 about batches.",
    )  # a duplicate inside the file
    builder = CorpusBuilder([dump])
    sizes = [len(batch) for batch in builder.add_file_in_batches(dump, batch=3)]
    assert sizes == [3, 3, 1]
    whole = load_corpus([dump])
    assert [p.id for p in builder.finish().papers] == [p.id for p in whole.papers]
    assert len(whole.papers[3].sources) == 2


def test_the_first_rows_come_in_a_small_batch(tmp_path: Path) -> None:
    """A reader shows a batch as it comes: the table's first batch is small (a screen's
    worth, not thousands of derived titles first), the next ones full, and the papers the
    same as one parse."""
    from abstract_reader.corpus import FIRST_BATCH, CorpusBuilder

    count = FIRST_BATCH + 2 * 1000 + 7
    dump = write_dump(tmp_path / "c.txt", *[f"Abstract {n} about rows." for n in range(count)])
    builder = CorpusBuilder([dump])
    sizes = [len(batch) for batch in builder.add_file_in_batches(dump, batch=1000)]
    assert sizes == [FIRST_BATCH, 1000, 1000, 7]
    assert [p.id for p in builder.finish().papers] == [p.id for p in load_corpus([dump]).papers]


def test_distinct_titles_are_disambiguate_over_every_derived_title(tmp_path: Path) -> None:
    """`finish` makes derived titles distinct without a string per paper; the titles are
    those `disambiguate` gives over all of them: clashes in any case, and a clash whose
    first suffix is another paper's title (it takes a longer one)."""
    from abstract_reader.corpus import CorpusBuilder, distinct_titles
    from abstract_reader.text import disambiguate

    def titles_of(abstracts: list[str], name: str) -> tuple[dict[int, str], dict[int, str]]:
        dump = write_dump(tmp_path / name, *abstracts)
        builder = CorpusBuilder([dump])
        builder.add_file(dump)
        table = builder.corpus.papers
        rows, titles, ids = table.derived_rows(), table.titles(), table.ids()
        shown = [titles[i] for i in rows]
        expected = disambiguate(shown, [ids[i] for i in rows])
        want = {r: t for r, b, t in zip(rows, shown, expected, strict=True) if t != b}
        return distinct_titles(table), want

    abstracts = [f"Robust estimation of the mean. Variant {k} here." for k in range(6)]
    abstracts += [f"ROBUST estimation of THE mean. Other {k}." for k in range(3)]
    abstracts += [f"A unique title number {k}. Body." for k in range(5)]
    got, want = titles_of(abstracts, "a.txt")
    assert got == want and len(got) == 8
    # another paper's title is the first suffixed one: that clash takes a longer suffix
    taken = sorted(want.values())[0]
    got, want = titles_of([*abstracts, f"{taken}. A paper of that title."], "b.txt")
    assert got == want
    assert any(len(t.rsplit("[", 1)[1]) > 7 for t in got.values())


# -- the loader against a plain reference parse ------------------------------------------------


def _plain_reference(paths: list[Path]) -> list[tuple[object, ...]]:
    """What loading means, written plainly: paragraphs split by blank lines, each line
    stripped, lines joined by a space, the header line of a dump set aside, every abstract
    sanitised, its id the hash of its whitespace-normalised text, a repeat (in any dump) a
    further source, and the derived titles made distinct."""
    import hashlib

    from abstract_reader.text import derive_title, disambiguate, sanitise

    papers: list[list[object]] = []
    by_id: dict[str, list[object]] = {}
    for path in paths:
        text = path.read_bytes().decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
        paragraphs: list[list[str]] = [[]]
        for line in text.split("\n"):
            if line.strip(" \t"):
                paragraphs[-1].append(line.strip(" \t"))
            elif paragraphs[-1]:
                paragraphs.append([])
        joined = [sanitise(" ".join(lines)) for lines in paragraphs if lines]
        venue, year = "Plain Conf", 2024
        assert joined[0] == f"{venue} {year} Papers"  # (every dump here has this header)
        for index, abstract in enumerate(joined[1:], start=1):
            normalised = " ".join(abstract.split()).encode("utf-8")
            pid = hashlib.blake2b(normalised, digest_size=8).hexdigest()
            if pid in by_id:
                by_id[pid][6].append((path.name, index))  # type: ignore[attr-defined]
                continue
            paper = [pid, abstract, derive_title(abstract), True, venue, year, [(path.name, index)]]
            by_id[pid] = paper
            papers.append(paper)
    titles = disambiguate([str(p[2]) for p in papers], [str(p[0]) for p in papers])
    return [(p[0], p[1], t, *p[3:]) for p, t in zip(papers, titles, strict=True)]


_ODD = ["  ", "\t", "\u00a0", " \u2009 ", "\x1b[31m", "\x07", "\u202e", "\x85", "\u2028", "é"]
_BODIES = [
    "We propose FooNet, a graph network for robust estimation of the mean.",
    "We study $\\alpha$-stable noise in \\textbf{deep} networks with $O(n^2)$ cost.",
    "This paper introduces **BarBench**, a benchmark. It uses $\\mathbb{R}^d$ data.",
    "Robust estimation of the mean. A paper with a plain first sentence.",
    "Robust estimation of the mean. Another paper whose title clashes.",
]


@given(
    st.lists(
        st.tuples(
            st.sampled_from(_BODIES),
            st.integers(0, 40),
            st.sampled_from(_ODD),
            st.integers(0, 3),
        ),
        min_size=1,
        max_size=30,
    ),
    st.lists(st.integers(0, 2), min_size=1, max_size=30),
    st.sampled_from(["\n", "\r\n"]),
    st.booleans(),
)
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_loading_equals_a_plain_reference_parse(
    tmp_path_factory: pytest.TempPathFactory,
    specs: list[tuple[str, int, str, int]],
    files_of: list[int],
    newline: str,
    titler: bool,
) -> None:
    """Three dumps (the same abstracts again in several of them, re-wrapped or with other
    whitespace; LaTeX; odd whitespace and control characters; ASCII and not) load, through
    `CorpusBuilder` in batches as the reader does, into exactly the papers of a plain
    reference parse: ids, order, abstracts, titles, venue, year and every source; with the
    titles derived in the title process or here."""
    from abstract_reader.corpus import CorpusBuilder

    folder = tmp_path_factory.mktemp("dumps")
    dumps: list[list[str]] = [[], [], []]
    for n, (body, where, odd, variant) in enumerate(specs):
        words = body.split(" ")
        at = where % len(words)
        if variant == 1:  # odd whitespace or a control character inside
            words[at] = words[at] + odd + "x"
        elif variant == 2:  # hard-wrapped, indented or with spaces before the line break
            wrap = ["  ", "\t", ""][where % 3]
            words[at] = f"{wrap[::-1] if where % 2 else ''}{newline}{wrap}{words[at]}"
        elif variant == 3:  # the same abstract, spaced out (the same paper)
            words[at] = f" {words[at]}  "
        dumps[files_of[n % len(files_of)]].append(" ".join(words))
        dumps[(files_of[n % len(files_of)] + 1) % 3].append(body)  # repeats across dumps
    paths = []
    for k, abstracts in enumerate(dumps):
        path = folder / f"d{k}.txt"
        text = (newline * 2).join(["Plain Conf 2024 Papers", *abstracts, "Last one here."])
        path.write_bytes(text.encode("utf-8"))
        paths.append(path)
    builder = CorpusBuilder(paths, titler=titler)
    builder.corpus.papers.spill_into(folder)
    for path in builder.files:
        for _rows in builder.add_file_in_batches(path, batch=4):
            pass
    corpus = builder.finish()
    got = [
        (p.id, p.abstract, p.title, p.title_derived, p.venue, p.year,
         [(s.file, s.index) for s in p.sources])
        for p in corpus.papers
    ]  # fmt: skip
    assert got == _plain_reference(paths)
    assert corpus.errors == [] and corpus.files == [str(p) for p in paths]


def _load(paths: list[Path], *, titler: bool, kill_after: int = -1) -> Corpus:
    """Load as the reader does (in batches); ``kill_after``: the title process is killed
    once that many files are added (a failure half-way). The title process is gone after
    `finish`, and its folder too."""
    from abstract_reader.corpus import CorpusBuilder

    builder = CorpusBuilder(paths, titler=titler)
    processes = []
    for n, path in enumerate(builder.files):
        for _rows in builder.add_file_in_batches(path, batch=7):
            pass
        if builder._titler is not None and builder._titler not in processes:
            processes.append(builder._titler)  # (started once the first dump is added)
        if n + 1 == kill_after:
            assert builder._titler is not None
            builder._titler.child.kill()
    corpus = builder.finish()
    assert len(processes) == titler
    for process in processes:
        assert process.child.poll() is not None and not process.folder.exists()
    return corpus


def _everything(corpus: Corpus) -> list[object]:
    papers = [
        (p.id, p.abstract, p.title, p.title_derived, p.venue, p.year, p.sources, p.authors)
        for p in corpus.papers
    ]
    return [papers, [str(e) for e in corpus.errors], corpus.files, corpus.metadata_files]


@pytest.mark.parametrize("kill_after", [-1, 1, 3])
def test_titles_from_the_title_process_are_the_same(tmp_path: Path, kill_after: int) -> None:
    """Titles derived by the second process (dumps parsed ahead, their titles under way
    there) give the same corpus as titles derived here: papers, titles, sources, the errors
    of an empty file and of a file that is not a dump, in file order, a metadata file
    between dumps; also when the title process dies half-way. Nothing is left behind."""
    paths = [
        write_dump(tmp_path / "a.txt", *_BODIES, *[f"Paper {n}. We propose Net{n}." for n in range(40)]),
        write_dump(tmp_path / "b.txt", *reversed(_BODIES), "Only in b: we study graphs."),
        tmp_path / "c.txt",
        write_dump(tmp_path / "d.txt", *[f"Another {n}: this paper introduces X{n}." for n in range(30)]),
        tmp_path / "e.json",
        write_dump(tmp_path / "f.txt", _BODIES[0], "Robust estimation of the mean. Last."),
        tmp_path / "g.txt",
        write_dump(tmp_path / "h.txt", "The very last paper, on robust means."),
    ]  # fmt: skip
    paths[2].write_text("")
    paths[4].write_text(json.dumps([{"title": "A Record", "abstract": "Its own abstract."}]))
    paths[6].write_bytes(bytes(range(1, 32)) * 100)
    here = _everything(_load(paths, titler=False))
    assert here[1] and here[3]  # (two files failed; a metadata file was loaded)
    assert _everything(_load(paths, titler=True, kill_after=kill_after)) == here


def test_a_load_given_up_leaves_no_title_process(tmp_path: Path) -> None:
    """A reader quit while loading: the builder is dropped half-way; its title process
    ends and its folder goes."""
    import gc

    from abstract_reader.corpus import CorpusBuilder

    paths = [
        write_dump(tmp_path / f"{k}.txt", *[f"Paper {k}.{n} here." for n in range(9)])
        for k in range(4)
    ]
    builder = CorpusBuilder(paths, titler=True)
    for _rows in builder.add_file_in_batches(paths[0], batch=3):
        pass
    titler = builder._titler
    assert titler is not None and titler.child.poll() is None and titler.folder.is_dir()
    child, folder = titler.child, titler.folder
    del builder, titler
    gc.collect()
    assert child.poll() is not None and not folder.exists()


@pytest.mark.parametrize("share", [0.0, 0.5, 0.9])
def test_titles_shared_with_the_title_process_keep_it_in_turn(
    tmp_path: Path, share: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first titles of a dump are derived here, the rest by the title process (the
    share adapts to who waited). A dump whose rows after the share are all duplicates
    never needs the process's titles: they are read all the same, so later dumps still get
    theirs from it (the process is kept, not given up as answering out of turn), and the
    corpus is the one derived here."""
    from abstract_reader import corpus as corpus_module

    monkeypatch.setattr(corpus_module, "TITLER_OWN_SHARE", share)
    monkeypatch.setattr(corpus_module, "_OWN_STEP_UP", 0.0)  # (the share stays as set)
    monkeypatch.setattr(corpus_module, "_OWN_STEP_DOWN", 0.0)
    first = [f"Paper {n}: we propose Net{n} for graphs." for n in range(20)]
    paths = [
        write_dump(tmp_path / "a.txt", *first),
        write_dump(tmp_path / "b.txt", *[f"New {n}. A study of means." for n in range(10)]),
        write_dump(tmp_path / "c.txt", "Only in c: robust estimation.", *first),  # dups after
        write_dump(tmp_path / "d.txt", *[f"Later {n}: this paper introduces X{n}." for n in range(12)]),
        write_dump(tmp_path / "e.txt", *[f"Last {n}: on sparse models." for n in range(12)]),
    ]  # fmt: skip
    here = _everything(_load(paths, titler=False))
    builder = corpus_module.CorpusBuilder(paths, titler=True)
    for path in paths:
        for _rows in builder.add_file_in_batches(path, batch=4):
            pass
        if path.name != "a.txt":  # (started once the first dump is added)
            assert builder._titler is not None, f"title process given up after {path.name}"
    assert _everything(builder.finish()) == here


def test_the_load_summary_groups_thousands() -> None:
    """A folder of thousands of bad files: the summary's counts read as the count line's
    ("… and 9,988 more load errors") do."""
    from abstract_reader.corpus import LoadError

    corpus = Corpus()
    corpus.errors.extend(LoadError(f"empty-{n}.txt", "empty file") for n in range(10_000))
    corpus.errors.extend(LoadError(f"nul-{n}.txt", "NUL bytes", fatal=False) for n in range(1_500))
    assert corpus.load_summary() == "0 files loaded, 1,500 with warnings, 10,000 failed"


# -- a file named twice ---------------------------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_file_named_directly_and_through_its_folder_is_reported_once(tmp_path: Path) -> None:
    folder = tmp_path / "h"
    folder.mkdir()
    write_dump(folder / "a.txt", "An abstract about robust estimators of the mean.")
    (folder / "empty.txt").write_bytes(b"")
    os.mkfifo(folder / "fifo.txt")
    corpus = load_corpus([folder, folder / "fifo.txt", folder / "a.txt", tmp_path / "h" / "."])
    assert [str(e) for e in corpus.errors].count(
        f"{folder / 'fifo.txt'}: is a FIFO, not a regular file; skipped"
    ) == 1
    assert len(corpus.errors) == 2  # the FIFO and the empty file, once each
    assert corpus.files == [str(folder / "a.txt")]
    assert corpus.load_summary() == "1 file loaded, 2 failed"


def test_a_dump_given_twice_loads_once(tmp_path: Path) -> None:
    dump = write_dump(tmp_path / "x.txt", "An abstract about robust estimators of the mean.")
    missing, empty = tmp_path / "missing.txt", tmp_path / "empty.txt"
    empty.write_bytes(b"")
    twice = [str(p) for p in (dump, dump, missing, missing, empty)]
    done = cli("list", *(a for p in twice for a in ("-d", p)))
    assert done.stderr.count("missing.txt: no such file or directory") == 1, done.stderr
    assert "1 file loaded, 2 failed" in done.stderr, done.stderr  # (was "2 files loaded")
    assert len(done.stdout.strip().splitlines()) == 1, done.stdout


# -- a dump that changes while it is read (QA s17 #3) -----------------------------------------

_CUT_ABSTRACTS = [
    "We study robust estimators of the mean under heavy tails and adversarial noise.",
    "A benchmark for calibration of graph neural networks under distribution shift.",
]


def _cut_while_read(path: Path) -> int:
    """Where the dump is cut: mid-word in its second abstract."""
    return path.read_bytes().index(b"calibration") + 5


def test_a_dump_cut_short_while_it_is_read_is_loaded_with_one_warning_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It was loaded in part without a word: its last abstract cut mid-word, a paper."""
    dump = write_dump(tmp_path / "growing.txt", *_CUT_ABSTRACTS)
    cut = _cut_while_read(dump)
    look = corpus_module.not_text

    def truncate_then_look(head: bytes) -> str | None:  # (between the two looks at its size)
        os.truncate(dump, cut)
        return look(head)

    monkeypatch.setattr(corpus_module, "not_text", truncate_then_look)
    corpus = load_corpus([dump])
    assert [p.abstract for p in corpus.papers][-1].endswith("calib")  # loaded as read
    warnings = [str(e) for e in corpus.errors]
    assert len(warnings) == 1 and not corpus.errors[0].fatal, warnings
    assert warnings[0].startswith(f"{dump}: changed while it was read (")
    assert "loaded as it was when read" in warnings[0]
    assert "reload to read it again" in warnings[0]


def test_a_dump_rewritten_with_the_same_size_while_read_is_said_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dump = write_dump(tmp_path / "rewritten.txt", *_CUT_ABSTRACTS)
    look = corpus_module.not_text

    def touch_then_look(head: bytes) -> str | None:
        st = os.stat(dump)
        os.utime(dump, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
        return look(head)

    monkeypatch.setattr(corpus_module, "not_text", touch_then_look)
    corpus = load_corpus([dump])
    assert len(corpus.papers) == 2
    assert [str(e) for e in corpus.errors] == [
        f"{dump}: changed while it was read (written to); loaded as it was when read"
        f" ({dump.stat().st_size:,} bytes), its last abstract possibly cut short"
        " — reload to read it again"
    ]


def test_a_dump_cut_short_after_the_load_began_and_before_it_is_read_is_said(
    tmp_path: Path,
) -> None:
    """What the QA pass hit: the dump was cut while the load hashed it for the corpus cache,
    before it was opened to be parsed."""
    from abstract_reader.corpus import CorpusBuilder

    dump = write_dump(tmp_path / "growing.txt", *_CUT_ABSTRACTS)
    size = dump.stat().st_size
    builder = CorpusBuilder([dump])
    os.truncate(dump, _cut_while_read(dump))
    builder.add_file(dump)
    corpus = builder.finish()
    assert [p.abstract for p in corpus.papers][-1].endswith("calib")
    warnings = [str(e) for e in corpus.errors]
    assert len(warnings) == 1, warnings
    assert warnings[0].startswith(
        f"{dump}: changed while it was read ({size:,} bytes when the load began,"
        f" {dump.stat().st_size:,} bytes after); loaded as it was when read"
    )


def test_an_unchanged_dump_has_no_such_warning(tmp_path: Path) -> None:
    dump = write_dump(tmp_path / "still.txt", *_CUT_ABSTRACTS)
    corpus = load_corpus([dump])
    assert len(corpus.papers) == 2 and corpus.errors == []


def test_the_cli_says_a_dump_changed_while_it_was_read(tmp_path: Path) -> None:
    dump = write_dump(tmp_path / "growing.txt", *_CUT_ABSTRACTS)
    code = (
        "import os, sys\n"
        "import abstract_reader.corpus as c\n"
        "from abstract_reader.cli import main\n"
        "look = c.not_text\n"
        "def hook(head):\n"
        f"    os.truncate({str(dump)!r}, {_cut_while_read(dump)})\n"
        "    return look(head)\n"
        "c.not_text = hook\n"
        f"sys.exit(main(['list', '-d', {str(dump)!r}, '--db', {str(tmp_path / 'l.db')!r}]))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert run.returncode == 0, run.stderr
    said = [line for line in run.stderr.splitlines() if "changed while it was read" in line]
    assert len(said) == 1 and str(dump) in said[0], run.stderr

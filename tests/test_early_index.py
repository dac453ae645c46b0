"""The abstracts' index begun while the corpus loads (`EarlyIndex`: chunks handed to the
helper process as rows come) is exactly the index a build after loading gives — also when
`finish` drops rows (records merged into dump papers) and renumbers the rest."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from abstract_reader.corpus import Corpus, CorpusBuilder, load_corpus
from abstract_reader.search import SearchIndex, postings, similar
from abstract_reader.search.engine import EarlyIndex

from .conftest import SEEDS, write_dump
from .test_index_build import _arrays, _results


def _load_with_early_index(
    tmp_path: Path, paths: list[Path], monkeypatch: pytest.MonkeyPatch
) -> tuple[Corpus, EarlyIndex, list[int]]:
    """Load as the reader does (abstracts spilled, 9 rows a batch), offering each batch to
    an early index; also: the papers handed to the helper before `finish`."""
    monkeypatch.setattr(postings, "CHUNK_DOCS", 7)
    handed: list[int] = []
    real_send = postings._Helper.send_raw

    def send_raw(helper: postings._Helper, pieces: postings.RawTexts) -> int:
        handed.append(len(postings._joined_offsets(pieces)) - 1)
        return real_send(helper, pieces)

    monkeypatch.setattr(postings._Helper, "send_raw", send_raw)
    builder = CorpusBuilder(paths)
    assert builder.corpus.papers.spill_into(tmp_path)
    early = EarlyIndex(builder.corpus)
    for path in builder.files:
        for _rows in builder.add_file_in_batches(path, batch=9):
            early.offer()
    during_load = list(handed)
    builder.finish()
    return builder.corpus, early, during_load


def test_an_index_begun_while_loading_equals_a_build_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fresh = SearchIndex(load_corpus([SEEDS]))
    corpus, early, during_load = _load_with_early_index(tmp_path, [SEEDS], monkeypatch)
    assert during_load and all(n == 7 for n in during_load)  # full chunks, while loading
    index = SearchIndex(corpus, early=early)
    assert _arrays(index) == _arrays(fresh)
    assert _results(index) == _results(fresh)


def test_rows_dropped_by_finish_start_the_index_afresh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A metadata record whose abstract is a dump paper's (up to case) comes first: `finish`
    merges it into that paper and drops its row, renumbering every row after it — what was
    handed out is dropped, and the index is the fresh one."""
    texts = [f"Paper {n} studies Robust estimation of topic {n % 5} in depth." for n in range(30)]
    dump = write_dump(tmp_path / "a.txt", *texts)
    record = {"id": "2601.00001", "title": "A real title", "abstract": texts[3].lower()}
    meta = tmp_path / "m.jsonl"
    meta.write_text(json.dumps(record) + "\n", encoding="utf-8")
    paths = [meta, dump]
    fresh = SearchIndex(load_corpus(paths))
    corpus, early, during_load = _load_with_early_index(tmp_path / "spill", paths, monkeypatch)
    assert during_load
    assert len(corpus.papers) == len(fresh.corpus.papers) == 30  # the record's row went
    assert early.take() is None  # the chunks handed out no longer read the same rows
    index = SearchIndex(corpus, early=early)
    assert _arrays(index) == _arrays(fresh)
    assert _results(index) == _results(fresh)
    assert [h.paper.id for h in index.search("robust topic 3")] == [
        h.paper.id for h in fresh.search("robust topic 3")
    ]


def test_an_early_index_not_used_stops_its_helper(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus, early, _ = _load_with_early_index(tmp_path, [SEEDS], monkeypatch)
    run = early._run
    assert run is not None and run.helper is not None
    child, folder = run.helper.child, run.helper.folder
    early.close()
    assert child.poll() is not None  # gone, its folder with it
    assert not folder.exists()
    assert _arrays(SearchIndex(corpus, early=early)) == _arrays(SearchIndex(load_corpus([SEEDS])))


def test_titles_the_helper_fails_on_are_read_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """The titles go to the helper once the abstracts are in: if it fails them, this
    process tokenises them — the same index."""
    seeds = load_corpus([SEEDS])
    alone = SearchIndex(seeds)
    monkeypatch.setattr(postings, "CHUNK_DOCS", 5)
    monkeypatch.setattr(postings, "TITLE_CHUNK_DOCS", 11)
    monkeypatch.setattr(postings, "PARALLEL_MIN_DOCS", 1)
    texts_done: list[bool] = []
    real_receive = postings._Helper.receive
    real_from_builder = postings._FieldIndex.from_builder.__func__  # type: ignore[attr-defined]

    def receive(helper: postings._Helper, k: int, papers: int) -> postings._Answer:
        if texts_done:
            raise RuntimeError("tokeniser process failed")
        return real_receive(helper, k, papers)

    def from_builder(cls: type, builder: postings._Builder) -> postings._FieldIndex:
        texts_done.append(True)
        return real_from_builder(cls, builder)  # type: ignore[no-any-return]

    monkeypatch.setattr(postings._Helper, "receive", receive)
    monkeypatch.setattr(postings._FieldIndex, "from_builder", classmethod(from_builder))
    helped = SearchIndex(seeds)
    assert texts_done
    assert _arrays(helped) == _arrays(alone)


def test_the_like_model_is_not_built_while_the_index_settles(tmp_path: Path) -> None:
    """The reader hands the index over before saving it and reading its postings from the
    file written; a like: model asked for meanwhile waits (it reads every posting: never the
    built arrays and the file's pages at once), then reads the file's."""
    index = SearchIndex(load_corpus([SEEDS]), cache_dir=tmp_path, cache_key="k", defer_save=True)
    built: list[object] = []
    with index.settling:  # as `save_and_map` holds it
        thread = threading.Thread(target=lambda: built.append(similar.for_index(index)))
        thread.start()
        thread.join(timeout=0.5)
        assert thread.is_alive() and not built  # waiting
        index.save_cache()
        index.map_saved()
    thread.join(timeout=60)
    assert built and not index.map_pending
    model = built[0]
    assert isinstance(model, similar.Similarity)
    assert model.docs is index.text.folded.docs  # the file's postings
    assert not model.docs.flags.writeable

"""The library actions of the reader: bookmark, read, marks, tags, metadata, notes.

A mixin of ReaderApp: it turns keys into calls on the Library and redraws; no SQL here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import App
from textual.widgets import Input

from ..library import Library, LibraryError, Metadata
from .widgets.paper_list import PaperList

if TYPE_CHECKING:
    from collections.abc import Callable

    from textual.timer import Timer

    from ..corpus import Corpus, Paper
    from ..search import SearchIndex
    from .screens.editors import NoteResult


class LibraryActions(App[int]):
    """Needs from the app: its state below and the four methods it overrides."""

    library: Library
    corpus: Corpus
    marked: set[str]
    query_text: str
    index: SearchIndex | None
    _read_timer: Timer | None

    def current_paper(self) -> Paper | None:
        raise NotImplementedError

    def title_of(self, paper: Paper) -> str:
        raise NotImplementedError

    def _refresh(self) -> None:
        raise NotImplementedError

    def _run_filter(self) -> None:
        raise NotImplementedError

    def _targets(self) -> list[Paper]:
        """The marked papers (in list order) when some are marked, else the current one."""
        if self.marked:
            papers = [p for pid in self.marked if (p := self.corpus.get(pid)) is not None]
            return sorted(papers, key=lambda p: self.corpus.index_of(p.id))
        paper = self.current_paper()
        return [paper] if paper is not None else []

    def _write(self, change: Callable[[], object]) -> bool:
        try:
            change()
        except LibraryError as exc:
            self.notify(str(exc), title="Not saved", severity="error", markup=False)
            return False
        self._refresh()
        return True

    def action_bookmark(self) -> None:
        papers = self._targets()
        if not papers:
            return
        on_ = not all(p.id in self.library.snapshot.bookmarks for p in papers)
        if (
            self._write(lambda: self.library.set_bookmark([p.id for p in papers], on_))
            and len(papers) > 1
        ):
            self.notify(f"{'Bookmarked' if on_ else 'Unbookmarked'} {len(papers)} papers")

    def action_toggle_read(self) -> None:
        papers = self._targets()
        if not papers:
            return
        on_ = not all(p.id in self.library.snapshot.read for p in papers)
        if self._read_timer is not None:
            self._read_timer.stop()
            self._read_timer = None
        if (
            self._write(lambda: self.library.set_read([p.id for p in papers], on_))
            and len(papers) > 1
        ):
            self.notify(f"Marked {len(papers)} papers {'read' if on_ else 'unread'}")

    def action_mark(self) -> None:
        paper_list = self.query_one(PaperList)
        paper_id = paper_list.current_id
        if paper_id is None:
            return
        if paper_id in self.marked:
            self.marked.discard(paper_id)
        else:
            self.marked.add(paper_id)
        paper_list.cursor += 1
        self._refresh()

    def _what(self, papers: list[Paper]) -> str:
        if len(papers) == 1:
            title = self.title_of(papers[0])
            return f"“{title[:50]}{'…' if len(title) > 50 else ''}”"
        return f"{len(papers)} marked papers"

    def action_tags(self) -> None:
        from .screens.editors import TagEditor

        papers = self._targets()
        if not papers:
            return
        snap = self.library.snapshot
        if len(papers) == 1:
            current = list(snap.tags.get(papers[0].id, []))
        else:  # bulk: start from the tags all marked papers share
            sets = [set(snap.tags.get(p.id, [])) for p in papers]
            current = sorted(set.intersection(*sets), key=str.casefold)

        def save(tags: list[str] | None) -> None:
            if tags is None:
                return
            if len(papers) == 1:
                self._write(lambda: self.library.set_tags(papers[0].id, tags))
            else:
                removed = [t for t in current if t.casefold() not in {x.casefold() for x in tags}]
                ids = [p.id for p in papers]

                def change() -> None:
                    if tags:
                        self.library.add_tags(ids, tags)
                    if removed:
                        self.library.remove_tags(ids, removed)

                if self._write(change):
                    self.notify(f"Tags saved on {len(papers)} papers")
            if self.query_text and "#" in self.query_text:
                self._run_filter()

        self.push_screen(TagEditor(current, snap.tag_names, self._what(papers)), save)

    def action_tag_list(self) -> None:
        from .screens.pickers import TagAction, TagList

        def chosen(action: TagAction | None) -> None:
            if action is None:
                return
            if action.kind == "filter":
                tag = action.tag
                query = f'#"{tag}"' if " " in tag else f"#{tag}"  # quoted: a tag with spaces
                self.query_one("#filter", Input).value = query
                self.query_one(PaperList).focus()
            elif action.kind == "rename":
                if self._write(lambda: self.library.rename_tag(action.tag, action.new_name)):
                    self.notify(f"Renamed #{action.tag} to #{action.new_name}", markup=False)
                    self._run_filter()
            elif action.kind == "delete" and self._write(
                lambda: self.library.delete_tag(action.tag)
            ):
                self.notify(f"Deleted #{action.tag}", markup=False)
                self._run_filter()

        self.push_screen(TagList(self.library.tag_counts()), chosen)

    def action_edit_metadata(self) -> None:
        from .screens.editors import MetadataEditor

        paper = self.current_paper()
        if paper is None:
            return
        meta = self.library.snapshot.metadata.get(paper.id, Metadata())

        def save(new: Metadata | None) -> None:
            if new is None:
                return
            if self._write(lambda: self.library.set_metadata(paper.id, new)):
                self._sync_title_overrides()

        self.push_screen(MetadataEditor(meta, paper.title), save)

    def _sync_title_overrides(self) -> None:
        if self.index is not None:
            self.index.set_title_overrides(
                {pid: m.title for pid, m in self.library.snapshot.metadata.items() if m.title}
            )

    def action_note(self) -> None:
        from .screens.editors import NoteEditor

        paper = self.current_paper()
        if paper is None:
            return
        note = self.library.snapshot.notes.get(paper.id, "")

        def save(result: NoteResult | None) -> None:
            if result is not None and result.text != note:
                self._write(lambda: self.library.set_note(paper.id, result.text))

        self.push_screen(NoteEditor(note, self._what([paper])), save)

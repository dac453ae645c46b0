"""Background threads give way to the UI thread: a key's echo does not wait its turn among
the load's busy threads (Linux, where a thread has its own nice value)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest

from abstract_reader.priority import BACKGROUND_NICE, lower_this_thread

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux threads")


def _nice(tid: int) -> int:
    return os.getpriority(os.PRIO_PROCESS, tid)


def test_a_background_thread_and_what_it_starts_run_below_the_others() -> None:
    ui = _nice(threading.get_native_id())
    seen: dict[str, int] = {}

    def background() -> None:
        lower_this_thread()
        seen["thread"] = _nice(threading.get_native_id())
        child = threading.Thread(target=lambda: seen.update(child=_nice(threading.get_native_id())))
        child.start()
        child.join()
        # a helper process started from it (the tokenising helper is started so)
        out = subprocess.run(
            [sys.executable, "-c", "import os; print(os.nice(0))"],
            capture_output=True,
            text=True,
            check=True,
        )
        seen["process"] = int(out.stdout)
        lower_this_thread()  # again: nothing changes (and never raised back)
        seen["again"] = _nice(threading.get_native_id())

    worker = threading.Thread(target=background)
    worker.start()
    worker.join()
    expected = max(ui, BACKGROUND_NICE)
    assert seen == {"thread": expected, "child": expected, "process": expected, "again": expected}
    assert _nice(threading.get_native_id()) == ui  # the calling (UI) thread keeps its own

"""Background threads give way to the reader's own: a thread's CPU priority (Linux).

On two cores a load is several busy threads and processes (parsing, the tokenising helper,
the title process, hashing and checking caches) beside the UI thread, which only needs a
core for a few milliseconds when a key comes. At the same priority it waited its turn among
them, so a key's echo waited too. A background thread lowers its own priority (a higher
nice value) as it starts; the threads and processes it starts inherit it. The search thread
and the UI thread keep theirs. On an idle machine nothing changes: the work has the cores.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading

#: The nice value of background work (the title process sets the same on itself).
BACKGROUND_NICE = 10


def lower_this_thread() -> None:
    """Give this thread (only: Linux has a nice value per thread) the background priority;
    a no-op elsewhere (there ``setpriority`` of a thread id would name a process)."""
    if not sys.platform.startswith("linux"):
        return
    tid = threading.get_native_id()
    with contextlib.suppress(OSError, AttributeError):
        current = os.getpriority(os.PRIO_PROCESS, tid)
        if current < BACKGROUND_NICE:  # (never raised back: that needs privileges)
            os.setpriority(os.PRIO_PROCESS, tid, BACKGROUND_NICE)

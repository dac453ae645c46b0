"""Arrays of one value per paper, reused once nothing refers to them any more.

Each key typed makes a few arrays of one value per paper (a word's papers and scores, the
search's mask and total). Fresh, at a million papers each is 1–4 MB of pages the kernel
must map and zero — ~40,000 minor page faults over 94 keys, a few milliseconds on the keys
that make several. `ArrayPool.take` hands out an array it made before when no one else
holds it (a result still shown, a word's arrays kept for the next key, a search under way
in another thread: each holds a reference, so the array is not handed out), else a new one.
Nothing is ever given back by hand: dropping the last reference is enough, so an array is
never written while something can still read it.
"""

from __future__ import annotations

import sys
import threading
from typing import TypeVar

import numpy as np
import numpy.typing as npt

#: Arrays kept per dtype (in use or free): the most a search and the kept words hold at once,
#: with a little slack; past it, arrays are made fresh and freed as before.
POOL_SIZE = 24

T = TypeVar("T", bound=np.generic)


class ArrayPool:
    """Arrays of ``n`` values handed out again once unreferenced. Any thread."""

    def __init__(self, n: int, size: int = POOL_SIZE) -> None:
        self.n = n
        self.size = size
        self._lock = threading.Lock()
        self._arrays: dict[np.dtype[np.generic], list[npt.NDArray[np.generic]]] = {}
        # what `sys.getrefcount` says of an array only the pool's list refers to, read the
        # way `take` reads it (the count of a list's item, plus the call's own reference)
        probe: list[object] = [object()]
        self._free_count = sys.getrefcount(probe[0])

    def take(self, dtype: type[T]) -> npt.NDArray[T]:
        """A writeable array of ``n`` values of ``dtype``, its contents undefined."""
        kind: np.dtype[np.generic] = np.dtype(dtype)
        with self._lock:
            arrays = self._arrays.setdefault(kind, [])
            for i in range(len(arrays)):
                if sys.getrefcount(arrays[i]) == self._free_count:
                    found: npt.NDArray[T] = arrays[i]  # type: ignore[assignment]
                    found.flags.writeable = True  # (a kept word's arrays were read-only)
                    return found
            array: npt.NDArray[T] = np.empty(self.n, kind)
            if len(arrays) < self.size:
                arrays.append(array)
            return array

    def zeros(self, dtype: type[T]) -> npt.NDArray[T]:
        array = self.take(dtype)
        array.fill(0)
        return array

    def nbytes(self) -> int:
        """Memory held by the pool's arrays (in use or free)."""
        with self._lock:
            return sum(a.nbytes for arrays in self._arrays.values() for a in arrays)

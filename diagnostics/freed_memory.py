"""Freed memory kept for reuse: fewer page faults when the same large arrays come and go.

The engine and the readers work in whole columns: at 2M events each is a 16 MB array, made
and freed many times in one command (every replay the recommender measures makes dozens).
By default glibc's allocator hands every block above a moving threshold (from 128 KB) to
the kernel on its own and gives it back when freed, so the next array of the same size is
faulted in and zeroed again by the kernel. :func:`keep_freed_memory` raises that threshold
to 32 MB (glibc's largest), stops trimming the heap and gives every thread the one heap, so
a freed column is reused by the next one, whichever thread made it. The peak (the most memory in use at once) does not change; the memory the process
holds after a peak is not handed back until it exits. Measured in docs/performance.md
("Freed memory kept for reuse"). Other allocators (musl, macOS, Windows) are left as they
are.
"""

from __future__ import annotations

import ctypes
import sys

#: glibc's ``mallopt`` parameters (malloc.h).
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8
#: Blocks up to this size come from the heap (glibc's upper limit on 64-bit systems).
MMAP_THRESHOLD = 32 * 1024 * 1024
#: Free memory at the top of the heap kept rather than handed back (``mallopt`` takes an int).
TRIM_THRESHOLD = 2**31 - 1
#: One heap for every thread: each heap keeps what it freed, so a heap per thread (glibc's
#: default) would keep the peak of every thread that ever ran the engine (measured: +0.25 GB
#: on the 2M Findings page); the threads allocate large blocks seldom, so sharing costs little.
ARENAS = 1


def keep_freed_memory() -> bool:
    """Ask glibc's allocator to keep freed blocks for reuse (see the module's text); whether
    it applied (``False`` on other allocators). Call once, early: it holds for the process."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return all(
        mallopt(parameter, value) == 1
        for parameter, value in (
            (M_MMAP_THRESHOLD, MMAP_THRESHOLD),
            (M_TRIM_THRESHOLD, TRIM_THRESHOLD),
            (M_ARENA_MAX, ARENAS),
        )
    )

"""Freed memory kept for reuse: fewer page faults when the same large arrays come and go.

The engine and the readers work in whole columns: at 2M events each is a 16 MB array, made
and freed many times in one command (every replay the recommender measures makes dozens).
By default glibc's allocator hands every block above a moving threshold (from 128 KB) to
the kernel on its own and gives it back when freed, so the next array of the same size is
faulted in and zeroed again by the kernel. :func:`keep_freed_memory` raises that threshold
to 32 MB (glibc's largest) and stops trimming the heap, so a freed column is reused by the
next one. The peak (the most memory in use at once) does not change; the memory the process
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
#: Blocks up to this size come from the heap (glibc's upper limit on 64-bit systems).
MMAP_THRESHOLD = 32 * 1024 * 1024
#: Free memory at the top of the heap kept rather than handed back (``mallopt`` takes an int).
TRIM_THRESHOLD = 2**31 - 1


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
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
        mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD)
    )

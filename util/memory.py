"""Large allocations reused instead of mapped afresh: glibc's malloc tuned for tmcheck's hot loops (#28).

glibc serves an allocation of at least its mmap threshold (dynamic, at most 32 MiB on 64-bit) by a new
mapping and unmaps it on free, so every such tensor is zero-filled again page by page by the kernel. A
training step of ``cpu-small`` makes several: the logits and their gradients are (B T) x V float32 =
32 MiB. The effect on the training step is measured by ``benchmarks/bench_train.py`` (the speed page:
tmcheck's trainer in a process of its own against transformers' GPT-2 in a default one); the numbers
computed are the same, only where the memory comes from changes.

The setting is process-wide and stays: a large block freed goes back to the heap for the next one, and
the heap's top is returned to the system only beyond TRIM_THRESHOLD, so a process's resident size stays
near its peak. ``tmcheck``'s commands and ``train()`` apply it; ``TMCHECK_MALLOC=default`` in the
environment leaves glibc as it is. On other C libraries (musl, macOS, Windows) it does nothing.
"""

from __future__ import annotations

import os
import platform
import sys

MMAP_THRESHOLD = 1 << 30  # blocks below 1 GiB come from the heap (reused), not from a fresh mapping
TRIM_THRESHOLD = 1 << 31  # free memory at the heap's top is returned to the system beyond 2 GiB
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # mallopt parameters (malloc.h)
_state: dict[str, bool] = {}


def reuse_large_allocations() -> bool:
    """Apply the setting once per process; True when it is in effect (glibc, not opted out)."""
    if "applied" not in _state:
        _state["applied"] = _apply()
    return _state["applied"]


def _apply() -> bool:
    if os.environ.get("TMCHECK_MALLOC", "").strip().lower() == "default":
        return False
    if not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc":
        return False
    import ctypes

    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return False
    # mallopt returns 1 on success; the mmap threshold first, so a refused trim setting leaves no half state
    return bool(libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
        libc.mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)
    )

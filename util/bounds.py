"""Sizes checked against the machine's memory before anything is allocated (#43).

An option or a stored size (points, trials, layers, width, context, n, columns, distinct sizes) that
asks for more memory than the machine has must be refused at once, in one line naming the option,
not after minutes of allocation that end in MemoryError (or in the kernel's OOM killer). Every such
check goes through `check_memory`; `check_count` bounds a plain count with no memory estimate.

The memory available is MemAvailable of /proc/meminfo (else the physical memory), capped by the
process's RLIMIT_AS and RLIMIT_DATA where set; TMCHECK_MEMORY_BYTES overrides it (tests, batch
schedulers that know the job's share).
"""

from __future__ import annotations

import os

GiB = 1 << 30


def available_memory() -> int:
    """Bytes this process may still allocate, as well as the system says."""
    env = os.environ.get("TMCHECK_MEMORY_BYTES", "").strip()
    if env.isdigit():
        return int(env)
    avail = None
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    avail = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError, IndexError):
        pass
    if avail is None:
        try:
            avail = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError, AttributeError):
            avail = 1 << 62
    try:
        import resource

        for lim in (resource.RLIMIT_AS, resource.RLIMIT_DATA):
            soft = resource.getrlimit(lim)[0]
            if soft != resource.RLIM_INFINITY:
                avail = min(avail, soft)
    except (ImportError, ValueError, OSError):
        pass
    return avail


def human(n: float) -> str:
    """A byte count in words: 1.5 GB, 12 MB."""
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:,.1f} {unit}"
    return f"{int(n)} bytes"


def check_memory(option: str, nbytes: float, what: str = "", available: int | None = None) -> int:
    """`nbytes` (an estimate of what `option` asks to allocate), refused (ValueError, one line naming
    the option) when it exceeds the memory available (`available`: an accelerator's, else the
    machine's); returns it as an int."""
    avail = available_memory() if available is None else available
    if nbytes != nbytes:
        raise ValueError(f"{option} gives no size (NaN)")
    if not nbytes <= avail:
        about = f" for {what}" if what else ""
        raise ValueError(
            f"{option} asks for about {human(nbytes)} of memory{about}; this machine has {human(avail)} available"
        )
    return int(nbytes)


def check_count(option: str, value: int, maximum: int, what: str = "") -> int:
    """`value` if 0 <= value <= maximum, else one line naming the option and the bound."""
    if not 0 <= value <= maximum:
        about = f" ({what})" if what else ""
        raise ValueError(f"{option} must lie in [0, {maximum:,}]{about}, got {value:,}")
    return value

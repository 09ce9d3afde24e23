"""Worker processes that die with the process that started them.

`die_with_parent(parent_pid)`, called first thing in a worker: on Linux the kernel sends the worker
SIGKILL when its parent dies (prctl PR_SET_PDEATHSIG, through ctypes); elsewhere a daemon thread
watches the parent pid and kills the worker when it changes. Either way an orphan never keeps
training (or holding a GPU) after its submitter was killed, and the locks it held are released by
the operating system with it.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>
WATCH_S = 0.5


def _prctl_pdeathsig(sig: int) -> bool:
    """PR_SET_PDEATHSIG through libc; False where it is not available."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _watch(parent_pid: int) -> None:
    while os.getppid() == parent_pid:
        time.sleep(WATCH_S)
    os.kill(os.getpid(), signal.SIGKILL)


def die_with_parent(parent_pid: int, use_prctl: bool = True) -> str:
    """Arrange for this process to die when `parent_pid` does; returns how ("prctl" or "watchdog").

    The parent may have died before this runs: the pid is checked after the signal is armed, and the
    process ends at once if its parent is already another one."""
    how = "prctl" if use_prctl and _prctl_pdeathsig(signal.SIGKILL) else "watchdog"
    if os.getppid() != parent_pid:
        os.kill(os.getpid(), signal.SIGKILL)
    if how == "watchdog":
        threading.Thread(target=_watch, args=(parent_pid,), name="tmcheck-parent-watchdog", daemon=True).start()
    return how

"""The one progress display of tmcheck: rich progress on stderr, so stdout stays one JSON document.

Every long command draws through `bar`, with or without ``--json``. TMCHECK_PROGRESS chooses when:
``auto`` (default: when stderr is a terminal), ``always`` (also into a pipe or a test's capture, as a
final line per task), ``never``.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator


def enabled() -> bool:
    """Whether progress is drawn, from TMCHECK_PROGRESS: auto (when stderr is a terminal), always or never
    (unknown values count as auto)."""
    mode = os.environ.get("TMCHECK_PROGRESS", "auto").strip().lower()
    if mode == "never":
        return False
    if mode == "always":
        return True
    return sys.stderr.isatty()


def console():
    """A rich console on stderr (forced to draw when TMCHECK_PROGRESS=always)."""
    from rich.console import Console

    always = os.environ.get("TMCHECK_PROGRESS", "").strip().lower() == "always"
    return Console(stderr=True, force_terminal=always or None, width=100 if always else None)


@contextlib.contextmanager
def bar(total: int | None, description: str, show: bool = True, **fields) -> Iterator[Callable[..., None]]:
    """A progress bar on stderr; yields ``advance(n=1, completed=None, **fields)``.

    ``fields`` are extra columns' initial values (shown as ``name=value``). Nothing is drawn when
    ``show`` is false or `enabled()` says no; ``advance`` is then a no-op, so callers never branch."""
    if not (show and enabled()):
        yield lambda *a, **k: None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()]
    columns += [TextColumn(f"{name}={{task.fields[{name}]}}") for name in fields]
    with Progress(*columns, console=console(), transient=False) as progress:
        task = progress.add_task(description, total=total, **fields)

        def advance(n: int = 1, completed: int | None = None, **update) -> None:
            if completed is not None:
                progress.update(task, completed=completed, **update)
            else:
                progress.update(task, advance=n, **update)

        yield advance

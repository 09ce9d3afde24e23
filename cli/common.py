"""Shared CLI plumbing: consoles, JSON output, and one-line errors with exit code 2."""

from __future__ import annotations

import functools
import json
import math
import sys
from fractions import Fraction
from typing import Any
from collections.abc import Callable

import numpy as np
import typer
from rich.console import Console

console = Console()
err_console = Console(stderr=True)

EXIT_BAD_INPUT = 2


class UserError(Exception):
    """Bad input from the user: printed as one line on stderr, exit code 2."""


def fail(message: str, code: int = EXIT_BAD_INPUT) -> None:
    err_console.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def handle_errors(func: Callable) -> Callable:
    """Turn expected library errors (ValueError and friends, OSError) into one-line messages."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except (typer.Exit, typer.Abort, KeyboardInterrupt):
            raise
        except (UserError, ValueError, OSError, KeyError, ZeroDivisionError, OverflowError) as exc:
            msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            if isinstance(exc, KeyError):
                msg = f"unknown key {msg}"
            if isinstance(exc, OSError) and getattr(exc, "filename", None):
                msg = f"{exc.strerror or 'cannot open'}: {exc.filename}"
            fail(msg)
        except MemoryError as exc:
            detail = f" ({str(exc).strip().splitlines()[0]})" if str(exc).strip() else ""
            fail(f"out of memory{detail}: lower the sizes")
        except RecursionError:
            fail("input nested too deeply (RecursionError)")

    return wrapper


def to_jsonable(obj: Any) -> Any:
    """Fractions become 'p/q' strings, numpy scalars and arrays plain Python, non-finite floats strings."""
    if isinstance(obj, Fraction):
        return str(obj)
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return to_jsonable(obj.tolist())
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.floating, float)):
        f = float(obj)
        return f if math.isfinite(f) else str(f)
    if isinstance(obj, (np.bool_,)):
        return bool(obj)
    return obj


def print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(to_jsonable(obj), indent=2) + "\n")
    sys.stdout.flush()

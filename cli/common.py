"""Shared CLI plumbing: consoles, JSON output, and one-line errors with exit code 2.

`handle_errors` is where bad input becomes one line on stderr and exit 2: tmcheck's own errors
(ValueError and its subclasses: SchemaError, CheckpointError, ...), OSError, and every exception type
a library raises on bad data: `LIBRARY_ERRORS` by module and name (safetensors, csv, pickle, zip,
zlib, tar, and the bare Exception that tokenizers raises; tmcheck never raises a bare Exception), and a
RuntimeError raised inside torch, numpy, safetensors, tokenizers or transformers (raised by tmcheck's
own code it stays a bug: a traceback, exit 1).
"""

from __future__ import annotations

import functools
import gc
import json
import math
import os
import sys
import traceback
from collections.abc import Callable
from typing import Any

import typer
from rich.console import Console

from tmcheck.util.jsonable import plain

console = Console()
err_console = Console(stderr=True)

EXIT_BAD_INPUT = 2


class UserError(Exception):
    """Bad input from the user: printed as one line on stderr, exit code 2."""


def fail(message: str, code: int = EXIT_BAD_INPUT) -> None:
    err_console.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


# (module, class name) of the exceptions libraries raise on bad data, matched without importing them
LIBRARY_ERRORS = {
    ("safetensors_rust", "SafetensorError"),
    ("safetensors._safetensors_rust", "SafetensorError"),
    ("_csv", "Error"),
    ("csv", "Error"),
    ("_pickle", "UnpicklingError"),
    ("pickle", "UnpicklingError"),
    ("zipfile", "BadZipFile"),
    ("zlib", "error"),
    ("tarfile", "ReadError"),
    ("tarfile", "TarError"),
    ("builtins", "EOFError"),
    ("builtins", "Exception"),  # only Rust extensions raise it bare: tokenizers on a malformed tokenizer.json
}
LIBRARIES = ("torch", "numpy", "safetensors", "tokenizers", "transformers", "scipy")


def raised_in_library(exc: BaseException) -> str | None:
    """The library whose code raised `exc` (its innermost Python frame), or None for tmcheck's own."""
    tb = exc.__traceback__
    last = None
    while tb is not None:
        last = tb.tb_frame.f_code.co_filename
        tb = tb.tb_next
    if last is None:
        return None
    parts = last.replace(os.sep, "/").split("/")
    for lib in LIBRARIES:
        if lib in parts and ("site-packages" in parts or "dist-packages" in parts):
            return lib
    return None


def library_error(exc: BaseException) -> str | None:
    """One line for an exception a library raised on bad data, or None when `exc` is not one."""
    key = (type(exc).__module__, type(exc).__name__)
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
    if key in LIBRARY_ERRORS:
        return f"bad data ({type(exc).__name__}): {first}"
    if isinstance(exc, RuntimeError) and (lib := raised_in_library(exc)) is not None:
        return f"bad data for {lib}: {first}"
    return None


def handle_errors(func: Callable) -> Callable:
    """Turn expected errors (ValueError and friends, OSError, a library's errors on bad data) into
    one-line messages, exit 2."""

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
            # the frames of the traceback still hold what filled the memory: free it before printing
            traceback.clear_frames(exc.__traceback__)
            gc.collect()
            detail = f" ({str(exc).strip().splitlines()[0][:200]})" if str(exc).strip() else ""
            fail(f"out of memory{detail}: lower the sizes")
        except RecursionError:
            fail("input nested too deeply (RecursionError)")
        except Exception as exc:
            line = library_error(exc)
            if line is None:
                raise
            fail(line)

    return wrapper


def print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(plain(obj), indent=2) + "\n")
    sys.stdout.flush()


def network_resources_table(res, title: str):
    """The resources measured from a network's weights (Definition 2) as a rich table."""
    from rich.table import Table

    table = Table(title=title)
    table.add_column("resource")
    table.add_column("measured", justify="right")
    labels = {
        "L_T": "blocks L_T",
        "m": "max heads per block m",
        "L_FFN": "max FFN depth L_FFN",
        "w_FFN": "max FFN hidden width w_FFN",
        "l": "hidden tokens l",
        "d_embd": "d_embd",
        "D": "input dim D",
        "kappa": "kappa = max|theta| (all weights)",
        "kappa_blocks": "max|theta| (heads and FFNs)",
        "n_params": "parameters",
        "n_nonzero": "non-zero parameters",
    }
    for key, label in labels.items():
        table.add_row(label, str(getattr(res, key)))
    return table


def resource_table(rows: list[dict], title: str):
    """The resource rows of a Lemma 1 or Theorem 2 report (`theory.spec.resource_cells`) as a table."""
    from rich.table import Table

    from tmcheck.theory.spec import RESOURCE_COLUMNS, resource_cells

    t = Table(title=title)
    for c in RESOURCE_COLUMNS:
        t.add_column(c, justify="left" if c in ("quantity", "formula") else "right")
    for cells in resource_cells(rows):
        t.add_row(*cells)
    return t


def _up(bound: float, digits: int = 6) -> str:
    """An upper bound printed with `digits` significant digits, rounded up so that the printed number is
    still a bound (a bound of 0.29995 at ε = 0.3 prints 0.29995, not 0.3 as .4g would)."""
    text = f"{bound:.{digits}g}"
    while float(text) < bound:  # rounded down: step one unit of the last digit up
        step = 10 ** (math.floor(math.log10(abs(float(text)))) - digits + 1) if float(text) else bound
        text = f"{float(text) + step:.{digits}g}"
    return text


def print_certificate(sup: dict, eps: float, domain: str, point) -> None:
    """One line for a sup-norm certificate (`theory.certify`), when the report's error carries one; `point`
    formats its counterexample."""
    if "certificate" not in sup:
        return
    c = sup["certificate"]
    where = f" at {point(c['counterexample'])}" if c["counterexample"] else ""
    console.print(
        f"sup |T - f| over {domain}: {c['status']} against ε = {eps} (value {_up(sup['value'])}{where}; "
        f"{c['cells']} cells, {c['seconds']:.0f} s; {sup['method']})"
    )


def finish_construction(rep: dict, export, json_: bool) -> None:
    """Export a Lemma 1 or Theorem 2 report's network if asked, print the report as JSON or its verdict
    lines, and exit 1 when the construction fails its claim (a finding, not bad input)."""
    from tmcheck.theory import netfile
    from tmcheck.theory.check import report_json, verdict_lines

    if export is not None:
        netfile.save(rep["network"], export)
    if json_:
        print_json({**report_json(rep), "exported": str(export) if export else None})
    else:
        colour = "green" if rep["ok"] else "red"
        for line in verdict_lines(rep):
            console.print(f"[{colour}]{line}[/]" if line.startswith(("verdict", "check")) else line, highlight=False)
        if export:
            console.print(f"written to {export}")
    if not rep["ok"]:
        raise typer.Exit(1)

"""`tmcheck demo`: the whole story in one command (what `make demo` runs).

Each stage is a function (out, quick) -> str that prints its part and returns a one-line summary;
stages run in order and the run ends with a summary table (or, with --json, one JSON document).
"""

from __future__ import annotations

import contextlib
import importlib
import sys
import time
from fractions import Fraction
from pathlib import Path

import numpy as np
import typer
from rich.panel import Panel
from rich.table import Table

from tmcheck.cli.common import console, handle_errors, print_json
from tmcheck.cli.options import JsonOpt, OutOpt, parse_list
from tmcheck.cli.network import resource_table
from tmcheck.theory import netfile
from tmcheck.theory.backends import evaluate
from tmcheck.theory.examples import random_network, worked_example, worked_example_value
from tmcheck.theory.network import resources


def stage_network(out: Path, quick: bool) -> str:
    """Build the worked example, round-trip it through the file format, check exact vs float."""
    net = worked_example("exact")
    path = netfile.save(net, out / "worked-example.json")
    loaded = netfile.load(path)
    xs = [[Fraction(1, 2), Fraction(3, 2)], [Fraction(-2), Fraction(1, 3)], [Fraction(5, 7), Fraction(-1, 9)]]
    got = evaluate(loaded, xs, "exact")
    want = [worked_example_value(*x) for x in xs]
    assert list(got) == want, "worked example disagrees with its hand computation"
    console.print(resource_table(resources(loaded), title="worked example: resources measured from the weights"))
    console.print(f"T(1/2, 3/2) = {got[0]} (hand computation: 3); written to {path}")
    rng = np.random.default_rng(0)
    rnet = random_network(rng, "exact", l=8, D=3, n_blocks=3, n_heads=3)
    X = rng.integers(-4, 5, size=(16, 3)).astype(object) * Fraction(1, 4)
    ex = evaluate(rnet, X, "exact")
    fl = evaluate(rnet, X, "float64")
    rel = max(abs(float(e) - f) / max(1.0, abs(float(e))) for e, f in zip(ex, fl))
    console.print(f"random 3-block network, 16 inputs: exact vs float64 max relative difference {rel:.2e}")
    return f"worked example T(1/2,3/2) = {got[0]} exactly; exact vs float64 rel. diff {rel:.1e}"


# (title, "module:function") in story order; a stage's module is imported when the stage runs, so
# `tmcheck --help` stays fast.
STAGES = [
    ("network class (Def. 1-7)", "tmcheck.cli.demo:stage_network"),
    ("building blocks (Lemmas 3-7)", "tmcheck.cli.stages.lemmas:stage"),
    ("Lemma 1 and Theorem 2 networks", "tmcheck.cli.stages.theorem:stage"),
    ("proofs_check registry", "tmcheck.cli.stages.proofs:stage"),
    ("intrinsic dimension and fitting", "tmcheck.cli.stages.id:stage"),
    ("pretraining data-scaling run", "tmcheck.cli.stages.pretrain:stage"),
    ("synthetic manifold regression", "tmcheck.cli.stages.synth:stage"),
]


def _stage(spec: str):
    module, func = spec.split(":")
    return getattr(importlib.import_module(module), func)


def selected(only: str) -> list[tuple[str, str]]:
    """The stages whose titles start with one of the comma-separated words of --only (all if empty)."""
    words = [w.lower() for w in parse_list(only, "--only")] if only else []
    chosen = [(t, s) for t, s in STAGES if not words or any(t.lower().startswith(w) for w in words)]
    if not chosen:
        raise typer.BadParameter(f"--only {only!r} matches no stage; stages: {'; '.join(t for t, _ in STAGES)}")
    return chosen


@handle_errors
def command(
    out: OutOpt = Path("demo-out"),
    quick: bool = typer.Option(False, "--quick", help="Smallest sizes everywhere (used by the tests)."),
    only: str = typer.Option("", "--only", help="Comma-separated stage titles' first words to run (default: all)."),
    json_: JsonOpt = False,
) -> None:
    """Run the whole story: constructions, proofs, and an empirical scaling run; print a summary.

    With --json the stages' own output goes to stderr and stdout holds one JSON document:
    {"out": DIR, "quick": bool, "stages": [{"title", "summary", "seconds"}, ...]}."""
    stages = selected(only)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    with contextlib.redirect_stdout(sys.stderr) if json_ else contextlib.nullcontext():
        for title, spec in stages:
            console.rule(f"[bold]{title}")
            t0 = time.perf_counter()
            summary = _stage(spec)(out, quick)
            rows.append({"title": title, "summary": summary, "seconds": round(time.perf_counter() - t0, 3)})
    if json_:
        print_json({"out": str(out), "quick": quick, "stages": rows})
        return
    table = Table(title="tmcheck demo summary")
    for c in ("stage", "result", "time"):
        table.add_column(c)
    for r in rows:
        table.add_row(r["title"], r["summary"], f"{r['seconds']:.1f}s")
    console.print(Panel(table, expand=False))

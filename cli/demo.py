"""`tmcheck demo`: the whole story in one command (what `make demo` runs).

Each stage is a function (out, quick) -> str that prints its part and returns a one-line summary (a
stage that also takes `full` and `results` gets them); stages run in order and the run ends with a
summary table (or, with --json, one JSON document). The experiment stages train a sample of the
committed runs again and show their losses beside the committed rows; `--full` re-runs every
committed experiment from scratch instead.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import sys
import time
from fractions import Fraction
from pathlib import Path

import numpy as np
import typer
from rich.panel import Panel
from rich.table import Table

from tmcheck.cli.common import console, err_console, handle_errors, network_resources_table, print_json
from tmcheck.cli.options import JsonOpt, OutOpt, parse_list
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
    console.print(
        network_resources_table(resources(loaded), title="worked example: resources measured from the weights")
    )
    console.print(f"T(1/2, 3/2) = {got[0]} (hand computation: 3); written to {path}")
    rng = np.random.default_rng(0)
    rnet = random_network(rng, "exact", l=8, D=3, n_blocks=3, n_heads=3)
    X = rng.integers(-4, 5, size=(16, 3)).astype(object) * Fraction(1, 4)
    ex = evaluate(rnet, X, "exact")
    fl = evaluate(rnet, X, "float64")
    rel = max(abs(float(e) - f) / max(1.0, abs(float(e))) for e, f in zip(ex, fl, strict=True))
    console.print(f"random 3-block network, 16 inputs: exact vs float64 max relative difference {rel:.2e}")
    return f"worked example T(1/2,3/2) = {got[0]} exactly; exact vs float64 rel. diff {rel:.1e}"


# (title, "module:function", when) in story order, `when` one of "always" and "full" (--full only); a
# stage's module is imported when the stage runs, so `tmcheck --help` stays fast.
STAGES = [
    ("network class (Def. 1-7)", "tmcheck.cli.demo:stage_network", "always"),
    ("building blocks (Lemmas 3-7)", "tmcheck.cli.stages.lemmas:stage", "always"),
    ("Lemma 1 and Theorem 2 networks", "tmcheck.cli.stages.theorem:stage", "always"),
    ("proofs_check registry", "tmcheck.cli.stages.proofs:stage", "always"),
    ("intrinsic dimension and fitting", "tmcheck.cli.stages.id:stage", "always"),
    ("pretraining data-scaling run", "tmcheck.cli.stages.pretrain:stage", "always"),
    ("synthetic manifold regression", "tmcheck.cli.stages.synth:stage", "always"),
    ("model scaling and ID ablations", "tmcheck.cli.stages.model:stage", "full"),
    ("committed reports rebuilt", "tmcheck.cli.stages.reports:stage", "always"),
]


def _stage(spec: str):
    module, func = spec.split(":")
    return getattr(importlib.import_module(module), func)


def selected(only: str, full: bool = False) -> list[tuple[str, str]]:
    """The stages whose titles start with one of the comma-separated words of --only (all if empty);
    the --full-only stages only with `full`."""
    words = [w.lower() for w in parse_list(only, "--only")] if only else []
    stages = [(t, s) for t, s, when in STAGES if full or when == "always"]
    chosen = [(t, s) for t, s in stages if not words or any(t.lower().startswith(w) for w in words)]
    if not chosen:
        raise typer.BadParameter(f"--only {only!r} matches no stage; stages: {'; '.join(t for t, _ in stages)}")
    return chosen


def run_stage(spec: str, out: Path, quick: bool, full: bool, results: Path | None) -> tuple[str, bool]:
    """(summary, passed) of one stage: a stage returns its summary, or (summary, passed) when it checks
    something that can fail (a re-run that differs from the committed rows, a rebuilt report that differs)."""
    fn = _stage(spec)
    params = inspect.signature(fn).parameters
    extra = {k: v for k, v in (("full", full), ("results", results)) if k in params}
    got = fn(out, quick, **extra)
    return got if isinstance(got, tuple) else (got, True)


def full_estimate(results: Path | None) -> str:
    """How long the committed experiments took to train, from their rows (what --full re-runs)."""
    from tmcheck.empirics.report.reproduce import experiments, find_results
    from tmcheck.util import atomic

    root = find_results(results)
    if root is None:
        return "no committed results found: --full runs the tiny presets"
    total = 0.0
    for exp in experiments(root):
        rows = atomic.read_jsonl(exp.path / "results.jsonl") if exp.kind != "ablate" else []
        total += sum(float(r.get("wall_s", r.get("seconds", 0.0))) for r in rows)
    return f"the committed rows record {total / 60:.0f} minutes of training, one run at a time"


@handle_errors
def command(
    out: OutOpt = Path("demo-out"),
    quick: bool = typer.Option(False, "--quick", help="Smallest sizes everywhere (used by the tests)."),
    full: bool = typer.Option(
        False,
        "--full",
        help="Re-run every committed experiment from scratch (hours on 2 cores) instead of a sample of its runs.",
    ),
    only: str = typer.Option("", "--only", help="Comma-separated stage titles' first words to run (default: all)."),
    results: Path | None = typer.Option(
        None, "--results", help="The committed results folder (default: the checkout's results/)."
    ),
    json_: JsonOpt = False,
) -> None:
    """Run the whole story: constructions, proofs, intrinsic dimension, and the committed experiments.

    The experiment stages train the cheapest committed runs again from scratch (same seeds, one thread)
    and print each loss beside the committed row's; the last stage rebuilds every committed report from
    its rows and prints its verdicts. --full re-runs every committed experiment from scratch instead
    (its training time is printed first) and sets its fits beside the committed ones.

    With --json the stages' own output goes to stderr and stdout holds one JSON document:
    {"out": DIR, "quick": bool, "full": bool, "seconds": total, "stages": [{"title", "summary", "passed",
    "seconds"}, ...]}. Exit 1 when a re-run or a rebuilt report differs from the committed one."""
    if quick and full:
        raise typer.BadParameter("--quick and --full exclude each other")
    if results is not None and not results.is_dir():
        raise typer.BadParameter(f"--results {results}: no such directory")
    stages = selected(only, full)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    start = time.perf_counter()
    with contextlib.redirect_stdout(sys.stderr) if json_ else contextlib.nullcontext():
        if full:
            console.print(f"tmcheck demo --full re-runs every experiment from scratch: {full_estimate(results)}")
        for title, spec in stages:
            console.rule(f"[bold]{title}")
            t0 = time.perf_counter()
            summary, passed = run_stage(spec, out, quick, full, results)
            rows.append(
                {"title": title, "summary": summary, "passed": passed, "seconds": round(time.perf_counter() - t0, 3)}
            )
        total = time.perf_counter() - start
        if full:
            console.print(f"tmcheck demo --full took {total / 60:.1f} minutes")
    failed = [r["title"] for r in rows if not r["passed"]]
    if json_:
        print_json({"out": str(out), "quick": quick, "full": full, "seconds": round(total, 3), "stages": rows})
    else:
        table = Table(title="tmcheck demo summary")
        for c in ("stage", "result", "time"):
            table.add_column(c)
        for r in rows:
            table.add_row(
                r["title"], r["summary"] + ("" if r["passed"] else " [bold red](FAILED)"), f"{r['seconds']:.1f}s"
            )
        console.print(Panel(table, expand=False))
    if failed:
        err_console.print(f"tmcheck demo: a check failed in: {'; '.join(failed)}")
        raise typer.Exit(1)

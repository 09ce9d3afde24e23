"""`tmcheck lemma`: the building blocks of Appendix G (Lemmas 3-7) and Lemma 1 (Appendix E.1), built,
verified and exported.

Indices are 0-based as in the file format (token t is the paper's t+1, row r the paper's row r+1).
Each command parses its options, calls theory.lemmas (`lemma 1`: `lemmas.lemma1_report.lemma1_report`) and
`theory.check.verify`, and prints: the verdict of `check_construction`, exit 1 when the construction fails
its claim, 0 when it holds, 2 on bad input.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Annotated

import numpy as np
import typer
from rich.table import Table

from tmcheck.cli.common import (
    UserError,
    console,
    finish_construction,
    handle_errors,
    print_certificate,
    print_json,
    resource_table,
)
from tmcheck.cli.options import BetaOpt, ExactOpt, ExportOpt, JsonOpt, SizeLimitOpt, TrialsOpt, option_group
from tmcheck.theory.construction import SIZE_LIMIT
from tmcheck.theory.lemmas.parallel import KINDS
from tmcheck.theory.network import NetworkError, to_fraction

MAX_L = 4096  # resource guard: the lemmas' checks build l x l attention patterns (exact rationals)

DataBoundOpt = Annotated[str, typer.Option("--M", help="Bound on the data rows (>= 1).")]  # gating, parallel

app = typer.Typer(no_args_is_help=True, help="Appendix G building blocks: Lemmas 3-7 as exact, verified constructions.")


@dataclass(frozen=True)
class Check:
    """How a Lemma 3-7 command verifies and shows its construction: the options every one of them takes."""

    exact: bool = True
    trials: int = 20
    export: Path | None = None
    json_: bool = False


_CHECK_PARAMS = [
    inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default, annotation=alias)
    for name, default, alias in (
        ("exact", True, ExactOpt),
        ("trials", 20, TrialsOpt),
        ("export", None, ExportOpt),
        ("json_", False, JsonOpt),
    )
]
# a command's parameter `check` (a Check) replaced, for Typer, by --exact/--float, --trials, --export, --json
check_options = option_group("check", _CHECK_PARAMS, Check)


def num(text: str, name: str) -> Fraction:
    """An exact number from the command line ('1/3', '2', '1e-3'), digit-limited (`network.to_fraction`)."""
    try:
        return to_fraction(text)
    except NetworkError as exc:
        raise UserError(f"{name}: {exc}") from None


def parse_matrix(text: str, name: str) -> list[list[Fraction]]:
    """'1,0,0,0,0;0,1,0,0,1' -> a 2 x 5 matrix of Fractions."""
    try:
        rows = [[to_fraction(v.strip()) for v in r.split(",")] for r in text.split(";")]
    except (ValueError, ZeroDivisionError):
        raise UserError(f"{name}: expected rows of numbers like '1,0,0,0,0;0,1,0,0,1', got {text!r}") from None
    if len(rows) != 2 or any(len(r) != 5 for r in rows):
        raise UserError(f"{name}: a data kernel is 2 x 5 (rows separated by ';'), got {[len(r) for r in rows]}")
    return rows


def report(c, check: Check, extra: dict | None = None, extra_ok: bool = True) -> None:
    """Verify (`theory.check.construction_report`), optionally export, and print (rich or JSON) one
    construction; extra_ok joins the verdict. A failed verification exits with code 1 (a finding, not bad input)."""
    from tmcheck.theory import netfile
    from tmcheck.theory.check import construction_report

    export, json_ = check.export, check.json_
    rep = construction_report(c, check.trials, check.exact, extra, extra_ok)
    if export is not None:
        netfile.save(c.network, export)
    if json_:
        print_json({**rep, "exported": str(export) if export else None})
    else:
        _print_report(rep, export, extra)
    if not rep["ok"]:
        raise typer.Exit(1)


def _print_report(rep: dict, export: Path | None, extra: dict | None) -> None:
    t = Table(title=f"{rep['name']} ({rep['paper']})")
    t.add_column("quantity")
    t.add_column("value", overflow="fold")
    for k, v in rep["constants"].items():
        if isinstance(v, np.ndarray) or k in ("Q_data", "K_data", "pivot"):
            continue
        t.add_row(k, f"{v} (= {float(v):.6g})" if isinstance(v, Fraction) and v.denominator != 1 else str(v))
    if rep["stated_kappa_bound"] is not None:
        t.add_row("stated bound on ||θ||∞", f"{float(rep['stated_kappa_bound']):.6g}")
    for k, v in rep["measured"].items():
        t.add_row(f"measured {k}", f"{float(v):.6g}" if k == "kappa" else str(v))
    for k, v in (extra or {}).items():
        t.add_row(k, str(v))
    for k, d in rep["check"]["results"].items():
        t.add_row(f"check: {k}", ("[green]pass[/] " if d["passed"] else "[red]FAIL[/] ") + d["detail"])
    if "float_error" in rep:
        from tmcheck.theory.check import FLOAT_CLAIM_TOL

        t.add_row("float64 max error", f"{rep['float_error']:.3g} (tolerance {FLOAT_CLAIM_TOL:g})")
    verdict = "[bold green]HOLDS[/]" if rep["ok"] else "[bold red]FAILS[/]"
    t.add_row("verdict", f"{verdict} over {rep['trials']} inputs ({rep['backend']})")
    console.print(t)
    if export is not None:
        console.print(f"exported tmcheck-network v1 to {export}")


def show_pattern(nonzero: list, l: int, t1: int, t2: int) -> None:
    """Draw the l x l pattern with these non-zero entries (t, k) (downsampled to 48 x 48 cells when larger);
    list them."""
    nz = [(int(a), int(b)) for a, b in nonzero]
    step = max(1, -(-l // 48))
    hit_cells = {(a // step, b // step) for a, b in nz}
    console.print(f"attention pattern σ(<Q h_t, K h_k>): rows query t, columns key k, one cell = {step}x{step} entries")
    grid = Table(show_header=False, box=None, padding=0)
    for _ in range(0, l, step):
        grid.add_column()
    for r in range(0, l, step):
        cells = []
        for col in range(0, l, step):
            hit = (r // step, col // step) in hit_cells
            mark = r <= t1 < r + step and col <= t2 < col + step
            cells.append("[bold red]█[/]" if hit else ("[yellow]○[/]" if mark else "[dim]·[/]"))
        grid.add_row(*cells)
    console.print(grid)
    console.print(f"non-zero entries (t, k): {nz if nz else 'none'}; the lemma allows only ({t1}, {t2})")


@app.command("interaction")
@handle_errors
@check_options
def interaction_cmd(
    l: int = typer.Option(64, "--l", min=1, max=MAX_L, help="Number of tokens l."),
    t1: int = typer.Option(3, "--t1", help="Query token t1 (0-based), the one that receives the value."),
    t2: int = typer.Option(40, "--t2", help="Key token t2 (0-based)."),
    i: int = typer.Option(1, "--i", help="Output row i: a data row, 0 or 1 (0-based)."),
    kappa: str = typer.Option("1", "--kappa", help="Scale of the default data kernels (their max entry)."),
    M: str = typer.Option("2", "--M", help="Bound ||H||∞ <= M of the inputs (>= 1)."),
    q: str | None = typer.Option(
        None, "--query-kernel", "--q", help="Query data kernel Q^B, 2x5: '1,0,0,0,0;0,1,0,0,1'."
    ),
    k: str | None = typer.Option(None, "--key-kernel", help="Key data kernel K^B, 2x5."),
    C: str | None = typer.Option(None, "--C", help="Use this C instead of the exact minimal one."),
    pattern: bool = typer.Option(
        False, "--show-pattern", help="Draw the l x l attention pattern on the critical input."
    ),
    check: Check = Check(),
) -> None:
    """Interaction Lemma (Appendix G, Lemma 3): a head where token t1 reads token t2 only.

    Example: tmcheck lemma interaction --l 64 --t1 3 --t2 40 --show-pattern
    """
    from tmcheck.theory.lemmas.interaction import default_kernels, interaction, interaction_extra

    kap = num(kappa, "--kappa")
    dq, dk = default_kernels(kap)
    Q = parse_matrix(q, "--query-kernel") if q is not None else dq
    K = parse_matrix(k, "--key-kernel") if k is not None else dk
    Mq = num(M, "--M")
    c = interaction(l, t1, t2, i, Q, K, Mq, None if C is None else num(C, "--C"))
    extra, extra_ok = interaction_extra(c, Q, K, Mq, check.trials, check.exact, vectors=check.json_, pattern=pattern)
    if pattern and not check.json_:
        show_pattern(extra["pattern_nonzero"], l, t1, t2)
    report(c, check, extra, extra_ok)


@app.command("gating")
@handle_errors
@check_options
def gating_cmd(
    l: int = typer.Option(16, "--l", min=1, max=MAX_L, help="Number of tokens l."),
    t_cut: int = typer.Option(
        8, "--t-cut", help="Split point: prefix keeps t < t_cut, suffix keeps t >= t_cut (0-based)."
    ),
    keep: str = typer.Option("prefix", "--keep", help="prefix or suffix."),
    M: DataBoundOpt = "2",
    check: Check = Check(),
) -> None:
    """Gating FFN (Appendix G, Lemma 4, corrected): zero the data rows outside a prefix or a suffix.

    Example: tmcheck lemma gating --l 16 --t-cut 8 --keep suffix
    """
    from tmcheck.theory.lemmas.gating import gating

    report(gating(l, t_cut, keep, num(M, "--M")), check)


@app.command("addition")
@handle_errors
@check_options
def addition_cmd(
    c: str = typer.Option("1/2,-1,1/3", "--c", help="The constant vector c (D entries, ||c||∞ <= M/2)."),
    M: str = typer.Option("2", "--M", help="The lemma's M (>= 2): ||x||∞, ||c||∞ <= M/2."),
    check: Check = Check(),
) -> None:
    """Constant addition (Appendix G, Lemma 5, corrected): one block writing x - c next to x.

    Example: tmcheck lemma addition --c 1/2,-1,1/3 --M 2
    """
    from tmcheck.theory.lemmas.addition import addition

    try:
        vec = [num(v.strip(), "--c") for v in c.split(",")]
    except (ValueError, ZeroDivisionError):
        raise UserError(f"--c: expected comma-separated numbers, got {c!r}") from None
    report(addition(vec, num(M, "--M")), check)


@app.command("replace")
@handle_errors
@check_options
def replace_cmd(
    l: int = typer.Option(8, "--l", min=1, max=MAX_L, help="Number of tokens l."),
    M: str = typer.Option("2", "--M", help="Bound on the data rows of the random inputs."),
    check: Check = Check(),
) -> None:
    """Replacing FFN (Appendix G, Lemma 6): row 0 becomes a copy of row 1 on every token.

    Example: tmcheck lemma replace --l 8
    """
    from tmcheck.theory.lemmas.replace import replace

    report(replace(l, num(M, "--M")), check)


@app.command("parallel")
@handle_errors
@check_options
def parallel_cmd(
    left: str = typer.Option("interaction", "--left", help=f"First block: {', '.join(KINDS)}."),
    right: str = typer.Option("gating", "--right", help=f"Second block: {', '.join(KINDS)}."),
    l1: int = typer.Option(8, "--l1", min=1, max=MAX_L, help="Tokens of the first block."),
    l2: int = typer.Option(8, "--l2", min=1, max=MAX_L, help="Tokens of the second block."),
    M: DataBoundOpt = "2",
    check: Check = Check(),
) -> None:
    """Parallelisation (Appendix G, Lemma 7, corrected): two blocks side by side on [H1 H2].

    Example: tmcheck lemma parallel --left interaction --right gating --l1 8 --l2 8
    """
    from tmcheck.theory.lemmas.parallel import build_kind, parallelize

    Mf = num(M, "--M")
    c = parallelize(build_kind(left, l1, Mf), build_kind(right, l2, Mf))
    report(c, check)


POINT_BYTES = 64 * 8  # per coordinate of a sample point: the point and the float64 rows its evaluation holds
TRIAL_BYTES = 64 * 1024  # per coordinate of an exact trial input: Fractions, each several machine words
MAX_TRIALS = 1_000_000  # exact inputs the conformance check runs through the network, one by one


def check_sample_sizes(d: int, points: int, trials: int) -> None:
    """--points and --trials against the machine's memory (tmcheck.util.bounds), before anything is
    built: one line naming the option, as `theorem 2` refuses its sample."""
    from tmcheck.util.bounds import check_count, check_memory

    check_count("--trials", trials, MAX_TRIALS, "exact inputs, checked one by one")
    check_memory("--points", points * max(d, 1) * POINT_BYTES, f"{points:,} sample points in [0,1]^{d}")
    check_memory("--trials", trials * max(d, 1) * TRIAL_BYTES, f"{trials:,} exact inputs in [0,1]^{d}")


@app.command("1")
@handle_errors
def lemma1_cmd(
    d: int = typer.Option(2, "--d", help="Input dimension d (f on [0,1]^d)."),
    eps: float = typer.Option(0.1, "--eps", help="Accuracy ε in (0, 1)."),
    target: str = typer.Option(
        "sin(3*x0)*x1", "--target", help="f as a sympy expression in x0..x{d-1} (1e-3 style numbers allowed)."
    ),
    beta: BetaOpt = 1.0,
    hf: float = typer.Option(3.0, "--H-f", "--hf", help="Declared Hölder constant H_f."),
    R: float | None = typer.Option(None, "--R", help="Declared bound on |f| (default: max |f_n|)."),
    grid: str = typer.Option(
        "tight", "--grid", help="'paper' (N = d(2^d H_f/ε)^{1/β}+1) or 'tight' (corrected analysis)."
    ),
    N: int | None = typer.Option(
        None, "--N", min=2, help="Override the grid size (the bound is then reported for it)."
    ),
    exact: ExactOpt = False,
    points: int = typer.Option(2000, "--points", min=1, help="Size of the dense sample (exact: at most 200)."),
    trials: TrialsOpt = 4,
    size_limit: SizeLimitOpt = SIZE_LIMIT,
    certify: bool = typer.Option(
        False,
        "--certify",
        help="Prove sup |T - f| <= ε over all of [0,1]^d by interval arithmetic and branch and bound "
        "(minutes at d <= 2; the default judges a sampled maximum).",
    ),
    export: ExportOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Lemma 1 (Section 2.4, Appendix E.1): one transformer computing f̂ = Σ f_n φ_n on [0,1]^d; error
    vs ε, resources vs the spec and the paper, and the verdict (exit 1 when it fails its claim).

    --exact/--float chooses the arithmetic of the error measurement (default float64, on the exact network's
    weights); the conformance check always runs exactly. --export writes the exact network.

    Example: tmcheck lemma 1 --d 2 --eps 0.1 --target "sin(3*x0)*x1" --H-f 3
    """
    from tmcheck.theory.lemmas.lemma1_report import lemma1_report

    if grid not in ("paper", "tight"):
        raise UserError(f"--grid must be 'paper' or 'tight', got {grid!r}")
    backend = "exact" if exact else "float64"
    check_sample_sizes(d, points, trials)
    rep = lemma1_report(
        target, d, eps, beta, hf, R, grid, N, backend, points, trials=trials, size_limit=size_limit, certify=certify
    )
    if not json_:
        e = rep["error"]
        console.print(resource_table(rep["resources"], f"Lemma 1 network for f = {target} on [0,1]^{d}: resources"))
        console.print(
            f"grid {grid}: N = {rep['N']} (paper's N = {rep['paper_N']}); bound H_f(2√d/3(N-1))^β = "
            f"{rep['tight_bound']:.4g}, paper's bound {rep['paper_bound']:.4g}"
        )
        exact_note = f"; T = f̂ exactly at all {e['n_points']} rational points" if e["exact_mismatches"] == 0 else ""
        console.print(
            f"max |T - f| = {e['max_error']:.4g} on {e['n_points']} points ({e['backend']}) vs ε = {eps}: "
            f"{'within' if rep['within_eps'] else 'NOT within'} ε{exact_note}"
        )
        grow = [g for g in rep["growth_with_d"] if g["grid"] == grid]
        console.print(
            f"growth with d at ε = {eps} ({grid} grid): l/(dε^(-d/β)) = "
            + ", ".join(f"d={g['d']}: {g['ratio_l']:.3g}" for g in grow)
            + " (Lemma 1 says this factor depends on H_f only)"
        )
        if e["exact_mismatches"]:
            console.print(f"[red]{e['exact_mismatches']} points where T != f̂[/]")
        print_certificate(rep["sup_error"], eps, f"[0,1]^{d}", lambda p: f"x = {p}")
    finish_construction(rep, export, json_)

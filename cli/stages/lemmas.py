"""Demo stage "building blocks (Lemmas 3-7)": build every Appendix G lemma, run check_construction, export one."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
from rich.table import Table

from tmcheck.cli.common import console
from tmcheck.theory import netfile
from tmcheck.theory.check import check_construction
from tmcheck.theory.lemmas.addition import addition
from tmcheck.theory.lemmas.gating import gating
from tmcheck.theory.lemmas.interaction import default_kernels, interaction
from tmcheck.theory.lemmas.parallel import parallelize
from tmcheck.theory.lemmas.replace import replace


def stage(out: Path, quick: bool) -> str:
    l = 16 if quick else 64
    M = Fraction(2)
    Q, K = default_kernels(Fraction(1))
    inter = interaction(l, 3, l - 5, 1, Q, K, M)
    cons = [
        inter,
        gating(l, l // 2, "prefix", M),
        gating(l, l // 3, "suffix", M),
        addition([Fraction(1, 2), Fraction(-1), Fraction(1, 3)], M),
        replace(l, M),
    ]
    cons.append(parallelize(cons[3], cons[1]))
    rng = np.random.default_rng(0)
    table = Table(title="Appendix G building blocks: check_construction (exact), 0-based indices")
    for col in ("construction", "l", "m", "L_FFN", "w_FFN", "κ measured", "paper's κ bound", "checks"):
        table.add_column(col, justify="right" if col not in ("construction", "checks") else "left", overflow="fold")
    passed = 0
    for c in cons:
        rep = check_construction(c, rng, n_inputs=8 if quick else 20)
        r = c.resources()
        bound = "-" if c.stated_kappa_bound is None else f"{float(c.stated_kappa_bound):.4g}"
        verdict = "[green]all pass[/]" if rep.ok else f"[red]fails {', '.join(rep.failed)}[/]"
        table.add_row(
            c.name, str(r.l), str(r.m), str(r.L_FFN), str(r.w_FFN), f"{float(r.kappa_blocks):.4g}", bound, verdict
        )
        passed += rep.ok
    console.print(table)
    path = netfile.save(inter.network, out / "interaction-head.json")
    cmin, cpap = inter.constants["C_min"], inter.constants["C_paper"]
    console.print(
        f"interaction head l = {l}, t1 = 3, t2 = {l - 5}: exact minimal C = {float(cmin):.6g}, the paper's C = "
        f"{float(cpap):.6g} "
        f"({float(cpap / cmin):.0f}x larger); written to {path}"
    )
    return (
        f"{passed}/{len(cons)} lemma constructions pass check_construction; "
        f"C* = {float(cmin):.4g} vs paper {float(cpap):.3g} (l = {l})"
    )

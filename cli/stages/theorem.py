"""Demo stage "Lemma 1 and Theorem 2 networks" (Appendix E): build both networks, derive their verdicts
(`theory.check.verify`: check_construction and error <= ε), print the tables."""

from __future__ import annotations

from pathlib import Path

from tmcheck.cli.common import console, resource_table
from tmcheck.theory import netfile
from tmcheck.theory.lemmas.lemma1_report import lemma1_report
from tmcheck.theory.lemmas.theorem2_report import theorem2_report


def stage(out: Path, quick: bool) -> str:
    eps = 0.3 if quick else 0.1
    rep = lemma1_report("sin(3*x0)*x1", 2, eps, 1.0, 3.0, n_points=500 if quick else 2000, trials=2 if quick else 4)
    console.print(
        resource_table(
            rep["resources"],
            f"Lemma 1: f = sin(3 x0) x1 on [0,1]^2, ε = {eps}, N = {rep['N']} (paper's N = {rep['paper_N']})",
        )
    )
    console.print(
        f"max |T - f| = {rep['error']['max_error']:.3g} (bound {rep['tight_bound']:.3g}, ε = {eps}); verdict "
        f"{rep['verdict']}"
    )
    netfile.save(rep["network"], out / "lemma1.json")
    t2 = theorem2_report(
        "circle" if quick else "sphere",
        3 if quick else 8,
        0.5 if quick else 0.2,
        "x0*x1",
        N=4 if quick else 3,
        n_points=100 if quick else 300,
    )
    console.print(
        resource_table(
            t2["resources"],
            f"Theorem 2: f = x0 x1 on the {t2['manifold']} in R^{t2['D']}, C_M = {t2['C_M']}, N = {t2['N']}",
        )
    )
    console.print(
        f"max |T - f| = {t2['error']:.3g} vs ε = {t2['eps']} (N = {t2['N']} is below the proven N = {t2['N_proven']}: "
        f"the error is measured, not guaranteed); E_n1 <= {t2['E1_max']:.3g}, E_n2 = 0, E_n3 <= {t2['E3_max']:.3g}; "
        f"verdict {t2['verdict']}"
    )
    netfile.save(t2["network"], out / "theorem2.json")
    return (
        f"Lemma 1 error {rep['error']['max_error']:.2g} vs ε = {eps} (l = {rep['network'].l}): {rep['verdict']}; "
        f"Theorem 2 on the {t2['manifold']} error {t2['error']:.2g} (l = {t2['network'].l}): {t2['verdict']}"
    )

"""Demo stage "Lemma 1 and Theorem 2 networks" (Appendix E): build both networks, check them, print the tables."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tmcheck.cli.common import console
from tmcheck.cli.lemma1 import table_of
from tmcheck.theory import netfile
from tmcheck.theory.check import check_construction
from tmcheck.theory.lemmas.lemma1 import lemma1, lemma1_report
from tmcheck.theory.lemmas.theorem2 import theorem2, theorem2_report
from tmcheck.theory.manifolds import make_manifold
from tmcheck.theory.targets import parse_target


def stage(out: Path, quick: bool) -> str:
    rng = np.random.default_rng(0)
    small = lemma1(parse_target("sin(3*x0)*x1", 2), 3, 1, 0.5, N=3)
    ok1 = check_construction(small, rng, n_inputs=4).ok
    eps = 0.3 if quick else 0.1
    rep = lemma1_report("sin(3*x0)*x1", 2, eps, 1.0, 3.0, n_points=500 if quick else 2000)
    console.print(table_of(rep["resources"], f"Lemma 1: f = sin(3 x0) x1 on [0,1]^2, ε = {eps}, N = {rep['N']} (paper's N = {rep['paper_N']})"))
    console.print(f"max |T - f| = {rep['error']['max_error']:.3g} (bound {rep['tight_bound']:.3g}, ε = {eps}); check_construction (N = 3): {ok1}")
    netfile.save(rep["network"], out / "lemma1.json")
    circ = theorem2(make_manifold("circle", 2), parse_target("x0", 2), 0.5, N=2, arithmetic="exact")
    ok2 = check_construction(circ, rng, n_inputs=2).ok
    t2 = theorem2_report("circle" if quick else "sphere", 3 if quick else 8, 0.5 if quick else 0.2, "x0*x1",
                         N=4 if quick else 3, n_points=100 if quick else 300)
    console.print(table_of(t2["resources"], f"Theorem 2: f = x0 x1 on the {t2['manifold']} in R^{t2['D']}, C_M = {t2['C_M']}, N = {t2['N']}"))
    console.print(
        f"max |T - f| = {t2['error']:.3g} vs ε = {t2['eps']} (proven N would be {t2['N_proven']}); E_n1 <= {t2['E1_max']:.3g}, "
        f"E_n2 = 0, E_n3 <= {t2['E3_max']:.3g}; check_construction (circle, N = 2): {ok2}"
    )
    netfile.save(t2["network"], out / "theorem2.json")
    return (f"Lemma 1 error {rep['error']['max_error']:.2g} <= ε = {eps} (l = {rep['network'].l}); "
            f"Theorem 2 on the {t2['manifold']} error {t2['error']:.2g} (l = {t2['network'].l}); checks {ok1 and ok2}")

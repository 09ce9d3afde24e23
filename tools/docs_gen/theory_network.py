"""The network class (docs/theory/network.md): the float-error bound, computed by tmcheck.theory."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

from docs_gen._common import table

PAGES = ("docs/theory/network.md",)


def float_bound() -> str:
    """The derived float64 error bound (theory.float_error) against the measured error, per construction."""
    import numpy as np

    from tmcheck.theory import check, float_error
    from tmcheck.theory.lemmas.gating import gating
    from tmcheck.theory.lemmas.interaction import default_kernels, interaction
    from tmcheck.theory.lemmas.lemma1 import lemma1
    from tmcheck.theory.lemmas.theorem2 import theorem2
    from tmcheck.theory.manifolds import make_manifold
    from tmcheck.theory.targets import parse_target

    cases = {
        "Lemma 3 (l = 8)": interaction(8, 2, 6, 1, *default_kernels(Fraction(1)), Fraction(2)),
        "Lemma 4 (l = 12)": gating(12, 5, "suffix", 2),
        "Lemma 1 (d = 2, N = 3)": lemma1(parse_target("x0*x1 + x0/4", 2), 2, 1, 0.5, N=3),
        "Theorem 2 (circle, N = 3)": theorem2(make_manifold("circle", 2), parse_target("x0/2", 2), 0.5, N=3),
    }
    rows = []
    for name, c in cases.items():
        H = c.sample_inputs(np.random.default_rng(0), 3)
        fl, ex = check._run(c.network, H, "float64", True), check._run(c.network, H, "exact", True)
        blocks = float_error.blockwise(c.network, c.network.blocks, fl, ex)
        _, tol = float_error.bound(c.network, c.network.blocks, H)
        r, col = c.network.decoder
        err = float(np.abs(fl[-1] - np.asarray(ex[-1], dtype=object).astype(float))[:, r, col].max())
        # two significant digits: the bound's fourth digit differs between CPUs (0.0007797 and 0.00078)
        rows.append([name, *(f"{v:.2g}" for v in (err, float(tol[:, r, col].max()), blocks[-1]["max_bound"]))])
    header = ["construction", "measured error (float64 − exact)", "a priori bound", "last block's bound"]
    return table(header, rows) + "\n"


GENERATORS: dict[str, Callable[[], str]] = {
    "theory.float-bound": float_bound,
}

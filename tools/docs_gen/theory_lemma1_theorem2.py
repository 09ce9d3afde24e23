"""Lemma 1 and Theorem 2 (docs/theory/lemma1-theorem2.md): an example network, its growth, the proven
Theorem 2 network and the atlas, computed by tmcheck.theory when the docs are built."""

from __future__ import annotations

from collections.abc import Callable

from docs_gen._common import table
from docs_gen._theory import short

PAGES = ("docs/theory/lemma1-theorem2.md",)


def lemma1_example() -> str:
    """`tmcheck lemma 1 --d 2 --eps 0.1 --target "sin(3*x0)*x1" --H-f 3`: the grid, the error and the resources."""
    from tmcheck.theory.lemmas.lemma1_report import lemma1_report

    rep = lemma1_report("sin(3*x0)*x1", 2, 0.1, 1.0, 3.0)
    head = (
        f"Tight N = {rep['N']} (the paper's N = {rep['paper_N']}), bound {rep['tight_bound']:.4g}, measured "
        f"max |T − f| = {rep['error']['max_error']:.4g} on {rep['error']['n_points']} points (float64), "
        f"verdict {rep['verdict']}.\n\n"
    )
    rows = [
        [r["quantity"], r["formula"], short(r["value"]), short(r["measured"]), short(r["ratio"])]
        for r in rep["resources"]
    ]
    return head + table(["quantity", "formula", "value", "measured", "ratio"], rows) + "\n"


def lemma1_growth() -> str:
    """Lemma 1's resources against its O(·) forms as d grows, ε = 1/2, H_f = β = 1 (theory.spec)."""
    from tmcheck.theory.spec import lemma1_spec

    rows = []
    for d in range(1, 7):
        for grid in ("tight", "paper"):
            sp = lemma1_spec(d, eps=0.5, grid=grid, arithmetic="float64")
            rows.append(
                [
                    d,
                    grid,
                    sp.N,
                    sp.l,
                    short(sp.l / sp.orders["l"]),
                    short(sp.m / sp.orders["m"]),
                    short(float(sp.kappa) / sp.orders["kappa"]),
                ]
            )
    return table(["d", "grid", "N", "l", "l / dε^(−d)", "m / dε^(−d)", "κ / d²ε^(−2d)"], rows) + "\n"


def theorem2_proven() -> str:
    """The proven Theorem 2 networks, from the spec (not built): grid, size and the atlas constants."""
    from tmcheck.theory.spec import memory_bytes, theorem2_spec

    rows = []
    for name, D, eps in (
        ("circle", 3, 0.3),
        ("circle", 2, 0.9),
        ("torus", 4, 0.5),
        ("sphere", 3, 0.3),
        ("sphere", 8, 0.2),
    ):
        sp = theorem2_spec(name, D, eps)
        e = sp.extra
        rows.append(
            [
                name,
                D,
                eps,
                e["C_M"],
                e["mu"],
                short(e["L_rho"]),
                short(e["H_chart"]),
                sp.N,
                sp.l,
                sp.m,
                sp.L_T,
                short(float(sp.kappa)),
                short(memory_bytes(sp) / 1e9),
            ]
        )
    return table(["manifold", "D", "ε", "C_M", "μ", "L_ρ", "H̃", "N", "l", "m", "L_T", "κ", "weights GB"], rows) + "\n"


def atlas() -> str:
    """Theorem 2's atlas constants: closed forms (theory.atlas) against sample estimates."""
    from tmcheck.theory.atlas import atlas_constants, sampled_constants
    from tmcheck.theory.manifolds import make_manifold

    rows = []
    for name, D in (("circle", 3), ("torus", 4), ("sphere", 3)):
        m = make_manifold(name, D)
        a, s = atlas_constants(m), sampled_constants(m)
        rows.append(
            [
                name,
                a.C_M,
                f"{a.mu} ({s.mu})",
                f"{a.L_phi:.4g} ({s.L_phi:.4g})",
                f"{a.L_rho:.4g} ({s.L_rho:.4g})",
                f"{a.coverage:.4g} ({s.coverage:.4g})",
                f"{a.b_min:.3g} ({s.b_min:.3g})",
            ]
        )
    return table(["manifold", "C_M", "μ (samples)", "L_φ", "L_ρ", "coverage / r", "b_min"], rows) + "\n"


def circle_certificate() -> str:
    """The sup error of the proven circle network in `theorem2.network_error_vs_eps` (run once per build with every
    obligation): proven over the whole circle by theory.certify, or sampled, as the obligation's witness says."""
    from docs_gen._theory import outcomes

    out = next(o for o in outcomes() if o.obligation.id == "theorem2.network_error_vs_eps")
    lines = []
    for s in out.result.evidence.data["sup_error"]:
        error = (
            f"sup |T − f| ≤ {s['value']:.3g} over the whole {s['manifold']}, **proven**"
            if s["sup"] == "proven"
            else f"|T − f| = {s['value']:.3g}, **{s['sup']}**"
        )
        lines.append(
            f"- the {s['manifold']} in R^{s['D']}, f = {s['target']}, ε = {s['eps']} at its proven N = {s['N']} "
            f"(l = {s['l']}): {error} ({s['method']}); the sampled maximum on 100 points is {s['sampled']:.3g}; "
            f"verdict {out.label}."
        )
    return "\n".join(lines) + "\n"


GENERATORS: dict[str, Callable[[], str]] = {
    "theory.lemma1-example": lemma1_example,
    "theory.lemma1-growth": lemma1_growth,
    "theory.theorem2-proven": theorem2_proven,
    "theory.atlas": atlas,
    "theory.circle-certificate": circle_certificate,
}

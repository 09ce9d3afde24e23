"""Generators of the theory owner: the docs pages docs/theory/*.md (the network class, Lemmas 3-7, Lemma 1 and
Theorem 2, the paper's claims, mutation testing). Each block is computed by tmcheck.theory or proofs_check when
the docs are built (or read from mutation/report.json); no number here is typed by hand.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MUTATION = ROOT / "mutation" / "report.json"


def _cell(text: object) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _table(header: list[str], rows: list[list]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(_cell(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def _g(x: float) -> str:
    return f"{x:.4g}" if isinstance(x, float) else str(x)


# A float printed to its last digit differs between CPUs (BLAS kernels, vectorised sums): the same commit
# gives 1.3088351925685942 on one machine and 1.3088351925685933 on another, so `tools/docs.py check` would
# fail on a CI machine of the other kind. The pages print fewer digits than the machines disagree in.
_LONG_FLOAT = re.compile(r"(?<![\w.])-?\d+\.\d{9,}(?:e[-+]?\d+)?")


def machine_independent(text: str) -> str:
    """text with every float of 10 or more significant digits printed to 10."""
    return _LONG_FLOAT.sub(lambda m: f"{float(m.group()):.10g}", text)


# ------------------------------------------------------------------------------------ the paper's claims
_OUTCOMES: list = []


def _outcomes() -> list:
    """Every obligation's outcome, run once per docs build."""
    if not _OUTCOMES:
        from tmcheck.proofs_check.registry import all_obligations, run

        _OUTCOMES.extend(run(o) for o in all_obligations())
    return _OUTCOMES


def errata() -> str:
    """Every finding of the registry (proofs_check.errata), with its first breaking witness."""
    from tmcheck.proofs_check.errata import render

    return machine_independent(render(_outcomes(), framed=False)) + "\n"


def verdicts() -> str:
    """Verdicts per section and per kind of claim (proofs_check.report)."""
    from tmcheck.proofs_check.registry import SECTIONS
    from tmcheck.proofs_check.report import LABELS, gaps, totals

    outs = _outcomes()
    rows = []
    for sec in SECTIONS:
        mine = [o for o in outs if o.obligation.section == sec]
        t = totals(mine)
        rows.append([f"`{sec}`", len(mine), *(t[k] for k in LABELS[:4]), gaps(mine)])
    t = totals(outs)
    rows.append(["all", len(outs), *(t[k] for k in LABELS[:4]), gaps(outs)])
    kinds = {}
    for o in outs:
        k = kinds.setdefault(o.obligation.kind.value, {lab: 0 for lab in LABELS[:4]})
        k[o.label] = k.get(o.label, 0) + 1
    by_kind = [[kind, *(c[lab] for lab in LABELS[:4])] for kind, c in kinds.items()]
    return (
        _table(["section", "obligations", *LABELS[:4], "proof gaps"], rows)
        + "\n\n"
        + _table(["kind", *LABELS[:4]], by_kind)
        + "\n"
    )


def reach() -> str:
    """The static reach scan (proofs_check.reach) and the witness ratio of every finding's satisfying search."""
    from tmcheck.proofs_check.reach import scan
    from tmcheck.proofs_check.registry import Verdict, all_obligations

    obls = all_obligations()
    names = scan(obls)
    reached = sum(1 for v in names.values() if v)
    rows = []
    for o in obls:
        out = next(x for x in _outcomes() if x.obligation.id == o.id)
        if out.result is None or out.result.verdict not in (Verdict.FAILS, Verdict.CORRECTED):
            continue
        sat = o.judge(**o.satisfied)
        rows.append(
            [
                f"`{o.id}`",
                out.result.searched,
                sat.searched,
                f"{sat.searched / out.result.searched:.2f}",
                sat.verdict.value,
            ]
        )
    return (
        f"{reached} of {len(obls)} obligations reach `tmcheck.theory` (named oracles with no reach: "
        f"{len(obls) - reached}).\n\n"
        + _table(["finding", "witnesses", "satisfying search", "ratio", "its verdict"], rows)
        + "\n"
    )


# ------------------------------------------------------------------------------------ mutation testing
def mutation() -> str:
    """The mutation run recorded in mutation/report.json (tools/mutation.py)."""
    if not MUTATION.is_file():
        return "No mutation run is recorded yet (`make mutation` writes mutation/report.json).\n"
    rep = json.loads(MUTATION.read_text(encoding="utf-8"))

    def pct(x):
        return "–" if x is None else f"{100 * x:.1f}%"

    rows = []
    for f, c in rep["per_file"].items():
        rows.append(
            [
                f"`{f}`",
                c["mutants"],
                c["ran"],
                c.get("killed", 0),
                c.get("timeout", 0),
                c.get("survived", 0),
                c.get("no tests", 0),
                pct(c["score"]),
            ]
        )
    pending = sum(1 for s in rep["survivors"] if "pending" in s["explanation"])
    equivalent = sum(1 for s in rep["survivors"] if "equivalent" in s["explanation"])
    text = sum(1 for s in rep["survivors"] if "text" in s["explanation"])
    return (
        f"{rep['tool']}, recorded {rep['generated']}: {rep['ran']} of {rep['mutants']} mutants ran "
        f"({rep['not_run']} not yet: the per-file rows are estimates over the mutants that ran, a seeded sample "
        f"for most files), {rep['killed']} killed and {rep['timeout']} timed out; score {pct(rep['score'])} "
        f"({pct(rep['score_killed_only'])} counting killed ones only, "
        f"{pct(rep['score_with_explained_equivalents'])} counting the survivors explained as equivalent). "
        f"{len(rep['survivors'])} survivors: {equivalent} explained as equivalent, {text} changing only the words "
        f"of a message, {pending} not yet explained (mutation/SURVIVORS.md lists each with its diff)."
        + _estimate(rep, pct)
        + "\n\n"
        + _table(["file", "mutants", "ran", "killed", "timeout", "survived", "no tests", "score"], rows)
        + "\n"
    )


def _estimate(rep: dict, pct) -> str:
    """The stratified estimate of the score over all mutants (tools/mutation.py `stratified`), in words."""
    est = rep.get("estimated_score_all_mutants")
    if not est:
        return ""
    eq = rep.get("estimated_score_all_mutants_with_explained_equivalents") or est
    return (
        f" Weighting each file's sample by its number of mutants, the score of all {est['mutants']} mutants is "
        f"estimated at {pct(est['estimate'])} (95% interval {pct(est['ci95'][0])} to {pct(est['ci95'][1])}), "
        f"{pct(eq['estimate'])} ({pct(eq['ci95'][0])} to {pct(eq['ci95'][1])}) counting the explained equivalents "
        f"as killed; method: {est['method']}."
    )


# ------------------------------------------------------------------------------------ constructions
def lemma3_threshold() -> str:
    """Lemma 3's exact threshold C* against the paper's C, for the default kernels (κ = 1, M = 2)."""
    from tmcheck.theory.lemmas.interaction import default_kernels, interaction

    Q, K = default_kernels(Fraction(1))
    rows = []
    for l, t1, t2 in ((4, 0, 3), (8, 1, 6), (16, 3, 10), (32, 3, 20), (64, 3, 40)):
        c = interaction(l, t1, t2, 1, Q, K, Fraction(2))
        cmin, cpap = c.constants["C_min"], c.constants["C_paper"]
        rows.append([l, t1, t2, _g(float(cmin)), _g(float(cpap)), _g(float(cpap / cmin)), _g(float(cmin) / l**2)])
    return _table(["l", "t1", "t2", "exact C*", "paper's C", "paper / C*", "C* / l²"], rows) + "\n"


def lemma1_example() -> str:
    """`tmcheck lemma 1 --d 2 --eps 0.1 --target "sin(3*x0)*x1" --H-f 3`: the grid, the error and the resources."""
    from tmcheck.theory.lemmas.lemma1_report import lemma1_report

    rep = lemma1_report("sin(3*x0)*x1", 2, 0.1, 1.0, 3.0)
    head = (
        f"Tight N = {rep['N']} (the paper's N = {rep['paper_N']}), bound {rep['tight_bound']:.4g}, measured "
        f"max |T − f| = {rep['error']['max_error']:.4g} on {rep['error']['n_points']} points (float64), "
        f"verdict {rep['verdict']}.\n\n"
    )
    rows = [[r["quantity"], r["formula"], _g(r["value"]), _g(r["measured"]), _g(r["ratio"])] for r in rep["resources"]]
    return head + _table(["quantity", "formula", "value", "measured", "ratio"], rows) + "\n"


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
                    _g(sp.l / sp.orders["l"]),
                    _g(sp.m / sp.orders["m"]),
                    _g(float(sp.kappa) / sp.orders["kappa"]),
                ]
            )
    return _table(["d", "grid", "N", "l", "l / dε^(−d)", "m / dε^(−d)", "κ / d²ε^(−2d)"], rows) + "\n"


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
                _g(e["L_rho"]),
                _g(e["H_chart"]),
                sp.N,
                sp.l,
                sp.m,
                sp.L_T,
                _g(float(sp.kappa)),
                _g(memory_bytes(sp) / 1e9),
            ]
        )
    return _table(["manifold", "D", "ε", "C_M", "μ", "L_ρ", "H̃", "N", "l", "m", "L_T", "κ", "weights GB"], rows) + "\n"


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
    return _table(["manifold", "C_M", "μ (samples)", "L_φ", "L_ρ", "coverage / r", "b_min"], rows) + "\n"


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
    return _table(header, rows) + "\n"


GENERATORS: dict[str, Callable[[], str]] = {
    "theory.errata": errata,
    "theory.verdicts": verdicts,
    "theory.reach": reach,
    "theory.mutation": mutation,
    "theory.lemma3-threshold": lemma3_threshold,
    "theory.lemma1-example": lemma1_example,
    "theory.lemma1-growth": lemma1_growth,
    "theory.theorem2-proven": theorem2_proven,
    "theory.atlas": atlas,
    "theory.float-bound": float_bound,
}

"""`check_construction`: the conformance suite every construction passes (STYLE.md; DESIGN.md, theory).

Properties, each reported by name:
- shapes: the network, its inputs and every block output have the shapes of Definitions 1-7;
- immutable_rows: no block changes rows 2-4 (interaction vector and constant; the paper's rows 3-5);
- exact: in exact arithmetic the blocks compute the claim, compared with ==;
- kappa: the measured max |θ| of heads and FFNs is at most the paper's stated bound;
- resources: measured L_T, m, L_FFN are at most the stated ones, and l is the stated l;
- backends: the float64 backend agrees with the exact one on the same inputs, block by block and entry by
  entry, within the derived bound of `float_error.blockwise` (a running error analysis of each block).

`verify` adds the construction's accuracy claim (max |T - f| <= ε) and, for a float64 claim (the paper's
sinusoidal vectors), the tolerance FLOAT_CLAIM_TOL; `construction_report` is the report of one building block
(`tmcheck lemma`) around that verdict.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tmcheck.theory.backends import run_blocks
from tmcheck.theory.construction import Construction
from tmcheck.theory.network import D_EMBD, FIXED

PROPERTIES = ("shapes", "immutable_rows", "exact", "kappa", "resources", "backends")
# A claim evaluated in float64 with the paper's own interaction vectors (no exact network to compare with):
# the construction holds in float64 when its error is below this.
FLOAT_CLAIM_TOL = 1e-9


class ConstructionCheckError(AssertionError):
    """A construction failed one or more properties of the conformance suite."""


@dataclass
class CheckReport:
    name: str
    results: dict[str, tuple[bool, str]] = field(default_factory=dict)  # property -> (passed, detail)

    @property
    def ok(self) -> bool:
        return all(p for p, _ in self.results.values())

    @property
    def failed(self) -> list[str]:
        return [k for k, (p, _) in self.results.items() if not p]

    def raise_on_failure(self) -> CheckReport:
        if not self.ok:
            detail = "; ".join(f"{k}: {self.results[k][1]}" for k in self.failed)
            raise ConstructionCheckError(f"{self.name} fails {', '.join(self.failed)} ({detail})")
        return self

    def as_dict(self) -> dict:
        return {
            "name": self.name,
            "ok": self.ok,
            "results": {k: {"passed": p, "detail": d} for k, (p, d) in self.results.items()},
        }


def _run(net, H, backend: str, trace: bool = False):
    """The blocks on H: the structured pass (`fast_eval`, one score per proven-sparse head, with its
    domain hypothesis checked) when the network records an interaction pattern, else the dense one."""
    if "interaction_pattern" in net.meta:
        from tmcheck.theory.fast_eval import run_structured

        out = run_structured(net, H, backend, trace=trace)
        return out if trace else out[-1]
    return run_blocks(net.blocks, H, backend, trace=trace)


def _cols(c: Construction, l: int):
    return slice(None) if c.compare_cols is None else c.compare_cols(l)


def check_construction(
    c: Construction,
    rng: np.random.Generator,
    n_inputs: int = 16,
    backends=("exact", "float64"),
    measured=None,
) -> CheckReport:
    """Run every property on n_inputs drawn from the claim's domain; never raises on a failed property.
    `measured`: the network's resources when the caller has them already."""
    rep = CheckReport(c.name)
    net, l = c.network, c.network.l
    H = c.sample_inputs(rng, n_inputs)
    shape_ok = H.shape == (n_inputs, D_EMBD, l) and net.PE.shape == (D_EMBD, l)
    states = _run(net, H, "exact", trace=True)
    want = c.expected(H)
    shape_ok = shape_ok and want.shape == H.shape and all(s.shape == H.shape for s in states)
    rep.results["shapes"] = (bool(shape_ok), f"inputs {H.shape}, {len(states) - 1} block outputs")
    if not shape_ok:
        return rep
    moved = [i for i in range(1, len(states)) if not (states[i][:, FIXED] == states[i - 1][:, FIXED]).all()]
    rep.results["immutable_rows"] = (
        not moved,
        f"blocks changing rows 2-4: {moved}" if moved else "rows 2-4 never change",
    )
    rows, cols = list(c.compare_rows), _cols(c, l)
    got = states[-1]
    bad = np.argwhere(got[:, rows][..., cols] != want[:, rows][..., cols])
    rep.results["exact"] = (
        len(bad) == 0,
        f"{n_inputs} inputs equal the claim exactly"
        if len(bad) == 0
        else f"{len(bad)} entries differ, first (input, row, col) {tuple(bad[0])}",
    )
    res = c.resources() if measured is None else measured
    if c.stated_kappa_bound is None:
        rep.results["kappa"] = (True, f"measured {float(res.kappa_blocks):.6g}; no bound stated")
    else:
        ok = res.kappa_blocks <= c.stated_kappa_bound
        rep.results["kappa"] = (
            bool(ok),
            f"measured {float(res.kappa_blocks):.6g} vs stated {float(c.stated_kappa_bound):.6g}",
        )
    over = [k for k in ("L_T", "m", "L_FFN") if k in c.stated_resources and getattr(res, k) > c.stated_resources[k]]
    if "l" in c.stated_resources and res.l != c.stated_resources["l"]:
        over.append("l")
    rep.results["resources"] = (not over, f"exceeds stated: {over}" if over else "L_T, m, L_FFN, l within stated")
    if "float64" in backends and "exact" in backends:
        rep.results["backends"] = _backends(net, H, states)
    return rep


def _backends(net, H, exact_states) -> tuple[bool, str]:
    """float64 against exact on the same inputs, block by block within `float_error.blockwise`."""
    from tmcheck.theory.float_error import blockwise

    fl = _run(net, H, "float64", trace=True)
    rows = blockwise(net, net.blocks, fl, exact_states)
    err = max((r["max_error"] for r in rows), default=0.0)
    bad = [r for r in rows if not r["ok"]]
    if bad:
        r = bad[0]
        got, tol = r["at_first_bad"]
        return False, (
            f"block {r['block']}: |float64 - exact| = {got:.3g} at (input, row, token) {r['first_bad']} exceeds "
            f"the derived bound {tol:.3g}"
        )
    ratio = max((r["max_error"] / r["max_bound"] for r in rows if r["max_bound"] > 0), default=0.0)
    return True, (
        f"max |float64 - exact| = {err:.3g}, every block within its derived bound (largest error/bound {ratio:.3g})"
    )


def verify(
    c: Construction,
    trials: int,
    exact: bool = True,
    seed: int = 0,
    error: float | None = None,
    eps: float | None = None,
    extra_ok: bool = True,
    measured=None,
) -> dict:
    """The verdict every theory command prints: check_construction over `trials` inputs (with
    exact=False the claim is also checked in float64 to FLOAT_CLAIM_TOL), and, where the construction claims
    an accuracy, the measured error against ε. HOLDS when every property passes and error <= ε."""
    rng = np.random.default_rng(seed)
    rep = check_construction(c, rng, n_inputs=trials, measured=measured)
    out = {"check": rep.as_dict(), "ok": rep.ok and extra_ok}
    if not exact:
        H = c.sample_inputs(rng, trials)
        err = float(np.max(np.abs(_run(c.network, H, "float64") - np.vectorize(float)(c.expected(H)))))
        out.update(float_error=err, ok=out["ok"] and err <= FLOAT_CLAIM_TOL)
    if eps is not None:
        out.update(error=error, eps=eps, within_eps=bool(error <= eps))
        out["ok"] = out["ok"] and out["within_eps"]
    out["verdict"] = "HOLDS" if out["ok"] else "FAILS"
    out["failed"] = rep.failed + ([] if eps is None or out["within_eps"] else ["error > ε"])
    return out


def measured_resources(c: Construction) -> dict:
    """The resources measured from a construction's weights, as a building block's report lists them
    (kappa over the heads and FFNs only: the embedding is the standalone network's, not the lemma's)."""
    r = c.resources()
    return {"l": r.l, "m": r.m, "L_T": r.L_T, "L_FFN": r.L_FFN, "w_FFN": r.w_FFN, "kappa": r.kappa_blocks}


def construction_report(
    c: Construction, trials: int, exact: bool = True, extra: dict | None = None, extra_ok: bool = True
) -> dict:
    """What `tmcheck lemma` reports about one building block (Lemmas 3-7): its claim, constants, stated and
    measured resources, `verify`'s verdict over `trials` inputs in the chosen arithmetic, then `extra` (what
    the lemma adds); extra_ok (a further float64 claim, e.g. the sinusoidal head's) joins the verdict."""
    res = verify(c, trials, exact, extra_ok=extra_ok)
    return {
        "name": c.name,
        "paper": c.paper,
        "claim": c.claim,
        "constants": c.constants,
        "stated_kappa_bound": c.stated_kappa_bound,
        "stated_resources": c.stated_resources,
        "measured": measured_resources(c),
        "trials": trials,
        "backend": "exact" if exact else "float64",
        **res,
        **(extra or {}),
    }


def verdict_lines(rep: dict) -> list[str]:
    """What a theory command prints about its verdict (`verify`'s keys in `rep`): a line per failed property,
    then the verdict with the properties checked and the accuracy claim."""
    lines = [f"check {k} FAILS: {d['detail']}" for k, d in rep["check"]["results"].items() if not d["passed"]]
    why = "" if rep["ok"] else f" ({', '.join(rep['failed'])})"
    sup = rep.get("sup_error")
    how = f" ({sup['kind']}: {sup['method']})" if sup else ""
    lines.append(
        f"verdict: {rep['verdict']}{why}: check_construction ({', '.join(rep['check']['results'])}) "
        f"and max |T - f| <= ε{how}"
    )
    return lines


def report_json(rep: dict) -> dict:
    """A theory report without its Python objects (the network, the build plan): what --json prints."""
    return {k: v for k, v in rep.items() if k not in ("network", "plan")}

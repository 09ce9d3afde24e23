"""No corrected side is an identity: every HOLDS-AFTER-CORRECTION obligation's corrected claim breaks when the
construction it is evaluated on is broken on purpose.

Each entry names the tmcheck.theory function the corrected side computes with and a deliberately broken
replacement (monkeypatch). Unbroken, the corrected claim holds on every witness; broken, at least one corrected
witness breaks (or the check cannot run). Where the check takes its points as an argument, random points of its
domain are tried too (`RANDOM`), unbroken and broken.
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction as F

import numpy as np
import pytest

from tmcheck.proofs_check import registry
from tmcheck.theory import backends, bounds, heads, sparse, targets
from tmcheck.theory.lemmas import addition, gating, parallel, theorem2
from tmcheck.theory.lemmas import replace as replace_module
from tmcheck.theory.spec import Lemma1Layout


def _scaled_threshold(factor):
    orig = heads.threshold

    def broken(*a, **k):
        th = orig(*a, **k)
        return type(th)(**{**th.__dict__, "C": th.C * factor(a)})

    return broken


def _shifted_block_constant(field, delta):
    orig = bounds.block_constants

    def broken(c, log_M_in):
        bc = orig(c, log_M_in)
        return dataclasses.replace(bc, **{field: getattr(bc, field) - delta})

    return broken


def _no_residual(blk, H, be, budget):
    """A block whose FFN does not add its input back: FFN(MHA(H) + H) alone (the slip of lemma1.residual_subtraction,
    made in the backend)."""
    A = backends.mha(blk.heads, H, be, budget)
    Z = H if A is None else be.add(A, H)
    return be.tidy(backends.ffn(blk.ffn, Z, be) if blk.ffn else Z)


def _one_head_more(blk):
    blk.interactions = list(blk.interactions) + list(blk.interactions[:1])
    return blk


def _psi_ramp(N):
    W1, b1, o0, o1 = ORIG["psi_ffn_layers"](N)
    return W1, b1, [1, -1, 0, 0, 0], o1  # a ramp, not the trapezoid


ORIG = {"psi_ffn_layers": sparse.psi_ffn_layers}

# obligation -> (object, attribute, replacement built from the original)
BREAKERS = {
    "lemma1.choice_of_N": (targets, "paper_N", lambda f: lambda d, H, b, e: f(d, H, b, e) - 1),
    "lemma1.error_chain": (sparse, "psi_scale", lambda f: lambda N: F(3 * (N - 1), 2)),
    "lemma1.grid_centers": (sparse, "grid_points", lambda f: lambda N: [t + F(1, N - 1) for t in f(N)]),
    "lemma1.pou_scale": (sparse, "psi_scale", lambda f: lambda N: 3 * N),
    "lemma1.product_tree": (
        sparse,
        "product_levels",
        lambda f: lambda *a: [[it for it in level if it.t1 != it.t2] for level in f(*a)],
    ),
    "lemma1.psi_partition_of_unity": (sparse, "psi_ffn_layers", lambda f: _psi_ramp),
    "lemma1.residual_subtraction": (sparse, "shift_row0_ffn", lambda f: lambda shift: f(shift + F(1, 2))),
    "lemma1.step2_kernel": (
        sparse,
        "psi_interactions",
        lambda f: (
            lambda z, N, base: [
                dataclasses.replace(it, K_data=(sparse.kernel_row(1, 1 - F(j + 1, N - 1)), sparse.ZERO))
                for it, j in zip(f(z, N, base), [j for _ in z for j in range(N)], strict=True)
            ]
        ),
    ),
    "lemma1.token_count": (Lemma1Layout, "l", lambda f: property(lambda self: self.prod_base + self.N**self.d)),
    "lemma1.token_index_final": (
        sparse,
        "fvalue_interactions",
        lambda f: lambda *a: [dataclasses.replace(it, t2=it.t2 + 1) for it in f(*a)],
    ),
    "lemma1.token_index_s": (
        sparse,
        "psi_interactions",
        lambda f: lambda z, N, base: [dataclasses.replace(it, t1=it.t1 + 1) for it in f(z, N, base)],
    ),
    "lemma2.attention_difference": (bounds, "block_constants", lambda f: _shifted_block_constant("log_attn_diff", 3)),
    "lemma2.block_lipschitz": (bounds, "block_constants", lambda f: _shifted_block_constant("log_block_lip", 1)),
    "lemma2.block_output_bound": (bounds, "block_constants", lambda f: _shifted_block_constant("log_M_out", 1)),
    "lemma2.block_perturbation_sum": (
        bounds,
        "block_constants",
        lambda f: _shifted_block_constant("log_block_pert", 3),
    ),
    "lemma2.composition_exponents": (
        bounds,
        "corrected_lipschitz",
        lambda f: lambda c, *a: f(dataclasses.replace(c, m=1), *a),
    ),
    "lemma2.embedding_bound": (bounds, "input_bound", lambda f: lambda c: float(c.M)),
    "lemma2.ffn_lipschitz": (bounds, "block_constants", lambda f: _shifted_block_constant("log_ffn_lip", 1)),
    "lemma2.ffn_output_bound": (bounds, "log_ffn_output_bound", lambda f: lambda c, z: f(c, z) - 1),
    "lemma2.ffn_perturbation": (bounds, "log_ffn_perturbation", lambda f: lambda c, z: f(c, z) - 1),
    "lemma2.grid_count": (
        bounds,
        "log_covering_corrected",
        lambda f: lambda c, delta: f(c, delta) / 2,  # half the parameters' exponent
    ),
    "lemma2.lipschitz_constant": (
        bounds,
        "corrected_lipschitz",
        lambda f: lambda c, *a: dataclasses.replace(f(c, *a), log_CT=f(c, *a).log_CT - 5),
    ),
    "lemma2.mha_output_bound": (bounds, "block_constants", lambda f: _shifted_block_constant("log_M_Z", 1)),
    "lemma2.parameter_count": (bounds, "n_params", lambda f: lambda c: 10 * f(c)),
    "lemma3.case2b_rotation": (heads, "rotation", lambda f: lambda u, w: f(u, w).T),
    "lemma4.gated_tokens": (gating, "gating_C", lambda f: lambda *a, **k: f(*a, **k) / 2),
    "lemma5.kernels": (
        addition,
        "addition_kernels",
        lambda f: lambda c, M: ([[1, 0, 0, 0, 0], [0, 0, 0, 0, 1]], [[0, 0, 0, 0, 1], [0, 0, 0, 0, M - c]]),
    ),
    "lemma5.weight_bound": (heads, "threshold", lambda f: _scaled_threshold(lambda a: a[0])),
    "lemma7.duplication": (
        replace_module,
        "replace_ffn",
        lambda f: lambda src=1, dst=0, arithmetic="exact": f(dst, src, arithmetic),
    ),
    "lemma7.gating_composition": (parallel, "output_bound", lambda f: lambda ffn, Mz: [v / 8 for v in f(ffn, Mz)]),
    "lemma7.heads_reindexed": (heads, "threshold", lambda f: _scaled_threshold(lambda a: F(9, 10))),
    "lemma7.mha": (
        heads,
        "interaction_head",
        lambda f: lambda l, t1, t2, row, *a, **k: f(l, t1, t2, 1 - row if row in (0, 1) else row, *a, **k),
    ),
    "lemma7.statement": (parallel, "union", lambda f: lambda parts, name="": _one_head_more(f(parts, name))),
    "theorem2.deep_ramp": (
        theorem2,
        "psi_indicator_ffn",
        lambda f: lambda N, S_I, r2, L, deep=True: f(N, S_I, r2, L + 1, deep),
    ),
    "theorem2.depth_vs_accuracy": (
        bounds,
        "theorem2_resources",
        lambda f: lambda *a, **k: {**f(*a, **k), "L_T": f(*a, **k)["L_T"] + math.ceil(math.log(1 / a[2]))},
    ),
    "theorem2.error_decomposition": (sparse, "shift_row0_ffn", lambda f: lambda shift: f(shift + F(1, 2))),
    "theorem2.final_product": (
        sparse,
        "fvalue_interactions",
        lambda f: lambda fvals, base, Fn, R: f(fvals, base, Fn, R / 4),
    ),
    "theorem2.projection_head": (backends, "block", lambda f: _no_residual),
}

# random points for the checks that take their points as an argument
RANDOM = {
    "lemma1.psi_partition_of_unity": lambda rng: {
        "points": tuple((int(N), F(int(rng.integers(0, 97)), 96)) for N in rng.integers(2, 7, 20))
    },
    "lemma1.error_chain": lambda rng: {
        "points": tuple((int(N), F(int(rng.integers(0, 97)), 96)) for N in rng.integers(3, 6, 20))
    },
    "lemma2.grid_count": lambda rng: {
        "points": tuple(
            (F(int(k)), F(1, int(e))) for k, e in zip(rng.integers(1, 4, 6), rng.integers(2, 7, 6), strict=True)
        )
    },
    "lemma2.attention_difference": lambda rng: {"kappas": tuple(F(int(k), 10) for k in rng.integers(1, 30, 4))},
    "lemma2.mha_output_bound": lambda rng: {"Ms": tuple(F(int(k), 4) for k in rng.integers(1, 16, 4))},
}

OBLIGATIONS = {o.id: o for o in registry.all_obligations()}
CORRECTED = sorted(oid for oid, o in OBLIGATIONS.items() if registry.run(o).label == registry.Verdict.CORRECTED.value)


def test_every_corrected_obligation_has_a_breaker():
    assert sorted(set(CORRECTED) - set(BREAKERS)) == []
    assert sorted(set(BREAKERS) - set(CORRECTED)) == []


def _corrected_broken(oid, **params) -> int | None:
    """The number of corrected witnesses that break, or None when the check cannot run."""
    try:
        ev = OBLIGATIONS[oid].check(**params)
    except Exception:  # a broken construction may not even run: the check depends on it
        return None
    return sum(not w.holds for w in ev.corrected)


def _break(monkeypatch, oid):
    """Replace the function in its module and wherever a tmcheck module imported it by name."""
    import sys

    obj, attr, make = BREAKERS[oid]
    orig = obj.__dict__[attr] if isinstance(obj, type) else getattr(obj, attr)
    new = make(orig.fget if isinstance(orig, property) else orig)
    monkeypatch.setattr(obj, attr, new)
    if not isinstance(obj, type):
        for name, mod in list(sys.modules.items()):
            if name.startswith("tmcheck.") and mod is not obj and getattr(mod, attr, None) is orig:
                monkeypatch.setattr(mod, attr, new)


@pytest.mark.parametrize("oid", sorted(BREAKERS))
def test_corrected_side_breaks_on_a_broken_construction(oid, monkeypatch):
    params = [{}] + ([RANDOM[oid](np.random.default_rng(0))] if oid in RANDOM else [])
    for p in params:
        assert _corrected_broken(oid, **p) == 0, ("the corrected claim must hold unbroken", p)
    _break(monkeypatch, oid)
    got = [_corrected_broken(oid, **p) for p in params]
    assert all(g is None or g > 0 for g in got), f"{oid}: the corrected side still holds on a broken construction"

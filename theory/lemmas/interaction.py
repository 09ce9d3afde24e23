"""Interaction Lemma (Appendix G, Lemma 3) as a construction: one block B(H) = H + A(H) in which token t1
reads token t2, its float64 error, and what `tmcheck lemma interaction` shows.

The head itself, its corrected proof, the exact threshold C* (`minimal_C`), the paper's C (`paper_C`) and
the witness `critical_input` live in `theory.heads`, the base that `theory.sparse` composes. Indices are
0-based: token t here is the paper's token t+1, row r the paper's row r+1.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from tmcheck.theory.backends import run_blocks
from tmcheck.theory.check import FLOAT_CLAIM_TOL
from tmcheck.theory.construction import Construction
from tmcheck.theory.heads import (
    check_indices,
    critical_input,
    data_kernels,
    domain_bound,
    head_value,
    interaction_head,
    kappa_data,
    paper_C,
    threshold,
)
from tmcheck.theory.lemmas import sample_structured, standalone_network
from tmcheck.theory.network import Block, interaction_vectors, structured_positional
from tmcheck.theory.sparse import MINIMAL, Interaction, SparseBlock, realize


def interaction(l: int, t1: int, t2: int, row: int, Q_data, K_data, M, C=None, data_rows=(0, 1)) -> Construction:
    """Lemma 3 as a one-block construction B(H) = H + A(H) with C = C* (exact) unless C is given.

    Claim: on structured H with data rows `data_rows` in [-M, M] (other data rows 0), B(H) equals H
    except entry (row, t1), which gains σ(<Q^B h_t1, K^B h_t2>). The threshold is computed for the
    whole box ||H||_inf <= M, so it is valid on any such domain.
    """
    check_indices(l, t1, t2)
    if row not in (0, 1):
        raise ValueError(f"the output row must be a data row (0 or 1), got {row}; rows 2-4 are immutable")
    M = domain_bound(M)
    Qb, Kb = data_kernels(Q_data, K_data)
    th = threshold(l, t1, t2, Qb, Kb, M)
    kernels = tuple(tuple(r) for r in Qb), tuple(tuple(r) for r in Kb)
    block = SparseBlock([Interaction(t1, t2, row, *kernels, C=MINIMAL if C is None else Fraction(C))], (), M)
    blocks, _ = realize([block], l, "exact")
    C = th.C if C is None else Fraction(C)
    kap = kappa_data(Qb, Kb)
    pC = paper_C(l, kap, M)
    crit = critical_input(l, t1, t2, Qb, Kb, M)

    def sample(rng, n):
        H = sample_structured(rng, n, l, M, data_rows)
        if crit is not None and n > 0:
            H[0] = crit[0]
        return H

    def expected(H):
        out = np.array(H, dtype=object)
        out[:, row, t1] = out[:, row, t1] + head_value(out, t1, t2, Qb, Kb)
        return out

    return Construction(
        name="lemma3.interaction",
        paper="Appendix G, Lemma 3",
        network=standalone_network(l, blocks, {"name": "lemma3.interaction", "t1": t1, "t2": t2, "row": row}),
        claim=f"B(H) = H + σ(<Q^B h_{t1}, K^B h_{t2}>) e_{row} e_{t1}^T for structured H with ||H||_inf <= {M} "
        "(0-based)",
        sample_inputs=sample,
        expected=expected,
        constants={
            "C": C,
            "C_min": th.C,
            "C_paper": pC,
            "critical_pair": th.pair,
            "M": M,
            "kappa_data": kap,
            "t1": t1,
            "t2": t2,
            "row": row,
            "Q_data": Qb,
            "K_data": Kb,
            "interaction_vectors": interaction_vectors(l, "exact"),
        },
        stated_kappa_bound=max(Fraction(1), kap, pC),
        stated_resources={"L_T": 1, "m": 1, "L_FFN": 0, "l": l},
        sparse_blocks=[block],
    )


# --------------------------------------------------------------------------------------------
# float64 with the paper's sinusoidal vectors


def float_error_inputs(l: int, t1: int, t2: int, Q_data, K_data, M, rng: np.random.Generator, n_random: int = 1):
    """The inputs `float_error` measures on (1 + n_random, 5, l): first the critical H of the float64 threshold
    (the sinusoidal vectors' maximiser, data 0 elsewhere), then n_random H with data uniform in [-M, M]."""
    Qb, Kb = data_kernels(Q_data, K_data, "float64")
    th = threshold(l, t1, t2, Qb, Kb, float(M), "float64")
    H = np.repeat(structured_positional(l, "float64")[None], 1 + n_random, axis=0)
    H[:, 0:2, :] = 0.0
    if th.pair is not None:
        H[0, 0:2, th.pair[0]] = th.x_t
        if th.x_k is not None:
            H[0, 0:2, th.pair[1]] = th.x_k
    H[1:, 0:2, :] = rng.uniform(-float(M), float(M), size=(n_random, 2, l))
    return H


def float_error(l: int, t1: int, t2: int, Q_data, K_data, M, C, rng: np.random.Generator, n_random: int = 1) -> float:
    """max |B(H) - claim| in float64 with the sinusoidal I_t, over `float_error_inputs`: the critical H and
    n_random random H.

    The critical H is the maximiser of `threshold` for the sinusoidal vectors: there the leak term
    is 0 up to rounding, so this is where cancellation of b against C (1 - c c') shows first.
    """
    Qb, Kb = data_kernels(Q_data, K_data, "float64")
    head = interaction_head(l, t1, t2, 0, Qb, Kb, float(C), "float64")
    H = float_error_inputs(l, t1, t2, Q_data, K_data, M, rng, n_random)
    out = run_blocks([Block((head,))], H, "float64")
    want = H.copy()
    want[:, 0, t1] += head_value(H, t1, t2, Qb, Kb)
    return float(np.max(np.abs(out - want)))


def largest_float_l(
    Q_data, K_data, M, tol: float = 1e-9, which: str = "minimal", l_max: int = 4096, seed: int = 0
) -> dict:
    """The largest l (doubling, then bisection) at which the float64 head holds to tol, for t1 = l/3, t2 = 2l/3.

    which = "minimal" uses the sinusoidal vectors' own threshold C*, "paper" the proof's C.
    Returns {"l": largest good l, "first_bad": smallest failing l found (None if none up to l_max), "errors": {l: err}}.
    """
    kap = kappa_data(Q_data, K_data)
    errors: dict[int, float] = {}

    def err(l: int) -> float:
        if l not in errors:
            t1, t2 = l // 3, (2 * l) // 3
            C = (
                threshold(l, t1, t2, Q_data, K_data, float(M), "float64").C
                if which == "minimal"
                else float(paper_C(l, kap, M))
            )
            errors[l] = float_error(l, t1, t2, Q_data, K_data, M, C, np.random.default_rng(seed))
        return errors[l]

    good, bad, l = 1, None, 2
    while l <= l_max:
        if err(l) > tol:
            bad = l
            break
        good, l = l, 2 * l
    while bad is not None and bad - good > 1:
        mid = (good + bad) // 2
        if err(mid) > tol:
            bad = mid
        else:
            good = mid
    return {"l": good, "first_bad": bad, "errors": dict(sorted(errors.items())), "tol": tol, "C": which}


# --------------------------------------------------------------------------------------------
# what `tmcheck lemma interaction` shows


def default_kernels(kappa) -> tuple[list, list]:
    """Q^B = κ [e_0; e_1 + e_4], K^B = κ [e_1; e_0]: b(t, k) = κ^2 (x_t0 x_k1 + (x_t1 + 1) x_k0)."""
    Q = [[kappa, 0, 0, 0, 0], [0, kappa, 0, 0, kappa]]
    K = [[0, kappa, 0, 0, 0], [kappa, 0, 0, 0, 0]]
    return Q, K


def interaction_extra(
    c: Construction, Q_data, K_data, M, trials: int, exact: bool, vectors: bool = False, pattern: bool = False
) -> tuple[dict, bool]:
    """What `tmcheck lemma interaction` adds to the construction's report, and the float64 verdict.

    With exact=False the paper's own vectors cos(tπ/2l), sin(tπ/2l) are checked at their own threshold C*
    (`threshold` in float64): their C*, their `float_error` over the critical input and `trials` random ones,
    and the verdict err <= FLOAT_CLAIM_TOL (the second value; True in exact arithmetic, where nothing is
    rounded). `vectors` adds the interaction vectors I_t of that arithmetic, `pattern` the non-zero entries
    (t, k) of the attention pattern on `pattern_input` (the lemma allows only (t1, t2)).
    """
    l, t1, t2 = c.network.l, c.constants["t1"], c.constants["t2"]
    extra, ok = {}, True
    if not exact:
        thf = threshold(l, t1, t2, Q_data, K_data, float(M), "float64")
        err = float_error(l, t1, t2, Q_data, K_data, M, thf.C, np.random.default_rng(0), trials)
        extra.update({"sinusoidal C*": thf.C, "sinusoidal float64 error": err})
        ok = err <= FLOAT_CLAIM_TOL
    if vectors:
        extra["interaction_vectors"] = interaction_vectors(l, "exact" if exact else "float64")
    if pattern:
        P = attention_pattern(c, pattern_input(c, Q_data, K_data))
        extra["pattern_nonzero"] = [[int(a), int(b)] for a, b in np.argwhere(P != 0)]
    return extra, ok


def attention_pattern(c: Construction, H: np.ndarray) -> np.ndarray:
    """σ(<Q h_t, K h_k>) for one H (5, l), the lemma's only head: (l[t], l[k]) exact."""
    head = c.blocks[0].heads[0]
    S = H.T @ head.Q.T @ head.K @ H  # (t, k): <Q h_t, K h_k>
    return np.vectorize(lambda v: max(v, 0), otypes=[object])(S)


def pattern_input(c: Construction, Q, K) -> np.ndarray:
    """Of 16 random structured inputs, the one with the largest σ(<Q^B h_t1, K^B h_t2>) (5, l)."""
    H = c.sample_inputs(np.random.default_rng(0), 16)
    return H[int(np.argmax(head_value(H, c.constants["t1"], c.constants["t2"], Q, K)))]

"""The corrected covering bound (Lemma 2, Appendix F.2) at depths whose constants leave float range.

The hidden states' log bound triples per block, so past about 640 blocks it is +inf: the bound is then
+inf (never nan), and an astronomically large L_T (the CLI accepts any positive integer) costs no more
than the blocks before the overflow. Found by the CLI fuzz test: `bound covering --LT 99999999999999999999`
ran past 30 s, and depths of 644 to ~10^6 printed nan."""

import math
import time

from tmcheck.theory import bounds


def cls(L_T: int) -> bounds.TransformerClass:
    return bounds.TransformerClass(L_T=L_T, L_FFN=2, w=16, l=8, d_embd=5, m=2, kappa=1.0, M=1.0, D=8)


def test_log_sum_exp_with_an_infinite_term_is_infinite_not_nan():
    assert bounds.log_sum_exp(math.inf, 1.0) == math.inf
    assert bounds.log_sum_exp(math.inf, math.inf) == math.inf
    assert bounds.log_sum_exp(-math.inf, -math.inf) == -math.inf
    assert bounds.log_sum_exp(0.0, 0.0) == math.log(2.0)


def test_a_finite_depth_stays_finite_and_an_overflowing_one_is_infinite():
    shallow = bounds.corrected_lipschitz(cls(500))
    assert math.isfinite(shallow.log_CT) and len(shallow.blocks) == 500
    for L_T in (800, 10**7, 10**20):
        t0 = time.thread_time()  # CPU time of this thread: a loaded machine's waits do not count
        deep = bounds.corrected_lipschitz(cls(L_T))
        assert time.thread_time() - t0 < 5.0  # mutation: no early stop walks all L_T blocks
        assert deep.log_CT == math.inf and deep.log_M_final == math.inf
        assert len(deep.blocks) < 700
    assert bounds.log_covering_corrected(cls(10**20), 1e-3) == math.inf

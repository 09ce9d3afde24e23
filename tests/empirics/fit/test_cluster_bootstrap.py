"""The cluster bootstrap of `empirics.fit.intervals` resamples seeds WITH replacement within each size.

Drawn without replacement, each resample is a permutation of the seeds of each size: the same multiset of
points, so every refit gives the same exponent and the percentile interval collapses to a point (issue #41).
"""

from __future__ import annotations

import numpy as np
import pytest

from tmcheck.empirics.fit import intervals

SIZES = np.repeat([1e3, 3e3, 1e4, 3e4, 1e5], 4)  # 5 sizes, 4 seeds each


def noisy_law(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return 2.0 * SIZES**-0.3 * np.exp(0.05 * rng.standard_normal(SIZES.size))


def cluster(Y, rng=0):
    return intervals.interval_batch(
        SIZES, Y, form="loglog", methods=("profile", "cluster"), bootstrap=200, rng=rng, keep_samples=True
    )


class WithoutReplacement:
    """A generator whose `integers(0, k, shape)` is a permutation of range(k) along the last axis: the mutant."""

    def __init__(self, rng):
        self._rng = rng

    def integers(self, low, high, size):
        base = np.broadcast_to(np.arange(low, high), size)
        return self._rng.permuted(base, axis=-1)

    def __getattr__(self, name):
        return getattr(self._rng, name)


def assert_cluster_intervals_have_width(out) -> None:
    width = out["cluster"]["hi"] - out["cluster"]["lo"]
    profile = out["profile"]["hi"] - out["profile"]["lo"]
    assert np.all(width > 0.2 * profile)
    # 200 resamples of 4 seeds from each of 5 sizes: almost all differ as multisets, so do their exponents
    assert all(len(np.unique(np.round(row, 12))) > 150 for row in out["cluster"]["samples"])


def test_cluster_intervals_have_width():
    assert_cluster_intervals_have_width(cluster(np.stack([noisy_law(s) for s in range(3)])))


def test_without_replacement_mutant_collapses_and_is_caught(monkeypatch):
    Y = np.stack([noisy_law(s) for s in range(3)])
    real = np.random.default_rng
    monkeypatch.setattr(intervals.np.random, "default_rng", lambda seed=None: WithoutReplacement(real(seed)))
    out = cluster(Y)
    assert np.all(out["cluster"]["hi"] - out["cluster"]["lo"] < 1e-9)  # every resample the same multiset
    with pytest.raises(AssertionError):
        assert_cluster_intervals_have_width(out)

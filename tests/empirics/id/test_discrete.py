"""I3D (empirics/id/discrete.py) on data of known dimension: uniform points of a d-dimensional integer
box, embedded in more coordinates by zero columns and a permutation (an L1 isometry). Counted from the
points at least lk from every face, whose balls the box does not cut, the estimate is d within 0.05;
over all points the cut balls bias it down (d = 2: within 0.1; d = 3 in a side of 40: 2.84). The
lattice count it rests on equals direct enumeration; a continuous-space slip misses; duplicates and
the bootstrap follow MLE's rules; it is registered once."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

from tmcheck.empirics.id import I3D, estimate_id
from tmcheck.empirics.id.discrete import dimension_from_ratio, lattice_volume


def lattice_box(d: int, side: int, n: int, extra: int = 3, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    P = np.concatenate([rng.integers(0, side, size=(n, d)), np.zeros((n, extra), dtype=np.int64)], axis=1)
    return P[:, rng.permutation(d + extra)]


BOXES = {2: (lattice_box(2, 120, 5000), 120), 3: (lattice_box(3, 40, 5000), 40)}


def test_lattice_volume_counts_the_points_of_the_l1_ball():
    for d, r in itertools.product((1, 2, 3, 4), (1, 2, 4)):
        grid = np.array(list(itertools.product(range(-r, r + 1), repeat=d)))
        assert lattice_volume(r, d) == pytest.approx((np.abs(grid).sum(axis=1) <= r).sum(), rel=1e-12)


@pytest.mark.parametrize("d", [2, 3])
def test_known_dimension_is_found(d):
    X, side = BOXES[d]
    est = I3D(bootstrap=100, seed=0).fit(X)
    inner = ((X >= 4) & (X < side - 4)).sum(axis=1) == d  # balls of radius lk = 4 inside the box
    n, k = est.counts_[inner].sum(axis=0)
    assert abs(dimension_from_ratio(n / k, 2, 4, X.shape[1]) - d) < 0.05
    assert d - 0.2 < est.dimension_ < d + 0.05  # all points: the cut balls bias it down
    lo, hi = est.ci_
    assert lo <= est.dimension_ <= hi and hi - lo < 0.2


def test_the_check_can_fail():
    """The continuous-space ratio (ln / lk)^d in place of the lattice count misses d = 2 by more than 0.1."""
    n, k = I3D().fit(BOXES[2][0]).counts_.sum(axis=0)
    assert abs(np.log(n / k) / np.log(2 / 4) - 2) > 0.1
    assert abs(dimension_from_ratio(n / k, 2, 4, 5) - 2) < 0.1


def test_duplicates_bootstrap_and_refusals():
    X = np.unique(BOXES[2][0][:1500], axis=0)  # no repeated row
    Xd = np.concatenate([X, X[:7]])
    kept = I3D().fit(Xd)
    assert kept.n_used_ == len(Xd) and kept.counts_[len(X) :, 1].min() >= 1  # a repeat is a neighbour at 0
    est = I3D(duplicates="remove").fit(Xd)
    assert est.n_duplicates_ == 7 and est.dimension_ == I3D().fit(X).dimension_
    np.testing.assert_array_equal(est.dimension_pw_[est.representative_][len(X) :], est.dimension_pw_[:7])
    with pytest.raises(ValueError, match="repeat an earlier row"):
        I3D(duplicates="error").fit(Xd)
    with pytest.raises(ValueError, match="integer lattice"):
        I3D().fit(X + 0.5)
    with pytest.raises(ValueError, match="ln < lk"):
        I3D(ln=4, lk=4).fit(X)
    with pytest.raises(ValueError, match="rtol does not apply"):
        I3D(rtol=1e-3).fit(X)


def test_registered_once():
    X = BOXES[2][0][:1000]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = estimate_id(X, estimator="i3d", duplicates="keep")
    assert res.dimension == pytest.approx(I3D().fit(X).dimension_, abs=1e-12)

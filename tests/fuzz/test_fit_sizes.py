"""Bounds on what `tmcheck fit` reads (#43): a wide header, many distinct sizes, losses near overflow."""

from __future__ import annotations

import time

import numpy as np
import pytest
from typer.testing import CliRunner

from tmcheck.cli.main import app
from tmcheck.empirics.fit.intervals import seed_noise
from tmcheck.empirics.fit.table import read_table


def test_a_wide_header_is_read_in_linear_time(tmp_path):
    """10^5 columns: the duplicate-name check took 97 CPU-s when it counted each name in the whole header."""
    k = 100_000
    path = tmp_path / "wide.csv"
    path.write_text(",".join(f"c{i}" for i in range(k)) + "\n" + ",".join("1" for _ in range(k)) + "\n")
    t = time.process_time()
    cols, header = read_table(path)
    assert len(header) == k and time.process_time() - t < 5.0
    dup = tmp_path / "dup.csv"
    dup.write_text(",".join(f"c{i}" for i in range(k)) + ",c7\n" + ",".join("1" for _ in range(k + 1)) + "\n")
    with pytest.raises(ValueError, match="'c7' more than once"):
        read_table(dup)


def _onehot_noise(idx, Y):
    """The old one-hot formula, as the oracle on small inputs."""
    K, m = idx.max() + 1, Y.shape[1]
    ly = np.log(Y)
    onehot = np.eye(K)[idx]
    resid = ly - ((ly @ onehot) / onehot.sum(0)) @ onehot.T
    return np.sqrt((resid * resid).sum(1) / (m - K))


def test_seed_noise_by_group_means_equals_the_one_hot_formula():
    rng = np.random.default_rng(0)
    idx = rng.integers(0, 7, 40)
    idx[:7] = np.arange(7)
    Y = np.exp(rng.normal(size=(3, 40)))
    got, source = seed_noise(idx, Y)
    assert source == "seeds"
    np.testing.assert_allclose(got, _onehot_noise(idx, Y), rtol=1e-12)
    # the check can fail: a mean over the wrong groups
    assert not np.allclose(got, _onehot_noise(np.roll(idx, 1), Y), rtol=1e-6)


def test_seed_noise_with_tens_of_thousands_of_sizes_allocates_no_one_hot_matrix():
    """99,999 rows, 77,870 distinct sizes: the one-hot matrix was 45 GB; the group means are 1.2 MB."""
    import tracemalloc

    rng = np.random.default_rng(1)
    m, K = 99_999, 77_870
    idx = np.concatenate([np.arange(K), rng.integers(0, K, m - K)])
    Y = np.exp(rng.normal(size=(1, m)))
    tracemalloc.start()
    sigma, _ = seed_noise(idx, Y)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert np.isfinite(sigma).all() and peak < 50e6, peak


@pytest.mark.parametrize("scale", [1e300, 1e-300])
def test_losses_beyond_the_squares_range_are_refused_in_one_line(tmp_path, scale):
    path = tmp_path / "big.csv"
    rows = [f"{n},{scale * n**-0.3 * (1 + 0.01 * i)!r}" for n in (100, 300, 1000, 3000) for i in range(2)]
    path.write_text("n,loss\n" + "\n".join(rows) + "\n")
    res = CliRunner().invoke(app, ["fit", str(path), "--x", "n", "--coverage-reps", "20", "--bootstrap", "50"])
    assert res.exit_code == 2, res.output
    assert "rescale the column" in res.output and "Traceback" not in res.output
    assert len(res.output.strip().splitlines()) == 1
    # the bound is the fault's and no wider: the same table at scale 1 fits
    path.write_text("n,loss\n" + "\n".join(r.split(",")[0] + f",{float(r.split(',')[1]) / scale!r}" for r in rows))
    ok = CliRunner().invoke(app, ["fit", str(path), "--x", "n", "--coverage-reps", "20", "--bootstrap", "50"])
    assert ok.exit_code == 0, ok.output

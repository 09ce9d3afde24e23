"""The synthetic report's comparison with the trivial predictor and the baselines, per n (issue 26).

Known answers: the trivial predictor's MSE is the training mean of y against f on the split the run
trained on; the counts and statements follow the rows, and an edited row changes them."""

import numpy as np
import pytest

from tmcheck.empirics.report.synthetic import against_baselines, trivial_mses, tuned_table, versus_lines
from tmcheck.empirics.sweep.synthetic_preset import PRESETS as SYNTHETIC
from tmcheck.empirics.synthetic.problem import Experiment

P = SYNTHETIC["tiny"]


def rows_for(p, mse):
    """Data rows of every method at every (d, β, n, seed) of p, with test MSE mse(method, d, beta, n, seed)."""
    return [
        {"sweep": "data", "method": m, "d": d, "beta": b, "n": n, "seed": s, "test_mse": mse(m, d, b, n, s)}
        for d in p.dims
        for b in p.betas
        for n in p.ns
        for s in p.seeds
        for m in ("transformer", "knn", "krr")
    ]


def test_the_trivial_mse_is_the_training_mean_against_f_on_the_runs_split():
    rows = rows_for(P, lambda *a: 0.1)
    triv = trivial_mses(P, rows)
    d, b, n, s = P.dims[0], P.betas[0], P.ns[0], P.seeds[0]
    exp = Experiment(P.problem(d, b, P.noise))
    split = exp.split(n, max(P.ns), s, P.n_test, P.val_fraction, P.min_val)
    assert triv[(d, b, n, s)] == pytest.approx(np.mean((np.mean(split.y_train) - split.f_test) ** 2), rel=1e-12)
    # the target is normalised to variance 1: the training mean is about 1 from f
    assert all(0.5 < v < 2.0 for v in triv.values())
    # a split of another size gives another number (the key is not ignored)
    if len(P.ns) > 1:
        assert triv[(d, b, P.ns[0], s)] != triv[(d, b, P.ns[1], s)]


def test_counts_follow_the_rows_and_an_edited_row_flips_them():
    rows = rows_for(P, lambda m, *a: {"transformer": 0.2, "knn": 0.25, "krr": 0.3}[m])
    triv = trivial_mses(P, rows)
    versus = against_baselines(rows, triv)
    assert len(versus) == len(P.dims) * len(P.betas) * len(P.ns)
    assert all(e["below_trivial"] and e["seeds_below_trivial"] == len(P.seeds) for e in versus)
    assert all(e["ratio_to_better_baseline"] == pytest.approx(0.2 / 0.25) for e in versus)
    text = "\n".join(versus_lines(versus))
    k = len(P.dims) * len(P.betas)
    assert f"at every n in {k} of {k}" in text and "not below" not in text

    # mutation: one transformer run far above the trivial predictor at the first (d, β, n)
    d, b, n, s = P.dims[0], P.betas[0], P.ns[0], P.seeds[0]
    edited = [
        dict(r, test_mse=50.0)
        if (r["method"], r["d"], r["beta"], r["n"], r["seed"]) == ("transformer", d, b, n, s)
        else r
        for r in rows
    ]
    e0 = against_baselines(edited, triv)[0]
    assert (e0["d"], e0["beta"], e0["n"]) == (d, b, n)
    assert e0["seeds_below_trivial"] == len(P.seeds) - 1 and not e0["below_trivial"]
    text = "\n".join(versus_lines(against_baselines(edited, triv)))
    assert f"at every n in {k - 1} of {k}" in text and f"not below the trivial predictor at: d = {d}" in text


def test_the_tuned_table_lists_each_setting_and_the_presets_fields():
    p = SYNTHETIC["cpu-decide"].as_dict()
    table = tuned_table(p)
    assert table.count("\n") == 1 + len(p["tuned"])
    t = p["tuned"][0]
    assert f"| {t['d']} | {t['beta']:g} | {t['d_embd']:g} |" in table
    p["tuned"] = [dict(t, d_embd=None), *p["tuned"][1:]]  # a field left to the preset says so
    assert "(preset)" in tuned_table(p)

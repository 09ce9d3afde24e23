"""The synthetic study's tuning (tmcheck.empirics.sweep.tune): it never reads the test split, it is
a function of its seeds, and the tuned settings a preset carries are validated."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from tmcheck.empirics.sweep import tune as tuning
from tmcheck.empirics.sweep.kinds import get_preset
from tmcheck.empirics.sweep.tune import Store
from tmcheck.empirics.synthetic.problem import Experiment, Split

SETTINGS = tuning.TuneSettings(candidates=3, rungs=(10, 20), keep=(1,), data_seeds=(1000,), select_points=64)


def _preset():
    return get_preset("tiny", "synthetic").with_overrides(eval_every=10, patience=2, cooldown=10, schedule="plateau")


def _records(out: Path) -> dict:
    """The trial records without their wall times (the only part that may differ between equal runs)."""
    doc = json.loads((out / tuning.TRIALS).read_text())
    for table in ("trials", "baselines"):
        for r in doc[table]:
            r.pop("seconds")
    return doc


def _poison(monkeypatch) -> None:
    """A test split whose labels would reorder any selection that read them."""
    clean = Experiment.test_set

    def poisoned(self, n_test):
        X, f = clean(self, n_test)
        return X, -1000.0 * f + np.random.default_rng(7).standard_normal(len(f)) * 100

    monkeypatch.setattr(Experiment, "test_set", poisoned)


def _tune(out: Path) -> dict:
    return tuning.tune(out, _preset(), 1, 1.0, 40, SETTINGS)


def _tune_and_choose(out: Path) -> dict:
    """Two sizes tuned, then one setting chosen across them (each winner scored at the other size)."""
    _tune(out)
    tuning.tune(out, _preset(), 1, 1.0, 80, SETTINGS)
    return tuning.choose(out, _preset(), 1, 1.0)


def _selection_from_test(exp, n, data_seed, select_points, val_fraction, min_val):
    """A mutant selection_split that scores on the test split."""
    s = SELECTION_SPLIT(exp, n, data_seed, select_points, val_fraction, min_val)
    X, f = exp.test_set(select_points)
    return Split(s.X_train, s.y_train, s.X_val, s.y_val, X, f)


SELECTION_SPLIT = tuning.selection_split


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> tuple[Path, dict]:
    """One tuning of two sizes and the choice across them, shared by the tests that only read it."""
    out = tmp_path_factory.mktemp("clean")
    return out, _tune_and_choose(out)


def _trials(out: Path, n: int) -> list[dict]:
    return [r for r in _records(out)["trials"] if r["n"] == n]


def test_selection_never_reads_the_test_split(tmp_path, monkeypatch, clean):
    out, chosen = clean
    _poison(monkeypatch)
    poisoned = _tune_and_choose(tmp_path)
    assert poisoned["setting"] == chosen["setting"] and poisoned["compared"] == chosen["compared"]
    assert _records(tmp_path) == _records(out)


def test_the_poisoning_check_can_fail(tmp_path, monkeypatch):
    """The same comparison on a tuner that scores on the test split: the records differ."""
    monkeypatch.setattr(tuning, "selection_split", _selection_from_test)
    _tune(tmp_path / "clean")
    with monkeypatch.context() as m:
        _poison(m)
        _tune(tmp_path / "poisoned")
    assert _records(tmp_path / "poisoned") != _records(tmp_path / "clean")


def test_tuning_is_deterministic_and_resumes(tmp_path, clean):
    out, _ = clean
    again = _tune(tmp_path)
    assert json.loads(json.dumps(again)) == Store(out).tuning(1, 1.0, 40)
    assert _trials(tmp_path, 40) == _trials(out, 40)
    before = (out / tuning.TRIALS).read_text()
    assert _tune(out) == again  # a rerun trains nothing: every trial is recorded
    assert (out / tuning.TRIALS).read_text() == before
    assert len(again["candidates"]) == 3 and again["candidates"][0] == tuning.own_setting(_preset())
    assert len(_trials(tmp_path, 40)) == tuning.trials_needed(SETTINGS) == 4
    other = tuning.tune(tmp_path / "seed1", _preset(), 1, 1.0, 40, replace(SETTINGS, seed=1))
    assert other["candidates"] != again["candidates"]  # the seed is what makes it so


def test_candidates_follow_the_seed():
    p = _preset()
    c0 = tuning.candidates(p, 2, 1.0, 6, seed=0)
    assert c0 == tuning.candidates(p, 2, 1.0, 6, seed=0)
    assert c0 != tuning.candidates(p, 2, 1.0, 6, seed=1)
    assert len({json.dumps(c, sort_keys=True) for c in c0}) == 6
    assert all(c[k] in tuning.SEARCH[k] for c in c0[1:] for k in tuning.SEARCH)


def test_selection_split_is_disjoint_from_the_test_split():
    exp = Experiment(_preset().problem(1, 1.0, 0.5))
    s = tuning.selection_split(exp, 40, 1000, 64, 0.2, 8)
    X_test, _ = exp.test_set(2000)
    pool = np.concatenate([s.X_train, s.X_val, s.X_test])
    assert len(s.X_val) == 8 and len(s.X_train) == 32 and len(s.X_test) == 64
    assert not (pool[:, None, :] == X_test[None]).all(-1).any()


def test_choose_scores_each_winner_at_every_n(tmp_path, clean):
    out, c = clean
    p = _preset()
    assert set(c["per_n"]) == {"40", "80"}
    assert all(set(r["per_n"]) == {"40", "80"} for r in c["compared"])
    best = min(c["compared"], key=lambda r: r["worst_ratio"])
    assert c["setting"] == best["setting"] and c["won_at"]
    path = tuning.write_chosen(tmp_path, [c], p)
    tuned = tuning.load_tuned(path, p)
    assert tuned.at(1, 1.0).lr == c["setting"]["lr"] and tuned.at(1, 1.0).max_steps == tuning.CAP_MARGIN * 20


@pytest.mark.parametrize(
    "bad, words",
    [
        ({"candidates": 0}, "candidates"),
        ({"rungs": ()}, "rungs"),
        ({"rungs": (40, 20)}, "rungs"),
        ({"keep": ()}, "keep"),
        ({"keep": (0,)}, "keep"),
        ({"data_seeds": (3, 3)}, "data_seeds"),
        ({"select_points": 0}, "select_points"),
    ],
)
def test_tune_settings_refuse_bad_budgets(bad, words):
    good = {"candidates": 3, "rungs": (20, 40), "keep": (1,), "data_seeds": (3,), "select_points": 5}
    tuning.TuneSettings(**good)
    with pytest.raises(ValueError, match=words):
        tuning.TuneSettings(**{**good, **bad})

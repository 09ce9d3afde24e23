"""Converged runs: the "plateau" schedule trains at a constant rate until the
validation loss stops improving, cools down and stops; every result records why it stopped
("patience" or "cap"), and a resumed plateau run equals an uninterrupted one."""

import json

import pytest
import torch
import torch.nn as nn

from tmcheck.empirics.lm.train import STOPS, TrainConfig, load_checkpoint, lr_at, stop_reason, train

# a test-sized plateau schedule: constant rate, 2 evaluations of patience, a 10-step cool-down, 400 steps at most
PLATEAU = TrainConfig(
    **{"max_steps": 400, "lr": 5e-2, "min_lr": 5e-3, "warmup_steps": 2, "eval_every": 5, "patience": 2},
    schedule="plateau",
    cooldown=10,
    threads=1,
    progress=False,
)


def source(step, micro):
    g = torch.Generator().manual_seed(1000 * step + micro)
    x = torch.randn(16, 3, generator=g)
    return x, x @ torch.tensor([1.0, -2.0, 0.5]) + 0.3 * torch.randn(16, generator=g)  # noise: a floor


VAL = [source(10_000 + i, 0) for i in range(2)]


def mse(model, batch):
    x, y = batch
    return torch.mean((model(x).squeeze(-1) - y) ** 2)


def fresh():
    torch.manual_seed(0)
    return nn.Linear(3, 1)


def test_plateau_schedule_is_constant_then_cools_down():
    assert lr_at(0, PLATEAU) == pytest.approx(PLATEAU.lr / 2)
    assert all(lr_at(s, PLATEAU) == PLATEAU.lr for s in range(2, 300))  # no decay before the plateau
    assert lr_at(100, PLATEAU, decay_start=100) == pytest.approx(PLATEAU.lr)
    assert lr_at(110, PLATEAU, decay_start=100) == pytest.approx(PLATEAU.min_lr)
    assert lr_at(100, PLATEAU, decay_start=100) > lr_at(105, PLATEAU, decay_start=100) > lr_at(110, PLATEAU, 100)


def test_a_converging_run_stops_on_patience_and_a_short_cap_says_cap(tmp_path):
    r = train(fresh(), source, mse, lambda: VAL, PLATEAU, tmp_path / "p")
    assert r.stop == "patience" and r.stopped_early and r.steps < PLATEAU.max_steps
    # the cooldown ran: the last evaluations are at lower rates than the plateau's
    assert r.history[-1]["lr"] < PLATEAU.lr / 2
    assert json.loads((tmp_path / "p" / "result.json").read_text())["stop"] == "patience"
    capped = train(
        fresh(), source, mse, lambda: VAL, TrainConfig(**{**PLATEAU.__dict__, "max_steps": 10}), tmp_path / "c"
    )
    assert capped.stop == "cap" and capped.steps == 10
    never = train(
        fresh(),
        source,
        mse,
        lambda: VAL,
        TrainConfig(**{**PLATEAU.__dict__, "schedule": "cosine", "patience": 0, "max_steps": 30}),
        tmp_path / "n",
    )
    assert never.stop == "cap"  # patience 0 never stops early


def test_resumed_plateau_run_equals_uninterrupted(tmp_path):
    ref = train(fresh(), source, mse, lambda: VAL, PLATEAU, tmp_path / "ref")
    stop_at = ref.steps - 3  # inside the cooldown: decay_start must come back from the checkpoint

    class Crash(Exception):
        pass

    def crashing(step, micro):
        if step == stop_at:
            raise Crash
        return source(step, micro)

    with pytest.raises(Crash):
        train(fresh(), crashing, mse, lambda: VAL, PLATEAU, tmp_path / "int")
    assert load_checkpoint(tmp_path / "int" / "last.pt")["decay_start"] >= 0
    again = train(fresh(), source, mse, lambda: VAL, PLATEAU, tmp_path / "int")
    assert [h["val_loss"] for h in again.history] == [h["val_loss"] for h in ref.history]
    assert again.stop == ref.stop == "patience"


def test_stop_reason_of_old_results_and_bad_schedules(tmp_path):
    assert STOPS == ("patience", "cap") and stop_reason(True) == "patience" and stop_reason(False) == "cap"
    old = {"best_val": 1.0, "best_step": 5, "steps": 10, "stopped_early": False, "tokens": 640, "seconds": 0.0}
    from tmcheck.empirics import schema

    # a result.json from before `stop` existed: the schema's migration derives it
    assert schema.load_result(old, "old")["stop"] == "cap"
    assert schema.load_result({**old, "stopped_early": True}, "old")["stop"] == "patience"
    with pytest.raises(ValueError, match="unknown schedule"):
        train(fresh(), source, mse, lambda: VAL, TrainConfig(**{**PLATEAU.__dict__, "schedule": "wsd"}), tmp_path / "a")
    with pytest.raises(ValueError, match="cooldown"):
        train(fresh(), source, mse, lambda: VAL, TrainConfig(**{**PLATEAU.__dict__, "cooldown": 0}), tmp_path / "b")

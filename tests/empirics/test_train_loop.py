"""The generic trainer: resume equals uninterrupted, corrupt checkpoints, early stopping, non-LM use."""

import json

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from tmcheck.empirics.lm.gpt import GPT, GPTConfig, lm_loss
from tmcheck.empirics.lm.train import CheckpointError, TrainConfig, load_checkpoint, lr_at, train

CFG = TrainConfig(max_steps=24, lr=3e-3, min_lr=3e-4, warmup_steps=4, eval_every=6, patience=0, progress=False)


def lm_source(step, micro):
    g = torch.Generator().manual_seed(1000 * step + micro)
    x = torch.randint(0, 50, (4, 12), generator=g)
    return x, (x + 1) % 50  # learnable: next token = token + 1


VAL = [lm_source(10_000 + i, 0) for i in range(2)]


def fresh():
    torch.manual_seed(0)
    return GPT(GPTConfig(vocab_size=50, block_size=12, n_layer=1, n_head=2, n_embd=16))


def test_schedule():
    assert lr_at(0, CFG) == pytest.approx(CFG.lr / 4)
    assert lr_at(3, CFG) == pytest.approx(CFG.lr)
    assert lr_at(CFG.max_steps, CFG) == pytest.approx(CFG.min_lr)
    assert all(lr_at(s, CFG) >= lr_at(s + 1, CFG) for s in range(4, 30))


def test_learns_and_resume_equals_uninterrupted(tmp_path):
    ref = train(fresh(), lm_source, lm_loss, lambda: VAL, CFG, tmp_path / "ref")
    assert ref.history[-1]["val_loss"] < ref.history[0]["val_loss"] - 0.15

    class Crash(Exception):
        pass

    def crashing(step, micro):
        if step == 15:  # after the checkpoint at step 12: steps 13-15 are lost and redone
            raise Crash
        return lm_source(step, micro)

    with pytest.raises(Crash):
        train(fresh(), crashing, lm_loss, lambda: VAL, CFG, tmp_path / "int")
    assert load_checkpoint(tmp_path / "int" / "last.pt")["step"] == 12
    resumed = train(fresh(), lm_source, lm_loss, lambda: VAL, CFG, tmp_path / "int")
    assert [h["val_loss"] for h in resumed.history] == [h["val_loss"] for h in ref.history]
    a = load_checkpoint(tmp_path / "ref" / "last.pt")["model"]
    b = load_checkpoint(tmp_path / "int" / "last.pt")["model"]
    assert all(torch.equal(a[k], b[k]) for k in a)
    # a finished run is not redone: the result is read back
    again = train(fresh(), crashing, lm_loss, lambda: VAL, CFG, tmp_path / "int")
    assert again.history == resumed.history


def test_grad_accumulation_matches_a_big_batch(tmp_path):
    cfg = TrainConfig(max_steps=3, lr=1e-3, warmup_steps=1, eval_every=3, patience=0, grad_clip=0, progress=False)
    big = lambda step, micro: tuple(torch.cat(t) for t in zip(lm_source(step, 0), lm_source(step, 1), strict=True))  # noqa: E731
    r1 = train(fresh(), big, lm_loss, lambda: VAL, cfg, tmp_path / "big")
    r2 = train(
        fresh(), lm_source, lm_loss, lambda: VAL, TrainConfig(**{**cfg.__dict__, "grad_accum": 2}), tmp_path / "acc"
    )
    assert r1.history[-1]["val_loss"] == pytest.approx(r2.history[-1]["val_loss"], abs=1e-4)


def test_corrupt_checkpoint_is_named(tmp_path):
    train(fresh(), lm_source, lm_loss, lambda: VAL, CFG, tmp_path / "run")
    (tmp_path / "run" / "result.json").unlink()
    path = tmp_path / "run" / "last.pt"
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="corrupt checkpoint .*last.pt"):
        train(fresh(), lm_source, lm_loss, lambda: VAL, CFG, tmp_path / "run")
    path.write_bytes(bytes(data[:100]))  # truncated
    with pytest.raises(CheckpointError, match="last.pt"):
        load_checkpoint(path)


def test_early_stopping_keeps_the_best(tmp_path):
    cfg = TrainConfig(max_steps=200, lr=5e-2, min_lr=5e-2, warmup_steps=1, eval_every=2, patience=2, progress=False)
    noise = lambda step, micro: (torch.randint(0, 50, (4, 12)), torch.randint(0, 50, (4, 12)))  # noqa: E731
    torch.manual_seed(0)
    r = train(fresh(), noise, lm_loss, lambda: VAL, cfg, tmp_path / "es")
    assert r.stopped_early and r.steps < 200
    assert r.best_val == min(h["val_loss"] for h in r.history)
    assert load_checkpoint(tmp_path / "es" / "best.pt")["step"] == r.best_step
    assert json.loads((tmp_path / "es" / "result.json").read_text())["best_step"] == r.best_step


def test_regression_with_mse(tmp_path):
    """The loop is not tied to language models: an MLP regressing a smooth function with MSE."""
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 1))

    def batch(step, micro):
        g = torch.Generator().manual_seed(step)
        x = torch.rand(64, 2, generator=g)
        return x, torch.sin(3 * x[:, :1]) + x[:, 1:] ** 2

    mse = lambda model, b: F.mse_loss(model(b[0]), b[1])  # noqa: E731
    cfg = TrainConfig(max_steps=300, lr=1e-2, min_lr=1e-3, warmup_steps=10, eval_every=50, patience=0, progress=False)
    r = train(net, batch, mse, lambda: [batch(99_999, 0)], cfg, tmp_path / "reg")
    assert r.best_val < 0.02


DDP_SCRIPT = """
import sys, torch
from pathlib import Path
from tmcheck.empirics.lm.gpt import GPT, GPTConfig, lm_loss
from tmcheck.empirics.lm.train import TrainConfig, train
def src(step, micro):
    g = torch.Generator().manual_seed(1000 * step + micro)
    x = torch.randint(0, 50, (4, 12), generator=g)
    return x, (x + 1) % 50
VAL = [src(10_000 + i, 0) for i in range(2)]
torch.manual_seed(0)
m = GPT(GPTConfig(vocab_size=50, block_size=12, n_layer=1, n_head=2, n_embd=16))
cfg = TrainConfig(max_steps=12, eval_every=4, patience=0, warmup_steps=2, lr=3e-3, progress=False, grad_accum=2)
r = train(m, src, lm_loss, lambda: VAL, cfg, Path(sys.argv[1]))
print("RESULT", r.history[-1]["val_loss"], r.tokens, flush=True)
"""


def test_ddp_under_torchrun_on_cpu(tmp_path):
    """Two gloo processes: ranks agree, tokens count both ranks, rank 0 writes the checkpoints."""
    import subprocess
    import sys

    script = tmp_path / "ddp.py"
    script.write_text(DDP_SCRIPT)
    proc = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", str(script), str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = [ln.split() for ln in proc.stdout.splitlines() if ln.startswith("RESULT")]
    assert len(lines) == 2 and lines[0][1] == lines[1][1]
    assert int(lines[0][2]) == 12 * 2 * 4 * 12 * 2  # steps x micro-batches x B x T x ranks
    assert (tmp_path / "out" / "best.pt").exists() and (tmp_path / "out" / "result.json").exists()


def test_fused_adamw_and_all_cores_by_default(monkeypatch):
    import os

    from tmcheck.empirics.lm.train import cpu_threads, make_optimizer

    opt = make_optimizer(fresh(), TrainConfig())
    assert opt.defaults["fused"] is True
    assert [g["weight_decay"] for g in opt.param_groups] == [0.1, 0.0]
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)  # the suite's conftest sets it to 1
    assert TrainConfig().threads == 0 and cpu_threads(0) == len(os.sched_getaffinity(0)) and cpu_threads(3) == 3
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # a limit set the standard way is the default
    assert cpu_threads(0) == 1 and cpu_threads(3) == 3
    monkeypatch.setenv("OMP_NUM_THREADS", "junk")  # ignored unless a positive count
    assert cpu_threads(0) == len(os.sched_getaffinity(0))


def test_threads_setting_is_applied(tmp_path):
    before = torch.get_num_threads()
    try:
        train(
            fresh(),
            lm_source,
            lm_loss,
            lambda: VAL,
            TrainConfig(**{**CFG.__dict__, "max_steps": 1, "threads": 1}),
            tmp_path / "t1",
        )
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize("mode", ["always", "never"])
def test_progress_is_drawn_on_stderr_never_on_stdout(tmp_path, capsys, monkeypatch, mode):
    from dataclasses import replace

    monkeypatch.setenv("TMCHECK_PROGRESS", mode)
    train(fresh(), lm_source, lm_loss, lambda: VAL, replace(CFG, max_steps=6, progress=True), tmp_path / mode)
    out, err = capsys.readouterr()
    assert out == ""
    assert ("tok/s" in err) is (mode == "always")

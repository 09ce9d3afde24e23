"""util.memory: large blocks come back from the heap after reuse_large_allocations() (no page faults on
reallocation), TMCHECK_MALLOC=default leaves glibc as it is, and the trainer and the CLI apply it. The
default process is the mutation: it faults on every reallocation, which the first check would see."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys

import pytest

glibc = pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc", reason="glibc's mallopt"
)

PROBE = """
import json, resource, sys
import numpy as np
from tmcheck.util.memory import reuse_large_allocations
applied = reuse_large_allocations()
def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
a = np.ones(100 * 2**18, dtype=np.float32); del a  # 100 MiB, freed
total = 0
for _ in range(3):
    f0 = faults(); a = np.ones(100 * 2**18, dtype=np.float32); total += faults() - f0; del a
print(json.dumps({"applied": applied, "faults": total}))
"""


def probe(env_value: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "TMCHECK_MALLOC"}
    if env_value is not None:
        env["TMCHECK_MALLOC"] = env_value
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@glibc
def test_a_freed_large_block_is_reused_without_page_faults_and_the_default_faults():
    tuned, default = probe(None), probe("default")
    assert tuned["applied"] is True and default["applied"] is False
    assert tuned["faults"] <= 10
    assert default["faults"] >= 40  # 300 MiB mapped afresh: thousands of 4 KiB pages, dozens of huge pages


def test_applied_once_per_process(monkeypatch):
    from tmcheck.util import memory

    calls = []
    monkeypatch.setattr(memory, "_state", {})
    monkeypatch.setattr(memory, "_apply", lambda: calls.append(1) or True)
    assert memory.reuse_large_allocations() and memory.reuse_large_allocations()
    assert calls == [1]


def test_the_trainer_applies_it_on_the_cpu(monkeypatch, tmp_path):
    import torch

    from tmcheck.empirics.lm import train as train_mod
    from tmcheck.empirics.lm.gpt import GPT, GPTConfig, lm_loss

    calls = []
    monkeypatch.setattr(train_mod, "reuse_large_allocations", lambda: calls.append(1) or True)
    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=20, block_size=8, n_layer=1, n_head=2, n_embd=8))

    def batches(step, micro):
        x = torch.randint(0, 20, (2, 8), generator=torch.Generator().manual_seed(step))
        return x, x

    cfg = train_mod.TrainConfig(max_steps=2, eval_every=2, warmup_steps=1, patience=0, progress=False, device="cpu")
    train_mod.train(model, batches, lm_loss, lambda: [batches(99, 0)], cfg, tmp_path / "run")
    assert calls == [1]


def test_the_cli_applies_it(monkeypatch):
    from typer.testing import CliRunner

    from tmcheck.cli.main import app
    from tmcheck.util import memory

    calls = []
    monkeypatch.setattr(memory, "reuse_large_allocations", lambda: calls.append(1) or True)
    result = CliRunner().invoke(app, ["id", "estimate", "/nonexistent/points.npy"])
    assert result.exit_code == 2  # bad input, one line: the root callback ran first
    assert calls == [1]

"""Checkpoints: safetensors + JSON, never unpickled, one atomic unit, every failure named in one line."""

import os
import pickle
import subprocess
import sys

import pytest
import torch

from tmcheck.empirics.lm.checkpoint import CheckpointError, load_checkpoint, load_gpt, save_checkpoint
from tmcheck.empirics.lm.gpt import GPT, GPTConfig, lm_loss
from tmcheck.empirics.lm.train import TrainConfig, train

CFG = TrainConfig(max_steps=4, lr=3e-3, warmup_steps=1, eval_every=2, patience=0, threads=1, progress=False)


def src(step, micro):
    g = torch.Generator().manual_seed(1000 * step + micro)
    x = torch.randint(0, 50, (4, 12), generator=g)
    return x, (x + 1) % 50


VAL = [src(10_000, 0)]


def gpt(**kw):
    torch.manual_seed(0)
    return GPT(GPTConfig(**{"vocab_size": 50, "block_size": 12, "n_layer": 1, "n_head": 2, "n_embd": 16, **kw}))


def run(out, model=None, cfg=CFG):
    m = model or gpt()
    return train(m, src, lm_loss, lambda: VAL, cfg, out, meta={"model_config": m.config.__dict__})


def interrupted(tmp_path):
    """A run directory holding last.pt (of its final step) but no result.json."""
    out = tmp_path / "run"
    run(out)
    (out / "result.json").unlink()
    return out


def test_round_trip_of_nested_state():
    obj = {
        "model": {"w": torch.arange(6.0).view(2, 3), "b": torch.zeros(3, dtype=torch.bfloat16)},
        "optimizer": {
            "state": {0: {"step": torch.tensor(3.0), "exp_avg": torch.ones(2)}},
            "param_groups": [{"params": [0], "betas": (0.9, 0.95), "lr": 1e-3, "fused": None}],
        },
        "best_val": float("inf"),
        "history": [{"step": 1, "val_loss": 2.5}],
        "name": "x",
    }
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as d:
        save_checkpoint(Path(d) / "c.pt", obj)
        back = load_checkpoint(Path(d) / "c.pt")
    assert torch.equal(back["model"]["w"], obj["model"]["w"]) and back["model"]["b"].dtype == torch.bfloat16
    assert back["optimizer"]["state"][0]["step"].item() == 3.0  # integer keys survive
    assert back["optimizer"]["param_groups"][0]["betas"] == (0.9, 0.95)  # tuples survive
    assert back["best_val"] == float("inf") and back["history"] == obj["history"] and back["name"] == "x"


def test_the_file_is_plain_safetensors_with_the_checksum_inside(tmp_path):
    from safetensors import safe_open

    out = interrupted(tmp_path)
    assert sorted(p.name for p in out.iterdir()) == ["best.pt", "last.pt"]  # no sidecar to tear apart
    with safe_open(str(out / "last.pt"), framework="pt") as f:
        assert {"tmcheck", "sha256"} <= set(f.metadata()) and "model/wte.weight" in f.keys()


@pytest.mark.parametrize("how", ["pickle", "torch.save"])
def test_a_malicious_pickle_is_never_executed(tmp_path, how):
    marker = tmp_path / "pwned"

    class Payload:
        def __reduce__(self):
            return os.system, (f"touch {marker}",)

    # the payload is live: unpickling it does run the command (so the test below can fail)
    pickle.loads(pickle.dumps(Payload()))
    assert marker.exists()
    marker.unlink()
    out = interrupted(tmp_path)
    if how == "pickle":
        (out / "last.pt").write_bytes(pickle.dumps({"model": Payload()}))
    else:
        torch.save({"model": Payload()}, out / "last.pt")
    with pytest.raises(CheckpointError, match="last.pt.*never loaded"):
        run(out)
    with pytest.raises(CheckpointError, match="never loaded"):
        load_gpt(out / "last.pt")
    assert not marker.exists()


def test_missing_keys_and_wrong_shapes_are_named(tmp_path):
    out = interrupted(tmp_path)
    with pytest.raises(CheckpointError, match=r"last.pt does not fit the model: missing keys \['blocks.1"):
        run(out, gpt(n_layer=2))
    with pytest.raises(CheckpointError, match=r"last.pt does not fit the model: .* has shape"):
        run(out, gpt(n_embd=32))
    ck = load_checkpoint(out / "last.pt")
    del ck["optimizer"]["state"][0]["exp_avg"]
    ck["optimizer"]["state"][1]["exp_avg_sq"] = torch.zeros(3)
    save_checkpoint(out / "last.pt", ck)
    with pytest.raises(CheckpointError, match="optimizer exp_avg_sq of parameter 1 has shape"):
        run(out)


@pytest.mark.parametrize("rng", [torch.zeros(10, dtype=torch.uint8), torch.zeros(5000), None])
def test_bad_rng_state_is_named(tmp_path, rng):
    out = interrupted(tmp_path)
    ck = load_checkpoint(out / "last.pt")
    ck["torch_rng"] = rng
    save_checkpoint(out / "last.pt", ck)
    with pytest.raises(CheckpointError, match="last.pt: bad RNG state"):
        run(out)


def test_missing_fields_are_named(tmp_path):
    out = interrupted(tmp_path)
    ck = load_checkpoint(out / "last.pt")
    del ck["history"]
    save_checkpoint(out / "last.pt", ck)
    with pytest.raises(CheckpointError, match="field 'history' is missing"):
        run(out)


def test_a_flipped_byte_fails_the_checksum(tmp_path):
    out = interrupted(tmp_path)
    path = out / "last.pt"
    good = path.read_bytes()
    ck = load_checkpoint(path)
    assert ck["step"] == 4
    data = bytearray(good)
    data[-5] ^= 0x01  # inside the last tensor's bytes: still valid safetensors, only the digest notices
    path.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="corrupt checkpoint .*last.pt: sha256"):
        load_checkpoint(path)
    path.write_bytes(good[: len(good) // 2])
    with pytest.raises(CheckpointError, match="corrupt checkpoint .*last.pt"):
        load_checkpoint(path)


def test_cli_train_names_a_bad_checkpoint_in_one_line(tmp_path):
    from typer.testing import CliRunner

    from tmcheck.cli.main import app

    out = tmp_path / "t"
    out.mkdir(parents=True)
    (out / "last.pt").write_bytes(pickle.dumps({"a": 1}))
    res = CliRunner().invoke(app, ["train", "--preset", "tiny", "--tokens", "3000", "--out", str(out)])
    assert res.exit_code == 2 and "last.pt" in res.stderr and "Traceback" not in res.output
    assert len(res.stderr.strip().splitlines()) == 1


KILL_SCRIPT = r'''
import json, os, sys, tempfile
from pathlib import Path
import torch
from tmcheck.util import atomic
from tmcheck.empirics.lm.checkpoint import load_checkpoint
from tmcheck.empirics.lm.gpt import GPT, GPTConfig, lm_loss
from tmcheck.empirics.lm.train import TrainConfig, train

root, naive = Path(sys.argv[1]), sys.argv[2] == "naive"
CFG = TrainConfig(max_steps=4, lr=3e-3, warmup_steps=1, eval_every=2, patience=0, threads=1, progress=False)

def src(step, micro):
    g = torch.Generator().manual_seed(1000 * step + micro)
    x = torch.randint(0, 50, (4, 12), generator=g)
    return x, (x + 1) % 50

def job(out):
    torch.manual_seed(0)
    m = GPT(GPTConfig(vocab_size=50, block_size=12, n_layer=1, n_head=2, n_embd=16))
    train(m, src, lm_loss, lambda: [src(10_000, 0)], CFG, out, meta={"model_config": m.config.__dict__})

def instrument(k):
    """SIGKILL-like exit (os._exit, no cleanup) at the k-th write point of the atomic writer."""
    count = [0]
    def point():
        count[0] += 1
        if count[0] == k:
            os._exit(137)
    class File:
        def __init__(self, f): self.f = f
        def __enter__(self): return self
        def __exit__(self, *a): self.f.close()
        def fileno(self): return self.f.fileno()
        def flush(self): self.f.flush()
        def write(self, data):
            self.f.write(data[: len(data) // 2]); self.f.flush(); point()  # torn write on disk
            self.f.write(data[len(data) // 2:]); self.f.flush(); point()
    class Proxy:
        def __init__(self, mod, names): self.mod, self.names = mod, names
        def __getattr__(self, name):
            f = getattr(self.mod, name)
            if name not in self.names:
                return f
            def g(*a, **kw):
                r = f(*a, **kw)
                point()  # killed right after this call returned
                return File(r) if name == "fdopen" else r
            return g
    if naive:  # the mutant: write the target in place, no temporary file
        def write_bytes(path, data):
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "wb") as f:
                File(f).write(data)
        atomic.write_bytes = write_bytes
    else:
        atomic.os = Proxy(os, {"chmod", "fdopen", "fsync", "replace", "open", "close", "unlink"})
        atomic.tempfile = Proxy(tempfile, {"mkstemp"})

def fork(fn):
    pid = os.fork()
    if pid == 0:
        try:
            fn()
        except BaseException as exc:
            print("CHILD", type(exc).__name__, exc, flush=True)
            os._exit(1)
        os._exit(0)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])

job(root / "ref")  # in this process, one thread (OMP_NUM_THREADS=1): torch's lazy set-up is done before any fork
ref = json.loads((root / "ref" / "result.json").read_text())["history"]
points, failures = 0, 0
for k in range(1, 500):
    out = root / f"k{k}"
    code = fork(lambda: (instrument(k), job(out)))
    if code == 0:
        break
    assert code == 137, code
    points = k
    for name in ("last.pt", "best.pt"):  # whatever is on disk after the kill loads, or is absent
        if (out / name).exists():
            try:
                load_checkpoint(out / name)
            except ValueError:
                failures += 1
    if fork(lambda: job(out)) != 0 or json.loads((out / "result.json").read_text())["history"] != ref:
        failures += 1
print("RESULT", points, failures, flush=True)
'''


@pytest.mark.parametrize("mode", ["atomic", "naive"])
def test_killed_at_every_write_point_the_next_run_resumes_and_finishes(tmp_path, mode):
    """Kill the trainer right after each os call of the writer (and in the middle of each write): the
    files on disk always load and a rerun always finishes with the uninterrupted run's history. The
    mutant (writing the checkpoint in place) is caught by the same loop."""
    script = tmp_path / "kill.py"
    script.write_text(KILL_SCRIPT)
    proc = subprocess.run(
        [sys.executable, str(script), str(tmp_path), mode],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    points, failures = map(int, next(ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT")).split()[1:])
    assert points >= (5 * 9 if mode == "atomic" else 5 * 2)  # 5 files written, each through every point
    assert (failures == 0) if mode == "atomic" else (failures > 0)


def test_no_source_file_unpickles_untrusted_data():
    """A guard over the whole package: no weights_only=False, no pickle.load(s) outside tests."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    bad = []
    for d in ("empirics", "cli", "util", "theory", "proofs_check", "benchmarks"):
        for f in (root / d).rglob("*.py"):
            if any(part.startswith(".") for part in f.relative_to(root).parts):
                continue  # a virtual environment the benchmarks made (benchmarks/.venv-anchors): not ours
            text = f.read_text(encoding="utf-8")
            if "weights_only=False" in text or "pickle.load" in text:
                bad.append(str(f.relative_to(root)))
    assert bad == []

"""Faults and hostile files, round three: no write through a link, no delete outside what the user named,
validation before anything is built, and every library's error on bad data as one line with exit 2.

Each case is what a hostile but realistic user did to the code before this round (the comment says what
happened then), and each comes with its mutation: the same input made valid, or the guard removed, so
that the test is seen to fail where the guard is missing. Workers that die with their submitter:
tests/empirics/test_sweep_orphans.py; the config schema: tests/empirics/test_schema.py.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from tmcheck.cli.main import app
from tmcheck.empirics.data import DatasetSpec, prepare_dataset
from tmcheck.empirics.data.stories import stories
from tmcheck.empirics.data.tokens import train_tokenizer
from tmcheck.empirics.lm.checkpoint import FORMAT, save_checkpoint
from tmcheck.empirics.lm.gpt import GPT, GPTConfig
from tmcheck.empirics.lm.hf import MARKER, export_hf
from tmcheck.empirics.sweep import SweepDir, layout, register_kind, run_spec, run_sweep
from tmcheck.empirics.sweep.kinds import get_preset

sys.path.insert(0, str(Path(__file__).parents[1] / "empirics"))
import sweep_toy

runner = CliRunner()
TOY = sweep_toy.ToyPreset(name="toy", xs=(1, 2))
SECRET = "precious contents\n"


def quiet(s):
    pass


def one_line(args, message, code=2):
    res = runner.invoke(app, [str(a) for a in args])
    assert res.exit_code == code, res.output
    assert message in res.stderr and len(res.stderr.strip().splitlines()) == 1, res.stderr
    return res


@pytest.fixture(autouse=True)
def toy():
    register_kind(sweep_toy.KIND)


@pytest.fixture
def outside(tmp_path) -> Path:
    """A file the commands must never write: the target of every link below."""
    f = tmp_path / "outside" / "precious.txt"
    f.parent.mkdir()
    f.write_text(SECRET)
    return f


# ------------------------------------------------------------------------------------ links and locks
def test_a_symlinked_sweep_lock_is_refused_and_its_target_untouched(tmp_path, outside):
    # before: the lock was opened 'a+' and truncated, and the submitter's pid written into the target
    sweep = tmp_path / "s"
    SweepDir(sweep).open("exectoy", TOY)
    (sweep / layout.LOCK).symlink_to(outside)
    with pytest.raises(ValueError, match="is a symbolic link, not a lock file"):
        run_sweep(sweep, "exectoy", TOY, progress=False, log=quiet)
    assert outside.read_text() == SECRET and not (sweep / layout.PLAN).exists()
    (sweep / layout.LOCK).unlink()  # mutation: without the link the sweep runs
    assert len(run_sweep(sweep, "exectoy", TOY, progress=False, log=quiet)) == 2


def test_a_symlinked_run_lock_is_refused_and_its_target_untouched(tmp_path, outside):
    sweep = SweepDir(tmp_path / "s")
    sweep.open("exectoy", TOY)
    spec = sweep_toy.plan(sweep.context(), quiet)[0]
    sweep.run_dir(spec.run).mkdir(parents=True)
    (sweep.run_dir(spec.run) / layout.LOCK).symlink_to(outside)
    with pytest.raises(ValueError, match="is a symbolic link"):
        run_spec(sweep, spec)
    assert outside.read_text() == SECRET
    (sweep.run_dir(spec.run) / layout.LOCK).unlink()
    assert run_spec(sweep, spec)["y"] == 1 + TOY.steps


def test_a_lock_that_is_another_files_hard_link_is_refused(tmp_path, outside):
    sweep = tmp_path / "s"
    SweepDir(sweep).open("exectoy", TOY)
    os.link(outside, sweep / layout.LOCK)
    with pytest.raises(ValueError, match="not a lock file of tmcheck"):
        run_sweep(sweep, "exectoy", TOY, progress=False, log=quiet)
    assert outside.read_text() == SECRET


SPEC = DatasetSpec(corpus="stories", vocab_size=300, max_train_tokens=20_000, max_eval_tokens=2_000)


@pytest.mark.parametrize("name", ["train.bin", "test.idx.npy", "tokenizer.json"])
def test_symlinked_data_files_of_an_interrupted_preparation_are_replaced_not_written_through(tmp_path, outside, name):
    # before: np.memmap(mode='w+') and np.save wrote the token ids through the link
    data = tmp_path / "data"
    data.mkdir()
    (data / name).symlink_to(outside)  # left there, with no dataset.json: an interrupted preparation
    meta = prepare_dataset(SPEC, data)
    assert outside.read_text() == SECRET
    assert not (data / name).is_symlink() and (data / name).stat().st_size > 0
    assert meta["splits"]["train"]["tokens"] > 0


def test_append_only_logs_refuse_a_link(tmp_path, outside):
    from tmcheck.util.atomic import open_append

    (tmp_path / "worker.log").symlink_to(outside)
    with pytest.raises(ValueError, match="symbolic link"):
        open_append(tmp_path / "worker.log")
    with open_append(tmp_path / "other.log") as f:  # mutation: a new file is appended to
        f.write("a line\n")
    assert outside.read_text() == SECRET and (tmp_path / "other.log").read_text() == "a line\n"


# ------------------------------------------------------------------------------------ export --overwrite
@pytest.fixture
def run_dir(tmp_path) -> Path:
    """A sweep run (random weights) with its sweep's tokenizer: SWEEP/runs/<run>/best.pt."""
    tok = train_tokenizer(stories(0, 300), 300)
    run = tmp_path / "sweep" / "runs" / "stories-n1-s0"
    m = GPT(GPTConfig(vocab_size=tok.get_vocab_size(), block_size=16, n_layer=1, n_head=2, n_embd=16))
    save_checkpoint(run / "best.pt", {"model": m.state_dict(), "meta": {"model_config": m.config.__dict__}})
    (run / "tokenizer.json").write_text(tok.to_str())
    return run


@pytest.mark.parametrize("target", [".", "run", "runs", "sweep", "unmarked", "link"])
def test_overwrite_removes_only_an_export_tmcheck_wrote(tmp_path, run_dir, target, monkeypatch):
    # before: OUT was removed without a check: `.` emptied the working directory, the run, its parent
    # or the sweep lost their checkpoints
    sweep = run_dir.parents[1]
    cwd = tmp_path / "work"
    cwd.mkdir()
    (cwd / "mine.txt").write_text(SECRET)
    monkeypatch.chdir(cwd)
    out = {
        ".": Path("."),
        "run": run_dir,
        "runs": run_dir.parent,
        "sweep": sweep,
        "unmarked": tmp_path / "someone",
        "link": tmp_path / "link",
    }[target]
    if target == "unmarked":
        out.mkdir()
        (out / "config.json").write_text("{}")
    if target == "link":
        export_hf(run_dir, tmp_path / "real")
        out.symlink_to(tmp_path / "real")
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    one_line(["export", "hf", run_dir, out, "--overwrite"], "--overwrite" if target != "unmarked" else MARKER)
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before and (cwd / "mine.txt").read_text() == SECRET


def test_overwrite_replaces_an_earlier_export(tmp_path, run_dir):
    out = tmp_path / "hf"
    export_hf(run_dir, out)
    (out / "model.safetensors").write_bytes(b"stale")
    res = runner.invoke(app, ["export", "hf", str(run_dir), str(out), "--overwrite", "--json"])
    assert res.exit_code == 0, res.output
    assert (out / MARKER).is_file() and (out / "model.safetensors").stat().st_size > 100
    assert not list(tmp_path.glob(".hf.*"))  # the old export moved aside and removed


def test_export_on_a_full_disk_is_one_line_and_leaves_the_old_export(tmp_path, run_dir, monkeypatch):
    # before: save_pretrained's SafetensorError escaped as a traceback
    from safetensors import SafetensorError
    from transformers import PreTrainedModel

    out = tmp_path / "hf"
    export_hf(run_dir, out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def full(self, *a, **k):
        raise SafetensorError("Error while serializing: I/O error: No space left on device (os error 28)")

    monkeypatch.setattr(PreTrainedModel, "save_pretrained", full)
    one_line(["export", "hf", run_dir, out, "--overwrite"], "no space left on the device")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before and not list(tmp_path.glob(".hf.*"))


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small tmpfs needs root")
def test_export_onto_a_real_full_tmpfs_is_one_line(tmp_path, run_dir):
    disk = tmp_path / "disk"
    disk.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(disk)]).returncode != 0:
        pytest.skip("tmpfs cannot be mounted here")
    try:
        st = os.statvfs(disk)
        (disk / "filler").write_bytes(b"\0" * (st.f_bavail * st.f_frsize - 8192))  # 8 KB left: less than the model
        one_line(["export", "hf", run_dir, disk / "hf"], "no space left on the device")
        assert [p.name for p in disk.iterdir()] == ["filler"]
    finally:
        subprocess.run(["umount", str(disk)])


# ------------------------------------------------------------------------------------ shared configs
@pytest.mark.parametrize("kind", ["text", "dir"])
def test_a_shared_config_cannot_choose_files_to_read(tmp_path, outside, kind):
    # before: resuming a sweep whose config.json named text:/any/path read it and stored its tokens
    sweep = tmp_path / "s"
    sweep.mkdir()
    corpus = f"{kind}:{outside if kind == 'text' else outside.parent}"
    config = {"kind": "pretrain", "preset": get_preset("tiny").as_dict(), "corpora": [corpus]}
    (sweep / layout.CONFIG).write_text(json.dumps(config))
    one_line(["sweep", "data", sweep], "never chooses files to read")
    assert sorted(p.name for p in sweep.iterdir()) == [".lock", layout.CONFIG]  # nothing read, nothing stored
    # mutation: the same corpus given on the command line passes the check (and fails on the tiny file)
    res = runner.invoke(app, ["sweep", "data", str(sweep), "--corpus", corpus])
    assert res.exit_code == 2 and "never chooses files" not in res.stderr, res.output


# ------------------------------------------------------------------------------------ checkpoints
def forge(path: Path, obj, tensors: dict | None = None, meta_json: str | None = None) -> Path:
    """A checkpoint whose digest is valid for whatever it holds (the digest is integrity, not authorship)."""
    from safetensors.torch import save

    tensors = tensors or {"w": torch.zeros(2)}
    text = meta_json if meta_json is not None else json.dumps({"format": FORMAT, "obj": obj}, sort_keys=True)
    h = hashlib.sha256(text.encode())
    for name in sorted(tensors):
        t = tensors[name].contiguous()
        h.update(f"\0{name}|{t.dtype}|{tuple(t.shape)}\0".encode())
        h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes())
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(save(tensors, metadata={"tmcheck": text, "sha256": h.hexdigest()}))
    return path


CFG = {"vocab_size": 300, "block_size": 16, "n_layer": 1, "n_head": 2, "n_embd": 16, "dropout": 0.0}
HOSTILE_CHECKPOINTS = {  # name: (obj, message); before: RuntimeError, MemoryError, TypeError or AttributeError
    "negative width": ({"model": {}, "meta": {"model_config": {**CFG, "n_embd": -32}}}, "n_embd"),
    "200,000 layers": ({"model": {}, "meta": {"model_config": {**CFG, "n_layer": 200_000}}}, "n_layer"),
    "the object a list": ([1, 2], "holding an object"),
    "a tuple of a number": ({"model": {}, "meta": {"__tuple__": 5}}, "wrong shape"),
    "an unhashable key": ({"meta": {"__items__": [[[1, [2]], 3]]}}, "wrong shape"),
    "metadata of another model": ({"model": {}, "meta": {"model_config": {"D": 16, "d_embd": 8}}}, "unknown field"),
}


@pytest.mark.parametrize("case", HOSTILE_CHECKPOINTS, ids=list(HOSTILE_CHECKPOINTS))
def test_hostile_checkpoint_metadata_is_refused_before_anything_is_built(tmp_path, run_dir, case):
    obj, message = HOSTILE_CHECKPOINTS[case]
    ck = forge(tmp_path / "bad" / "best.pt", obj)
    shutil.copy(run_dir / "tokenizer.json", ck.parent / "tokenizer.json")
    t0 = time.perf_counter()
    one_line(["export", "hf", ck, tmp_path / "out"], message)
    assert time.perf_counter() - t0 < 5 and not (tmp_path / "out").exists()


def test_a_weight_that_is_a_number_is_refused(tmp_path, run_dir):
    # before: AttributeError ('int' object has no attribute 'shape') once every key matched
    state = GPT(GPTConfig(**CFG)).state_dict()
    tensors = {f"model/{k}": v for k, v in state.items() if k != "wte.weight"}
    obj = {
        "model": {k: {"__tensor__": f"model/{k}"} for k in state if k != "wte.weight"},
        "meta": {"model_config": CFG},
    }
    obj["model"]["wte.weight"] = 5
    ck = forge(tmp_path / "bad" / "best.pt", obj, tensors)
    one_line(
        ["export", "hf", ck, tmp_path / "out", "--tokenizer", run_dir / "tokenizer.json"], "model_config describes"
    )
    obj["model"]["wte.weight"] = {"__tensor__": "model/wte.weight"}  # mutation: every weight a tensor
    ck = forge(tmp_path / "good" / "best.pt", obj, {**tensors, "model/wte.weight": state["wte.weight"]})
    res = runner.invoke(
        app, ["export", "hf", str(ck), str(tmp_path / "out"), "--tokenizer", str(run_dir / "tokenizer.json")]
    )
    assert res.exit_code == 0, res.output


def test_a_checkpoint_header_that_is_not_an_object_is_refused(tmp_path):
    ck = forge(tmp_path / "best.pt", None, meta_json="[1, 2, 3]")
    one_line(["export", "hf", ck, tmp_path / "out", "--tokenizer", ck], "holding an object")


def test_the_size_limit_is_an_option(tmp_path, run_dir):
    one_line(["export", "hf", run_dir, tmp_path / "a", "--max-params", "1000"], "over the limit of 1,000")
    res = runner.invoke(app, ["export", "hf", str(run_dir), str(tmp_path / "b"), "--max-params", "100000"])
    assert res.exit_code == 0, res.output  # mutation: a limit above the model's size lets it through


# ------------------------------------------------------------------------------------ result.json
@pytest.mark.parametrize(
    "record,message",
    [
        ({"steps": -5}, "steps: expected greater than or equal to 0"),
        ({"best_val": "low"}, "best_val: expected a valid number"),
        ([], "expected a JSON object"),
    ],
    ids=["negative steps", "best_val a word", "a list"],
)
def test_a_damaged_result_json_is_never_printed_as_the_runs_result(tmp_path, record, message):
    # before: `train --json` printed the damaged record as the run's result (exit 0), or a TypeError
    out = tmp_path / "t"
    args = ["train", "--preset", "tiny", "--tokens", "3000", "--max-steps", "5", "--out", out, "--json"]
    good = {"best_val": 5.0, "best_step": 5, "steps": 5, "stopped_early": False, "tokens": 100, "seconds": 1.0}
    out.mkdir()
    (out / "result.json").write_text(json.dumps({**good, **record} if isinstance(record, dict) else record))
    one_line(args, message)
    (out / "result.json").unlink()  # mutation: without the damaged record the run trains and reports
    res = runner.invoke(app, [str(a) for a in args])
    assert res.exit_code == 0 and json.loads(res.stdout)["steps"] == 5, res.output


# ------------------------------------------------------------------------------------ HF directories
def hf_dir(tmp_path: Path, run_dir: Path, **config) -> Path:
    d = tmp_path / "hfdir"
    export_hf(run_dir, d)
    cfg = json.loads((d / "config.json").read_text())
    (d / "config.json").write_text(json.dumps({**cfg, **config}))
    return d


def test_init_from_pickled_weights_is_one_line(tmp_path, run_dir):
    # before: transformers' torch.load raised UnpicklingError (a traceback)
    d = hf_dir(tmp_path, run_dir)
    (d / "model.safetensors").unlink()
    (d / "pytorch_model.bin").write_bytes(pickle.dumps({"weights": 1}))
    one_line(["train", "--init-from", d, "--out", tmp_path / "ft"], "pickled weights (pytorch_model.bin)")


def test_init_from_a_hostile_config_is_refused_before_building(tmp_path, run_dir):
    d = hf_dir(tmp_path, run_dir, n_layer=200_000)
    t0 = time.perf_counter()
    one_line(["train", "--init-from", d, "--out", tmp_path / "ft"], "n_layer")
    assert time.perf_counter() - t0 < 5


# ------------------------------------------------------------------------------------ sizes and controllers
def tmcheck(*args: str) -> subprocess.CompletedProcess:
    """The CLI in a process of its own, as a user runs it (a crash of the process shows as a signal)."""
    code = "from tmcheck.cli.main import app; app()"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("vocab", ["1000000000", "1e9"])
def test_a_huge_vocabulary_is_refused_not_aborted(vocab):
    # before: the BPE trainer aborted the whole process (SIGABRT, exit -6)
    proc = tmcheck("data", "stats", "stories", "--vocab", vocab)
    assert proc.returncode == 2 and "--vocab" in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("squeue", ["fails", "absent", "answers"])
def test_slurm_is_asked_before_anything_is_created(tmp_path, monkeypatch, squeue):
    # before: "squeue failed" (a RuntimeError) after the sweep directory had been created
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    scripts = {"sbatch": "exit 0"}
    if squeue != "absent":
        scripts["squeue"] = (
            "exit 0" if squeue == "answers" else "echo 'slurm_load_jobs error: Unable to contact' >&2; exit 1"
        )
    for name, body in scripts.items():
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)
    # only the fake clients: a real SLURM in /usr/bin (CI's cluster) must not answer for an absent squeue
    monkeypatch.setenv("PATH", str(bin_dir))
    from tmcheck.empirics.sweep.slurm import check_controller

    if squeue == "answers":  # mutation: a controller that answers passes the check
        check_controller()
        return
    sweep = tmp_path / "s"
    one_line(["sweep", "data", sweep, "--executor", "slurm"], "Unable to contact" if squeue == "fails" else "not found")
    assert not sweep.exists()


# ------------------------------------------------------------------------------------ reports and errors
def test_report_on_a_preset_lacking_fields_is_one_line(tmp_path):
    # before: TypeError from the preset's constructor
    (tmp_path / layout.CONFIG).write_text(json.dumps({"kind": "model", "preset": {"name": "cpu"}, "corpus": "sql"}))
    one_line(["report", tmp_path], "preset.corpus: missing (required)")


def test_a_wrong_type_in_a_sweep_config_stops_before_anything_runs(tmp_path):
    # before: a TypeError mid-run that named no field
    sweep = tmp_path / "s"
    SweepDir(sweep).open("pretrain", "tiny")
    config = json.loads((sweep / layout.CONFIG).read_text())
    config["preset"]["n_min"] = "abc"
    (sweep / layout.CONFIG).write_text(json.dumps(config))
    one_line(["sweep", "data", sweep], "preset.n_min: expected a valid integer, got 'abc'")
    assert sorted(p.name for p in sweep.iterdir()) == [".lock", layout.CONFIG]

"""Hostile checkpoints and GPT-2 directories are refused before anything is built: a checkpoint with a valid digest
and hostile metadata (a negative width, 200,000 layers in a small file, an object that is a list, a tuple of a number,
an unhashable key, another model's metadata, a weight that is a number, a header that is not an object), the size
limit as an option, and `train --init-from` of pickled weights or of a 200,000-layer config: one line, exit 2, within
seconds. The config schema itself: tests/empirics/test_schema.py.

Each case says what the code did before (the comment), and comes with its mutation where there is one.
"""

from __future__ import annotations

import hashlib
import json
import pickle
import shutil
import time
from pathlib import Path

import pytest
import torch
from harness import invoke, one_line

from tmcheck.empirics.lm.checkpoint import FORMAT
from tmcheck.empirics.lm.gpt import GPT, GPTConfig
from tmcheck.empirics.lm.hf import export_hf


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
    one_line(["export", "hf", ck, tmp_path / "out"], message)  # untimed: a process's first call pays the imports
    t0 = time.thread_time()  # this thread's CPU time: a loaded machine's waits and other threads do not count
    one_line(["export", "hf", ck, tmp_path / "out"], message)
    assert time.thread_time() - t0 < 5 and not (tmp_path / "out").exists()


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
    res = invoke(["export", "hf", str(ck), str(tmp_path / "out"), "--tokenizer", str(run_dir / "tokenizer.json")])
    assert res.exit_code == 0, res.output


def test_a_checkpoint_header_that_is_not_an_object_is_refused(tmp_path):
    ck = forge(tmp_path / "best.pt", None, meta_json="[1, 2, 3]")
    one_line(["export", "hf", ck, tmp_path / "out", "--tokenizer", ck], "holding an object")


def test_the_size_limit_is_an_option(tmp_path, run_dir):
    one_line(["export", "hf", run_dir, tmp_path / "a", "--max-params", "1000"], "over the limit of 1,000")
    res = invoke(["export", "hf", str(run_dir), str(tmp_path / "b"), "--max-params", "100000"])
    assert res.exit_code == 0, res.output  # mutation: a limit above the model's size lets it through


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

"""Checkpoints of the trainer: one safetensors file each, never a pickle (paper Appendix A runs).

`save_checkpoint(path, obj)` takes a nested dict (model and optimizer state dicts, RNG state, step,
history, run metadata) and writes ONE file, atomically (tmcheck.util.atomic: temporary name, fsync,
rename), in the safetensors format:

- every tensor of `obj`, under its path in the dict (e.g. `model/blocks.0.attn.qkv.weight`,
  `optimizer/state/3/exp_avg`, `torch_rng`);
- in the safetensors header's metadata: `tmcheck` = JSON of everything else, with each tensor replaced
  by a reference to its name, and `sha256` = a digest of that JSON and of every tensor's name, dtype,
  shape and bytes.

The checksum lives inside the file it protects, so a crash cannot tear the two apart: a reader sees
the old checkpoint or the new one. Loading parses only safetensors and JSON, so a pickled payload (a
torch.save file of an older tmcheck, or a malicious one) is rejected as "not a safetensors
checkpoint" and never unpickled. The digest is integrity, not authorship: the metadata of a file with
a valid digest is still checked by the one schema (tmcheck.empirics.schema: `meta` as CheckpointMeta,
its model_config bounded) and the model's size is estimated and compared with the weights the file
holds before any model is built. Every failure is a CheckpointError (a ValueError: one line, exit 2
in the CLI) naming the file and what is wrong. The file names stay best.pt / last.pt for the callers.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import torch

from tmcheck.empirics import schema
from tmcheck.util import atomic, safeio

FORMAT = "tmcheck-checkpoint/1"
LAST, BEST = "last.pt", "best.pt"
RESULT = "result.json"  # the trainer's record of a finished run, beside its checkpoints


class CheckpointError(ValueError):
    """A checkpoint that cannot be read, is damaged, or does not fit the model it is loaded into."""


def _digest(tensors: dict[str, torch.Tensor], meta_json: str) -> str:
    h = hashlib.sha256(meta_json.encode("utf-8"))
    for name in sorted(tensors):
        t = tensors[name].contiguous()
        h.update(f"\0{name}|{t.dtype}|{tuple(t.shape)}\0".encode())
        h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes())
    return h.hexdigest()


def _split(obj: Any, path: str, tensors: dict[str, torch.Tensor]) -> Any:
    """obj with its tensors moved to `tensors` (JSON-able rest); dicts with non-string keys keep them."""
    if isinstance(obj, torch.Tensor):
        if path in tensors:
            raise ValueError(f"two tensors of the checkpoint share the name {path!r}")
        tensors[path] = obj.detach().to("cpu").contiguous()
        return {"__tensor__": path}
    if isinstance(obj, dict):
        if all(isinstance(k, str) for k in obj):
            return {k: _split(v, f"{path}/{k}" if path else k, tensors) for k, v in obj.items()}
        return {"__items__": [[k, _split(v, f"{path}/{k}", tensors)] for k, v in obj.items()]}
    if isinstance(obj, tuple):
        return {"__tuple__": [_split(v, f"{path}/{i}", tensors) for i, v in enumerate(obj)]}
    if isinstance(obj, list):
        return [_split(v, f"{path}/{i}", tensors) for i, v in enumerate(obj)]
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    raise TypeError(f"cannot store a {type(obj).__name__} at {path!r} in a checkpoint (tensors and JSON only)")


def _join(obj: Any, tensors: dict[str, torch.Tensor], path: Path) -> Any:
    if isinstance(obj, list):
        return [_join(v, tensors, path) for v in obj]
    if not isinstance(obj, dict):
        return obj
    if set(obj) == {"__tensor__"}:
        if obj["__tensor__"] not in tensors:
            raise CheckpointError(f"checkpoint {path} refers to a tensor {obj['__tensor__']!r} it does not hold")
        return tensors[obj["__tensor__"]]
    if set(obj) == {"__tuple__"}:
        return tuple(_join(v, tensors, path) for v in obj["__tuple__"])
    if set(obj) == {"__items__"}:
        return {k if not isinstance(k, list) else tuple(k): _join(v, tensors, path) for k, v in obj["__items__"]}
    return {k: _join(v, tensors, path) for k, v in obj.items()}


def encode(obj: dict) -> bytes:
    """The bytes of a checkpoint file: safetensors with the JSON rest and the digest in its header."""
    from safetensors.torch import save

    tensors: dict[str, torch.Tensor] = {}
    rest = _split(obj, "", tensors)
    meta_json = json.dumps({"format": FORMAT, "obj": rest}, sort_keys=True)
    return save(tensors, metadata={"tmcheck": meta_json, "sha256": _digest(tensors, meta_json)})


def save_checkpoint(path: Path, obj: dict) -> None:
    """Write obj (a dict of tensors, state dicts and JSON values) as one atomic safetensors file."""
    atomic.write_bytes(Path(path), encode(obj))


def load_checkpoint(path: Path, map_location: Any = "cpu") -> dict:
    """The dict saved by save_checkpoint, its digest checked; CheckpointError naming the file otherwise."""
    from safetensors import safe_open

    path = resolve(path)
    try:
        safeio.check_regular(path, "a checkpoint")  # a FIFO or device is refused, never opened to block
    except FileNotFoundError:
        raise FileNotFoundError(2, "no such checkpoint", str(path)) from None
    try:
        with safe_open(str(path), framework="pt", device="cpu") as f:
            header = f.metadata() or {}
            tensors = {k: f.get_tensor(k) for k in f.keys()}
    except Exception as exc:  # safetensors raises its own error types, and OSError/ValueError on garbage
        raise CheckpointError(
            f"corrupt checkpoint {path}: not a safetensors checkpoint (truncated, damaged, or a "
            f"pickle, which is never loaded): {str(exc).splitlines()[0][:100]}"
        ) from None
    if "tmcheck" not in header or "sha256" not in header:
        raise CheckpointError(f"corrupt checkpoint {path}: a safetensors file without tmcheck metadata")
    if _digest(tensors, header["tmcheck"]) != header["sha256"]:
        raise CheckpointError(f"corrupt checkpoint {path}: sha256 of its tensors and metadata does not match")
    try:
        meta = json.loads(header["tmcheck"])
    except ValueError:
        raise CheckpointError(f"corrupt checkpoint {path}: its tmcheck metadata is not JSON") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT or not isinstance(meta.get("obj"), dict):
        got = meta.get("format") if isinstance(meta, dict) else type(meta).__name__
        raise CheckpointError(f"checkpoint {path} has format {got!r}, expected {FORMAT!r} holding an object")
    if map_location not in (None, "cpu"):
        tensors = {k: v.to(map_location) for k, v in tensors.items()}
    try:
        return _join(meta["obj"], tensors, path)
    except (TypeError, ValueError, AttributeError) as exc:  # __tuple__/__items__ of the wrong shape
        raise CheckpointError(f"checkpoint {path}: metadata of the wrong shape ({exc})") from None


def read_result(run_dir: Path, max_steps: int | None = None, tokens_per_step: int | None = None) -> dict | None:
    """The run directory's result.json through the schema (tmcheck.empirics.schema.load_result), or
    None when the run has not finished: a damaged record is a CheckpointError, never a run's result.
    Given the run's `max_steps` and `tokens_per_step`, a record that could not come from this run
    (more steps than it may take, tokens other than steps x tokens per step) is refused as well."""
    path = Path(run_dir) / RESULT
    try:
        data = safeio.read_json(path, "a training result")
    except FileNotFoundError:
        return None
    except safeio.NotRegularFile:
        raise
    except ValueError:
        raise CheckpointError(f"{path} is damaged (not JSON); remove it to train the run again") from None
    try:
        rec = schema.load_result(data, str(path))
        schema.check_progress(rec, str(path), max_steps, tokens_per_step)
    except schema.SchemaError as exc:
        raise CheckpointError(f"{exc}; remove it to train the run again") from None
    return rec


# --- model and optimizer state ---------------------------------------------------------------------


def load_model_state(model: torch.nn.Module, state: Any, path: Path) -> None:
    """load_state_dict(strict) with missing/unexpected keys and wrong shapes reported as one line."""
    if not isinstance(state, dict):
        raise CheckpointError(f"checkpoint {path} holds no model weights")
    own = model.state_dict()
    missing = sorted(set(own) - set(state))
    unexpected = sorted(set(state) - set(own))
    if missing or unexpected:
        raise CheckpointError(
            f"checkpoint {path} does not fit the model: missing keys {missing[:3]}"
            f"{' ...' if len(missing) > 3 else ''}, unexpected keys {unexpected[:3]}"
            f"{' ...' if len(unexpected) > 3 else ''}"
        )
    for k, v in state.items():
        if not isinstance(v, torch.Tensor):
            raise CheckpointError(f"checkpoint {path}: model weight {k} is a {type(v).__name__}, not a tensor")
        if tuple(v.shape) != tuple(own[k].shape):
            raise CheckpointError(
                f"checkpoint {path} does not fit the model: {k} has shape {tuple(v.shape)}, "
                f"the model expects {tuple(own[k].shape)}"
            )
    model.load_state_dict(state)


def load_optimizer(opt: torch.optim.Optimizer, sd: Any, path: Path) -> None:
    """opt.load_state_dict with group sizes and moment shapes checked first, failures as one line."""
    if (
        not isinstance(sd, dict)
        or not isinstance(sd.get("state"), dict)
        or not isinstance(sd.get("param_groups"), list)
    ):
        raise CheckpointError(f"checkpoint {path}: no optimizer state")
    groups = sd["param_groups"]
    if not all(isinstance(g, dict) and isinstance(g.get("params", []), list) for g in groups):
        raise CheckpointError(f"checkpoint {path}: optimizer param_groups are not objects with a params list")
    sizes, expected = [len(g.get("params", [])) for g in groups], [len(g["params"]) for g in opt.param_groups]
    if sizes != expected:
        raise CheckpointError(f"checkpoint {path}: optimizer groups hold {sizes} parameters, the model {expected}")
    params = [p for g in opt.param_groups for p in g["params"]]
    for idx, st in sd["state"].items():
        if not isinstance(idx, int) or not 0 <= idx < len(params):
            raise CheckpointError(f"checkpoint {path}: optimizer state for parameter {idx!r} of {len(params)}")
        if not isinstance(st, dict):
            raise CheckpointError(f"checkpoint {path}: optimizer state of parameter {idx} is not an object")
        for name, val in st.items():
            if isinstance(val, torch.Tensor) and val.dim() > 0 and tuple(val.shape) != tuple(params[idx].shape):
                raise CheckpointError(
                    f"checkpoint {path}: optimizer {name} of parameter {idx} has shape "
                    f"{tuple(val.shape)}, the parameter {tuple(params[idx].shape)}"
                )
    try:
        opt.load_state_dict(sd)
    except (ValueError, KeyError, RuntimeError, TypeError) as exc:
        raise CheckpointError(f"checkpoint {path}: bad optimizer state: {str(exc).splitlines()[0]}") from None


def set_rng(state: torch.Tensor | None, path: Path) -> None:
    """torch.set_rng_state, a missing or malformed state named as one line."""
    if not isinstance(state, torch.Tensor) or state.dtype != torch.uint8:
        raise CheckpointError(f"checkpoint {path}: bad RNG state (torch_rng is not a uint8 tensor)")
    try:
        torch.set_rng_state(state.cpu())
    except (RuntimeError, TypeError, ValueError) as exc:
        raise CheckpointError(f"checkpoint {path}: bad RNG state: {str(exc).splitlines()[0]}") from None


# --- our GPT ---------------------------------------------------------------------------------------


def resolve(path: Path) -> Path:
    """A checkpoint file from a file or a run directory (its best checkpoint, else its last). A
    directory `tmcheck train --out DIR` wrote is the run itself; one an older tmcheck wrote holds the
    run in DIR/run/, which is accepted too."""
    path = Path(path)
    if path.is_dir():
        for d in (path, path / "run"):
            for name in (BEST, LAST):
                if (d / name).is_file():
                    return d / name
        raise FileNotFoundError(2, f"no {BEST} or {LAST} in the run directory", str(path))
    return path


def gpt_meta(ck: dict, path: Path, max_params: int = schema.MAX_PARAMS) -> schema.CheckpointMeta:
    """The checkpoint's `meta` through the schema, and its model's size checked against `max_params`
    and against the weights the file holds: what load_gpt builds, known before anything is allocated."""
    meta = ck.get("meta")
    if not isinstance(meta, dict) or "model_config" not in meta:
        raise CheckpointError(f"{path} is not a GPT checkpoint of tmcheck (no model_config)")
    try:
        m = schema.validate(schema.CheckpointMeta, meta, f"checkpoint {path}: meta")
        state = ck.get("model")
        held = sum(t.numel() for t in state.values() if isinstance(t, torch.Tensor)) if isinstance(state, dict) else 0
        schema.check_model_size(m.model_config, held, f"checkpoint {path}", max_params)
    except schema.SchemaError as exc:
        raise CheckpointError(str(exc)) from None
    return m


def load_gpt(path: Path, max_params: int = schema.MAX_PARAMS):
    """Our GPT (eval mode, cpu) from a checkpoint written by the trainer: a file or a run directory.

    `max_params` bounds the model a checkpoint may ask for (CheckpointError above it)."""
    from dataclasses import asdict

    from tmcheck.empirics.lm.gpt import GPT, GPTConfig

    path = resolve(path)
    ck = load_checkpoint(path)
    meta = gpt_meta(ck, path, max_params)
    bad = [k for k, v in ck["model"].items() if v.is_floating_point() and not bool(torch.isfinite(v).all())]
    if bad:
        raise CheckpointError(f"checkpoint {path}: weight {bad[0]} holds NaN or infinite values (a diverged run)")
    model = GPT(GPTConfig(**asdict(meta.model_config)))
    load_model_state(model, ck.get("model"), path)
    return model.eval()

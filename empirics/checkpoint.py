"""Checkpoints of the trainer: one safetensors file each, never a pickle (paper Appendix A runs).

A checkpoint is ONE file, written atomically by tmcheck.util.atomic (temporary name, fsync, rename):

- tensors: the model's weights under `model.<name>`, the optimizer's per-parameter state under
  `optim.<param index>.<key>` and the torch RNG state under `rng.torch` (a uint8 tensor);
- the safetensors header's metadata: `tmcheck` = JSON of everything else (step, history, optimizer
  hyper-parameters, run metadata) and `sha256` = a digest of that JSON and of every tensor's name,
  dtype, shape and bytes.

The checksum lives inside the file it protects, so the two cannot be torn apart by a crash: a reader
sees the old checkpoint or the new one. Loading parses only safetensors and JSON, so a pickled
payload (an old `.pt`, or a malicious file) is rejected as "not a safetensors checkpoint" without
ever being unpickled. Every failure is a CheckpointError (a ValueError: one line, exit 2 in the CLI)
naming the file and what is wrong.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import torch

from tmcheck.util import atomic

FORMAT = "tmcheck-checkpoint/1"
LAST, BEST = "last.safetensors", "best.safetensors"


class CheckpointError(ValueError):
    """A checkpoint that cannot be read, is damaged, or does not fit the model it is loaded into."""


def _digest(tensors: dict[str, torch.Tensor], meta_json: str) -> str:
    h = hashlib.sha256(meta_json.encode("utf-8"))
    for name in sorted(tensors):
        t = tensors[name].contiguous()
        h.update(f"\0{name}|{t.dtype}|{tuple(t.shape)}\0".encode())
        h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes())
    return h.hexdigest()


def encode(tensors: dict[str, torch.Tensor], meta: dict) -> bytes:
    """The bytes of a checkpoint file: safetensors with the JSON metadata and the digest in its header."""
    from safetensors.torch import save

    tensors = {k: v.detach().to("cpu").contiguous() for k, v in tensors.items()}
    meta_json = json.dumps({"format": FORMAT, **meta}, sort_keys=True, allow_nan=True)
    return save(tensors, metadata={"tmcheck": meta_json, "sha256": _digest(tensors, meta_json)})


def save(path: Path, tensors: dict[str, torch.Tensor], meta: dict) -> None:
    atomic.write_bytes(Path(path), encode(tensors, meta))


def load(path: Path) -> tuple[dict[str, torch.Tensor], dict]:
    """(tensors on cpu, metadata) of a checkpoint file, its digest checked; CheckpointError otherwise."""
    from safetensors import safe_open

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(2, "no such checkpoint", str(path))
    try:
        with safe_open(str(path), framework="pt", device="cpu") as f:
            header = f.metadata() or {}
            tensors = {k: f.get_tensor(k) for k in f.keys()}
    except Exception as exc:  # safetensors raises its own error types, and OSError/ValueError on garbage
        raise CheckpointError(f"{path} is not a safetensors checkpoint of tmcheck (truncated, or a pickle, "
                              f"which is never loaded): {type(exc).__name__}: {str(exc).splitlines()[0][:120]}") from None
    if "tmcheck" not in header or "sha256" not in header:
        raise CheckpointError(f"{path} is a safetensors file without tmcheck metadata (no 'tmcheck'/'sha256' in its header)")
    if _digest(tensors, header["tmcheck"]) != header["sha256"]:
        raise CheckpointError(f"corrupt checkpoint {path}: sha256 of its tensors and metadata does not match")
    meta = json.loads(header["tmcheck"])
    if meta.get("format") != FORMAT:
        raise CheckpointError(f"{path} has checkpoint format {meta.get('format')!r}, expected {FORMAT!r}")
    return tensors, meta


def section(tensors: dict[str, torch.Tensor], prefix: str) -> dict[str, torch.Tensor]:
    """The tensors under `prefix.`, with the prefix removed."""
    n = len(prefix) + 1
    return {k[n:]: v for k, v in tensors.items() if k.startswith(prefix + ".")}


# --- model and optimizer state ---------------------------------------------------------------------

def load_model_state(model: torch.nn.Module, state: dict[str, torch.Tensor], path: Path) -> None:
    """load_state_dict(strict) with missing/unexpected keys and wrong shapes reported as one line."""
    own = model.state_dict()
    missing = sorted(set(own) - set(state))
    unexpected = sorted(set(state) - set(own))
    if missing or unexpected:
        raise CheckpointError(f"checkpoint {path} does not fit the model: missing keys {missing[:3]}"
                              f"{' ...' if len(missing) > 3 else ''}, unexpected keys {unexpected[:3]}"
                              f"{' ...' if len(unexpected) > 3 else ''}")
    for k, v in state.items():
        if tuple(v.shape) != tuple(own[k].shape):
            raise CheckpointError(f"checkpoint {path} does not fit the model: {k} has shape {tuple(v.shape)}, "
                                  f"the model expects {tuple(own[k].shape)}")
    model.load_state_dict(state)


def optimizer_parts(opt: torch.optim.Optimizer) -> tuple[dict[str, torch.Tensor], dict]:
    """An optimizer's state_dict split into tensors (per-parameter state) and JSON (groups, scalars)."""
    sd = opt.state_dict()
    tensors, scalars = {}, {}
    for idx, st in sd["state"].items():
        for key, val in st.items():
            if isinstance(val, torch.Tensor):
                tensors[f"{idx}.{key}"] = val
            else:
                scalars[f"{idx}.{key}"] = val
    return tensors, {"param_groups": sd["param_groups"], "scalars": scalars}


def load_optimizer(opt: torch.optim.Optimizer, tensors: dict[str, torch.Tensor], info: dict, path: Path) -> None:
    state: dict[int, dict[str, Any]] = {}
    for key, val in [*tensors.items(), *info.get("scalars", {}).items()]:
        idx, name = key.split(".", 1)
        state.setdefault(int(idx), {})[name] = val
    groups = info.get("param_groups")
    if not isinstance(groups, list) or len(groups) != len(opt.param_groups):
        raise CheckpointError(f"checkpoint {path}: optimizer has {len(groups or [])} parameter groups, "
                              f"expected {len(opt.param_groups)}")
    for g_ck, g in zip(groups, opt.param_groups):
        if len(g_ck.get("params", [])) != len(g["params"]):
            raise CheckpointError(f"checkpoint {path}: optimizer group sizes do not match the model")
        if "betas" in g_ck:
            g_ck["betas"] = tuple(g_ck["betas"])
    params = [p for g in opt.param_groups for p in g["params"]]
    for idx, st in state.items():
        if not 0 <= idx < len(params):
            raise CheckpointError(f"checkpoint {path}: optimizer state for parameter {idx} of {len(params)}")
        for name in ("exp_avg", "exp_avg_sq"):
            if name in st and tuple(st[name].shape) != tuple(params[idx].shape):
                raise CheckpointError(f"checkpoint {path}: optimizer {name} of parameter {idx} has shape "
                                      f"{tuple(st[name].shape)}, the parameter {tuple(params[idx].shape)}")
    try:
        opt.load_state_dict({"state": state, "param_groups": groups})
    except (ValueError, KeyError, RuntimeError, TypeError) as exc:
        raise CheckpointError(f"checkpoint {path}: bad optimizer state: {exc}") from None


def set_rng(state: torch.Tensor | None, path: Path) -> None:
    if state is None:
        raise CheckpointError(f"checkpoint {path} has no RNG state (rng.torch)")
    try:
        torch.set_rng_state(state.to(torch.uint8))
    except (RuntimeError, TypeError, ValueError) as exc:
        raise CheckpointError(f"checkpoint {path}: bad RNG state: {str(exc).splitlines()[0]}") from None


# --- our GPT ---------------------------------------------------------------------------------------

def resolve(path: Path) -> Path:
    """A checkpoint file from a file or a run directory (its best checkpoint). An old `best.pt`/`last.pt`
    path is read as its safetensors sibling; the pickle itself is never opened."""
    path = Path(path)
    if path.is_dir():
        for name in (BEST, LAST):
            if (path / name).is_file():
                return path / name
        raise FileNotFoundError(2, f"no {BEST} or {LAST} in the run directory", str(path))
    if path.suffix == ".pt" and path.stem in ("best", "last") and (path.with_suffix(".safetensors")).is_file():
        return path.with_suffix(".safetensors")
    return path


def load_gpt(path: Path):
    """Our GPT (eval mode, cpu) from a checkpoint written by the trainer: a file or a run directory."""
    from tmcheck.empirics.model import GPT, GPTConfig

    path = resolve(path)
    tensors, meta = load(path)
    cfg = meta.get("meta", {}).get("model_config")
    if not isinstance(cfg, dict):
        raise CheckpointError(f"{path} is not a GPT checkpoint of tmcheck (no model_config)")
    try:
        model = GPT(GPTConfig(**cfg))
    except TypeError as exc:
        raise CheckpointError(f"{path}: bad model_config: {exc}") from None
    load_model_state(model, section(tensors, "model"), path)
    return model.eval()

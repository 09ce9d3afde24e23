"""Points from disk: .npy, .pt (a tensor, or a dict with one tensor) and .safetensors (one tensor,
or the one named by ``key``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def load_points(path, key: str | None = None) -> np.ndarray:
    """A 2-D float array of points; ValueError for an unknown suffix or an ambiguous container."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".npy":
        return np.load(path, allow_pickle=False)
    if suffix == ".pt":
        import torch

        obj = torch.load(path, map_location="cpu", weights_only=True)
        if isinstance(obj, dict):
            obj = _pick(obj, key, path)
        if not isinstance(obj, torch.Tensor):
            raise ValueError(f"{path}: expected a tensor, got {type(obj).__name__}")
        return obj.detach().to(torch.float64 if obj.dtype == torch.float64 else torch.float32).numpy()
    if suffix == ".safetensors":
        from safetensors.numpy import load_file

        try:
            tensors = load_file(str(path))
        except Exception as exc:  # safetensors raises its own error types for corrupt files
            raise ValueError(f"{path}: not a readable safetensors file ({exc})") from exc
        return _pick(tensors, key, path)
    raise ValueError(f"{path}: unsupported file type {suffix or '(none)'}; use .npy, .pt or .safetensors")


def _pick(tensors: dict, key: str | None, path: Path):
    if key is not None:
        if key not in tensors:
            raise ValueError(f"{path}: no tensor named {key!r}; found {', '.join(map(str, tensors))}")
        return tensors[key]
    if len(tensors) != 1:
        raise ValueError(f"{path}: holds {len(tensors)} tensors ({', '.join(map(str, tensors))}); name one with --key")
    return next(iter(tensors.values()))

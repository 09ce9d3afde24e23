"""Points from disk: .npy, .pt (a tensor, or a dict with one tensor) and .safetensors (one tensor,
or the one named by ``key``).

Nothing here runs code from a file: .npy is read without pickles, .pt with torch's weights-only
unpickler, .safetensors has no code path at all. A .npy header is checked against the file's size
before any memory is allocated, so a header claiming a huge shape is refused in one line.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tmcheck.util import bounds, safeio


def load_points(path, key: str | None = None) -> np.ndarray:
    """A numeric array of points; ValueError for an unknown suffix, an unreadable file or an ambiguous container."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".npy", ".pt", ".safetensors"):
        raise ValueError(f"{path}: unsupported file type {suffix or '(none)'}; use .npy, .pt or .safetensors")
    # a FIFO, device or directory refused at once (never opened to block), and a file over the memory refused
    size = safeio.check_regular(path, "a points file").stat().st_size
    bounds.check_memory(str(path), 2 * size, "its points (read, then converted)")
    if suffix == ".npy":
        return _load_npy(path)
    if suffix == ".pt":
        import pickle

        import torch

        try:
            obj = torch.load(path, map_location="cpu", weights_only=True)
        except pickle.UnpicklingError:
            raise ValueError(f"{path}: holds pickled objects other than tensors; they are never loaded") from None
        except (RuntimeError, EOFError, ValueError, AttributeError, TypeError) as exc:
            raise ValueError(f"{path}: not a readable tensor file ({_first_line(exc)})") from None
        if isinstance(obj, dict):
            obj = _pick(obj, key, path)
        if not isinstance(obj, torch.Tensor):
            raise ValueError(f"{path}: expected a tensor, got {type(obj).__name__}")
        return _numeric(obj, path)
    if suffix == ".safetensors":
        from safetensors.torch import load_file

        try:
            tensors = load_file(str(path))
        except Exception as exc:  # safetensors raises its own error types for corrupt files
            raise ValueError(f"{path}: not a readable safetensors file ({_first_line(exc)})") from None
        return _numeric(_pick(tensors, key, path), path)
    raise ValueError(f"{path}: unsupported file type {suffix or '(none)'}; use .npy, .pt or .safetensors")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:120] if text else type(exc).__name__


def _numeric(t, path: Path) -> np.ndarray:
    """A torch tensor as numpy: float64 stays, other floating and integer types become float32."""
    import torch

    if t.is_complex() or t.dtype == torch.bool:
        raise ValueError(f"{path}: points must be real numbers, got a {t.dtype} tensor")
    return t.detach().to(torch.float64 if t.dtype == torch.float64 else torch.float32).numpy()


def _load_npy(path: Path) -> np.ndarray:
    try:
        with safeio.open_regular(path, "a points file") as f:
            version = np.lib.format.read_magic(f)
            read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            shape, _, dtype = read(f, max_header_size=10_000)
            offset = f.tell()
    except (ValueError, OSError, SyntaxError, EOFError) as exc:
        if isinstance(exc, OSError) and getattr(exc, "filename", None):
            raise
        raise ValueError(f"{path}: not a readable .npy file ({_first_line(exc)})") from None
    if dtype.hasobject:
        raise ValueError(f"{path}: holds Python objects (a pickle); only numeric arrays are read")
    need = int(np.prod(shape, dtype=object)) * dtype.itemsize
    have = path.stat().st_size - offset
    if need != have:
        raise ValueError(f"{path}: the header claims shape {shape} ({need} bytes) but the file holds {have} bytes")
    return np.load(path, allow_pickle=False)


def _pick(tensors: dict, key: str | None, path: Path):
    if key is not None:
        if key not in tensors:
            raise ValueError(f"{path}: no tensor named {key!r}; found {', '.join(map(str, tensors))}")
        return tensors[key]
    if len(tensors) != 1:
        raise ValueError(f"{path}: holds {len(tensors)} tensors ({', '.join(map(str, tensors))}); name one with --key")
    return next(iter(tensors.values()))

"""The network file format `tmcheck-network`, version 1 (JSON).

    {"format": "tmcheck-network", "version": 1, "arithmetic": "exact" | "float64",
     "d_embd": 5, "l": L, "D": D,
     "embedding": {"U": L x D, "E": d_embd x 1}, "positional": d_embd x L,
     "blocks": [{"heads": [{"Q": 5x5, "K": 5x5, "V": 5x5}, ...],
                 "ffn": [{"W": out x in, "b": out}, ...]}, ...],
     "decoder": {"row": r, "col": c}, "meta": {...free...}}

Matrices are lists of rows, indices 0-based. Exact numbers are strings "p/q" or "p"; float64 numbers
are JSON numbers. Semantics: H_0 = E (U x)^T + PE; each block B(H) = FFN(MHA(H) + H) + MHA(H) + H
with MHA a sum of ReLU heads V H σ((K H)^T Q H) and the FFN applied column-wise, ReLU between its
layers and none after the last; T(x) = H_final[r, c].
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from tmcheck.theory.network import ARITHMETICS, Block, Head, Layer, Network, NetworkError

FORMAT = "tmcheck-network"
VERSION = 1


def _encode(arr: np.ndarray, arithmetic: str) -> Any:
    if arithmetic == "exact":
        return np.vectorize(str, otypes=[object])(arr).tolist() if arr.size else arr.tolist()
    return np.asarray(arr, dtype=np.float64).tolist()


def to_dict(net: Network) -> dict[str, Any]:
    a = net.arithmetic
    enc = lambda arr: _encode(arr, a)  # noqa: E731
    return {
        "format": FORMAT,
        "version": VERSION,
        "arithmetic": a,
        "d_embd": net.d_embd,
        "l": net.l,
        "D": net.D,
        "embedding": {"U": enc(net.U), "E": enc(net.E)},
        "positional": enc(net.PE),
        "blocks": [
            {
                "heads": [{"Q": enc(h.Q), "K": enc(h.K), "V": enc(h.V)} for h in b.heads],
                "ffn": [{"W": enc(x.W), "b": enc(x.b)} for x in b.ffn],
            }
            for b in net.blocks
        ],
        "decoder": {"row": net.decoder[0], "col": net.decoder[1]},
        "meta": net.meta,
    }


def _get(d: dict, key: str, where: str):
    if not isinstance(d, dict):
        raise NetworkError(f"{where}: expected an object, got {type(d).__name__}")
    if key not in d:
        raise NetworkError(f"{where}: missing key {key!r}")
    return d[key]


def _list(d: dict, key: str, where: str) -> list:
    v = _get(d, key, where)
    if not isinstance(v, list):
        raise NetworkError(f"{where}.{key}: expected a list, got {type(v).__name__}")
    return v


def _check_numbers(value: Any, arithmetic: str, where: str) -> Any:
    """Exact files hold strings (or ints), float files JSON numbers; catch the mix-up by name."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, list):
            stack.extend(v)
        elif arithmetic == "float64" and not (isinstance(v, (int, float)) and not isinstance(v, bool)):
            raise NetworkError(f"{where}: float64 entries must be JSON numbers, found {v!r}")
        elif arithmetic == "exact" and not (isinstance(v, str) or (isinstance(v, int) and not isinstance(v, bool))):
            raise NetworkError(f"{where}: exact entries must be strings 'p/q' or 'p', found {v!r}")
    return value


def from_dict(d: dict[str, Any]) -> Network:
    """Build a Network from a parsed file, raising NetworkError with a one-line reason."""
    if not isinstance(d, dict):
        raise NetworkError("top level must be a JSON object")
    if d.get("format") != FORMAT:
        raise NetworkError(f"not a {FORMAT} file (format={d.get('format')!r})")
    version = d.get("version")
    if type(version) is not int or version != VERSION:  # True == 1 and 1.0 == 1 in Python: not versions
        raise NetworkError(f"unsupported {FORMAT} version {d.get('version')!r}; this tmcheck reads version {VERSION}")
    a = _get(d, "arithmetic", "file")
    if a not in ARITHMETICS:
        raise NetworkError(f"unknown arithmetic {a!r}; expected one of {ARITHMETICS}")
    num = lambda v, where: _check_numbers(v, a, where)  # noqa: E731
    emb = _get(d, "embedding", "file")
    blocks = []
    for bi, b in enumerate(_list(d, "blocks", "file")):
        heads = tuple(
            Head(*(num(_get(h, k, f"blocks[{bi}].heads[{hi}]"), f"blocks[{bi}].heads[{hi}].{k}") for k in "QKV"))
            for hi, h in enumerate(_list(b, "heads", f"blocks[{bi}]"))
        )
        ffn = tuple(
            Layer(
                num(_get(x, "W", f"blocks[{bi}].ffn[{li}]"), f"blocks[{bi}].ffn[{li}].W"),
                num(_get(x, "b", f"blocks[{bi}].ffn[{li}]"), f"blocks[{bi}].ffn[{li}].b"),
            )
            for li, x in enumerate(_list(b, "ffn", f"blocks[{bi}]"))
        )
        blocks.append(Block(heads, ffn))
    dec = _get(d, "decoder", "file")
    for key in ("d_embd", "l", "D"):
        v = _get(d, key, "file")
        if not isinstance(v, int) or isinstance(v, bool):
            raise NetworkError(f"{key} must be an integer, got {v!r}")
    for key in ("row", "col"):
        v = _get(dec, key, "decoder")
        if not isinstance(v, int) or isinstance(v, bool):
            raise NetworkError(f"decoder.{key} must be an integer, got {v!r}")
    return Network(
        arithmetic=a,
        d_embd=d["d_embd"],
        l=d["l"],
        D=d["D"],
        U=num(_get(emb, "U", "embedding"), "embedding.U"),
        E=num(_get(emb, "E", "embedding"), "embedding.E"),
        PE=num(_get(d, "positional", "file"), "positional"),
        blocks=blocks,
        decoder=(dec["row"], dec["col"]),
        meta=d.get("meta") or {},
    )


def dumps(net: Network) -> str:
    return json.dumps(to_dict(net), separators=(",", ":"))


def save(net: Network, path: str | os.PathLike) -> Path:
    """Write atomically (temporary file, fsync, rename, fsync of the directory)."""
    from tmcheck.util.atomic import write_text

    path = Path(path)
    write_text(path, dumps(net))
    return path


def load(path: str | os.PathLike) -> Network:
    path = Path(path)
    if not path.is_file():
        raise NetworkError(f"no such network file: {path}")
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise NetworkError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    except UnicodeDecodeError:
        raise NetworkError(f"{path}: not a text file") from None
    except RecursionError:
        raise NetworkError(f"{path}: JSON nested too deeply") from None
    except ValueError as exc:  # e.g. an integer over Python's digit limit
        raise NetworkError(f"{path}: not a readable network file ({str(exc)[:80]})") from None
    try:
        return from_dict(data)
    except NetworkError as exc:
        raise NetworkError(f"{path}: {exc}") from None
    except (TypeError, RecursionError) as exc:  # a shape the checks above do not name (ragged or nested lists)
        raise NetworkError(f"{path}: malformed network ({type(exc).__name__}: {str(exc)[:80]})") from None

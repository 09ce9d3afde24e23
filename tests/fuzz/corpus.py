"""Hostile files for the fuzz tests, written into one directory: network files with the
wrong shapes, versions, numbers and nesting; point files with lying headers, pickles and truncations;
CSVs, a sweep config and checkpoints that are corrupt. `build(dir)` returns {name: path}."""

from __future__ import annotations

import copy
import io
import json
import os
import pickle
from pathlib import Path

import numpy as np

from tmcheck.theory import netfile
from tmcheck.theory.lemmas.addition import addition


class Payload:
    """Unpickling runs `touch <marker>`: a file that must never appear."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _networks(root: Path) -> dict[str, Path]:
    net = addition([1, -1, 0], 2).network
    good = netfile.to_dict(net)
    out = {}

    def put(name: str, obj=None, raw: str | None = None) -> None:
        p = root / name
        p.write_text(raw if raw is not None else json.dumps(obj))
        out[name] = p

    put("net_good.json", good)
    for name, edit in {
        "net_blocks5.json": lambda d: d.__setitem__("blocks", 5),
        "net_heads_null.json": lambda d: d["blocks"][0].__setitem__("heads", None),
        "net_version_true.json": lambda d: d.__setitem__("version", True),
        "net_version_float.json": lambda d: d.__setitem__("version", 1.0),
        "net_underscore.json": lambda d: d["embedding"]["U"][0].__setitem__(0, "1_000"),
        "net_arabic_digit.json": lambda d: d["embedding"]["U"][0].__setitem__(0, "\u0661"),
        "net_huge_exponent.json": lambda d: d["embedding"]["U"][0].__setitem__(0, "1e1000000000"),
        "net_ragged.json": lambda d: d["embedding"].__setitem__("U", [[1], [1, 2]]),
    }.items():
        d = copy.deepcopy(good)
        edit(d)
        put(name, d)
    put("net_deep.json", raw="[" * 100_000 + "]" * 100_000)
    put("net_not_json.json", raw="{not json")
    # 40 blocks whose head is cubic in H: exact values triple in bits per block (20 KB)
    third = [["1/3" if i == j else "0" for j in range(5)] for i in range(5)]
    grow = copy.deepcopy(good)
    grow["blocks"] = [{"heads": [{"Q": third, "K": third, "V": third}], "ffn": []} for _ in range(40)]
    put("net_grow40.json", grow)
    flt = copy.deepcopy(grow)
    flt["arithmetic"] = "float64"
    big = [[1e200 if i == j else 0.0 for j in range(5)] for i in range(5)]
    flt["blocks"] = [{"heads": [{"Q": big, "K": big, "V": big}], "ffn": []}]
    flt["embedding"] = {"U": np.eye(net.l, net.D).tolist(), "E": [[1.0], [0.0], [0.0], [0.0], [0.0]]}
    flt["positional"] = np.asarray(net.PE, dtype=float).tolist()
    put("net_float_overflow.json", flt)
    return out


def _points(root: Path, marker: Path) -> dict[str, Path]:
    import torch
    from safetensors.torch import save_file

    out = {}
    X = np.random.default_rng(0).random((200, 4))
    buf = io.BytesIO()
    np.save(buf, X)
    raw = buf.getvalue()
    (root / "pts_good.npy").write_bytes(raw)
    (root / "pts_truncated.npy").write_bytes(raw[: len(raw) // 2])
    with open(root / "pts_huge_header.npy", "wb") as f:
        np.lib.format.write_array_header_1_0(f, {"descr": "<f8", "fortran_order": False, "shape": (10**12, 10**6)})
        f.write(b"\0" * 64)
    np.save(root / "pts_objects.npy", np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
    np.savez(root / "pts_good.npz", X=X)
    (root / "pts_pickle.pt").write_bytes(pickle.dumps(Payload(marker)))
    torch.save(torch.from_numpy(X), root / "pts_good.pt")
    (root / "pts_truncated.pt").write_bytes((root / "pts_good.pt").read_bytes()[:100])
    save_file({"x": torch.from_numpy(X).to(torch.bfloat16)}, str(root / "pts_bf16.safetensors"))
    (root / "pts_truncated.safetensors").write_bytes((root / "pts_bf16.safetensors").read_bytes()[:60])
    for p in root.glob("pts_*"):
        out[p.name] = p
    return out


def _tables(root: Path) -> dict[str, Path]:
    rng = np.random.default_rng(0)
    N = np.array([1e5, 2e5, 4e5, 8e5, 1.6e6, 3.2e6] * 2)
    loss = 2 + 5 * N**-0.3 + rng.normal(0, 1e-3, 12)
    rows = "".join(f"{n},{v},{'ab'[i // 6]},nan\n" for i, (n, v) in enumerate(zip(N, loss, strict=True)))
    (root / "fit_good.csv").write_text("N,loss,g,gn\n" + rows)
    (root / "fit_ragged.csv").write_text("N,loss\n1,2,3\n4\n")
    (root / "fit_text.csv").write_text("N,loss\nabc,def\n1e999,nan\n")
    (root / "fit_binary.csv").write_bytes(b"\xff\xfe\x00N,loss\n\x00\x01")
    (root / "fit_empty.csv").write_text("")
    return {p.name: p for p in root.glob("fit_*.csv")}


def _sweep(root: Path) -> dict[str, Path]:
    out = {}
    for name, cfg in {
        "sweep_escape": {"kind": "pretrain", "corpora": ["../../escaped"], "sizes": [1000]},
        "sweep_garbage": None,
    }.items():
        d = root / name
        d.mkdir()
        (d / "config.json").write_text("{garbage" if cfg is None else json.dumps(cfg))
        (d / "results.jsonl").write_text('{"run": "../../outside"}\n{not json\n')
        out[name] = d
    return out


def _checkpoints(root: Path, marker: Path) -> dict[str, Path]:
    import dataclasses

    import torch

    from tmcheck.empirics.lm.checkpoint import save_checkpoint
    from tmcheck.empirics.lm.gpt import GPT, GPTConfig

    cfg = GPTConfig(vocab_size=300, block_size=64, n_layer=1, n_head=2, n_embd=16)
    torch.manual_seed(0)
    save_checkpoint(
        root / "ckpt_good.pt", {"model": GPT(cfg).state_dict(), "meta": {"model_config": dataclasses.asdict(cfg)}}
    )

    (root / "ckpt_pickle.pt").write_bytes(pickle.dumps(Payload(marker)))
    torch.save({"model": {"w": torch.zeros(2)}, "evil": Payload(marker)}, root / "ckpt_torch_pickle.pt")
    (root / "ckpt_truncated.safetensors").write_bytes(b'\x08\x00\x00\x00\x00\x00\x00\x00{"a":')
    d = root / "run_bad"
    d.mkdir()
    (d / "best.pt").write_bytes(pickle.dumps(Payload(marker)))
    return {
        p.name: p
        for p in [
            root / "ckpt_good.pt",
            root / "ckpt_pickle.pt",
            root / "ckpt_torch_pickle.pt",
            root / "ckpt_truncated.safetensors",
            d,
        ]
    }


def build(root: Path) -> dict[str, Path]:
    """All hostile files under root; unpickling any payload would create root/PWNED."""
    root.mkdir(parents=True, exist_ok=True)
    marker = root / "PWNED"
    files = {}
    for make in (_networks, _tables, _sweep):
        files.update(make(root))
    files.update(_points(root, marker))
    files.update(_checkpoints(root, marker))
    return files

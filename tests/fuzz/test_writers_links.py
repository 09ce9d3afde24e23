"""Every writer of tmcheck with a symbolic link planted at each component below its output root (#43).

One parametrised test over WRITERS x their components: a link (to a directory or a file outside the root,
holding a file no command may write) at a directory component must be refused, and at a file component
it must be refused or replaced, never written through; in every case nothing changes outside the root.
Before #43, `train --out OUT` with OUT/data a link wrote the token shards into the link's target, and an
older-layout OUT/run that was a link was resumed and its checkpoints replaced. The rule is
tmcheck.util.safepath (its own tests show each refusal goes when the link goes: the mutation).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from harness import SECRET, invoke

sys.path.insert(0, str(Path(__file__).parents[1] / "empirics"))
import sweep_toy

from tmcheck.empirics.sweep import SweepDir, register_kind, run_sweep

TOY = sweep_toy.ToyPreset(name="toy", xs=(1,))
TOY_RUN = sweep_toy.run_name({"x": 1})


@dataclass(frozen=True)
class Writer:
    name: str
    write: Callable[[Path], object]  # writes under the root it is given
    dirs: tuple[str, ...]  # components (relative to the root) it creates as directories
    files: tuple[str, ...] = ()  # files it writes
    setup: Callable[[Path], object] = lambda root: None  # what the root holds before the link is planted


def _train_cli(root: Path):
    res = invoke(["train", "--preset", "tiny", "--tokens", "2000", "--max-steps", "1", "--out", str(root)])
    if res.exit_code != 0:
        raise ValueError(res.stderr.strip())


def _sweep(root: Path):
    return run_sweep(root, "exectoy", TOY, progress=False, log=lambda s: None)


def _sweep_data(root: Path):
    return SweepDir(root).data_dir("stories")  # the one resolver of a sweep's data directories


def _trainer(root: Path):
    import torch

    from tmcheck.empirics.lm.train import TrainConfig, train

    torch.manual_seed(0)
    model = torch.nn.Linear(2, 1)
    x, y = torch.randn(8, 2), torch.randn(8, 1)
    cfg = TrainConfig(max_steps=2, eval_every=1, warmup_steps=1, progress=False, device="cpu", threads=1)
    loss = lambda m, b: torch.nn.functional.mse_loss(m(b[0]), b[1])  # noqa: E731
    return train(model, lambda s, m: (x, y), loss, lambda: [(x, y)], cfg, root)


def _tuning(root: Path):
    from tmcheck.empirics.sweep.tune import Store

    Store(root).save()


def _id_store(root: Path):
    from tmcheck.empirics.report.common import cached_id

    return cached_id(root / "id.json", "k", {"p": 1}, lambda: {"d": 1.0})


def _embeddings(root: Path):
    from tmcheck.empirics.lm.embed import save_embeddings

    return save_embeddings(root / "e.npy", np.zeros((3, 2), np.float32), {"model": "m"})


WRITERS = [
    Writer("train --out", _train_cli, ("data", "run"), (".lock",)),
    Writer(
        "sweep (runs, plan, rows)",
        _sweep,
        ("runs", f"runs/{TOY_RUN}"),
        ("plan.json", "results.jsonl", f"runs/{TOY_RUN}/spec.json"),
        lambda root: SweepDir(root).open("exectoy", TOY),
    ),
    Writer("sweep data directory", _sweep_data, ("data", "data/stories")),
    Writer("trainer (checkpoints, result.json)", _trainer, (), ("last.pt", "best.pt", "result.json")),
    Writer("tuning store", _tuning, (), ("trials.json",)),
    Writer("ID store", _id_store, (), ("id.json",)),
    Writer("embeddings", _embeddings, (), ("e.npy", "e.json")),
    # JOIN HERE: the export writer (empirics/lm/hf.py, `export hf`) and the embed/id command writers
    # (cli/embed.py, cli/id.py) join this list when their owners wire them to tmcheck.util.safepath.
]
CASES = [(w, c, True) for w in WRITERS for c in w.dirs] + [(w, c, False) for w in WRITERS for c in w.files]


@pytest.fixture(autouse=True)
def toy():
    register_kind(sweep_toy.KIND)


def tree(path: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


@pytest.mark.parametrize(("writer", "component", "is_dir"), CASES, ids=[f"{w.name}:{c}" for w, c, _ in CASES])
def test_a_link_at_any_component_below_the_root_is_never_written_through(tmp_path, writer, component, is_dir):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "precious.txt").write_text(SECRET)
    for name in ("tokenizer.json", "train.bin", "dataset.json", "last.pt", "spec.json"):
        (elsewhere / name).write_text(SECRET)  # what a write through the link would replace
    root = tmp_path / "root"
    root.mkdir()
    writer.setup(root)
    link = root / component
    link.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(elsewhere if is_dir else elsewhere / "precious.txt", link)
    before = tree(elsewhere)
    try:
        writer.write(root)
        refused = None
    except (ValueError, OSError, RuntimeError) as exc:  # RuntimeError: SweepFailed (the run refused)
        refused = str(exc)
    assert tree(elsewhere) == before, f"{writer.name} wrote through a link at {component}"
    if is_dir:
        assert refused is not None and "symbolic link" in refused, f"{writer.name} accepted a link at {component}"
        assert "\n" not in refused
    else:
        assert refused is not None or not link.is_symlink()  # refused, or the link replaced by the file

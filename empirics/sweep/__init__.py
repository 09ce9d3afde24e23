"""Sweeps: one core (SweepDir, RunSpec, run_spec, run_sweep) and one module per kind.

    from tmcheck.empirics.sweep import SweepDir, run_sweep, run_spec
    rows = run_sweep("runs/s", "synthetic", "tiny")          # submit: plan, run what is not done, merge
    spec = SweepDir("runs/s").read_plan()[3]                  # plain data: spec.as_dict() is JSON
    row = run_spec("runs/s", spec.as_dict())                  # from any process that sees the directory

Executors (who runs the specs): serial and local (a process pool) in tmcheck.empirics.sweep.executors,
slurm (a job array, through submitit) in tmcheck.empirics.sweep.slurm; `sweep status`:
tmcheck.empirics.sweep.status.

Kinds: "pretrain" (tmcheck.empirics.sweep.pretrain, Figure 2) and "synthetic"
(tmcheck.empirics.sweep.synthetic, eq. 3-4); see tmcheck.empirics.sweep.kinds to add one. File names
and the run-name rule: tmcheck.empirics.sweep.layout.
"""

from __future__ import annotations

from pathlib import Path

from tmcheck.empirics.sweep import layout
from tmcheck.empirics.sweep.core import Context, Executor, RunSpec, SweepBusy, SweepDir, run_spec, run_sweep
from tmcheck.empirics.sweep.executors import SweepFailed, local, serial
from tmcheck.empirics.sweep.kinds import Kind, get_kind, kind_names, register_kind

__all__ = [
    "Context",
    "Executor",
    "Kind",
    "RunSpec",
    "SweepBusy",
    "SweepDir",
    "SweepFailed",
    "get_kind",
    "kind_names",
    "layout",
    "load_config",
    "local",
    "preset_from_config",
    "register_kind",
    "run_spec",
    "run_sweep",
    "serial",
]


def load_config(sweep_dir: Path) -> dict:
    """The config.json of a sweep directory (FileNotFoundError if there is none)."""
    return SweepDir(sweep_dir).read_config()


def preset_from_config(config: dict):
    """The preset object a config stores."""
    from tmcheck.empirics.presets import preset_from_dict

    return preset_from_dict(config.get("kind", "pretrain"), config["preset"])


# Names that empirics/lm/embed.py imports from here (full_split_run; load_gpt until it imports
# tmcheck.empirics.lm.checkpoint); resolved on use so that importing the core does not import torch.
def __getattr__(name: str):
    if name == "full_split_run":
        from tmcheck.empirics.sweep.pretrain import full_split_run

        return full_split_run
    if name == "load_gpt":
        from tmcheck.empirics.lm.checkpoint import load_gpt

        return load_gpt
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

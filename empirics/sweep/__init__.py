"""Sweeps: one core (SweepDir, RunSpec, run_spec), one submitter (run_sweep) and one module per kind
(the experiments of paper Section 3 and eq. 3-4).

    from tmcheck.empirics.sweep import SweepDir, run_sweep, run_spec
    rows = run_sweep("runs/s", "synthetic", "tiny")          # submit: plan, run what is not done, merge
    spec = SweepDir("runs/s").read_plan()[3]                  # plain data: spec.as_dict() is JSON
    row = run_spec("runs/s", spec.as_dict())                  # from any process that sees the directory

Executors (who runs the specs): serial and local (a process pool) in tmcheck.empirics.sweep.executors,
slurm (a job array, through submitit) in tmcheck.empirics.sweep.slurm; `sweep status`:
tmcheck.empirics.sweep.status. The submitter: tmcheck.empirics.sweep.runner.

Kinds: "pretrain" (tmcheck.empirics.sweep.pretrain, Figure 2), "model" (tmcheck.empirics.sweep.model,
Figure 3) and "synthetic" (tmcheck.empirics.sweep.synthetic, eq. 3-4); see tmcheck.empirics.sweep.kinds
to add one. File names and the run-name rule: tmcheck.empirics.sweep.layout. The config schema:
tmcheck.empirics.schema.
"""

from __future__ import annotations

from pathlib import Path

from tmcheck.empirics.sweep import layout
from tmcheck.empirics.sweep.core import Context, Executor, RunSpec, SweepBusy, SweepDir, run_spec
from tmcheck.empirics.sweep.executors import SweepFailed, local, serial
from tmcheck.empirics.sweep.kinds import Kind, get_kind, kind_names, preset_class, register_kind
from tmcheck.empirics.sweep.runner import run_sweep

__all__ = [
    "Context",
    "Executor",
    "Kind",
    "RunSpec",
    "SweepBusy",
    "SweepDir",
    "SweepFailed",
    "full_split_run",
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
    """The config.json of a sweep directory through the schema (FileNotFoundError if there is none)."""
    return SweepDir(sweep_dir).read_config()


def preset_from_config(config: dict):
    """The preset object a config stores (a config as read_config gives it, or an older one)."""
    from tmcheck.empirics import schema

    return schema.load_config(config, "config", preset_class).preset


def full_split_run(sweep_dir: Path, corpus: str) -> Path:
    """The run directory of a pretraining sweep's model trained on the full split of `corpus`."""
    from tmcheck.empirics.sweep.pretrain import full_split_run as find

    return find(sweep_dir, corpus)

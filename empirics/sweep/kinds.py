"""The registry of sweep kinds: what a sweep of each kind plans, runs and reports.

A kind is a `Kind` record in a module of its own (tmcheck.empirics.sweep.pretrain,
tmcheck.empirics.sweep.synthetic, tmcheck.empirics.sweep.model), imported on first use. This module
imports no other module of the sweep package (the core imports it). Adding a kind: write a module
whose `KIND` is a `Kind`, and add its name and module to BUILTIN (or call `register_kind` at run time).
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

# kind name -> module holding its KIND
BUILTIN = {
    "pretrain": "tmcheck.empirics.sweep.pretrain",
    "synthetic": "tmcheck.empirics.sweep.synthetic",
    "model": "tmcheck.empirics.sweep.model",
}


@dataclass(frozen=True)
class Kind:
    """What the sweep core needs from a kind; every function is pure apart from the files it writes.

    new_config(preset, options) -> dict: the config (without "kind") of a new sweep; validates the
        preset and the options (None values: the preset's defaults) and raises ValueError.
    plan(ctx, log) -> list[RunSpec]: every run of the sweep in order; may prepare inputs shared by
        the runs under ctx.sweep.data_dir(...) (idempotent: a second call finds them ready).
    run_name(params) -> str: the run's name, through layout.run_name with the kind's template; every
        spec's `run` must equal it (run_spec checks, so a spec read from a file names its own directory).
    run(ctx, spec) -> dict: run one spec in ctx.sweep.run_dir(spec.run), resuming whatever that
        directory holds; returns the result row (plain JSON data). Called by `run_spec` only.
    describe(row) -> str: one log line for a finished row.
    report: module with `build(sweep, bootstrap) -> dict` and `summary(report) -> str`.
    run_identity(preset, params) -> dict, or None: everything one run's row depends on, as plain data;
        two sweeps whose identities of a spec are equal compute the same row, so one may take the
        other's finished run (`run_sweep(..., reuse=...)`). None: the kind's runs are never reused.
    """

    name: str
    description: str
    new_config: Callable[..., dict]
    plan: Callable[[Any, Callable[[str], None]], list]  # (core.Context, log) -> list[core.RunSpec]
    run_name: Callable[[Mapping], str]
    run: Callable[[Any, Any], dict]  # (core.Context, core.RunSpec) -> row
    describe: Callable[[dict], str]
    report: str
    run_identity: Callable[[Any, Mapping], dict] | None = None


_REGISTERED: dict[str, Kind] = {}


def register_kind(kind: Kind) -> None:
    _REGISTERED[kind.name] = kind


def kind_names() -> list[str]:
    return list(dict.fromkeys([*BUILTIN, *_REGISTERED]))


def get_kind(name: str) -> Kind:
    if name not in _REGISTERED:
        if name not in BUILTIN:
            raise ValueError(f"unknown sweep kind {name!r}; expected one of {', '.join(kind_names())}")
        kind = importlib.import_module(BUILTIN[name]).KIND
        if kind.name != name:
            raise RuntimeError(f"module {BUILTIN[name]} defines kind {kind.name!r}, not {name!r}")
        _REGISTERED[name] = kind
    return _REGISTERED[name]


def get_preset(name: str, kind: str = "pretrain", **overrides):
    """The named preset of a kind (with fields replaced by `overrides`); ValueError names the choices."""
    from tmcheck.empirics import presets

    return presets.get_preset(name, kind, **overrides)


def preset_names(kind: str) -> list[str]:
    """The names of a kind's presets, in their declared order."""
    from tmcheck.empirics import presets

    if kind not in presets.PRESETS:
        raise ValueError(f"no presets for sweep kind {kind!r}; expected one of {', '.join(presets.PRESETS)}")
    return list(presets.PRESETS[kind])


def preset_class(kind: str) -> type:
    """The preset class of a kind."""
    from tmcheck.empirics import presets

    return presets.preset_class(kind)


def preset_from_dict(kind: str, d: dict):
    """The preset of a kind that a config.json stores, validated by the schema."""
    return preset_class(kind).from_dict(d)


def decades(grid: list[int]) -> float:
    """Decades a sorted grid spans: log10(last / first)."""
    return math.log10(grid[-1] / grid[0])

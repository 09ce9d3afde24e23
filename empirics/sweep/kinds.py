"""The registry of sweep kinds: what a sweep of each kind plans, runs, reports, and its presets.

A built-in kind is a module of this package, named after the kind, whose top-level `KIND` is a
`Kind` (tmcheck.empirics.sweep.pretrain, .model, .synthetic); the modules are found by that rule
(their sources read, nothing imported) and each is imported on first use. Its report module is
tmcheck.empirics.report.<kind> unless the record names another. This module imports no other module
of the sweep package (the core imports it) and no torch. Adding a kind: write its module (its spec
functions, DESCRIPTION, its preset class PRESET and named PRESETS, `KIND = module_kind(globals())`),
its report module, its CLI command and its tests; or call `register_kind` at run time.

The preset API: `get_preset`, `preset_names`, `preset_class`, `preset_from_dict` find a kind's
presets through its record; `decades` is the span of a grid.
"""

from __future__ import annotations

import functools
import importlib
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

PACKAGE = "tmcheck.empirics.sweep"
REPORTS = "tmcheck.empirics.report"
FUNCTIONS = ("new_config", "plan", "run_name", "run", "describe", "run_identity")  # a kind module's names


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
    preset_class: the kind's Preset subclass (tmcheck.empirics.sweep.preset), what config.json holds.
    run_identity(preset, params) -> dict, or None: everything one run's row depends on, as plain data;
        two sweeps whose identities of a spec are equal compute the same row, so one may take the
        other's finished run (`run_sweep(..., reuse=...)`). None: the kind's runs are never reused.
    presets: the kind's named presets, name -> preset, in the order `preset_names` lists them.
    """

    name: str
    description: str
    new_config: Callable[..., dict]
    plan: Callable[[Any, Callable[[str], None]], list]  # (core.Context, log) -> list[core.RunSpec]
    run_name: Callable[[Mapping], str]
    run: Callable[[Any, Any], dict]  # (core.Context, core.RunSpec) -> row
    describe: Callable[[dict], str]
    report: str
    preset_class: type
    run_identity: Callable[[Any, Mapping], dict] | None = None
    presets: Mapping[str, Any] = field(default_factory=dict, hash=False)


def module_kind(namespace: Mapping[str, Any], **fields) -> Kind:
    """The Kind a kind module declares by its names (pass its globals()): the functions of FUNCTIONS
    (run_identity optional), DESCRIPTION, PRESET (the preset class) and PRESETS (the named presets);
    the name is the module's, the report module tmcheck.empirics.report.<name>. `fields` override."""
    name = fields.get("name", namespace["__name__"].rpartition(".")[2])
    declared = {"name": name, "report": f"{REPORTS}.{name}", "presets": namespace.get("PRESETS", {})}
    declared |= {
        key: namespace[attr]
        for key, attr in (("description", "DESCRIPTION"), ("preset_class", "PRESET"))
        if attr in namespace
    }
    declared |= {f: namespace[f] for f in FUNCTIONS if f in namespace}
    return Kind(**{**declared, **fields})


_REGISTERED: dict[str, Kind] = {}


def register_kind(kind: Kind) -> None:
    _REGISTERED[kind.name] = kind


@functools.cache
def builtin_kinds() -> tuple[str, ...]:
    """The built-in kinds: the modules of this package that assign KIND at their top level."""
    here = Path(__file__).parent
    return tuple(p.stem for p in sorted(here.glob("*.py")) if re.search(r"^KIND = ", p.read_text("utf-8"), re.M))


def kind_names() -> list[str]:
    return list(dict.fromkeys([*builtin_kinds(), *_REGISTERED]))


def get_kind(name: str) -> Kind:
    if name not in _REGISTERED:
        if name not in builtin_kinds():
            raise ValueError(f"unknown sweep kind {name!r}; expected one of {', '.join(kind_names())}")
        module = f"{PACKAGE}.{name}"
        kind = importlib.import_module(module).KIND
        if kind.name != name:
            raise RuntimeError(f"module {module} defines kind {kind.name!r}, not {name!r}")
        _REGISTERED[name] = kind
    return _REGISTERED[name]


def get_preset(name: str, kind: str = "pretrain", **overrides):
    """The named preset of a kind (with fields replaced by `overrides`); ValueError names the choices."""
    named = get_kind(kind).presets
    if name not in named:
        raise ValueError(f"unknown preset {name!r}; choose from {', '.join(named)}")
    return replace(named[name], **overrides) if overrides else named[name]


def preset_names(kind: str) -> list[str]:
    """The names of a kind's presets, in their declared order."""
    return list(get_kind(kind).presets)


def preset_class(kind: str) -> type:
    """The preset class of a kind (its Kind record's)."""
    return get_kind(kind).preset_class


def preset_from_dict(kind: str, d: dict):
    """The preset of a kind that a config.json stores, validated by the schema."""
    return preset_class(kind).from_dict(d)


def decades(grid: list[int]) -> float:
    """Decades a sorted grid spans: log10(last / first)."""
    return math.log10(grid[-1] / grid[0])

"""The positive controls of the synthetic study (kind "controls", issue #38 item 3): estimators whose rate
n^{-2β/(2β+d)} is proven (eq. 3's α_D), run on the synthetic problem where d and β are known, so that the
pipeline sweep -> fit -> verdict is shown to recover a known exponent before it judges a transformer.

Specs: {"method": "knn-theory" | "knn-cv" | "krr", "d", "beta", "n", "seed"}. The data set of (d, β, n, seed)
is the first n points of the seed's pool of max(ns) points (tmcheck.empirics.synthetic.problem.Experiment:
nested in n); the test set is the problem's noiseless held-out set. Rows add "test_mse" (against f), the
chosen hyper-parameter ("k", or "h" and "alpha"), "cpu_s" (the run's process time) and "wall_s".

The constants of knn-theory (c) and krr (h₀, α) are chosen once per (d, β) by `plan`, at one small n on
held-out data drawn from data seeds the sweep never uses (`tune_seeds`), and stored in
data/tuning/tuning.json, which every run reads (tmcheck.empirics.synthetic.controls).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, ClassVar

from pydantic import Field

from tmcheck.empirics.schema import Count, Fraction, NonNegative, NonNegativeFloat
from tmcheck.empirics.sweep import layout
from tmcheck.empirics.sweep.core import Context, RunSpec
from tmcheck.empirics.sweep.kinds import module_kind
from tmcheck.empirics.sweep.preset import Preset, named
from tmcheck.util import atomic

DESCRIPTION = "positive controls: kNN and kernel ridge with proven rates on the synthetic problem (issue #38)"
METHODS = ("knn-theory", "knn-cv", "krr")
NAME = "{method}-d{d}-b{beta}-n{n}-s{seed}"
TUNING = "tuning"  # data/<TUNING>/tuning.json: the constants chosen once per (d, β)
TUNING_FILE = "tuning.json"
SMALL_BAND = 100_000  # a method's sizes up to this n are planned before its larger ones
HALF_DECADES = (100, 316, 1000, 3162, 10_000, 31_623, 100_000, 316_228, 1_000_000)
Beta = Annotated[float, Field(gt=0, le=1)]


@dataclass(frozen=True, kw_only=True)
class ControlsPreset(Preset):
    """A positive-control sweep: the synthetic problem's grid, the methods, and how their constants are tuned."""

    kind: ClassVar[str] = "controls"
    dims: tuple[Count, ...] = (1, 2, 4)
    betas: tuple[Beta, ...] = (1.0, 0.5)
    ns: tuple[Count, ...] = HALF_DECADES  # data-set sizes n (knn-cv: validation included)
    seeds: tuple[NonNegative, ...] = (0, 1, 2, 3, 4)
    methods: tuple[str, ...] = ("knn-theory", "krr", "knn-cv")  # in the plan's order
    manifold: str = "torus"
    D: Count = 8
    target: str = "holder"
    density: str = "uniform"
    noise: NonNegativeFloat = 0.5
    problem_seed: NonNegative = 0
    n_test: Count = 10_000  # the noiseless held-out test set, the same for every run of a (d, β)
    val_fraction: Fraction = 0.1  # knn-cv's validation split of its n points
    min_val: Count = 16
    krr_max_n: Count = 10_000  # kernel ridge (exact: an n x n kernel) only up to this n
    tune_n: Count = 10_000  # the one small n at which knn-theory's c is chosen
    krr_tune_n: Count = 1000  # the one small n at which krr's (h₀, α) are chosen
    tune_holdout: Count = 5000  # held-out points of each tuning set
    tune_seeds: tuple[NonNegative, ...] = (1000, 1001, 1002)  # data seeds of the tuning sets (none of `seeds`)

    def check_relations(self) -> None:
        from tmcheck.empirics.synthetic.problem import validation_size

        for m in self.methods:
            if m not in METHODS:
                raise ValueError(f"unknown control {m!r}; expected one of {', '.join(METHODS)}")
        if len(set(self.methods)) != len(self.methods):
            raise ValueError("a method is listed twice")
        if not self.ns or not self.seeds or not self.tune_seeds:
            raise ValueError("the grid needs at least one n, one seed and one tuning seed")
        shared = sorted(set(self.seeds) & set(self.tune_seeds))
        if shared:
            raise ValueError(f"seed {shared[0]} is both a data seed and a tuning seed: tuning uses unseen data")
        for d in self.dims:
            for beta in self.betas:
                self.problem(d, beta)
        if "knn-cv" in self.methods:
            for n in self.ns:
                validation_size(n, self.val_fraction, self.min_val)

    def problem(self, d: int, beta: float):
        """The regression problem of (d, β): the synthetic study's (tmcheck.empirics.synthetic.problem)."""
        from tmcheck.empirics.synthetic.problem import Problem

        return Problem(
            manifold=self.manifold,
            d=d,
            D=self.D,
            target=self.target,
            beta=beta,
            density=self.density,
            noise=self.noise,
            seed=self.problem_seed,
        )

    def planned_ns(self, method: str) -> tuple[int, ...]:
        """The sizes a method runs at: kernel ridge stops at krr_max_n."""
        return tuple(n for n in self.ns if method != "krr" or n <= self.krr_max_n)


PRESET = ControlsPreset
CPU = ControlsPreset(
    name="cpu",
    notes=(
        "results/synth-controls: the synthetic study's problem (torus, D = 8, the holder target, noise 0.5, "
        "d in {1, 2, 4}, beta in {1, 1/2}) with n from 100 to 10^6 in half decades, 5 seeds; knn-theory's c "
        "chosen at n = 10,000 and krr's (h0, alpha) at n = 1000, each on 3 tuning sets of data seeds 1000-1002 "
        "with 5000 held-out points; kernel ridge exact up to n = 10,000"
    ),
)
PRESETS: dict[str, ControlsPreset] = named(
    ControlsPreset(
        name="tiny",
        dims=(1,),
        betas=(1.0,),
        ns=(100, 316, 1000),
        seeds=(0, 1),
        n_test=1000,
        krr_max_n=1000,
        tune_n=316,
        krr_tune_n=100,
        tune_holdout=500,
        tune_seeds=(1000,),
        notes="the whole pipeline (three controls, tuning, report) in seconds: a smoke test, not a measurement",
    ),
    CPU,
)


# ------------------------------------------------------------------------------------------ data
def experiment(ctx: Context, d: int, beta: float):
    """The problem of (d, β) with its test set, kept in the process's cache (specs come grouped)."""
    from tmcheck.empirics.synthetic.problem import Experiment

    key = ("experiment", d, beta)
    if key not in ctx.cache:
        for k in [k for k in ctx.cache if k[0] in ("experiment", "pool")]:
            del ctx.cache[k]  # one problem in memory at a time
        exp = Experiment(ctx.preset.problem(d, beta))
        ctx.cache[key] = (exp, *exp.test_set(ctx.preset.n_test))
    return ctx.cache[key]


def pool(ctx: Context, d: int, beta: float, seed: int):
    """The seed's max(ns) labelled points of (d, β); the first n are the size-n data set."""
    key = ("pool", d, beta, seed)
    if key not in ctx.cache:
        exp = experiment(ctx, d, beta)[0]
        for k in [k for k in ctx.cache if k[0] == "pool"]:
            del ctx.cache[k]
        ctx.cache[key] = exp.pool(max(ctx.preset.ns), seed)
    return ctx.cache[key]


def tuning_sets(p: ControlsPreset, exp, n: int) -> list[tuple]:
    """(X, y, X_held, y_held) of each tuning seed: n points to fit, tune_holdout held out, all noisy."""
    out = []
    for s in p.tune_seeds:
        X, y = exp.pool(n + p.tune_holdout, s)
        out.append((X[:n], y[:n], X[n:], y[n:]))
    return out


def tune(p: ControlsPreset, d: int, beta: float) -> dict:
    """The constants of (d, β): knn-theory's c and krr's (h₀, α), each chosen on held-out data at one n."""
    from tmcheck.empirics.synthetic import controls
    from tmcheck.empirics.synthetic.problem import Experiment

    exp = Experiment(p.problem(d, beta))
    out: dict = {"d": d, "beta": beta}
    if "knn-theory" in p.methods:
        out["knn"] = controls.tune_knn_constant(tuning_sets(p, exp, p.tune_n), d, beta)
    if "krr" in p.methods:
        out["krr"] = controls.tune_krr(tuning_sets(p, exp, p.krr_tune_n), d, beta)
    return out


def tuning_key(p: ControlsPreset) -> dict:
    """The preset fields the tuning depends on (a stored tuning made with others is not used)."""
    fields = ("methods", "manifold", "D", "target", "density", "noise", "problem_seed")
    fields += ("tune_n", "krr_tune_n", "tune_holdout", "tune_seeds")
    return json.loads(json.dumps({f: getattr(p, f) for f in fields}))


def read_tuning(sweep) -> dict:
    """The sweep's stored tuning: {"key": tuning_key, "cells": {"d-beta": tune(...)}}."""
    path = sweep.data_dir(TUNING) / TUNING_FILE
    return json.loads(path.read_text()) if path.is_file() else {}


def cell_key(d: int, beta: float) -> str:
    return f"{d}-{beta:g}"


def one_thread():
    """BLAS and OpenMP on one thread: the cores are shared, and idle threads spinning under load cost CPU
    time that the rows would record as the method's."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1)


def ensure_tuning(ctx: Context, log: Callable[[str], None]) -> dict:
    """The tuning of every (d, β) of the sweep, computed once and stored (idempotent), on one thread."""
    with one_thread():
        return _ensure_tuning(ctx, log)


def _ensure_tuning(ctx: Context, log: Callable[[str], None]) -> dict:
    p, stored = ctx.preset, read_tuning(ctx.sweep)
    key = tuning_key(p)
    cells = stored.get("cells", {}) if stored.get("key") == key else {}
    missing = [(d, b) for d in p.dims for b in p.betas if cell_key(d, b) not in cells]
    for d, b in missing:
        t0 = time.process_time()
        cells[cell_key(d, b)] = {**tune(p, d, b), "cpu_s": time.process_time() - t0}
        log(f"tuned d={d}, beta={b:g}: {describe_tuning(cells[cell_key(d, b)])}")
        atomic.write_json(ctx.sweep.data_dir(TUNING) / TUNING_FILE, {"key": key, "cells": cells})
    return cells


def describe_tuning(t: dict) -> str:
    parts = []
    if "knn" in t:
        parts.append(f"c = {t['knn']['c']:.3g} (k = {t['knn']['k']} at n = {t['knn']['n']:,})")
    if "krr" in t:
        parts.append(f"h0 = {t['krr']['h0']:.3g}, alpha = {t['krr']['alpha']:g}")
    return ", ".join(parts)


# ------------------------------------------------------------------------------------------ the kind
def run_name(params: Mapping) -> str:
    return layout.run_name(NAME, params)


def plan_specs(p: ControlsPreset) -> list[RunSpec]:
    """Every run: methods in the preset's order (a partial sweep holds whole methods); within a method the
    sizes up to SMALL_BAND first, then the larger ones, so that a partial method has every (d, β) up to
    SMALL_BAND, and the larger ones from the largest d down (the smallest k, the cheapest neighbour
    searches, first); within a band (d, β), the seed and n, so that one worker's consecutive runs share a
    problem and a data pool."""
    specs = []
    for method in p.methods:
        ns = p.planned_ns(method)
        small, large = [n for n in ns if n <= SMALL_BAND], [n for n in ns if n > SMALL_BAND]
        for band, dims in ((small, p.dims), (large, sorted(p.dims, reverse=True))):
            for d in dims:
                for beta in p.betas:
                    for seed in p.seeds:
                        for n in band:
                            params = {"method": method, "d": d, "beta": beta, "n": n, "seed": seed}
                            specs.append(RunSpec("controls", run_name(params), params))
    return specs


def plan(ctx: Context, log: Callable[[str], None]) -> list[RunSpec]:
    ensure_tuning(ctx, log)
    return plan_specs(ctx.preset)


def run(ctx: Context, spec: RunSpec) -> dict:
    """One run, on one thread: the method on the first n points of the seed's pool, its test MSE against f."""
    with one_thread():
        return _run(ctx, spec)


def _run(ctx: Context, spec: RunSpec) -> dict:
    from tmcheck.empirics.synthetic import controls
    from tmcheck.empirics.synthetic.problem import validation_size

    t0, w0 = time.process_time(), time.perf_counter()
    row, p = dict(spec.params), ctx.preset
    d, beta, n = row["d"], row["beta"], row["n"]
    if "tuning" not in ctx.cache:
        ctx.cache["tuning"] = read_tuning(ctx.sweep).get("cells", {})
    t = ctx.cache["tuning"].get(cell_key(d, beta))
    if t is None:
        raise ValueError(f"no tuning of d={d}, beta={beta:g} in {TUNING}/{TUNING_FILE}: plan the sweep first")
    _, X_test, f_test = experiment(ctx, d, beta)
    X, y = (a[:n] for a in pool(ctx, d, beta, row["seed"]))
    if row["method"] == "knn-theory":
        out = controls.knn_theory(X, y, X_test, f_test, t["knn"]["c"], d, beta)
        out["n_train"] = n
    elif row["method"] == "knn-cv":
        n_val = validation_size(n, p.val_fraction, p.min_val)
        out = controls.knn_cv(X[n_val:], y[n_val:], X[:n_val], y[:n_val], X_test, f_test)
        out.update(n_train=n - n_val, n_val=n_val)
    else:
        out = controls.krr_theory(X, y, X_test, f_test, t["krr"]["h0"], t["krr"]["alpha"], d, beta)
        out["n_train"] = n
    return {**row, **out, "cpu_s": time.process_time() - t0, "wall_s": time.perf_counter() - w0}


def new_config(preset: ControlsPreset, options: Mapping) -> dict:
    preset.validate()
    return {"preset": preset.as_dict()}


def describe(row: dict) -> str:
    hyper = f"k = {row['k']}" if "k" in row else f"h = {row['h']:.3g}"
    return f"test MSE {row['test_mse']:.4g}, {hyper} ({row['cpu_s']:.1f} CPU s)"


KIND = module_kind(globals(), presets=PRESETS)

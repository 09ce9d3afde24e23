"""The synthetic manifold-regression sweep (kind "synthetic"): data scaling (eq. 3) and model
scaling (eq. 4) where d and β are known.

Specs: {"sweep": "data" | "model", "method": "transformer" | "knn" | "krr", "d", "beta", "n",
"seed"} (+ "width" in the model sweep). Rows add "params" (transformer N), "test_mse", ...; an
interrupted transformer fit continues from its last checkpoint in its run directory. The presets
(and the problem and model each describes) are tmcheck.empirics.sweep.synthetic_preset's; a run of (d, β)
trains under `preset.at(d, β)`, the preset with that (d, β)'s tuned settings (tmcheck synth tune).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import replace

from tmcheck.empirics.sweep import layout
from tmcheck.empirics.sweep.core import Context, RunSpec
from tmcheck.empirics.sweep.kinds import module_kind
from tmcheck.empirics.sweep.synthetic_preset import PRESETS, SynthPreset
from tmcheck.empirics.synthetic.problem import Experiment, Problem, knn_baseline, krr_baseline

DESCRIPTION = "synthetic manifold regression with known d and β (eq. 3-4)"
PRESET = SynthPreset
NAMES = {
    "data": "data-d{d}-b{beta}-n{n}-s{seed}-{method}",
    "model": "model-d{d}-b{beta}-w{width}-s{seed}",  # at the (d, β)'s own depth
    "shape": "model-d{d}-b{beta}-l{blocks}-w{width}-s{seed}",  # at depth `blocks` (model_shapes)
}


def problem(p: SynthPreset, d: int, beta: float, noise: float) -> Problem:
    """The problem of (d, beta) under preset p (SynthPreset.problem; the report's name for it)."""
    return p.problem(d, beta, noise)


def train_config(p: SynthPreset, n_train: int):
    from tmcheck.empirics.lm.train import TrainConfig

    steps = int(min(p.max_steps, max(p.min_steps, p.epochs * n_train // p.batch_size)))
    return TrainConfig(
        max_steps=steps,
        lr=p.lr,
        min_lr=p.lr / 10,
        warmup_steps=min(100, steps // 10),
        weight_decay=p.weight_decay,
        eval_every=p.eval_every,
        patience=p.patience,
        schedule=p.schedule,
        cooldown=p.cooldown,
        device=p.device,
        threads=1,
        progress=False,
    )  # one thread: small models, shared cores


def run_name(params: Mapping) -> str:
    template = "shape" if params["sweep"] == "model" and "blocks" in params else params["sweep"]
    return layout.run_name(NAMES[template], params)


def _spec(params: dict) -> RunSpec:
    return RunSpec("synthetic", run_name(params), params)


def plan_specs(p: SynthPreset) -> list[RunSpec]:
    """Every run of the sweep, seeds outermost so that a partial sweep already has whole seeds."""
    specs = []
    for seed in p.seeds:
        for d in p.dims:
            for beta in p.betas:
                for n in p.at(d, beta).ns:  # the (d, β)'s own grid where its tuned entry has one
                    for method in ("transformer", *p.baselines):
                        if method == "krr" and n > p.krr_max_n:
                            continue
                        specs.append(
                            _spec({"sweep": "data", "method": method, "d": d, "beta": beta, "n": n, "seed": seed})
                        )
    for seed in p.model_seeds:
        for d in p.model_dims:
            for beta in p.model_betas:
                base = {"sweep": "model", "method": "transformer", "d": d, "beta": beta, "n": p.model_n, "seed": seed}
                for w in p.model_widths:
                    specs.append(_spec({**base, "width": w}))
                own = p.at(d, beta).n_blocks
                for blocks, w in p.model_shapes:
                    if blocks == own and w in p.model_widths:
                        continue  # already a run of the width sweep
                    specs.append(_spec({**base, "width": w, "blocks": blocks}))
    return specs


def plan(ctx: Context, log: Callable[[str], None]) -> list[RunSpec]:
    return plan_specs(ctx.preset)


def run(ctx: Context, spec: RunSpec) -> dict:
    """One run: the data split of (d, β, n, seed) and the method's test MSE against f."""
    import torch

    row, cache = dict(spec.params), ctx.cache
    p = ctx.preset.at(row["d"], row["beta"])  # the (d, β)'s tuned settings, where the preset has them
    if "blocks" in row:
        p = replace(p, n_blocks=row["blocks"])  # a model_shapes run: its own depth
    if "threads" not in cache:
        torch.set_num_threads(1)  # small models: one thread is fastest on shared cores
        cache["threads"] = 1

    noise = p.noise if row["sweep"] == "data" else p.model_noise
    key = (row["d"], row["beta"], noise)
    if cache.get("problem") != key:
        # specs come grouped by problem; keep one problem (and its test set) in memory
        cache.update(problem=key, experiment=Experiment(p.problem(row["d"], row["beta"], noise)))
    exp = cache["experiment"]
    n_max = max(p.ns) if row["sweep"] == "data" else p.model_n
    split = exp.split(row["n"], n_max, row["seed"], p.n_test, p.val_fraction, p.min_val)
    t0, c0 = time.perf_counter(), time.process_time()
    if row["method"] == "knn":
        out = knn_baseline(split)
    elif row["method"] == "krr":
        out = krr_baseline(split, row["seed"])
    else:
        from tmcheck.empirics.lm.checkpoint import read_result
        from tmcheck.empirics.sweep.regression import fit_transformer
        from tmcheck.empirics.synthetic.model import RegressionTransformer, n_params

        heads = p.n_heads
        if row["sweep"] == "model":
            width = row["width"]
        elif p.size == "fixed":
            width = p.ffn_width
        else:
            width, heads = p.theory_shape(row["d"], row["beta"], row["n"])
        cfg = p.model_config(width, heads)
        read_result(ctx.sweep.run_dir(spec.run))  # a finished fit's record is checked before it is used
        torch.manual_seed(row["seed"])
        model = RegressionTransformer(cfg)
        out = fit_transformer(
            model, split, train_config(p, len(split.X_train)), p.batch_size, row["seed"], ctx.sweep.run_dir(spec.run)
        )
        out.update(width=width, heads=heads, params=n_params(cfg))
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {**row, **out, "n_train": len(split.X_train), "wall_s": wall, "cpu_s": cpu}


# preset fields a run's row does not depend on: names and prose, the grid's other points, and the
# kernel-ridge cut (it decides whether a krr spec exists, not what the spec computes)
NOT_IN_A_RUN = (
    "name",
    "notes",
    "tuned",
    "dims",
    "betas",
    "seeds",
    "model_dims",
    "model_betas",
    "model_widths",
    "model_shapes",
    "model_seeds",
    "krr_max_n",
)


def run_identity(preset: SynthPreset, params: Mapping) -> dict:
    """Everything the row of the run `params` depends on: its parameters and the preset its (d, β)
    trains under (`SynthPreset.at`), less the fields in NOT_IN_A_RUN. The grid `ns` enters a data run
    only as max(ns), the size of the pool every split of (d, β) is the first n of (`run`,
    `SynthPreset.theory_shape`), and a model run not at all (its pool has model_n points)."""
    p = preset.at(params["d"], params["beta"])
    fields = {k: v for k, v in p.as_dict().items() if k not in NOT_IN_A_RUN}
    if params["sweep"] == "data":
        fields["ns"] = max(p.ns)
    else:
        del fields["ns"]
    return {"params": dict(params), "preset": fields}


def new_config(preset: SynthPreset, options: Mapping) -> dict:
    preset.validate()
    return {"preset": preset.as_dict()}


def describe(row: dict) -> str:
    return f"test MSE {row['test_mse']:.4g} ({row['wall_s']:.1f}s)"


KIND = module_kind(globals(), presets=PRESETS)

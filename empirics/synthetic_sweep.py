"""Presets and sweeps of the synthetic experiment: data scaling (eq. 3) and model scaling (eq. 4).

A synthetic sweep is a directory, laid out as the pretraining sweep's (tmcheck.empirics.sweep):
    config.json      {"kind": "synthetic", "preset": {...}}
    runs/<run>/      the shared trainer's checkpoints and result.json of one transformer fit
    results.jsonl    one line per finished (run, method), rewritten atomically after each
    .lock            the sweep lock (a second process on the directory is refused)

Rows: {"sweep": "data" | "model", "method": "transformer" | "knn" | "krr", "d", "beta", "n",
"seed", "params" (transformer N), "test_mse", ...}. Rerunning resumes: finished rows are skipped
and an interrupted transformer fit continues from its last checkpoint.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Callable

from tmcheck.util import atomic
from tmcheck.empirics.synthetic import Experiment, Problem, knn_baseline, krr_baseline, validation_size

SIZES = ("fixed", "theory")
METHODS = ("transformer", "knn", "krr")


@dataclass(frozen=True)
class SynthPreset:
    name: str
    dims: tuple[int, ...] = (1, 2, 4)  # intrinsic dimensions d of the data-scaling sweep
    betas: tuple[float, ...] = (1.0, 0.5)
    ns: tuple[int, ...] = (64, 160, 400, 1000, 2500, 6400)  # training-set sizes (validation included)
    seeds: tuple[int, ...] = (0, 1, 2)
    manifold: str = "torus"
    D: int = 16
    target: str = "holder"
    density: str = "uniform"
    noise: float = 0.5
    n_test: int = 20_000  # held-out points, the same for every run
    val_fraction: float = 0.2
    min_val: int = 16
    size: str = "fixed"  # "fixed" width, or "theory": FFN width ∝ n^{d/(2β+d)}, `ffn_width` at max(ns)
    d_embd: int = 8
    n_blocks: int = 2
    n_heads: int = 2
    ffn_width: int = 32
    attention: str = "relu"
    batch_size: int = 128
    epochs: int = 60  # optimizer steps = epochs * n_train / batch_size, clipped to [min_steps, max_steps]
    min_steps: int = 800
    max_steps: int = 3000
    lr: float = 1e-2
    weight_decay: float = 1e-4
    eval_every: int = 50
    patience: int = 10
    baselines: tuple[str, ...] = ("knn", "krr")
    krr_max_n: int = 10**6  # kernel ridge regression (O(n³), on the CPU) only up to this n
    model_dims: tuple[int, ...] = ()  # model-scaling sweep (empty: none)
    model_betas: tuple[float, ...] = (0.5,)
    model_widths: tuple[int, ...] = (2, 6, 18, 54)
    model_n: int = 6400
    model_noise: float = 0.0  # eq. (4) is about approximation: no label noise
    model_seeds: tuple[int, ...] = (0,)
    problem_seed: int = 0
    device: str = "auto"
    notes: str = ""

    def as_dict(self) -> dict:
        return asdict(self)


PRESETS: dict[str, SynthPreset] = {
    "tiny": SynthPreset(
        name="tiny", dims=(1, 2), betas=(1.0,), ns=(50, 120, 300), seeds=(0, 1), D=6, n_test=2000,
        min_val=8, n_blocks=1, min_steps=250, max_steps=250, eval_every=50, patience=10,
        model_dims=(1,), model_betas=(1.0,), model_widths=(2, 6, 16), model_n=300,
        notes="the whole pipeline (both sweeps, both baselines, report) in well under 2 minutes"),
    "cpu": SynthPreset(
        name="cpu", D=8, ns=(64, 200, 640, 2000, 6400), epochs=100, min_steps=1500, max_steps=4000, patience=20,
        model_dims=(1, 2, 4), model_betas=(0.5,), model_widths=(2, 8, 32, 128), model_n=2000,
        notes="d in {1,2,4}, beta in {1, 1/2}, n from 64 to 6400, 3 seeds; about 30 minutes on 2 shared cores"),
    "demo": SynthPreset(
        name="demo", dims=(1, 2), betas=(1.0,), ns=(64, 200, 640, 2000), seeds=(0, 1), D=8, n_test=10_000,
        epochs=100, min_steps=1500, max_steps=4000, patience=20,
        notes="what `make demo` runs: the cpu preset's training budget at d in {1, 2}, beta = 1, n from 64 "
              "to 2000, 2 seeds, no model sweep; a few minutes on 2 cores"),
    "gpu": SynthPreset(
        name="gpu", dims=(1, 2, 4, 8), ns=(100, 300, 1000, 3000, 10_000), seeds=(0, 1, 2), n_test=50_000,
        size="theory", d_embd=16, n_blocks=3, n_heads=4, ffn_width=256, batch_size=512, epochs=100,
        min_steps=800, max_steps=3000, krr_max_n=3000, model_dims=(1, 2, 4, 8), model_betas=(0.5, 1.0),
        model_widths=(4, 16, 64, 256, 1024), model_n=10_000, model_seeds=(0,),
        notes="the full grid; sized for one H200 in under 10 minutes (about 180k transformer steps at ~2 ms "
              "plus kernel ridge up to n=3000 on the host), device-agnostic, not measured here"),
}


def get_preset(name: str) -> SynthPreset:
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; expected one of {', '.join(PRESETS)}")
    return PRESETS[name]


def check_preset(p: SynthPreset) -> None:
    """Every problem and every size of the grid is valid; raises ValueError with one line if not."""
    if p.size not in SIZES:
        raise ValueError(f"unknown size rule {p.size!r}; expected one of {', '.join(SIZES)}")
    for m in p.baselines:
        if m not in METHODS[1:]:
            raise ValueError(f"unknown baseline {m!r}; expected one of {', '.join(METHODS[1:])}")
    if not 1 <= p.min_steps <= p.max_steps:
        raise ValueError(f"need 1 <= min_steps <= max_steps, got {p.min_steps} and {p.max_steps}")
    if not p.ns or not p.seeds:
        raise ValueError("the data-scaling grid needs at least one n and one seed")
    for d in {*p.dims, *p.model_dims}:
        for beta in {*p.betas, *p.model_betas}:
            problem(p, d, beta, p.noise)
    for n in (*p.ns, p.model_n):
        validation_size(n, p.val_fraction, p.min_val)
    model_config(p, p.ffn_width)


def problem(p: SynthPreset, d: int, beta: float, noise: float) -> Problem:
    return Problem(manifold=p.manifold, d=d, D=p.D, target=p.target, beta=beta, density=p.density,
                   noise=noise, seed=p.problem_seed)


def model_config(p: SynthPreset, width: int):
    from tmcheck.empirics.synthetic_model import ModelConfig

    return ModelConfig(D=p.D, d_embd=p.d_embd, n_blocks=p.n_blocks, n_heads=p.n_heads, ffn_width=width,
                       attention=p.attention)


def theory_width(p: SynthPreset, d: int, beta: float, n: int) -> int:
    """FFN width w ∝ n^{d/(2β+d)}, reaching `ffn_width` at the largest n (Theorem 1's sizing).

    The FFN's parameters are linear in w, so they follow n^{d/(2β+d)}; the attention's (3 m d_embd²
    per block) stay fixed, which is what keeps small-n models trainable.
    """
    return max(1, round(p.ffn_width * (n / max(p.ns)) ** (d / (2 * beta + d))))


def train_config(p: SynthPreset, n_train: int):
    from tmcheck.empirics.train import TrainConfig

    steps = int(min(p.max_steps, max(p.min_steps, p.epochs * n_train // p.batch_size)))
    return TrainConfig(max_steps=steps, lr=p.lr, min_lr=p.lr / 10, warmup_steps=min(100, steps // 10),
                       weight_decay=p.weight_decay, eval_every=p.eval_every, patience=p.patience,
                       device=p.device, progress=False)


def _beta_tag(beta: float) -> str:
    return f"{beta:g}".replace(".", "p")


def plan(p: SynthPreset) -> list[dict]:
    """Every row of the sweep, seeds outermost so that a partial sweep already has whole seeds."""
    rows = []
    for seed in p.seeds:
        for d in p.dims:
            for beta in p.betas:
                for n in p.ns:
                    for method in ("transformer", *p.baselines):
                        if method == "krr" and n > p.krr_max_n:
                            continue
                        rows.append({"sweep": "data", "method": method, "d": d, "beta": beta, "n": n, "seed": seed,
                                     "run": f"data-d{d}-b{_beta_tag(beta)}-n{n}-s{seed}-{method}"})
    for seed in p.model_seeds:
        for d in p.model_dims:
            for beta in p.model_betas:
                for w in p.model_widths:
                    rows.append({"sweep": "model", "method": "transformer", "d": d, "beta": beta, "n": p.model_n,
                                 "seed": seed, "width": w, "run": f"model-d{d}-b{_beta_tag(beta)}-w{w}-s{seed}"})
    return rows


def run_one(p: SynthPreset, row: dict, sweep_dir: Path, cache: dict) -> dict:
    """One row: the data split of (d, β, n, seed) and the method's test MSE against f."""
    import torch

    noise = p.noise if row["sweep"] == "data" else p.model_noise
    key = (row["d"], row["beta"], noise)
    if key not in cache:
        cache.clear()  # rows come grouped by problem; keep one test set in memory
        cache[key] = Experiment(problem(p, row["d"], row["beta"], noise))
    exp = cache[key]
    n_max = max(p.ns) if row["sweep"] == "data" else p.model_n
    split = exp.split(row["n"], n_max, row["seed"], p.n_test, p.val_fraction, p.min_val)
    t0 = time.perf_counter()
    if row["method"] == "knn":
        out = knn_baseline(split)
    elif row["method"] == "krr":
        out = krr_baseline(split, row["seed"])
    else:
        from tmcheck.empirics.synthetic_model import RegressionTransformer, fit_transformer, n_params

        if row["sweep"] == "model":
            width = row["width"]
        else:
            width = p.ffn_width if p.size == "fixed" else theory_width(p, row["d"], row["beta"], row["n"])
        cfg = model_config(p, width)
        torch.manual_seed(row["seed"])
        model = RegressionTransformer(cfg)
        out = fit_transformer(model, split, train_config(p, len(split.X_train)), p.batch_size, row["seed"],
                              sweep_dir / "runs" / row["run"])
        out.update(width=width, params=n_params(cfg))
    return {**row, **out, "n_train": len(split.X_train), "wall_s": time.perf_counter() - t0}


def run_sweep(sweep_dir: Path, preset: SynthPreset | None = None, log: Callable[[str], None] = print) -> list[dict]:
    """Create or resume the sweep in sweep_dir; returns every result row.

    A new directory takes `preset` (default tiny); an existing one keeps the preset it was made with
    and refuses a different one.
    """
    import torch

    from tmcheck.empirics.sweep import sweep_lock

    sweep_dir = Path(sweep_dir)
    with sweep_lock(sweep_dir):
        cfg_path = sweep_dir / "config.json"
        if cfg_path.exists():
            stored = preset_from_config(load_config(sweep_dir))
            if preset is not None and preset != stored:
                raise ValueError(f"{sweep_dir} holds a synthetic sweep of preset {stored.name!r} with other "
                                 "settings; use a new directory")
            p = stored
        else:
            p = preset or get_preset("tiny")
            check_preset(p)
            atomic.write_json(cfg_path, {"kind": "synthetic", "preset": p.as_dict()})
        torch.set_num_threads(1)  # small models: one thread is fastest on shared cores
        results_path = sweep_dir / "results.jsonl"
        rows = atomic.read_jsonl(results_path)
        done = {r["run"] for r in rows}
        todo = [r for r in plan(p) if r["run"] not in done]
        log(f"synthetic sweep {p.name}: {len(done)} rows done, {len(todo)} to run")
        cache: dict = {}
        for row in todo:
            result = run_one(p, row, sweep_dir, cache)
            rows.append(result)
            atomic.write_jsonl(results_path, rows)
            log(f"  {row['run']}: test MSE {result['test_mse']:.4g} ({result['wall_s']:.1f}s)")
        return rows


def is_synthetic_sweep(sweep_dir: Path) -> bool:
    """Whether sweep_dir holds a synthetic sweep (config.json with kind "synthetic"): what lets
    `tmcheck report DIR` hand the directory to this experiment's report."""
    path = Path(sweep_dir) / "config.json"
    try:
        return json.loads(path.read_text()).get("kind") == "synthetic"
    except (OSError, ValueError, AttributeError):
        return False


def load_config(sweep_dir: Path) -> dict:
    path = Path(sweep_dir) / "config.json"
    if not path.exists():
        raise FileNotFoundError(2, "not a sweep directory (no config.json)", str(sweep_dir))
    config = json.loads(path.read_text())
    if config.get("kind") != "synthetic":
        raise ValueError(f"{sweep_dir} is not a synthetic sweep (kind {config.get('kind')!r})")
    return config


def preset_from_config(config: dict) -> SynthPreset:
    fields = {k: tuple(v) if isinstance(v, list) else v for k, v in config["preset"].items()}
    return SynthPreset(**fields)


def with_overrides(p: SynthPreset, **overrides) -> SynthPreset:
    """The preset with the given fields replaced (None values ignored), validated."""
    q = replace(p, **{k: v for k, v in overrides.items() if v is not None})
    check_preset(q)
    return q


def estimated_dimensions(p: SynthPreset, estimator: str = "mle", k: int = 20) -> list[dict]:
    """The ID estimators of tmcheck.empirics.id on the same x as the largest data-scaling runs.

    This closes the paper's loop: α_D predicted from the estimated d rather than the true one.
    """
    from tmcheck.empirics.id import estimate_id

    out = []
    for d in p.dims:
        exp = Experiment(problem(p, d, p.betas[0], p.noise))
        X, _ = exp.pool(max(p.ns), p.seeds[0])
        r = estimate_id(X, estimator=estimator, k=min(k, len(X) - 1), protocol="full", bootstrap=100,
                        device=p.device, seed=0)
        out.append({"d": d, "estimator": estimator, "k": r.k, "n": len(X), "dimension": r.dimension,
                    "ci": list(r.ci) if r.ci is not None else None})
    return out


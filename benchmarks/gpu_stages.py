"""The stages of the prepared GPU check (benchmarks/gpu_check.py), each run in its own process.

``parity`` compares every CUDA path with the CPU path (kNN search and re-ranking, MLE/TwoNN, GPT
forward in float32, the trainer's bf16 loss, fused AdamW, embeddings, the synthetic-regression
transformer; paper Sections 3 and 5), ``throughput`` measures the 125M configuration (Table 2
sizes) in bf16, ``id_large`` the kNN engine at N = 10^6, D = 768, and ``sweep`` the pretraining
pipeline through the CLI. ``small`` (the --cpu-smoke run) picks tiny sizes; ``faults`` perturbs
the device side of the named checks, to show that each can fail.
"""

from __future__ import annotations

import json
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

T0 = time.monotonic()  # this process's start, before torch is imported (stage limits count from here)
STAGES = ("parity", "throughput", "id_large", "sweep")
CHECKS = (
    "knn_default",
    "knn_small_tiles",
    "id_mle",
    "id_twonn",
    "gpt_logits_fp32",
    "gpt_loss_bf16",
    "adamw_steps",
    "embed_fp32",
    "synth_forward_fp32",
)
# why kept: the real run's sizes and the CPU smoke run's, two whole tables with the same keys, each read together
SIZES = {
    False: {
        "knn_n": 4000,
        "knn_dim": 96,
        "knn_tile": 512,
        "gpt": (512, 64, 2, 4, 64),
        "batch": 8,
        "tp_model": (50_304, 1024, 12, 12, 768),
        "tp_batch": 16,
        "tp_steps": 20,
        "gemm": 8192,
        "id_n": 10**6,
        "id_D": 768,
        "id_d": 16,
        "bootstrap": 200,
    },
    True: {
        "knn_n": 400,
        "knn_dim": 24,
        "knn_tile": 96,
        "gpt": (128, 32, 2, 2, 32),
        "batch": 4,
        "tp_model": (256, 64, 2, 2, 64),
        "tp_batch": 4,
        "tp_steps": 2,
        "gemm": 256,
        "id_n": 3000,
        "id_D": 48,
        "id_d": 4,
        "bootstrap": 20,
    },
}
K = 20


def _sync(dev) -> None:
    import torch

    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def _peak_memory(dev) -> float | None:
    import torch

    return torch.cuda.max_memory_allocated(dev) / 2**30 if dev.type == "cuda" else None


def _reset_peak(dev) -> None:
    import torch

    if dev.type == "cuda":
        torch.zeros(1, device=dev)  # the allocator exists only after a first CUDA allocation
        torch.cuda.reset_peak_memory_stats(dev)


# --------------------------------------------------------------------------------- comparisons
def same_neighbors(ref, got, rtol: float = 1e-12) -> dict:
    """kNN results agree: identical indices, distances equal to rtol (float64 re-ranking on each side)."""
    same_idx = ref.indices.shape == got.indices.shape and bool(np.array_equal(ref.indices, got.indices))
    rel = (
        float(np.max(np.abs(ref.distances - got.distances) / np.maximum(ref.distances, 1e-300)))
        if ref.distances.shape == got.distances.shape
        else float("inf")
    )
    rows = int(np.sum(np.any(ref.indices != got.indices, axis=1))) if ref.indices.shape == got.indices.shape else -1
    return {
        "passed": same_idx and rel <= rtol,
        "rows_differing": rows,
        "max_rel_distance_diff": rel,
        "tolerance": f"indices identical, distances rtol {rtol:g}",
    }


def close_arrays(ref, got, atol: float, rtol: float = 0.0) -> dict:
    ref, got = np.asarray(ref, dtype=np.float64), np.asarray(got, dtype=np.float64)
    if ref.shape != got.shape:
        return {"passed": False, "max_abs_diff": float("inf"), "tolerance": f"atol {atol:g} + rtol {rtol:g}"}
    diff = np.abs(ref - got)
    ok = bool(np.all(diff <= atol + rtol * np.abs(ref)))
    return {
        "passed": ok,
        "max_abs_diff": float(diff.max()),
        "max_abs_ref": float(np.abs(ref).max()),
        "tolerance": f"atol {atol:g} + rtol {rtol:g}",
    }


def close_scalars(ref: float, got: float, atol: float) -> dict:
    diff = abs(float(ref) - float(got))
    return {
        "passed": bool(diff <= atol),
        "cpu": float(ref),
        "device": float(got),
        "abs_diff": diff,
        "tolerance": f"atol {atol:g}",
    }


def _fault(name: str, faults: set, value, amount: float):
    """The device-side value, perturbed by `amount` when `name` is in --inject-fault."""
    if name not in faults:
        return value
    if hasattr(value, "indices"):  # Neighbors: a wrong neighbour in row 0
        idx = value.indices.copy()
        idx[0, -1] = idx[0, 0]
        return type(value)(value.distances, idx, value.n_recomputed, value.device)
    if np.isscalar(value):
        return float(value) + amount
    out = np.array(value, dtype=np.float64, copy=True)
    out.flat[0] += amount
    return out


# --------------------------------------------------------------------------------- stages
def stage_parity(dev, small: bool, faults: set) -> dict:
    """Each CUDA path against the CPU path on the same small inputs; on the smoke run dev is the CPU."""
    import torch

    from tmcheck.empirics.id import validation_points

    s = SIZES[small]
    torch.set_float32_matmul_precision("highest")  # float32 means float32 (no TF32) on both sides
    X = validation_points("sphere", s["knn_n"], d=8, D=s["knn_dim"], noise=0.01, seed=1)
    checks = {**_knn_checks(dev, X, s["knn_tile"], faults), **_id_checks(dev, X, faults)}
    g = torch.Generator().manual_seed(0)  # the GPT's tokens, then the regression transformer's inputs
    model_cpu, model_dev, x, y = _gpt_pair(dev, s, g)
    checks.update(_gpt_checks(dev, model_cpu, model_dev, x, y, faults))
    # token embeddings as `tmcheck id corpus` takes them (before training changes the weights)
    checks["embed_fp32"] = _embed_check(model_cpu, model_dev, x, s["gpt"][1], faults)
    checks["adamw_steps"] = _adamw_check(model_cpu, model_dev, x, y, faults)
    checks["synth_forward_fp32"] = _synth_check(dev, g, faults)
    return {"device": str(dev), "reference": "cpu", "checks": checks}


def _knn_checks(dev, X, tile: int, faults: set) -> dict:
    """The kNN search and re-ranking on both devices: the default tiles, then small tiles with margin 0."""
    from tmcheck.empirics.id.knn import kneighbors

    checks = {}

    def knn(name, **kw):
        ref = kneighbors(X, K, device="cpu", **kw)
        t0 = time.perf_counter()
        got = _fault(name, faults, kneighbors(X, K, device=str(dev), **kw), 0)
        checks[name] = {
            **same_neighbors(ref, got),
            "device_seconds": time.perf_counter() - t0,
            "rows_recomputed_cpu": ref.n_recomputed,
            "rows_recomputed_device": got.n_recomputed,
            "options": {k: v for k, v in kw.items()},
        }

    knn("knn_default")
    knn("knn_small_tiles", block_size=tile, margin=0)  # margin 0: certificate fails, range query runs
    return checks


def _id_checks(dev, X, faults: set) -> dict:
    """The MLE and TwoNN estimates, with their bootstrap intervals, on both devices."""
    from tmcheck.empirics.id import estimate_id

    checks = {}
    for name, est in (("id_mle", "mle"), ("id_twonn", "twonn")):
        ref = estimate_id(X, est, k=K, bootstrap=50, device="cpu", seed=0)
        got = estimate_id(X, est, k=K, bootstrap=50, device=str(dev), seed=0)
        dim = _fault(name, faults, got.dimension, 1e-8)
        c = close_scalars(ref.dimension, dim, 1e-9)
        ci = close_arrays(ref.ci, got.ci, 1e-9)
        checks[name] = {**c, "passed": c["passed"] and ci["passed"], "ci_cpu": list(ref.ci), "ci_device": list(got.ci)}
    return checks


def _gpt_pair(dev, s: dict, g) -> tuple:
    """One GPT (seed 0) on the CPU and its copy on dev, in eval mode, and a batch of tokens x from g with
    their shifted targets y."""
    import torch

    from tmcheck.empirics.lm.gpt import GPT, GPTConfig

    vocab, block, layers, heads, width = s["gpt"]
    torch.manual_seed(0)
    cfg = GPTConfig(vocab_size=vocab, block_size=block, n_layer=layers, n_head=heads, n_embd=width)
    model_cpu = GPT(cfg).eval()
    model_dev = GPT(cfg).to(dev).eval()
    model_dev.load_state_dict(model_cpu.state_dict())
    x = torch.randint(0, vocab, (s["batch"], block), generator=g)
    y = torch.roll(x, -1, dims=1)
    return model_cpu, model_dev, x, y


def _gpt_checks(dev, model_cpu, model_dev, x, y, faults: set) -> dict:
    """The GPT's logits in float32, and its loss as the trainer evaluates it (bf16 autocast on CUDA)."""
    import torch

    from tmcheck.empirics.lm.gpt import lm_loss
    from tmcheck.empirics.lm.train import evaluate

    checks = {}
    with torch.no_grad():
        ref, got = model_cpu(x)[0].numpy(), model_dev(x.to(dev))[0].float().cpu().numpy()
    checks["gpt_logits_fp32"] = close_arrays(ref, _fault("gpt_logits_fp32", faults, got, 1e-2), 1e-4, 1e-4)
    # the trainer's evaluation: bf16 autocast on CUDA, float32 on the CPU
    cpu = torch.device("cpu")
    l_cpu, l_dev = evaluate(model_cpu, lm_loss, [(x, y)], cpu), evaluate(model_dev, lm_loss, [(x, y)], dev)
    checks["gpt_loss_bf16"] = close_scalars(l_cpu, _fault("gpt_loss_bf16", faults, l_dev, 1.0), 2e-2)
    checks["gpt_loss_bf16"]["autocast"] = "bf16" if dev.type == "cuda" else "none (CPU)"
    return checks


def _embed_check(model_cpu, model_dev, x, block: int, faults: set) -> dict:
    """The token embeddings of the rows of x as documents, on both devices, in float32."""
    from tmcheck.empirics.lm.embed import EmbedOptions, LanguageModel, embed_documents

    docs = [np.asarray(x[i]) for i in range(len(x))]
    opts = EmbedOptions(context=block, tokens_per_doc=8, seed=0)
    e_cpu = embed_documents(LanguageModel(model_cpu, "tmcheck"), docs, opts)
    e_dev = embed_documents(LanguageModel(model_dev, "tmcheck"), docs, opts)
    return close_arrays(e_cpu, _fault("embed_fp32", faults, e_dev, 1e-2), 1e-4, 1e-4)


def _adamw_check(model_cpu, model_dev, x, y, faults: set) -> dict:
    """Three fused AdamW steps on each device from the same weights, then the loss and the weights compared.

    Float32, no autocast. Weights are compared to 3 lr only: Adam's step is lr * g / (|g| + eps), so a
    gradient within float32 rounding of zero may take opposite signs on the two devices and move a weight
    by up to 2 lr; the loss after the steps is what must agree closely."""
    import torch

    from tmcheck.empirics.lm.gpt import lm_loss
    from tmcheck.empirics.lm.train import TrainConfig, make_optimizer

    lr, steps, after = 1e-3, 3, {}
    for where, m in (("cpu", model_cpu), ("dev", model_dev)):
        m.train()
        opt = make_optimizer(m, TrainConfig(lr=lr))
        batch = (x.to(m.wte.weight.device), y.to(m.wte.weight.device))
        for _ in range(steps):
            lm_loss(m, batch).backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
        with torch.no_grad():
            loss = float(lm_loss(m, batch))
        after[where] = (torch.cat([p.detach().float().cpu().flatten() for p in m.parameters()]).numpy(), loss)
    weights = close_arrays(after["cpu"][0], _fault("adamw_steps", faults, after["dev"][0], 1.0), steps * lr)
    loss = close_scalars(after["cpu"][1], after["dev"][1], 1e-4)
    diff = np.abs(after["cpu"][0] - after["dev"][0])
    return {
        "passed": weights["passed"] and loss["passed"],
        "loss_after": loss,
        "weights_max_abs_diff": weights["max_abs_diff"],
        "weights_diff_99_9th_percentile": float(np.quantile(diff, 0.999)),
        "tolerance": f"loss atol 1e-4 after {steps} steps; weights atol {steps} lr = {steps * lr:g}",
    }


def _synth_check(dev, g, faults: set) -> dict:
    """The synthetic-regression transformer's forward pass (seed 0, inputs from g) in float32 on both devices."""
    import torch

    from tmcheck.empirics.synthetic.model import ModelConfig, RegressionTransformer

    torch.manual_seed(0)
    scfg = ModelConfig(D=8, d_embd=8, n_blocks=2, n_heads=2, ffn_width=32)
    reg_cpu = RegressionTransformer(scfg).eval()
    reg_dev = RegressionTransformer(scfg).to(dev).eval()
    reg_dev.load_state_dict(reg_cpu.state_dict())
    xs = torch.randn(256, 8, generator=g)
    with torch.no_grad():
        ref, got = reg_cpu(xs).numpy(), reg_dev(xs.to(dev)).cpu().numpy()
    return close_arrays(ref, _fault("synth_forward_fp32", faults, got, 1e-2), 1e-5, 1e-5)


def _flops_per_token(model, cfg) -> int:
    # 6 N per token for the weights, plus 12 L T C for attention scores and values (PaLM appendix B),
    # N the non-embedding parameters; the same count as benchmarks/bench_train.py
    return 6 * model.num_params() + 12 * cfg.n_layer * cfg.block_size * cfg.n_embd


def _gemm_flops(dev, n: int, reps: int = 10) -> float:
    import torch

    a = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
    b = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
    for _ in range(3):
        a @ b
    _sync(dev)
    t0 = time.perf_counter()
    for _ in range(reps):
        a @ b
    _sync(dev)
    return 2 * n**3 * reps / (time.perf_counter() - t0)


def stage_throughput(dev, small: bool, faults: set) -> dict:
    """Training tokens/s of the 125M configuration, bf16 autocast, fused AdamW, clip; MFU."""
    import torch

    from benchmarks.gpu_peaks import bf16_dense_peak
    from tmcheck.empirics.lm.gpt import GPT, GPTConfig, lm_loss
    from tmcheck.empirics.lm.train import TrainConfig, make_optimizer

    s = SIZES[small]
    vocab, block, layers, heads, width = s["tp_model"]
    cfg = GPTConfig(vocab_size=vocab, block_size=block, n_layer=layers, n_head=heads, n_embd=width)
    torch.manual_seed(0)
    _reset_peak(dev)
    model = GPT(cfg).to(dev).train()
    opt = make_optimizer(model, TrainConfig())
    x = torch.randint(0, vocab, (s["tp_batch"], block), device=dev)
    y = torch.roll(x, -1, dims=1)

    def step():
        with torch.autocast(dev.type, dtype=torch.bfloat16):
            loss = lm_loss(model, (x, y))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(3):
        step()
    _sync(dev)
    t0 = time.perf_counter()
    for _ in range(s["tp_steps"]):
        step()
    _sync(dev)
    seconds = time.perf_counter() - t0
    tps = s["tp_batch"] * block * s["tp_steps"] / seconds
    fpt = _flops_per_token(model, cfg)
    name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else platform.processor() or "cpu"
    peak, matched = bf16_dense_peak(name) if dev.type == "cuda" else (None, None)
    gemm = _gemm_flops(dev, s["gemm"])
    return {
        "device": name,
        "config": cfg.__dict__,
        "batch": s["tp_batch"],
        "steps_timed": s["tp_steps"],
        "seconds": seconds,
        "tokens_per_s": tps,
        "flops_per_token": fpt,
        "model_flops_per_s": tps * fpt,
        "peak_bf16_dense_flops": peak,
        "peak_entry": matched,
        "mfu": tps * fpt / peak if peak else None,
        "gemm_bf16_flops_measured": gemm,
        "gemm_size": s["gemm"],
        "mfu_vs_measured_gemm": tps * fpt / gemm,
        "peak_memory_gib": _peak_memory(dev),
        "params_non_embedding": model.num_params(),
        "step": "forward + backward in bf16 autocast, grad clip 1.0, fused AdamW; eager (no torch.compile)",
    }


def stage_id_large(dev, small: bool, faults: set) -> dict:
    """kNN + MLE at N = 10^6, D = 768 on the device (S^16 in R^768, known d = 16)."""
    from tmcheck.empirics.id import MLE, validation_points
    from tmcheck.empirics.id.knn import kneighbors

    s = SIZES[small]
    t0 = time.perf_counter()
    X = validation_points("sphere", s["id_n"], d=s["id_d"], D=s["id_D"], seed=0)
    t_data = time.perf_counter() - t0
    _reset_peak(dev)
    t0 = time.perf_counter()
    nb = kneighbors(X, K, device=str(dev))
    t_knn = time.perf_counter() - t0
    t0 = time.perf_counter()
    est = MLE(k=K, bootstrap=s["bootstrap"], seed=0).fit_distances(nb.distances)
    t_mle = time.perf_counter() - t0
    return {
        "manifold": f"sphere S^{s['id_d']} isometrically in R^{s['id_D']}",
        "N": s["id_n"],
        "D": s["id_D"],
        "true_d": s["id_d"],
        "k": K,
        "estimator": "MLE, MacKay-Ghahramani inverse mean (the paper's)",
        "dimension": est.dimension_,
        "ci": list(est.ci_),
        "interval": f"percentile bootstrap over points, {s['bootstrap']} resamples",
        "knn_seconds": t_knn,
        "mle_seconds": t_mle,
        "data_seconds": t_data,
        "rows_recomputed": nb.n_recomputed,
        "knn_device": nb.device,
        "peak_memory_gib": _peak_memory(dev),
    }


def sweep_preset(small: bool, variant: str):
    """The preset the sweep stage runs: gpu-quick bounded (or unchanged), or tiny bounded for the smoke run."""
    from dataclasses import replace

    from tmcheck.empirics.sweep.kinds import get_preset

    if small:
        p = get_preset("tiny")
        return p.with_overrides(
            name="tiny-smoke",
            corpora=("stories",),
            seeds=(0,),
            n_sizes=3,
            id_docs=32,
            max_eval_tokens=1024,
            train=replace(p.train, max_steps=20, eval_every=10),
            notes="gpu_check --cpu-smoke: tiny, one corpus, one seed, 3 sizes, 20 steps",
        )
    p = get_preset("gpu-quick")
    if variant == "full":
        return p
    return p.with_overrides(
        name="gpu-quick-bounded",
        corpora=("stories",),
        seeds=(0,),
        n_sizes=4,
        notes="gpu_check: gpu-quick with one corpus (stories), one seed and 4 sizes; model, "
        "training, batch, tokenizer and ID settings unchanged",
    )


def _cli(args: list[str], timeout: float) -> tuple[dict | list, float]:
    """One `tmcheck ... --json` command in its own process; its JSON output and wall seconds."""
    code = "import sys; from tmcheck.cli.main import app; sys.argv[0] = 'tmcheck'; app()"
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", code, *args, "--json"], capture_output=True, text=True, timeout=max(timeout, 1)
    )
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"tmcheck {' '.join(args[:2])} exited {proc.returncode}: {last}")
    return json.loads(proc.stdout), seconds


class Partial(Exception):
    """A stage that stopped part way: its message and what it measured before."""

    def __init__(self, message: str, result: dict):
        super().__init__(message)
        self.result = result


def stage_sweep(dev, small: bool, faults: set, sweep_dir: Path, variant: str, limit: float) -> dict:
    """sweep data -> id corpus -> report through the CLI; the preset is stored first (SweepDir.open).
    Each command gets the stage's remaining time (less a reserve for the later ones); on a failure or
    a timeout the runs finished so far are recorded."""
    from tmcheck.empirics.sweep import SweepDir

    deadline = T0 + limit - 10  # the parent kills this process at _T0 + limit
    preset = sweep_preset(small, variant)
    sweep = SweepDir(sweep_dir)
    with sweep.lock():
        sweep.open("pretrain", preset, {"corpora": list(preset.corpora)})
    out = {
        "variant": "smoke" if small else variant,
        "preset": preset.as_dict(),
        "sweep_dir": str(sweep_dir),
        "device": str(dev),
    }
    reserve = 30 if small else 45  # for id corpus and report
    dev_opt = ["--device", "cpu"] if dev.type == "cpu" else ["--device", str(dev)]
    try:
        rows, out["sweep_seconds"] = _cli(["sweep", "data", str(sweep_dir)], deadline - time.monotonic() - reserve)
        out.update(_rows_summary(rows))
        ids, out["id_seconds"] = _cli(["id", "corpus", str(sweep_dir), *dev_opt], deadline - time.monotonic() - 10)
        out["id"] = {c: {k: e[k] for k in ("d", "d_ci", "alpha_D", "points", "width")} for c, e in ids.items()}
        rep, out["report_seconds"] = _cli(["report", str(sweep_dir)], deadline - time.monotonic())
        # the report's own fields (a missing one fails the stage): the sizes fitted, or why the fit was withheld
        out["report"] = {
            c: {k: e[k] for k in ("fitted_sizes", "capped", "withheld", "exponent")} for c, e in rep["table"].items()
        }
    except (RuntimeError, subprocess.TimeoutExpired) as exc:
        if "runs" not in out:
            try:
                out.update(_rows_summary(sweep.merge()))
            except FileNotFoundError:  # stopped before the plan was written
                out.update(_rows_summary([]))
        raise Partial(str(exc).splitlines()[0], out) from None
    return out


def _rows_summary(rows: list[dict]) -> dict:
    secs, tokens = sum(r["seconds"] for r in rows), sum(r["tokens_seen"] for r in rows)
    return {
        "runs": len(rows),
        "train_seconds": secs,
        "train_tokens": tokens,
        "train_tokens_per_s": tokens / secs if secs else None,
        "rows": [{k: r[k] for k in ("run", "n", "steps", "test_loss", "seconds", "tokens_seen")} for r in rows],
    }

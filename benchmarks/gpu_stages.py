"""The stages of the prepared GPU check (benchmarks/gpu_check.py) that compare and measure the ID
engine, and what every stage shares: the sizes (the device run's and the CPU smoke run's, one table),
the time box (``Box``), the comparisons and the fault injection.

``parity`` compares every CUDA path with the CPU path (kNN search and re-ranking, MLE/TwoNN, GPT
forward in float32, the trainer's bf16 loss, fused AdamW, embeddings, the synthetic-regression
transformer; paper Sections 3 and 5); ``id_large`` runs the kNN engine at N = 10^6, D = 768. The
``throughput`` stage is benchmarks/gpu_train.py, the ``sweep`` stage benchmarks/gpu_sweep.py.
``small`` (the --cpu-smoke run) picks toy sizes; ``faults`` perturbs the device side of the named
checks, to show that each can fail.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

T0 = time.monotonic()  # this process's start, before torch is imported (stage limits count from here)
# in order of value: a stage that runs out of its box is recorded as such and the next one starts
STAGES = ("parity", "throughput", "sweep", "id_large")
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
# each size as (the device run's, the CPU smoke run's)
_SIZE_TABLE = {
    "knn_n": (4000, 400),
    "knn_dim": (96, 24),
    "knn_tile": (512, 96),
    "gpt": ((512, 64, 2, 4, 64), (128, 32, 2, 2, 32)),  # vocab, block, layers, heads, width
    "batch": (8, 4),
    "tp_model": ((50_304, 1024, 12, 12, 768), (256, 64, 2, 2, 64)),  # the 125M configuration (Table 2)
    "tp_batch_eager": (16, 4),  # the first check's eager step, for comparison
    "tp_batch": (32, 8),  # the compiled step's micro-batch
    "tp_steps": (20, 2),
    "gemm": (8192, 256),
    "id_n": (10**6, 3000),
    "id_D": (768, 48),
    "id_d": (16, 4),
    "bootstrap": (200, 20),
}
K = 20


@dataclass
class Box:
    """What a stage may use: its time limit (seconds from this process's start, T0), a callback that
    stores what it has measured so far (the parent keeps it when the stage runs out of its box), and for
    the sweep, its directory and the carried corpora."""

    limit: float
    record: Callable[[dict], None] = lambda result: None
    sweep_dir: Path | None = None
    carry: Path | None = None

    def left(self) -> float:
        return T0 + self.limit - time.monotonic()


def sizes(small: bool) -> dict:
    """The sizes of the device run, or of the CPU smoke run."""
    return {name: pair[small] for name, pair in _SIZE_TABLE.items()}


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
def stage_parity(dev, small: bool, faults: set, box: Box | None = None) -> dict:
    """Each CUDA path against the CPU path on the same small inputs; on the smoke run dev is the CPU."""
    import torch

    from tmcheck.empirics.id import validation_points

    s = sizes(small)
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


def stage_id_large(dev, small: bool, faults: set, box: Box) -> dict:
    """Exact kNN + MLE at N = 10^6, D = 768 on the device (S^16 in R^768, known d = 16): the candidate
    search in bf16 with the engine's certificate (rows it cannot certify get the exact range query), so
    the neighbours are the exact ones; then, while the box allows, the float32 search of the first check
    on the same points, whose neighbours must be identical."""
    from tmcheck.empirics.id import MLE, validation_points
    from tmcheck.empirics.id.knn import kneighbors

    s = sizes(small)
    t0 = time.perf_counter()
    X = validation_points("sphere", s["id_n"], d=s["id_d"], D=s["id_D"], seed=0)
    out = {
        "manifold": f"sphere S^{s['id_d']} isometrically in R^{s['id_D']}",
        "N": s["id_n"],
        "D": s["id_D"],
        "true_d": s["id_d"],
        "k": K,
        "estimator": "MLE, MacKay-Ghahramani inverse mean (the paper's)",
        "interval": f"percentile bootstrap over points, {s['bootstrap']} resamples",
        "data_seconds": time.perf_counter() - t0,
    }
    _reset_peak(dev)
    t0 = time.perf_counter()
    nb = kneighbors(X, K, device=str(dev), precision="bfloat16")
    out.update(knn_seconds=time.perf_counter() - t0, search="bfloat16 + certificate", rows_recomputed=nb.n_recomputed)
    t0 = time.perf_counter()
    est = MLE(k=K, bootstrap=s["bootstrap"], seed=0).fit_distances(nb.distances)
    out.update(
        mle_seconds=time.perf_counter() - t0,
        dimension=est.dimension_,
        ci=list(est.ci_),
        knn_device=nb.device,
        peak_memory_gib=_peak_memory(dev),
    )
    out["knn_plus_mle_seconds"] = out["knn_seconds"] + out["mle_seconds"]
    box.record(out)
    if box.left() > 1.5 * out["knn_seconds"] * (1 if small else 8) + 10:  # float32 took 8x bf16's time or less
        t0 = time.perf_counter()
        ref = kneighbors(X, K, device=str(dev), precision="float32")
        out["float32_search"] = {"seconds": time.perf_counter() - t0, **same_neighbors(ref, nb)}
    else:
        out["float32_search"] = {"skipped": f"{box.left():.0f} s left in the box"}
    return out

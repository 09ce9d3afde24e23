"""CPU training throughput: our GPT against transformers' GPT2LMHeadModel with the same configuration.

Both models get the same weights (ours exported with `to_hf`), the same batches, the same AdamW
(`make_optimizer`) and the same thread count; a step is forward + backward + optimizer step.
Measurements alternate between the two models (ABAB...) so that a change in machine load hits both,
and the median over repeats is reported. Results: benchmarks/results/train.json.

Target (issue 7): ours >= 1.5x GPT2LMHeadModel tokens/s. On a CUDA machine the script also measures
tokens/s and MFU of the 125M configuration in bf16 (`gpu_throughput`); that path has not been run.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import torch

from tmcheck.util.atomic import write_json
from tmcheck.empirics.model import GPT, GPTConfig, lm_loss, to_hf
from tmcheck.empirics.presets import get_preset
from tmcheck.empirics.train import TrainConfig, make_optimizer

RESULTS = Path(__file__).resolve().parent / "results" / "train.json"


def _step_fn(model, kind):
    opt = make_optimizer(model, TrainConfig())
    model.train()

    def step(x, y):
        loss = lm_loss(model, (x, y)) if kind == "ours" else model(input_ids=x, labels=x).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step


def measure(cfg: GPTConfig, batch: int, steps: int, repeats: int, threads: int) -> dict:
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    ours = GPT(cfg)
    hf = to_hf(ours).train()
    fns = {"ours": _step_fn(ours, "ours"), "GPT2LMHeadModel": _step_fn(hf, "hf")}
    g = torch.Generator().manual_seed(0)
    x = torch.randint(0, cfg.vocab_size, (batch, cfg.block_size), generator=g)
    y = torch.roll(x, -1, dims=1)  # ours is given shifted targets; GPT-2 shifts labels=x itself
    for fn in fns.values():  # warm-up
        for _ in range(3):
            fn(x, y)
    rates = {k: [] for k in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            for _ in range(steps):
                fn(x, y)
            rates[name].append(batch * cfg.block_size * steps / (time.perf_counter() - t0))
    med = {k: statistics.median(v) for k, v in rates.items()}
    return {"config": cfg.__dict__, "batch_size": batch, "threads": threads, "steps_per_repeat": steps,
            "repeats": repeats, "tokens_per_s": med, "all_tokens_per_s": rates,
            "speedup": med["ours"] / med["GPT2LMHeadModel"], "params_non_embedding": ours.num_params()}


PEAK_BF16_FLOPS = {"H100": 989e12, "H200": 989e12, "A100": 312e12}  # dense bf16, per GPU


def gpu_throughput(steps: int = 20, batch: int = 16) -> dict:
    """tokens/s and MFU of the paper's 125M configuration in bf16 on one CUDA device (never run here)."""
    from tmcheck.empirics.train import _autocast

    dev = torch.device("cuda")
    cfg = GPTConfig(vocab_size=50_304, block_size=1024, n_layer=12, n_head=12, n_embd=768)
    model = GPT(cfg).to(dev)
    step = _step_fn(model, "ours")
    x = torch.randint(0, cfg.vocab_size, (batch, cfg.block_size), device=dev)
    y = torch.roll(x, -1, dims=1)
    for i in range(steps + 3):
        if i == 3:
            torch.cuda.synchronize()
            t0 = time.perf_counter()
        with _autocast(dev):
            step(x, y)
    torch.cuda.synchronize()
    tps = batch * cfg.block_size * steps / (time.perf_counter() - t0)
    # 6 N per token for the weights, plus 12 L T C for attention scores and values (PaLM appendix B)
    flops_per_token = 6 * model.num_params() + 12 * cfg.n_layer * cfg.block_size * cfg.n_embd
    name = torch.cuda.get_device_name()
    peak = next((v for k, v in PEAK_BF16_FLOPS.items() if k in name), None)
    return {"device": name, "tokens_per_s": tps, "flops_per_token": flops_per_token,
            "mfu": tps * flops_per_token / peak if peak else None, "batch": batch, "config": cfg.__dict__}


def main(quick: bool = False) -> dict:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    cases = []
    for preset in ("cpu-demo", "cpu-small"):
        p = get_preset(preset)
        cfg = GPTConfig(**{**p.model.__dict__, "vocab_size": p.vocab_size})
        cases.append(("preset " + preset, cfg, p.batch_size))
    out = {"machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "torch": torch.__version__,
                       "load_average_at_start": os.getloadavg()},
           "note": "CPU only; GPU throughput and MFU are unmeasured (no GPU in this environment)", "cases": {}}
    for name, cfg, batch in cases:
        for threads in (1,):  # what the trainer uses (TrainConfig.threads); 2 threads thrash on shared cores
            r = measure(cfg, batch, steps=3 if quick else 10, repeats=3 if quick else 7, threads=threads)
            out["cases"][f"{name}, {threads} thread{'s' if threads > 1 else ''}"] = r
            print(f"{name:18s} threads={threads}: ours {r['tokens_per_s']['ours']:9,.0f} tok/s, GPT2LMHeadModel "
                  f"{r['tokens_per_s']['GPT2LMHeadModel']:9,.0f} tok/s, speedup {r['speedup']:.2f}x", flush=True)
    out["machine"]["load_average_at_end"] = os.getloadavg()
    if torch.cuda.is_available():
        out["gpu_125M_bf16"] = gpu_throughput(steps=5 if quick else 20)
        print(f"GPU 125M bf16: {out['gpu_125M_bf16']['tokens_per_s']:,.0f} tok/s, MFU {out['gpu_125M_bf16']['mfu']}")
    if not quick:
        write_json(RESULTS, out)
    return out


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)

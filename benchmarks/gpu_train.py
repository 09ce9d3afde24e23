"""The ``throughput`` stage of the GPU check: the 125M configuration's training step (paper Table 2
sizes: 12 layers, 12 heads, width 768, context 1024) as fast as this codebase runs it on one GPU.

The step is the trainer's: forward + backward under bf16 autocast, grad clip 1.0, fused AdamW
(``make_optimizer``). Measured in order, each while the stage's box allows:

1. ``eager``: the first check's step (eager, micro-batch 16), for comparison;
2. ``compiled``: ``torch.compile`` of the model at a larger micro-batch, flash attention forced
   (``sdpa_kernel(FLASH_ATTENTION)``: a step that cannot use it fails instead of silently using
   another kernel), TF32 for the float32 matmuls outside autocast. ``compile_cold_seconds`` is the
   first step (tracing and code generation with an empty cache); ``compile_warm_seconds`` the first
   step after ``torch._dynamo.reset()`` (traced again, inductor's compiled graphs from its cache);
   tokens/s over the timed steps after that.

MFU = tokens/s x FLOPs per token / peak, against the datasheet's dense bf16 peak (gpu_peaks: 989
TFLOP/s on an H200 SXM) and against a bf16 GEMM measured in the same run. FLOPs per token: 6 N
(N the non-embedding parameters) + 12 L T C for attention (PaLM appendix B), as bench_train counts.
The CPU smoke run compiles with the ``aot_eager`` backend (dynamo and AOT autograd traced, no C++
code generation: seconds instead of minutes), which finds a graph break or a tracing error here.
"""

from __future__ import annotations

import platform
import time
from contextlib import nullcontext

from benchmarks.gpu_stages import Box, _peak_memory, _reset_peak, _sync, sizes


def flops_per_token(model, cfg) -> int:
    return 6 * model.num_params() + 12 * cfg.n_layer * cfg.block_size * cfg.n_embd


def gemm_flops(dev, n: int, reps: int = 10) -> float:
    """FLOP/s of an n x n x n bf16 product on dev (best of `reps` after 3 warm-up products)."""
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


def _flash(dev):
    """Flash attention only, on CUDA; the CPU has no flash kernel and runs the default."""
    if dev.type != "cuda":
        return nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel

    return sdpa_kernel(SDPBackend.FLASH_ATTENTION)


def _timed_steps(step, dev, steps: int, box: Box, reserve: float) -> tuple[int, float]:
    """Run up to `steps` steps, fewer when the box would leave less than `reserve` seconds; (steps, seconds)."""
    _sync(dev)
    t0 = time.perf_counter()
    done = 0
    while done < steps and (done < 2 or box.left() > reserve + (time.perf_counter() - t0) / done):
        step()
        done += 1
    _sync(dev)
    return done, time.perf_counter() - t0


def _run(dev, cfg, batch: int, steps: int, box: Box, compiled: bool, backend: str) -> dict:
    """One configuration: build, (compile,) warm up, time; its record."""
    import torch

    from tmcheck.empirics.lm.gpt import GPT, lm_loss
    from tmcheck.empirics.lm.train import TrainConfig, make_optimizer

    torch.manual_seed(0)
    _reset_peak(dev)
    model = GPT(cfg).to(dev).train()
    opt = make_optimizer(model, TrainConfig())
    net = torch.compile(model, backend=backend) if compiled else model
    x = torch.randint(0, cfg.vocab_size, (batch, cfg.block_size), device=dev)
    y = torch.roll(x, -1, dims=1)
    out = {
        "batch": batch,
        "tokens_per_step": batch * cfg.block_size,
        "optimizer": f"AdamW fused={opt.defaults.get('fused')}",
        "attention": "flash (forced)" if dev.type == "cuda" else "default SDPA kernel (CPU)",
    }

    def step():
        with _flash(dev), torch.autocast(dev.type, dtype=torch.bfloat16):
            loss = lm_loss(net, (x, y))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)

    t0 = time.perf_counter()
    step()
    _sync(dev)
    first = time.perf_counter() - t0
    if compiled:
        out.update(compile_backend=backend, compile_cold_seconds=first)
        torch._dynamo.reset()  # traced again; inductor's compiled graphs come from its cache
        net = torch.compile(model, backend=backend)
        t0 = time.perf_counter()
        step()
        _sync(dev)
        out["compile_warm_seconds"] = time.perf_counter() - t0
    step()  # one more warm-up step
    done, seconds = _timed_steps(step, dev, steps, box, reserve=5)
    out.update(
        steps_timed=done,
        seconds=seconds,
        tokens_per_s=batch * cfg.block_size * done / seconds,
        peak_memory_gib=_peak_memory(dev),
    )
    return out


def stage_throughput(dev, small: bool, faults: set, box: Box) -> dict:
    """The 125M step, eager then compiled (see the module docstring); MFU of each."""
    import torch

    from benchmarks.gpu_peaks import bf16_dense_peak
    from tmcheck.empirics.lm.gpt import GPT, GPTConfig

    s = sizes(small)
    vocab, block, layers, heads, width = s["tp_model"]
    cfg = GPTConfig(vocab_size=vocab, block_size=block, n_layer=layers, n_head=heads, n_embd=width)
    if dev.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True  # float32 matmuls outside autocast
        torch.backends.cudnn.allow_tf32 = True
    name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else platform.processor() or "cpu"
    peak, matched = bf16_dense_peak(name) if dev.type == "cuda" else (None, None)
    gemm = gemm_flops(dev, s["gemm"])
    fpt = flops_per_token(GPT(cfg), cfg)
    out = {
        "device": name,
        "config": cfg.__dict__,
        "flops_per_token": fpt,
        "params_non_embedding": GPT(cfg).num_params(),
        "peak_bf16_dense_flops": peak,
        "peak_entry": matched,
        "gemm_bf16_flops_measured": gemm,
        "gemm_size": s["gemm"],
        "step": "forward + backward in bf16 autocast, grad clip 1.0, fused AdamW",
    }

    def mfu(run: dict) -> dict:
        rate = run["tokens_per_s"] * fpt
        return {
            **run,
            "model_flops_per_s": rate,
            "mfu": rate / peak if peak else None,
            "mfu_vs_measured_gemm": rate / gemm,
        }

    backend = "inductor" if dev.type == "cuda" else "aot_eager"
    out["eager"] = mfu(_run(dev, cfg, s["tp_batch_eager"], s["tp_steps"], box, False, backend))
    box.record(out)
    out["compiled"] = mfu(_run(dev, cfg, s["tp_batch"], s["tp_steps"], box, True, backend))
    best = max((out["eager"], out["compiled"]), key=lambda r: r["tokens_per_s"])
    out["best"] = "compiled" if best is out["compiled"] else "eager"
    # the best run's figures at the top level as well (the speed page reads them there)
    out.update({k: best[k] for k in ("tokens_per_s", "mfu", "mfu_vs_measured_gemm", "batch", "peak_memory_gib")})
    out["step"] += f"; {out['best']}" + (f" ({best['compile_backend']})" if out["best"] == "compiled" else "")
    return out

"""CPU training throughput: our GPT against transformers' GPT2LMHeadModel with the same configuration.

Both models get the same weights (ours exported with `to_hf`), the same batches, the same AdamW
(`make_optimizer`: fused where torch has it) and the same thread count (every core of this process,
as the trainer's default `threads=0`); a step is forward + backward + clip + optimizer step.
Measurements alternate between the models (ABAB...) so that a change in machine load hits both; the
load average (uptime) is recorded before every repeat, and the median over repeats is reported.
Also measured: torch.compile of our model (compile seconds and tokens/s), and, for the tiny preset,
training k seeds in one process with torch.func.stack_module_state + vmap against k models one after
another. Results: benchmarks/results/train.json.

Target: ours >= 1.5x GPT2LMHeadModel tokens/s at cpu-demo and cpu-small, each as it runs (``alone``):
every model in processes of its own, alternating (ours, GPT-2, ours, GPT-2), ours with the setting
`train()` applies (`reuse_large_allocations()`, tmcheck.util.memory), GPT-2 in a default process. In one
process (``cases``) the two models share the allocator's state, so those ratios compare the models
under one allocation, not the tools. The CUDA figures
(tokens/s and MFU of the 125M configuration in bf16) are measured by benchmarks/gpu_check.sh.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import time
from pathlib import Path

import torch

from tmcheck.empirics.lm.gpt import GPT, GPTConfig, lm_loss, to_hf
from tmcheck.empirics.lm.train import TrainConfig, cpu_threads, make_optimizer
from tmcheck.empirics.sweep.kinds import get_preset
from tmcheck.util.atomic import write_json
from tmcheck.util.memory import reuse_large_allocations

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


def _batch(cfg: GPTConfig, batch: int):
    """The one batch every measurement steps on (seed 0), with its shifted targets."""
    g = torch.Generator().manual_seed(0)
    x = torch.randint(0, cfg.vocab_size, (batch, cfg.block_size), generator=g)
    return x, torch.roll(x, -1, dims=1)  # ours is given shifted targets; GPT-2 shifts labels=x itself


def measure(cfg: GPTConfig, batch: int, steps: int, repeats: int, threads: int, compiled: bool = False) -> dict:
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    ours = GPT(cfg)
    hf = to_hf(ours).train()
    fns = {"ours": _step_fn(ours, "ours"), "GPT2LMHeadModel": _step_fn(hf, "hf")}
    compile_s = None
    if compiled:
        twin = GPT(cfg)
        twin.load_state_dict(ours.state_dict())
        fns["ours compiled"] = _step_fn(torch.compile(twin), "ours")
    x, y = _batch(cfg, batch)
    for name, fn in fns.items():  # warm-up (the first compiled call compiles)
        t0 = time.perf_counter()
        fn(x, y)
        if name == "ours compiled":
            compile_s = time.perf_counter() - t0
        for _ in range(2):
            fn(x, y)
    rates = {k: [] for k in fns}
    loads = []
    for _ in range(repeats):
        loads.append(os.getloadavg()[0])
        for name, fn in fns.items():
            t0 = time.perf_counter()
            for _ in range(steps):
                fn(x, y)
            rates[name].append(batch * cfg.block_size * steps / (time.perf_counter() - t0))
    med = {k: statistics.median(v) for k, v in rates.items()}
    ratios = {k: med[k] / med["GPT2LMHeadModel"] for k in med if k != "GPT2LMHeadModel"}
    return {
        "config": cfg.__dict__,
        "batch_size": batch,
        "threads": threads,
        "steps_per_repeat": steps,
        "repeats": repeats,
        "tokens_per_s": med,
        "all_tokens_per_s": rates,
        "load_1min_per_repeat": loads,
        "speedup": ratios["ours"],
        "ratios": ratios,
        "compile_seconds": compile_s,
        "params_non_embedding": ours.num_params(),
    }


def _alone_worker(preset: str, kind: str, steps: int, repeats: int) -> None:
    """In a process of its own: one model's training step, tokens/s per repeat, printed as JSON. ours runs
    as train() sets a process up (every core, ``reuse_large_allocations()``), GPT2LMHeadModel as a default
    process (every core); both with the same weights and batches."""
    applied = reuse_large_allocations() if kind == "ours" else False
    p = get_preset(preset)
    cfg = GPTConfig(**{**p.model.__dict__, "vocab_size": p.vocab_size})
    torch.set_num_threads(cpu_threads(0))
    torch.manual_seed(0)
    model = GPT(cfg)
    if kind != "ours":
        model = to_hf(model).train()
    fn = _step_fn(model, "ours" if kind == "ours" else "hf")
    x, y = _batch(cfg, p.batch_size)
    for _ in range(3):
        fn(x, y)
    rates, sys_s = [], []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), os.times().system
        for _ in range(steps):
            fn(x, y)
        rates.append(p.batch_size * cfg.block_size * steps / (time.perf_counter() - t0))
        sys_s.append(os.times().system - c0)
    print(json.dumps({"tokens_per_s": rates, "system_seconds": sys_s, "reuse_large_allocations": applied}))


def alone(preset: str, steps: int, repeats: int, rounds: int = 2) -> dict:
    """Each model in processes of its own, alternating ours / GPT-2 for `rounds` rounds; medians over all
    repeats. The ratio compares the tools as they run (see the module docstring)."""
    import subprocess
    import sys

    runs = {"ours": [], "GPT2LMHeadModel": []}
    loads = []
    for _ in range(rounds):
        for kind in runs:
            loads.append(os.getloadavg()[0])
            cmd = [sys.executable, "-m", "benchmarks.bench_train", "worker", preset, kind, str(steps), str(repeats)]
            out = subprocess.run(cmd, capture_output=True, text=True, cwd=RESULTS.parents[2], check=True)
            runs[kind].append(json.loads(out.stdout.strip().splitlines()[-1]))
    med = {k: statistics.median([r for run in v for r in run["tokens_per_s"]]) for k, v in runs.items()}
    return {
        "preset": preset,
        "threads": cpu_threads(0),
        "steps_per_repeat": steps,
        "repeats_per_process": repeats,
        "rounds": rounds,
        "tokens_per_s": med,
        "runs": runs,
        "load_1min_per_process": loads,
        "speedup": med["ours"] / med["GPT2LMHeadModel"],
    }


def vmap_seeds(cfg: GPTConfig, batch: int, k: int, steps: int, repeats: int, threads: int) -> dict:
    """k seeds of a tiny GPT: one vmapped step over stacked weights vs k separate models, tokens/s."""
    from torch.func import functional_call, grad_and_value, stack_module_state, vmap

    torch.set_num_threads(threads)
    models = [GPT(cfg) for _ in range(k)]
    params, buffers = stack_module_state(models)
    base = GPT(cfg).to("meta")
    opt = torch.optim.AdamW(list(params.values()), lr=1e-3, fused=True)
    for p in params.values():
        p.requires_grad_(False)

    def loss(p, b, x, y):
        return functional_call(base, (p, b), (x, y))[1]

    step_grad = vmap(grad_and_value(loss), in_dims=(0, 0, 0, 0))
    g = torch.Generator().manual_seed(0)
    x = torch.randint(0, cfg.vocab_size, (k, batch, cfg.block_size), generator=g)
    y = torch.roll(x, -1, dims=2)

    def stacked():
        grads, _ = step_grad(params, buffers, x, y)
        for name, p in params.items():
            p.grad = grads[name]
        opt.step()
        opt.zero_grad(set_to_none=True)

    singles = [_step_fn(m, "ours") for m in models]

    def one_by_one():
        for i, fn in enumerate(singles):
            fn(x[i], y[i])

    fns = {"vmap": stacked, "sequential": one_by_one}
    for fn in fns.values():
        fn()
    rates = {n: [] for n in fns}
    for _ in range(repeats):
        for n, fn in fns.items():
            t0 = time.perf_counter()
            for _ in range(steps):
                fn()
            rates[n].append(k * batch * cfg.block_size * steps / (time.perf_counter() - t0))
    med = {n: statistics.median(v) for n, v in rates.items()}
    return {"k": k, "tokens_per_s": med, "vmap_over_sequential": med["vmap"] / med["sequential"], "all": rates}


def main(
    quick: bool = False,
    threads_list: tuple[int, ...] = (0, 1),
    compile_presets: tuple[str, ...] = ("cpu-demo",),
    presets: tuple[str, ...] = ("cpu-demo", "cpu-small"),
    repeats: int = 5,
    steps: int = 5,
    vmap: bool = True,
    merge: bool = False,
    alone_presets: tuple[str, ...] = ("cpu-demo", "cpu-small"),
) -> dict:
    """threads 0 = every core of this process (the trainer's default). With merge, the cases of this run
    are added to those already in the results file (each case keeps its own load record).
    alone_presets: also timed with each model in processes of its own (``alone``), as each library runs."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    out = _start(merge)
    for preset in [p for p in presets if p]:
        for t in threads_list:
            _case(out, preset, t, quick, steps, repeats, compiled=not quick and preset in compile_presets)
    if vmap:
        _vmap_cases(out, quick)
    for preset in [p for p in alone_presets if p]:
        r = alone(preset, steps=3 if quick else steps, repeats=3 if quick else repeats, rounds=1 if quick else 2)
        out["alone"][f"preset {preset}, every core"] = r
        if not quick:
            write_json(RESULTS, out)
        print(
            f"{preset:10s} alone, every core: tmcheck's trainer {r['tokens_per_s']['ours']:9,.0f} tok/s, "
            f"GPT2LMHeadModel {r['tokens_per_s']['GPT2LMHeadModel']:9,.0f} tok/s, ratio {r['speedup']:.2f}x",
            flush=True,
        )
    out["machine"]["load_average_at_end"] = os.getloadavg()
    if not quick:
        write_json(RESULTS, out)
    return out


def _start(merge: bool) -> dict:
    """The results of this run before any case: the machine, and with merge what the results file holds."""
    out = {
        "machine": {
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "all_cores": cpu_threads(0),
            "torch": torch.__version__,
            "load_average_at_start": os.getloadavg(),
        },
        "note": "CPU; load averages are of a shared machine; GPU figures only where a GPU ran this script",
        "cases": {},
        "vmap_seeds": {},
        "alone": {},
    }
    if merge and RESULTS.exists():
        old = json.loads(RESULTS.read_text())
        out = {**old, "runs": [*old.get("runs", [old["machine"]]), out["machine"]], "machine": out["machine"]}
    return out


def _case(out: dict, preset: str, t: int, quick: bool, steps: int, repeats: int, compiled: bool) -> None:
    """One preset at t threads in one process (`measure`), into out["cases"], saved and printed."""
    p = get_preset(preset)
    cfg = GPTConfig(**{**p.model.__dict__, "vocab_size": p.vocab_size})
    threads = cpu_threads(t)
    r = measure(
        cfg,
        p.batch_size,
        steps=3 if quick else steps,
        repeats=3 if quick else repeats,
        threads=threads,
        compiled=compiled,
    )
    out["cases"][f"preset {preset}, {threads} threads"] = r
    if not quick:  # after every case: a run cut short by a loaded machine keeps what it measured
        write_json(RESULTS, out)
    tps = r["tokens_per_s"]
    print(
        f"{preset:10s} threads={threads}: ours {tps['ours']:9,.0f} tok/s, "
        f"GPT2LMHeadModel {tps['GPT2LMHeadModel']:9,.0f} tok/s, ratio {r['speedup']:.2f}x"
        + (
            f"; compiled {tps['ours compiled']:9,.0f} tok/s ({r['ratios']['ours compiled']:.2f}x, "
            f"compile {r['compile_seconds']:.0f} s)"
            if "ours compiled" in tps
            else ""
        )
        + f"; load {min(r['load_1min_per_repeat']):.1f}-{max(r['load_1min_per_repeat']):.1f}",
        flush=True,
    )


def _vmap_cases(out: dict, quick: bool) -> None:
    """k seeds of the tiny preset, vmapped against one after another (`vmap_seeds`), into out["vmap_seeds"]."""
    tiny = get_preset("tiny")
    tcfg = GPTConfig(**{**tiny.model.__dict__, "vocab_size": tiny.vocab_size})
    for k in (2,) if quick else (2, 4, 8):
        v = vmap_seeds(tcfg, tiny.batch_size, k, steps=3 if quick else 10, repeats=3 if quick else 5, threads=1)
        out["vmap_seeds"][f"tiny, k={k}, 1 thread"] = v
        print(
            f"tiny x{k} seeds: vmap {v['tokens_per_s']['vmap']:9,.0f} tok/s, sequential "
            f"{v['tokens_per_s']['sequential']:9,.0f} tok/s, ratio {v['vmap_over_sequential']:.2f}x",
            flush=True,
        )


def _ints(text: str) -> tuple[int, ...]:
    return tuple(int(v) for v in text.split(",") if v)


if __name__ == "__main__":
    import argparse
    import sys

    if sys.argv[1:2] == ["worker"]:
        _alone_worker(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
        raise SystemExit(0)

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--threads", type=_ints, default=(0, 1), help="comma list; 0 = all cores")
    ap.add_argument("--presets", default="cpu-demo,cpu-small")
    ap.add_argument("--compile", default="cpu-demo", help="presets whose compiled model is also timed")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--no-vmap", action="store_true", help="skip the vmap-over-seeds measurement")
    ap.add_argument("--merge", action="store_true", help="add to the cases already in the results file")
    ap.add_argument("--alone", default="cpu-demo,cpu-small", help="presets also timed one model per process")
    a = ap.parse_args()
    main(
        a.quick,
        a.threads,
        tuple(a.compile.split(",")),
        tuple(a.presets.split(",")),
        a.repeats,
        a.steps,
        vmap=not a.no_vmap,
        merge=a.merge,
        alone_presets=tuple(a.alone.split(",")),
    )

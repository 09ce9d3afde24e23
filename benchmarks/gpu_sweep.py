"""The ``sweep`` stage of the GPU check: a Figure 2 sweep over three decades of n on one GPU, with the
report's verdicts (paper Section 3, Figure 2).

The preset (``sweep_preset``): the three built-in corpora x 5 sizes (n = 2,000 to 2,000,000 training
tokens, the full split of each prepared corpus) x 2 seeds = 30 runs; gpu-quick's tokenizer, context
(256) and batch (64), a 4-layer model of width 256 (4 heads) so that 30 runs fit the box. Every run
trains at a constant rate until its validation loss stops improving (3 evaluations 25 steps apart), then
cools down over 100 steps and stops: runs end on their own, and a large n trains on more tokens than a
small one. The step cap is a safety net sized from the box: the stage first times 10 steps of this model
on the device, then sets the cap to CAP_FACTOR times the steps one run gets if the box's training time
is shared evenly. A run that reaches the cap is recorded as capped, and the report leaves it out of the
fit and says so; ``runs_on_cap`` counts them.

The corpora travel prepared (``prepare_carry``, run where the network and the CPU are: the
tokenizer and the token shards of each corpus, benchmarks/.gpu_carry/), since the GPU machine has no
network; the stage copies them into a new sweep directory and runs ``tmcheck sweep data`` ->
``tmcheck id corpus`` -> ``tmcheck report`` there. The verdicts are the report's, by its equivalence
rule (``empirics.report.common.verdict``: equivalent within ±0.05, differs, or undecided).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

from benchmarks.gpu_stages import Box, _sync

CARRY = Path(__file__).resolve().parent / ".gpu_carry"
CAP_FACTOR = 4  # the step cap over the steps per run of an even share of the box
RESERVE = {False: 75, True: 45}  # seconds of the box kept for `id corpus`, `report` and their start-up
FORMS = ("loglog", "offset")
SMOKE_CAP = 40  # the smoke run's steps per run at most: it tests the code, a run may stop on either


# each field as (the device run's, the smoke run's); None keeps the base preset's (gpu-quick's, tiny's)
_PRESET = {
    "name": ("gpu-fig2", "tiny-smoke"),
    "corpora": (None, ("stories",)),
    "seeds": ((0, 1), (0, 1)),
    "n_min": (2_000, None),
    "n_max": (2_000_000, None),
    "n_sizes": (5, 3),
    "model": ({"block_size": 256, "n_layer": 4, "n_head": 4, "n_embd": 256}, None),  # GPTConfig fields
    "max_eval_tokens": (32_768, 1024),
    "id_docs": (1024, 32),
    "notes": (
        "gpu_check: three corpora, 5 sizes over three decades, 2 seeds, gpu-quick's data and batch with a "
        "4-layer model of width 256; every run stops on its validation "
        "loss, the step cap sized from the stage's box as a safety net",
        "gpu_check --cpu-smoke: tiny, one corpus, 3 sizes, 2 seeds",
    ),
}
_TRAIN = {
    "schedule": ("plateau", "plateau"),
    "cooldown": (100, 5),
    "eval_every": (25, 10),
    "patience": (3, 1),
    "warmup_steps": (20, None),
}


def sweep_preset(small: bool, max_steps: int = 100_000):
    """The device run's preset (see the module docstring) or the smoke run's (tiny: one corpus, 3 sizes,
    2 seeds). The data it trains on depends on neither `max_steps` nor the device."""
    from tmcheck.empirics.lm.gpt import GPTConfig
    from tmcheck.empirics.sweep.kinds import get_preset

    p = get_preset("tiny" if small else "gpu-quick")
    fields = {k: v[small] for k, v in _PRESET.items()}
    if fields["model"] is not None:
        fields["model"] = GPTConfig(**fields["model"])
    train = replace(p.train, max_steps=max_steps, **{k: v[small] for k, v in _TRAIN.items() if v[small] is not None})
    return p.with_overrides(train=train, **fields)


def prepare_carry(small: bool, carry: Path = CARRY) -> Path:
    """Tokenizers and token shards of the preset's corpora under carry/data/<tag>/ (idempotent); the
    directory the device run copies them from. Run here: preparing needs the corpora's sources."""
    from tmcheck.empirics.data import prepare_dataset
    from tmcheck.empirics.lm.pretrain import dataset_spec
    from tmcheck.empirics.sweep.pretrain import corpus_tag

    preset = sweep_preset(small)
    carry.mkdir(parents=True, exist_ok=True)
    (carry / ".gitignore").write_text("*\n")  # ignored by git: the device run names it in its carry
    for corpus in preset.corpora:
        prepare_dataset(dataset_spec(preset, corpus), carry / "data" / corpus_tag(corpus))
    return carry


def steps_per_second(dev, preset, steps: int = 10) -> float:
    """Training steps per second of the preset's model and batch on dev (bf16 autocast, as the trainer)."""
    import torch

    from tmcheck.empirics.lm.gpt import GPT, GPTConfig, lm_loss
    from tmcheck.empirics.lm.train import make_optimizer

    cfg = GPTConfig(**{**preset.model.__dict__, "vocab_size": preset.vocab_size})
    model = GPT(cfg).to(dev).train()
    opt = make_optimizer(model, preset.train)
    x = torch.randint(0, cfg.vocab_size, (preset.batch_size, cfg.block_size), device=dev)

    def step():
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=dev.type == "cuda"):
            loss = lm_loss(model, (x, x))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(3):
        step()
    _sync(dev)
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    _sync(dev)
    return steps / (time.perf_counter() - t0)


def step_cap(train_seconds: float, rate: float, runs: int) -> int:
    """CAP_FACTOR times the steps of an even share of `train_seconds` at `rate` steps/s (at least 100)."""
    return max(100, int(CAP_FACTOR * train_seconds * rate / max(1, runs)))


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


def stage_sweep(dev, small: bool, faults: set, box: Box) -> dict:
    """Calibrate, copy the carried corpora in, then sweep data -> id corpus -> report through the CLI,
    recording after each step; the report's verdicts per corpus and form."""
    from tmcheck.empirics.report.common import verdict
    from tmcheck.empirics.sweep import SweepDir
    from tmcheck.empirics.sweep.pretrain import corpus_tag

    carry = box.carry if box.carry is not None else CARRY
    base = sweep_preset(small)
    missing = [c for c in base.corpora if not (carry / "data" / corpus_tag(c) / "dataset.json").exists()]
    if missing:
        raise FileNotFoundError(f"no prepared corpus {', '.join(missing)} under {carry}/data (prepare_carry)")
    rate = steps_per_second(dev, base)
    runs = len(base.corpora) * base.n_sizes * len(base.seeds)
    train_s = box.left() - RESERVE[small]
    cap = step_cap(train_s, rate, runs)
    preset = sweep_preset(small, min(cap, SMOKE_CAP) if small else cap)
    out = {
        "preset": preset.as_dict(),
        "device": str(dev),
        "calibration": {
            "steps_per_s": rate,
            "train_seconds_available": train_s,
            "planned_runs": runs,
            "step_cap": preset.train.max_steps,
            "cap_factor": CAP_FACTOR,
        },
    }
    box.record(out)
    sweep = SweepDir(box.sweep_dir)
    with sweep.lock():
        sweep.open("pretrain", preset, {"corpora": list(preset.corpora)})
    for c in preset.corpora:  # the carried shards, as `tmcheck sweep data` would have prepared them
        shutil.copytree(carry / "data" / corpus_tag(c), sweep.data_dir(corpus_tag(c)), dirs_exist_ok=True)
    dev_opt = ["--device", "cpu" if dev.type == "cpu" else str(dev)]
    try:
        rows, out["sweep_seconds"] = _cli(
            ["sweep", "data", str(sweep.path), "--workers", "1"], box.left() - RESERVE[small]
        )
        out.update(rows_summary(rows))
        box.record(out)
        ids, out["id_seconds"] = _cli(["id", "corpus", str(sweep.path), *dev_opt], box.left() - 15)
        out["id"] = {c: {k: e[k] for k in ("d", "d_ci", "alpha_D", "points", "width")} for c, e in ids.items()}
        box.record(out)
        rep, out["report_seconds"] = _cli(["report", str(sweep.path)], box.left() - 2)
    finally:
        if "runs" not in out:
            out.update(rows_summary(_merged(sweep)))
        box.record(out)
    out["report"] = {
        c: {
            "verdicts": {form: verdict(e, form) for form in FORMS},
            "alpha": {form: e["exponent"]["fits"][form]["alpha"] for form in FORMS} if e["exponent"] else None,
            "exponent": {"prediction": e["exponent"]["prediction"]} if e["exponent"] else None,
            "fitted_sizes": e["fitted_sizes"],
            "capped": e["capped"],
            "withheld": e["withheld"],
        }
        for c, e in rep["table"].items()
    }
    out["decades"] = {c: decades(out["rows"], c) for c in preset.corpora}
    return out


def _merged(sweep) -> list[dict]:
    try:
        return sweep.merge()
    except FileNotFoundError:  # stopped before the plan was written
        return []


def decades(rows: list[dict], corpus: str) -> float | None:
    """log10 of the largest over the smallest n trained on for the corpus."""
    import math

    ns = [r["n"] for r in rows if r["corpus"] == corpus]
    return math.log10(max(ns) / min(ns)) if ns else None


def rows_summary(rows: list[dict]) -> dict:
    secs, tokens = sum(r["seconds"] for r in rows), sum(r["tokens_seen"] for r in rows)
    return {
        "runs": len(rows),
        "runs_on_cap": sum(r.get("stop") == "cap" for r in rows),
        "train_seconds": secs,
        "train_tokens": tokens,
        "train_tokens_per_s": tokens / secs if secs else None,
        "rows": [
            {
                k: r.get(k)
                for k in ("run", "corpus", "n", "seed", "steps", "stop", "test_loss", "seconds", "tokens_seen")
            }
            for r in rows
        ],
    }

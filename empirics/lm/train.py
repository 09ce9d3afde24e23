"""A generic trainer: a model, a batch source and a loss (the paper's Appendix A recipe).

AdamW, linear warmup then cosine decay to min_lr, gradient clipping, gradient accumulation, bf16
autocast on CUDA (full precision on CPU), evaluation every `eval_every` steps with early stopping on
the validation loss, and a checkpoint at every evaluation. Nothing here assumes language modelling:

    train(model, batches, loss_fn, val_batches, cfg, out_dir)

- `batches(step, micro)` returns the micro-batch `micro` of optimizer step `step` (any nesting of
  tensors). It must depend only on its arguments: this is what makes a resumed run equal an
  uninterrupted one, and a SIGKILL lose at most one checkpoint interval.
- `loss_fn(model, batch)` returns a scalar tensor (e.g. `model.lm_loss`, or an MSE).
- `val_batches()` yields the fixed validation batches; their mean loss drives early stopping.

Files in out_dir: `last.pt` (model, optimizer, RNG, step, history) and `best.pt` (model at the best
validation loss), each ONE safetensors file with JSON metadata and its own sha256 inside
(tmcheck.empirics.lm.checkpoint: nothing is ever unpickled), and `result.json` once done.
Under `torchrun` with more than one process the model is wrapped in DistributedDataParallel; rank r
draws micro-batch `micro * world + r`, and only rank 0 writes files.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch
import torch.nn as nn

from tmcheck.empirics import schema
from tmcheck.empirics.device import resolve_device
from tmcheck.empirics.lm.checkpoint import (
    BEST,
    LAST,
    CheckpointError,
    load_checkpoint,
    load_model_state,
    load_optimizer,
    read_result,
    save_checkpoint,
    set_rng,
)
from tmcheck.util import atomic
from tmcheck.util.memory import reuse_large_allocations

__all__ = [
    "CheckpointError",
    "STOPS",
    "TrainConfig",
    "TrainResult",
    "evaluate",
    "load_checkpoint",
    "lr_at",
    "make_optimizer",
    "resolve_device",
    "save_checkpoint",
    "stop_reason",
    "train",
]


@dataclass
class TrainConfig:
    max_steps: int = 2000  # optimizer steps at most; the cosine decays over these
    lr: float = 6e-4  # peak learning rate (paper: 6e-4)
    min_lr: float = 6e-5  # floor of the cosine (paper: 6e-5)
    warmup_steps: int = 100  # linear warmup (paper: 2000 of 200k)
    weight_decay: float = 0.1  # AdamW decay on matrices only
    betas: tuple[float, float] = (0.9, 0.95)
    grad_clip: float = 1.0  # max global gradient norm; 0 disables clipping
    grad_accum: int = 1  # micro-batches per optimizer step
    eval_every: int = 100  # steps between evaluations; each evaluation also checkpoints
    patience: int = 5  # evaluations without improvement before stopping; 0 never stops early
    schedule: str = "cosine"  # "cosine": decay over max_steps; "plateau": constant lr until `patience`
    # evaluations without improvement, then decay to min_lr over `cooldown` steps
    cooldown: int = 0  # steps of the final decay under schedule "plateau"
    seed: int = 0  # seeds torch (dropout); batches are seeded by their source
    device: str = "auto"  # "auto" = cuda if available, else cpu
    threads: int = 0  # CPU threads (torch.set_num_threads); 0 = every core this process may
    # use. A pool of w workers on c cores gives each c // w
    compile: bool = False  # torch.compile the model (see benchmarks/bench_train.py for when it pays)
    progress: bool = True  # rich progress bar with tokens/s, loss and ETA


STOPS = ("patience", "cap")  # why a run ended: its validation loss stopped improving, or it reached max_steps


def stop_reason(stopped_early: bool) -> str:
    """'patience' for a run that stopped on its validation loss before max_steps, else 'cap'."""
    return STOPS[0] if stopped_early else STOPS[1]


@dataclass
class TrainResult:
    best_val: float
    best_step: int
    steps: int
    stopped_early: bool
    tokens: int
    seconds: float
    history: list[dict] = field(default_factory=list)
    stop: str = ""  # stop_reason(stopped_early); the schema migrates result.json files from before it


SCHEDULES = ("cosine", "plateau")


def lr_at(step: int, cfg: TrainConfig, decay_start: int = -1) -> float:
    """Linear warmup to cfg.lr, then a cosine decay to cfg.min_lr: over the steps up to cfg.max_steps
    (schedule "cosine"), or, for schedule "plateau", over the `cooldown` steps from `decay_start` (the
    step at which the validation loss stopped improving; -1: not yet, the rate stays at cfg.lr)."""
    if step < cfg.warmup_steps:
        return cfg.lr * (step + 1) / cfg.warmup_steps
    if cfg.schedule == "plateau":
        if decay_start < 0:
            return cfg.lr
        t = min(1.0, (step - decay_start) / max(1, cfg.cooldown))
    else:
        t = min(1.0, (step - cfg.warmup_steps) / max(1, cfg.max_steps - cfg.warmup_steps))
    return cfg.min_lr + 0.5 * (1 + math.cos(math.pi * t)) * (cfg.lr - cfg.min_lr)


def to_device(batch: Any, device: torch.device) -> Any:
    if isinstance(batch, torch.Tensor):
        return batch.to(device, non_blocking=True)
    if isinstance(batch, (list, tuple)):
        return type(batch)(to_device(b, device) for b in batch)
    if isinstance(batch, dict):
        return {k: to_device(v, device) for k, v in batch.items()}
    return batch


def batch_tokens(batch: Any) -> int:
    """Tokens (elements of the first tensor) in a batch, for the tokens/s column."""
    while isinstance(batch, (list, tuple)):
        batch = batch[0]
    if isinstance(batch, dict):
        return batch_tokens(next(iter(batch.values())))
    return int(batch.numel())


def make_optimizer(model: nn.Module, cfg: TrainConfig) -> torch.optim.AdamW:
    """AdamW with weight decay on matrices and embeddings, none on biases and LayerNorm gains."""
    params = [p for p in model.parameters() if p.requires_grad]
    decay = [p for p in params if p.dim() >= 2]
    no_decay = [p for p in params if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    # the fused kernel (CPU and CUDA) updates all parameters in one pass; foreach is the fallback
    fused = all(p.is_floating_point() and p.device.type in ("cpu", "cuda") for p in params)
    return torch.optim.AdamW(groups, lr=cfg.lr, betas=cfg.betas, fused=fused or None, foreach=None if fused else True)


def cpu_threads(requested: int = 0) -> int:
    """The thread count for `requested` (0 = OMP_NUM_THREADS when set, else every core this process may
    run on: a pool worker or a test process that limits its threads the standard way is respected)."""
    if requested > 0:
        return requested
    env = os.environ.get("OMP_NUM_THREADS", "")
    if env.isdigit() and int(env) > 0:
        return int(env)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _dist() -> tuple[int, int]:
    """(rank, world size) under torchrun, initialising the process group once; (0, 1) otherwise."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        return 0, 1
    import torch.distributed as dist

    if not dist.is_initialized():
        dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
    return dist.get_rank(), world


@torch.no_grad()
def evaluate(model: nn.Module, loss_fn: Callable, batches: Iterable, device: torch.device) -> float:
    """Mean loss over the batches, in eval mode (autocast on CUDA as in training)."""
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    for batch in batches:
        with _autocast(device):
            total += float(loss_fn(model, to_device(batch, device)))
        count += 1
    model.train(was_training)
    if count == 0:
        raise ValueError("the validation set yielded no batches")
    return total / count


def _autocast(device: torch.device):
    if device.type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


_RESUME_FIELDS = {
    "step": int,
    "best_val": float,
    "best_step": int,
    "bad_evals": int,
    "tokens": int,
    "seconds": float,
    "history": list,
}


@dataclass
class _State:
    """Where a run stands: what last.pt stores beside the model and optimizer (`_RESUME_FIELDS` in order)."""

    step: int = 0  # optimizer steps done
    best_val: float = math.inf
    best_step: int = -1
    bad_evals: int = 0  # evaluations since the best one
    tokens: int = 0
    seconds: float = 0.0  # time in training steps (evaluations and checkpoints excluded)
    history: list = field(default_factory=list)
    decay_start: int = -1  # schedule "plateau": the step at which the cooldown began


def _resume(path: Path, model: nn.Module, opt: torch.optim.Optimizer, max_steps: int, tokens_per_step: int) -> _State:
    """Model, optimizer and RNG state from last.pt, every part checked (its counters against this run:
    schema.check_progress); CheckpointError naming what is wrong."""
    ck = load_checkpoint(path)
    for name, kind in _RESUME_FIELDS.items():
        if not isinstance(ck.get(name), (int, float) if kind is float else kind) or isinstance(ck.get(name), bool):
            raise CheckpointError(f"checkpoint {path}: field {name!r} is missing or not a {kind.__name__}")
    if not (math.isfinite(ck["best_val"]) or ck["best_step"] == -1) or not 0 <= ck["seconds"] < math.inf:
        raise CheckpointError(f"checkpoint {path}: best_val or seconds is not a finite number")
    try:
        schema.check_progress({**ck, "steps": ck["step"]}, f"checkpoint {path}", max_steps, tokens_per_step)
    except schema.SchemaError as exc:
        raise CheckpointError(str(exc)) from None
    decay_start = ck.get("decay_start", -1)  # absent from checkpoints written before schedule "plateau"
    if not isinstance(decay_start, int) or isinstance(decay_start, bool):
        raise CheckpointError(f"checkpoint {path}: field 'decay_start' is not an int")
    load_model_state(model, ck.get("model"), path)
    load_optimizer(opt, ck.get("optimizer"), path)
    set_rng(ck.get("torch_rng"), path)
    return _State(*(ck[name] for name in _RESUME_FIELDS), decay_start)


def train(
    model: nn.Module,
    batches: Callable[[int, int], Any],
    loss_fn: Callable[[nn.Module, Any], torch.Tensor],
    val_batches: Callable[[], Iterable],
    cfg: TrainConfig,
    out_dir: Path,
    meta: dict | None = None,
) -> TrainResult:
    """Train until cfg.max_steps or early stopping, resuming from out_dir/last.pt if present.

    `meta` (e.g. the model config) is stored in every checkpoint. On the CPU this process's malloc is set
    to reuse large blocks (``tmcheck.util.memory``; ``TMCHECK_MALLOC=default`` leaves it). Returns the
    TrainResult that is also written to out_dir/result.json; if that file exists the run is finished and
    is not redone."""
    out_dir = Path(out_dir)
    done = out_dir / "result.json"
    rank, world = _dist()
    per_step = batch_tokens(batches(0, rank)) * cfg.grad_accum * world  # every step sees as many tokens
    # through the schema and against this run: a damaged or implausible record is refused, never returned
    rec = read_result(out_dir, cfg.max_steps, per_step)
    if rec is not None:
        return TrainResult(**{k: v for k, v in rec.items() if k != "schema_version"})
    if cfg.schedule not in SCHEDULES:
        raise ValueError(f"unknown schedule {cfg.schedule!r}; expected one of {', '.join(SCHEDULES)}")
    if cfg.schedule == "plateau" and cfg.cooldown < 1:
        raise ValueError("schedule 'plateau' needs cooldown >= 1 steps")
    device = _prepare_process(cfg, world)
    model.to(device).train()
    opt = make_optimizer(model, cfg)
    last = out_dir / LAST
    st = _resume(last, model, opt, cfg.max_steps, per_step) if last.exists() else _State()
    net = _wrap(model, cfg, world, device)
    stopped = _stopped(cfg, st.step, st.bad_evals, st.decay_start)
    progress = _progress(cfg.progress and rank == 0)
    with progress:
        task = progress.add_task(out_dir.name, total=cfg.max_steps, completed=st.step, loss=float("nan"), tps=0.0)
        t_last, tok_last = time.perf_counter(), 0
        while st.step < cfg.max_steps and not stopped:
            for g in opt.param_groups:
                g["lr"] = lr_at(st.step, cfg, st.decay_start)
            t0 = time.perf_counter()
            loss_sum, step_tokens = _optimizer_step(
                model, net, opt, batches, loss_fn, cfg, device, st.step, rank, world
            )
            st.tokens += step_tokens
            tok_last += step_tokens
            st.step += 1
            st.seconds += time.perf_counter() - t0
            now = time.perf_counter()
            progress.update(task, completed=st.step, loss=loss_sum, tps=tok_last / max(now - t_last, 1e-9))
            if st.step % cfg.eval_every == 0 or st.step == cfg.max_steps:
                stopped = _evaluate_and_save(
                    model, opt, loss_fn, val_batches, cfg, device, st, loss_sum, out_dir, meta, rank
                )
                t_last, tok_last = time.perf_counter(), 0
    result = TrainResult(
        best_val=st.best_val,
        best_step=st.best_step,
        steps=st.step,
        stopped_early=stopped and st.step < cfg.max_steps,
        tokens=st.tokens,
        seconds=st.seconds,
        history=st.history,
        stop=stop_reason(stopped and st.step < cfg.max_steps),
    )
    if not math.isfinite(result.best_val):
        raise ValueError(f"training in {out_dir} gave no finite validation loss (diverged); nothing recorded")
    if rank == 0:
        atomic.write_json(done, {"schema_version": schema.RESULT_VERSION, **asdict(result)})
    return result


def _prepare_process(cfg: TrainConfig, world: int) -> torch.device:
    """The device (this rank's GPU under torchrun), torch seeded, and on the CPU the thread count and malloc set."""
    device = resolve_device(cfg.device)
    if world > 1 and device.type == "cuda":
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
    torch.manual_seed(cfg.seed)
    if device.type == "cpu":
        torch.set_num_threads(cpu_threads(cfg.threads))
        reuse_large_allocations()  # the step's large tensors from the heap, not fresh mappings (util/memory.py)
    return device


def _wrap(model: nn.Module, cfg: TrainConfig, world: int, device: torch.device) -> nn.Module:
    """The module the steps run: the model, compiled if asked, in DistributedDataParallel with several processes."""
    net = torch.compile(model) if cfg.compile else model
    if world > 1:
        from torch.nn.parallel import DistributedDataParallel

        net = DistributedDataParallel(net, device_ids=[device.index] if device.type == "cuda" else None)
    return net


def _optimizer_step(
    model: nn.Module,
    net: nn.Module,
    opt: torch.optim.Optimizer,
    batches: Callable[[int, int], Any],
    loss_fn: Callable[[nn.Module, Any], torch.Tensor],
    cfg: TrainConfig,
    device: torch.device,
    step: int,
    rank: int,
    world: int,
) -> tuple[float, int]:
    """One optimizer step over cfg.grad_accum micro-batches (this rank's share), clipped; returns the
    step's training loss and the tokens it saw over all ranks."""
    loss_sum, tokens = 0.0, 0
    for micro in range(cfg.grad_accum):
        batch = to_device(batches(step, micro * world + rank), device)
        sync = contextlib.nullcontext() if (world == 1 or micro == cfg.grad_accum - 1) else net.no_sync()
        with sync:  # skip DDP's gradient all-reduce on all but the last micro-batch
            with _autocast(device):
                loss = loss_fn(net, batch) / cfg.grad_accum
            loss.backward()
        loss_sum += float(loss.detach())
        tokens += batch_tokens(batch) * world
    if cfg.grad_clip > 0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
    opt.step()
    opt.zero_grad(set_to_none=True)
    return loss_sum, tokens


def _evaluate_and_save(
    model: nn.Module,
    opt: torch.optim.Optimizer,
    loss_fn: Callable[[nn.Module, Any], torch.Tensor],
    val_batches: Callable[[], Iterable],
    cfg: TrainConfig,
    device: torch.device,
    st: _State,
    loss_sum: float,
    out_dir: Path,
    meta: dict | None,
    rank: int,
) -> bool:
    """An evaluation: the validation loss into the history, best.pt when it improves, the patience and
    plateau counters updated, last.pt written (rank 0 only); returns whether training stops here."""
    val = evaluate(model, loss_fn, val_batches(), device)
    st.history.append(
        {
            "step": st.step,
            "train_loss": loss_sum,
            "val_loss": val,
            "tokens": st.tokens,
            "lr": lr_at(st.step - 1, cfg, st.decay_start),
        }
    )
    if val < st.best_val:
        st.best_val, st.best_step, st.bad_evals = val, st.step, 0
        if rank == 0:
            save_checkpoint(
                out_dir / BEST, {"model": model.state_dict(), "step": st.step, "val": val, "meta": meta or {}}
            )
    else:
        st.bad_evals += 1
    if cfg.schedule == "plateau" and st.decay_start < 0 and st.bad_evals >= cfg.patience > 0:
        st.decay_start = st.step  # the plateau: cool down from here, then stop
    stopped = _stopped(cfg, st.step, st.bad_evals, st.decay_start)
    if rank == 0:
        save_checkpoint(
            out_dir / LAST,
            {
                "model": model.state_dict(),
                "optimizer": opt.state_dict(),
                "step": st.step,
                "best_val": st.best_val,
                "best_step": st.best_step,
                "bad_evals": st.bad_evals,
                "tokens": st.tokens,
                "seconds": st.seconds,
                "history": st.history,
                "torch_rng": torch.get_rng_state(),
                "meta": meta or {},
                "decay_start": st.decay_start,
                "train_config": asdict(cfg),
            },
        )
    return stopped


def _stopped(cfg: TrainConfig, step: int, bad_evals: int, decay_start: int) -> bool:
    """Whether training ends here: `patience` evaluations without improvement (cosine), or the
    cooldown that follows them completed (plateau)."""
    if cfg.schedule == "plateau":
        return decay_start >= 0 and step >= decay_start + cfg.cooldown
    return bad_evals >= cfg.patience > 0


def _progress(enabled: bool):
    """The training bar: on stderr (stdout stays the command's output), when tmcheck.util.progress says."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from tmcheck.util import progress

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("loss {task.fields[loss]:.3f}"),
        TextColumn("{task.fields[tps]:,.0f} tok/s"),
        TimeRemainingColumn(),
        console=progress.console(),
        disable=not (enabled and progress.enabled()),
        transient=True,
    )

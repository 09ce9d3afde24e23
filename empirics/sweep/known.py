"""The known-exponent sweep (kind "known"; issue #39, item 2): the whole chain tokenizer -> GPT -> fit ->
verdict on corpora whose data-scaling exponent is known by construction (tmcheck.empirics.data.known).

One run per (corpus, n, seed), as in the pretraining sweep (tmcheck.empirics.sweep.pretrain, whose preset
this kind's extends and whose `train_lm` it runs): a GPT trained on the first n training tokens of a
generated corpus, its best-validation checkpoint then scored on the target (value) tokens of the test
split only. The row adds "target_loss" (nats per record: the value's tokens' log loss, summed over its
tokens), "bayes_loss" (the same records' Bayes loss, known by construction) and "excess" = their
difference: a paired estimate of E KL(p_Bayes || q_model) whose exponent in n is the corpus's (report:
tmcheck.empirics.report.known).

Scoring: the test stream (the test split's documents, in the order and under the cap of test.bin; their
target mask from data/<tag>/targets.npz, written once by `plan`) is read in windows of the context T at a
stride of T/2; a window scores only its second half (the first window all of it), so every token is scored
once with at least T/2 tokens of context, enough for its record (a record is far shorter than T/2).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import ClassVar

import numpy as np

from tmcheck.empirics.lm.gpt import GPTConfig
from tmcheck.empirics.lm.pretrain import train_lm
from tmcheck.empirics.lm.train import TrainConfig, stop_reason
from tmcheck.empirics.schema import Fraction
from tmcheck.empirics.sweep import layout
from tmcheck.empirics.sweep import pretrain as lm_sweep
from tmcheck.empirics.sweep.core import Context, RunSpec
from tmcheck.empirics.sweep.kinds import module_kind
from tmcheck.empirics.sweep.preset import named
from tmcheck.util import atomic

DESCRIPTION = "known exponent: GPT excess loss on generated corpora against their exponent (issue #39)"
TARGETS = "targets.npz"  # data/<tag>/: the test stream's ids, target mask, records and Bayes loss
NAME = lm_sweep.NAME


@dataclass(frozen=True, kw_only=True)
class KnownPreset(lm_sweep.PretrainPreset):
    """A known-exponent sweep: the pretraining preset's data, model, optimisation and grid, on generated
    corpora (`synth:KIND...`), and the shift of the exponent the report must tell apart."""

    kind: ClassVar[str] = "known"
    shift: Fraction = 0.1  # the report also tests α̂ against the known exponent + shift (must differ)

    @classmethod
    def config_corpora(cls, config: Mapping) -> list[str]:
        """The corpora a config would read from files: none for generated ones (they are computed from their
        names), so resuming a known sweep needs no --corpus (tmcheck.empirics.sweep.runner.check_corpora)."""
        from tmcheck.empirics.data.known import is_known

        return [c for c in super().config_corpora(config) if not is_known(c)]

    def check_relations(self) -> None:
        super().check_relations()
        from tmcheck.empirics.data.known import is_known

        for c in self.corpora:
            if not is_known(c):
                raise ValueError(f"preset {self.name!r}: corpus {c!r} has no known exponent; use synth:KIND...")
        if self.model.block_size < 32:
            raise ValueError(
                f"preset {self.name!r}: model.block_size {self.model.block_size} < 32 leaves a record "
                "less than 16 tokens of context"
            )


PRESET = KnownPreset


def truths_and_mutants(tokens: int) -> tuple[str, ...]:
    """Both kinds at exponent 0.5 (Zipf a = 1; the circle, d = 1, β = 0.5), and each generator shifted to 0.6
    (a = 1.5; β = 0.75), as canonical corpus names."""
    from tmcheck.empirics.data.known import ManifoldText, ZipfText

    gens = (ZipfText(a=1.0), ZipfText(a=1.5), ManifoldText(beta=0.5), ManifoldText(beta=0.75))
    return tuple(replace(g, tokens=tokens).name for g in gens)


# why kept: a preset spells out its settings as keyword data, alike in shape to the other kinds' presets
PRESETS: dict[str, KnownPreset] = named(
    KnownPreset(
        name="smoke",
        corpora=truths_and_mutants(30_000)[:1],
        model=GPTConfig(block_size=32, n_layer=1, n_head=2, n_embd=32),
        train=TrainConfig(max_steps=400, lr=1e-2, min_lr=1e-3, warmup_steps=2, eval_every=5, patience=1, threads=1),
        batch_size=8,
        vocab_size=300,
        tokenizer_bytes=100_000,
        n_min=3_000,
        n_max=24_000,
        n_sizes=3,
        max_eval_tokens=1_024,
        id_docs=1,
        notes="the chain in seconds, for the tests (runs stop on their validation loss); a smoke test, not a study",
    ),
    KnownPreset(
        name="cpu",
        corpora=truths_and_mutants(1_500_000),
        model=GPTConfig(block_size=64, n_layer=2, n_head=4, n_embd=128),
        train=TrainConfig(
            max_steps=4000,
            lr=2e-3,
            min_lr=2e-4,
            warmup_steps=50,
            eval_every=100,
            patience=4,
            schedule="plateau",
            cooldown=300,
            threads=1,
        ),
        batch_size=32,
        vocab_size=1024,
        tokenizer_bytes=2_000_000,
        n_min=10_000,
        n_max=1_000_000,
        n_sizes=5,
        max_eval_tokens=131_072,
        id_docs=1,
        notes=(
            "both kinds at exponent 0.5 and each generator shifted to 0.6 (1.5M symbols each); n from 10,000 to "
            "1,000,000 tokens (2 decades, 5 sizes), 2 seeds: 40 runs of a 2 x 128 GPT (0.53M parameters) trained "
            "at a constant rate until the validation loss stops improving, then cooled down (cap 4,000 steps); "
            "estimated at 1-4 CPU-hours from one step's time (not yet run)"
        ),
    ),
)


def run_name(params: Mapping) -> str:
    return layout.run_name(NAME, params)


def new_config(preset: KnownPreset, options: Mapping) -> dict:
    config = lm_sweep.new_config(preset, options)
    from tmcheck.empirics.data.known import is_known

    bad = [c for c in config["corpora"] if not is_known(c)]
    if bad:
        raise ValueError(f"corpus {bad[0]!r} has no known exponent; a known sweep takes synth:KIND... corpora")
    return config


def corpus_tag(corpus: str) -> str:
    """A generated corpus in run and data directory names: its kind and 10 hex digits of its canonical name's
    sha256 (the canonical name spells every parameter, so equal tags mean equal corpora)."""
    from tmcheck.empirics.data.known import parse

    g = parse(corpus)
    return f"{g.kind}-{hashlib.sha256(g.name.encode()).hexdigest()[:10]}"


def data_dir(ctx: Context, corpus: str) -> Path:
    return ctx.sweep.data_dir(corpus_tag(corpus))


def write_targets(ctx: Context, corpus: str) -> None:
    """data/<tag>/targets.npz: the test stream and its target mask (tokens.target_stream), checked to be the
    stream test.bin holds (idempotent: an existing file is kept)."""
    from tmcheck.empirics.data import known, open_split
    from tmcheck.empirics.data.tokens import load_tokenizer, target_stream

    data = data_dir(ctx, corpus)
    if (data / TARGETS).exists():
        return
    tok = load_tokenizer(data / "tokenizer.json")
    s = target_stream(known.parse(corpus), tok, "test", ctx.preset.max_eval_tokens)
    if not np.array_equal(s["ids"], np.asarray(open_split(data, "test"))):
        raise ValueError(f"{data}: the test stream rebuilt from {corpus} is not the one test.bin holds")
    with atomic.writer(data / TARGETS) as f:
        np.savez(f, ids=s["ids"], target=s["target"], records=s["records"], bayes_loss=s["bayes_loss"])


def plan(ctx: Context, log: Callable[[str], None]) -> list[RunSpec]:
    """Each corpus prepared once under data/<tag>/ (tokenizer, shards, targets.npz), then (corpus, n, seed) on
    the preset's grid of n up to the full training split, as the pretraining sweep plans, in size-major order
    (size_major): a sweep that runs across sittings gives every corpus its small sizes, and so a fit, before
    any corpus's largest."""
    from tmcheck.empirics.data import prepare_dataset
    from tmcheck.empirics.lm.pretrain import check_model_memory, dataset_spec

    check_model_memory(ctx.preset.model, ctx.preset.batch_size, ctx.preset.train.device, "preset model/batch_size")
    specs = []
    for corpus in ctx.config["corpora"]:
        meta = prepare_dataset(dataset_spec(ctx.preset, corpus), data_dir(ctx, corpus))
        write_targets(ctx, corpus)
        grid = ctx.preset.grid(meta["splits"]["train"]["tokens"])
        log(f"{corpus}: n = {', '.join(f'{n:,}' for n in grid)} training tokens")
        for i, n in enumerate(grid):
            for seed in ctx.preset.seeds:
                params = {"corpus": corpus, "tag": corpus_tag(corpus), "n": n, "seed": seed}
                specs.append((i, RunSpec("known", run_name(params), params)))
    return size_major(specs)


def size_major(specs: list[tuple[int, RunSpec]]) -> list[RunSpec]:
    """(index of n on its corpus's grid, spec) in corpus-major order, as specs ordered by that index first
    (stable: corpora, then seeds, keep their order within a size)."""
    return [spec for _, spec in sorted(specs, key=lambda t: t[0])]


def score_targets(model, ids: np.ndarray, target: np.ndarray, T: int, batch: int, device) -> float:
    """Σ of the model's log loss (nats) over the target tokens of the stream, each scored once with at least
    T/2 tokens of context (module doc)."""
    import torch

    h = T // 2
    N = len(ids)
    starts = list(range(0, max(N - T - 1, 0) + 1, h))
    if starts[-1] + T + 1 < N:
        starts.append(N - T - 1)  # the tail: scored from where the previous window stopped
    xs, ys, keep = [], [], []
    done = 0  # tokens 1..done of the stream are scored
    for s in starts:
        y = ids[s + 1 : s + T + 1]
        x = ids[s : s + len(y)]  # a stream shorter than T + 1: one short window
        pos = np.arange(s + 1, s + 1 + len(y))  # the stream index each prediction is of
        w = (pos > done) & target[pos]
        done = int(pos[-1])
        pad = T - len(y)
        xs.append(np.pad(x, (0, pad)))
        ys.append(np.pad(y, (0, pad)))
        keep.append(np.pad(w, (0, pad)))
    total = 0.0
    model.eval()
    with torch.no_grad():
        for i in range(0, len(xs), batch):
            x = torch.from_numpy(np.stack(xs[i : i + batch])).to(device)  # (B, T)
            y = torch.from_numpy(np.stack(ys[i : i + batch])).to(device)  # (B, T)
            k = torch.from_numpy(np.stack(keep[i : i + batch])).to(device)  # (B, T)
            logits, _ = model(x)  # (B, T, V)
            nll = torch.nn.functional.cross_entropy(logits.float().transpose(1, 2), y, reduction="none")  # (B, T)
            total += float((nll * k).sum())
    return total


def run(ctx: Context, spec: RunSpec) -> dict:
    from tmcheck.empirics.device import resolve_device
    from tmcheck.empirics.lm.checkpoint import BEST, load_gpt

    p = spec.params
    if p["tag"] != corpus_tag(p["corpus"]):
        raise ValueError(f"run spec {spec.run}: tag {p['tag']!r} is not that of corpus {p['corpus']!r}")
    run_dir = ctx.sweep.run_dir(spec.run)
    c0 = time.process_time()  # the run's CPU time (training and scoring; a resumed run counts its last part)
    row = train_lm(ctx.preset, data_dir(ctx, p["corpus"]), p["n"], p["seed"], run_dir, ctx.progress)
    with np.load(data_dir(ctx, p["corpus"]) / TARGETS) as t:
        ids, target, records, bayes = t["ids"], t["target"], int(t["records"]), float(t["bayes_loss"])
    device = resolve_device(ctx.preset.train.device)
    model = load_gpt(run_dir / BEST).to(device)
    nll = score_targets(model, ids, target, model.config.block_size, ctx.preset.batch_size, device)
    return {
        **row,
        "stop": stop_reason(row["stopped_early"]),
        "max_steps": ctx.preset.train.max_steps,
        "records": records,
        "target_loss": nll / records,
        "bayes_loss": bayes / records,
        "excess": (nll - bayes) / records,
        "cpu_s": time.process_time() - c0,
    }


def describe(row: dict) -> str:
    return (
        f"excess {row['excess']:.4f} nats a record (target {row['target_loss']:.4f}, Bayes {row['bayes_loss']:.4f}) "
        f"after {row['steps']} steps ({row['seconds']:.1f}s, stopped on {row['stop']})"
    )


KIND = module_kind(globals())

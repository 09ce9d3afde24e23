"""`tmcheck train`: pretrain one GPT on n tokens of a corpus (paper Section 3, Appendix A).

Library: tmcheck.empirics.sweep.train_lm over tmcheck.empirics.train.train.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from tmcheck.cli.common import console, handle_errors, print_json


@handle_errors
def command(
    preset: str = typer.Option("tiny", "--preset", help="tiny, cpu-demo, cpu-small, gpu-quick, gpu-paper."),
    corpus: str = typer.Option("stories", "--corpus", help="code, prose, stories (or a prepared sql, prose-large)."),
    tokens: Optional[int] = typer.Option(None, "--tokens", help="Training-set size n in tokens (default: the full split)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the initialisation and the batches."),
    out: Path = typer.Option(Path("runs/train"), "--out", help="Run directory (resumed if it holds a checkpoint)."),
    device: str = typer.Option("auto", "--device", help="auto (CUDA when present), cpu or cuda."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Train a GPT on the first n training tokens; report test loss at the best-validation checkpoint."""
    from dataclasses import replace

    from tmcheck.empirics.data import prepare_dataset
    from tmcheck.empirics.presets import get_preset
    from tmcheck.empirics.sweep import dataset_spec, train_lm

    p = get_preset(preset)
    p = replace(p, train=replace(p.train, device=device))
    data_dir = out / "data"
    meta = prepare_dataset(dataset_spec(p, corpus), data_dir)
    full = meta["splits"]["train"]["tokens"]
    n = full if tokens is None else tokens
    if n > full:
        raise ValueError(f"--tokens {n:,} exceeds the training split of {corpus!r} ({full:,} tokens with preset {preset})")
    row = train_lm(p, data_dir, n, seed, out / "run", progress=not as_json)
    if as_json:
        print_json(row)
    else:
        console.print(f"{corpus}, n = {n:,} tokens: test loss {row['test_loss']:.4f} nats/token at step "
                      f"{row['best_step']} (best validation {row['best_val']:.4f}); {row['steps']} steps, "
                      f"{row['tokens_seen'] / max(row['seconds'], 1e-9):,.0f} tokens/s; checkpoint {out / 'run' / 'best.pt'}")

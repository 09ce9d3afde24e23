"""`tmcheck train`: pretrain (or fine-tune) one GPT on n tokens of a corpus (paper Section 3, Appendix A).

The corpus is a built-in one (`--corpus`), one's own text file (`--text`) or directory (`--corpus-dir`),
split and deduplicated like the built-in ones; `--n-layer/--n-embd/--n-head/--block-size` override the
preset's model; `--init-from` fine-tunes a local GPT-2 directory (e.g. one written by `tmcheck export hf`).

`--out DIR` is the run: DIR/best.pt, last.pt, result.json, run.json, with the tokenized data in
DIR/data/; every command that takes a run (`export hf DIR`, `embed DIR`, ...) takes DIR. A directory
an older tmcheck wrote (the run in DIR/run/) is resumed there. A directory that holds other files is
refused. Library: tmcheck.empirics.lm.pretrain.train_lm over tmcheck.empirics.lm.train.train.
"""

from __future__ import annotations

import os
from pathlib import Path

import typer

from tmcheck.cli.common import console, handle_errors, print_json
from tmcheck.cli.options import DeviceOpt, JsonOpt, OutOpt, SeedOpt, positive_int


def _corpus(corpus: str, text: Path | None, corpus_dir: Path | None) -> str:
    if text is not None and corpus_dir is not None:
        raise typer.BadParameter("give --text or --corpus-dir, not both")
    # absolute, not resolved: a refusal names the path the user gave, never a link's target
    if text is not None:
        return f"text:{os.path.abspath(text)}"
    if corpus_dir is not None:
        return f"dir:{os.path.abspath(corpus_dir)}"
    return corpus


RUN_FILES = ("run.json", "best.pt", "last.pt", "result.json", "data")  # what a run directory may hold
LOCK = ".lock"  # flock of the process training in the run directory (tmcheck.util.locks)


def run_directory(out: Path) -> Path:
    """Where `train --out DIR` writes the run: DIR itself (new, empty, or a run of tmcheck), DIR/run for
    a directory an older tmcheck wrote; a directory holding other files, or a link at DIR, DIR/run or
    DIR/data (tmcheck.util.safepath), is refused."""
    from tmcheck.util import safepath

    if out.is_symlink():
        raise ValueError(f"{out} is a symbolic link; --out names the run directory itself")
    if not out.exists():
        return out
    if not out.is_dir():
        raise ValueError(f"{out} exists and is not a directory; --out names the run directory")
    for name in ("data", "run", LOCK):
        safepath.below(out, name)
    if (out / "run" / "run.json").is_file() and not (out / "run.json").exists():
        return out / "run"
    others = sorted(p.name for p in out.iterdir() if p.name not in RUN_FILES and not p.name.startswith("."))
    if others:
        raise ValueError(f"{out} exists and is not a tmcheck run (it holds {others[0]}); use an empty or new directory")
    return out


@handle_errors
def command(
    preset: str = typer.Option("tiny", "--preset", help="tiny, cpu-demo, cpu-small, gpu-quick, gpu-paper."),
    corpus: str = typer.Option("stories", "--corpus", help="code, prose, stories (or a prepared sql, prose-large)."),
    text: Path | None = typer.Option(None, "--text", help="Train on this UTF-8 text file (cut at blank lines)."),
    corpus_dir: Path | None = typer.Option(None, "--corpus-dir", help="Train on every text file under DIR."),
    tokens: int | None = typer.Option(
        None, "--tokens", callback=positive_int, help="Training-set size n in tokens (default: the full split)."
    ),
    n_layer: int | None = typer.Option(None, "--n-layer", callback=positive_int, help="Blocks (overrides the preset)."),
    n_embd: int | None = typer.Option(None, "--n-embd", callback=positive_int, help="Width C (overrides the preset)."),
    n_head: int | None = typer.Option(None, "--n-head", callback=positive_int, help="Heads (overrides the preset)."),
    block_size: int | None = typer.Option(
        None, "--block-size", callback=positive_int, help="Context T (overrides the preset)."
    ),
    init_from: Path | None = typer.Option(None, "--init-from", help="Fine-tune this local GPT-2 directory."),
    max_steps: int | None = typer.Option(
        None, "--max-steps", callback=positive_int, help="Optimizer steps at most (overrides the preset)."
    ),
    threads: int = typer.Option(0, "--threads", min=0, help="CPU threads (0: all cores)."),
    compile_: bool = typer.Option(False, "--compile/--no-compile", help="torch.compile the model."),
    seed: SeedOpt = 0,
    out: OutOpt = Path("runs/train"),  # the run directory itself
    device: DeviceOpt = "auto",
    json_: JsonOpt = False,
) -> None:
    """Train a GPT on the first n training tokens; report test loss at the best-validation checkpoint."""
    from dataclasses import replace

    from tmcheck.empirics.data import check_corpus, prepare_dataset
    from tmcheck.empirics.lm.pretrain import check_model_memory, dataset_spec, init_tokenizer, train_lm, with_model
    from tmcheck.empirics.sweep.kinds import get_preset
    from tmcheck.util import locks, safepath

    name = check_corpus(_corpus(corpus, text, corpus_dir))
    if init_from is not None and any(v is not None for v in (n_layer, n_embd, n_head)):
        raise typer.BadParameter(
            "--init-from takes the model's sizes from its directory; drop --n-layer/--n-embd/--n-head"
        )
    p = with_model(get_preset(preset), n_layer=n_layer, n_embd=n_embd, n_head=n_head, block_size=block_size)
    p = replace(
        p,
        train=replace(
            p.train, device=device, threads=threads, compile=compile_, max_steps=max_steps or p.train.max_steps
        ),
    )
    spec = dataset_spec(p, name)
    if init_from is not None:
        from tmcheck.empirics.data.tokens import load_tokenizer

        tok = init_tokenizer(init_from)
        spec = replace(spec, tokenizer=str(tok.resolve()), vocab_size=load_tokenizer(tok).get_vocab_size())
    check_model_memory(p.model, p.batch_size, device)
    run_dir = run_directory(out)
    # one process trains in a run directory at a time (a finished run on a read-only disk is read without it)
    with locks.hold(safepath.makedirs(out) / LOCK, f"run directory {out}", readonly_ok=True):
        run_directory(out)  # again, holding the lock: what another process left meanwhile
        data_dir = safepath.below(out, "data")
        meta = prepare_dataset(spec, data_dir)
        full = meta["splits"]["train"]["tokens"]
        n = full if tokens is None else tokens
        if n > full:
            raise ValueError(
                f"--tokens {n:,} exceeds the training split of {name!r} ({full:,} tokens with preset {preset})"
            )
        # the trainer's bar (steps, loss, tokens/s) is drawn on stderr, also under --json
        row = train_lm(p, data_dir, n, seed, run_dir, progress=True, init=init_from)
    if json_:
        print_json(row)
    else:
        console.print(
            f"{name}, n = {n:,} tokens: test loss {row['test_loss']:.4f} nats/token at step "
            f"{row['best_step']} (best validation {row['best_val']:.4f}); {row['steps']} steps, "
            f"{row['tokens_seen'] / max(row['seconds'], 1e-9):,.0f} tokens/s; run {run_dir} (best.pt)"
        )

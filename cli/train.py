"""`tmcheck train`: pretrain (or fine-tune) one GPT on n tokens of a corpus (paper Section 3, Appendix A).

The corpus is a built-in one (`--corpus`), one's own text file (`--text`) or directory (`--corpus-dir`),
split and deduplicated like the built-in ones; `--n-layer/--n-embd/--n-head/--block-size` override the
preset's model; `--init-from` fine-tunes a local GPT-2 directory (e.g. one written by `tmcheck export hf`).
Library: tmcheck.empirics.lm.pretrain.train_lm over tmcheck.empirics.lm.train.train.
"""

from __future__ import annotations

from pathlib import Path

import typer

from tmcheck.cli.common import console, handle_errors, print_json
from tmcheck.cli.options import DeviceOpt, JsonOpt, OutOpt, SeedOpt, positive_int


def _corpus(corpus: str, text: Path | None, corpus_dir: Path | None) -> str:
    if text is not None and corpus_dir is not None:
        raise typer.BadParameter("give --text or --corpus-dir, not both")
    if text is not None:
        return f"text:{text.resolve()}"
    if corpus_dir is not None:
        return f"dir:{corpus_dir.resolve()}"
    return corpus


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
    out: OutOpt = Path("runs/train"),
    device: DeviceOpt = "auto",
    json_: JsonOpt = False,
) -> None:
    """Train a GPT on the first n training tokens; report test loss at the best-validation checkpoint."""
    from dataclasses import replace

    from tmcheck.empirics.data import check_corpus, prepare_dataset
    from tmcheck.empirics.lm.pretrain import dataset_spec, init_tokenizer, train_lm, with_model
    from tmcheck.empirics.presets import get_preset

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
    data_dir = out / "data"
    meta = prepare_dataset(spec, data_dir)
    full = meta["splits"]["train"]["tokens"]
    n = full if tokens is None else tokens
    if n > full:
        raise ValueError(
            f"--tokens {n:,} exceeds the training split of {name!r} ({full:,} tokens with preset {preset})"
        )
    row = train_lm(p, data_dir, n, seed, out / "run", progress=not json_, init=init_from)
    if json_:
        print_json(row)
    else:
        console.print(
            f"{name}, n = {n:,} tokens: test loss {row['test_loss']:.4f} nats/token at step "
            f"{row['best_step']} (best validation {row['best_val']:.4f}); {row['steps']} steps, "
            f"{row['tokens_seen'] / max(row['seconds'], 1e-9):,.0f} tokens/s; checkpoint {out / 'run' / 'best.pt'}"
        )

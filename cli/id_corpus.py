"""`tmcheck id corpus SWEEP_DIR`: the ID of each corpus and the predicted alpha_D (paper Section 3).

Embeds the test set with the model trained on the full training split and runs the ID estimator.
Every place where the paper's code departs from its text is an option, recorded in id.json:
--window prefix, --batch-size 3600, --final-ln before, --estimator mle-mean.
Registered into the `tmcheck id` group by cli/id.py. Library: tmcheck.empirics.embed.corpus_id.
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer
from rich.table import Table

from tmcheck.cli.common import console, handle_errors, print_json


@handle_errors
def corpus(
    sweep_dir: Path = typer.Argument(..., help="A sweep directory (tmcheck sweep data)."),
    corpus_name: Optional[List[str]] = typer.Option(None, "--corpus", help="Corpus (repeatable; default: all)."),
    layer: Optional[int] = typer.Option(None, "--layer", help="Block, 1-based; 0 = input embeddings (default: last)."),
    window: str = typer.Option("random", "--window", help="random (paper text) or prefix (paper code)."),
    final_ln: str = typer.Option("after", "--final-ln", help="after or before the final LayerNorm (paper code: "
                                 "before for nanoGPT checkpoints)."),
    context: Optional[int] = typer.Option(None, "--context", help="Tokens per document (default: the preset's)."),
    tokens_per_doc: Optional[int] = typer.Option(None, "--tokens-per-doc", help="Embedded tokens per document "
                                                 "(default: the preset's; paper: 32)."),
    estimator: str = typer.Option("mle", "--estimator", help="mle (inverse mean) or mle-mean (mean of per-point "
                                  "estimates), or any estimator of `tmcheck id estimate`."),
    k: int = typer.Option(20, "--k", help="Neighbours (paper: K=20)."),
    protocol: str = typer.Option("paper", "--protocol", help="paper (batches, mean of batch estimates) or full."),
    batch_size: int = typer.Option(4096, "--batch-size", help="Batch size (paper text 4096, paper code 3600)."),
    bootstrap: int = typer.Option(200, "--bootstrap", help="Bootstrap resamples for intervals."),
    beta: float = typer.Option(1.0, "--beta", help="Hölder smoothness for an extra alpha_D = 2b/(2b+d)."),
    seed: int = typer.Option(0, "--seed", help="Seed of windows, positions and batches."),
    device: str = typer.Option("auto", "--device", help="auto (CUDA when present), cpu or cuda."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Estimate the ID of each corpus's test-set embeddings and the predicted alpha_D (written to id.json)."""
    from tmcheck.empirics.embed import EmbedOptions, IDOptions, corpus_id
    from tmcheck.empirics.sweep import load_config, preset_from_config

    preset = preset_from_config(load_config(sweep_dir))
    eo = EmbedOptions(context=context or preset.id_context, tokens_per_doc=tokens_per_doc or preset.id_tokens_per_doc,
                      window=window, final_ln=final_ln, layer=layer, seed=seed)
    io = IDOptions(estimator=estimator, k=k, protocol=protocol, batch_size=batch_size, bootstrap=bootstrap, beta=beta)
    res = corpus_id(sweep_dir, corpus_name, eo, io, device)
    if as_json:
        print_json(res)
        return
    table = Table(title=f"ID of test-set embeddings ({estimator}, K={k}, protocol {protocol}); alpha_D = 2b/(2b+d)")
    for col in ("corpus", "points", "d", "95% CI", "alpha_D (b=1)", f"alpha_D (b={beta:g})"):
        table.add_column(col, justify="left" if col == "corpus" else "right")
    for c, e in res.items():
        ci = f"[{e['d_ci'][0]:.2f}, {e['d_ci'][1]:.2f}]" if e["d_ci"] else "n/a"
        table.add_row(c, str(e["points"]), f"{e['d']:.2f}", ci, f"{e['alpha_D']:.3f}", f"{e['alpha_D_beta']:.3f}")
    console.print(table)


def register(app: typer.Typer) -> None:
    app.command("corpus")(corpus)

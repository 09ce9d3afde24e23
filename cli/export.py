"""`tmcheck export`: our checkpoints in other formats (a transformers GPT-2 directory).

Library: tmcheck.empirics.lm.hf.export_hf.
"""

from __future__ import annotations

from pathlib import Path

import typer

from tmcheck.cli.common import console, handle_errors, print_json
from tmcheck.cli.options import JsonOpt

app = typer.Typer(no_args_is_help=True, help="Export trained models (GPT-2 directory for transformers).")


@app.command()
@handle_errors
def hf(
    run: Path = typer.Argument(..., help="Checkpoint file or run directory (its best checkpoint)."),
    out: Path = typer.Argument(..., help="Output directory (must not exist unless --overwrite)."),
    tokenizer: Path | None = typer.Option(None, "--tokenizer", help="tokenizer.json (default: found beside the run)."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing OUT."),
    json_: JsonOpt = False,
) -> None:
    """Write RUN as a GPT-2 directory: AutoModelForCausalLM and AutoTokenizer load it offline."""
    from tmcheck.empirics.lm.hf import export_hf

    row = export_hf(run, out, tokenizer, overwrite=overwrite)
    if json_:
        print_json(row)
    else:
        console.print(
            f"exported {row['checkpoint']} ({row['params']:,} parameters, vocabulary {row['vocab_size']}, "
            f"eos {row['eos_token']}) to {row['out']}: {', '.join(row['files'])}"
        )

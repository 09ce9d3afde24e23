"""`tmcheck export`: our checkpoints in other formats (a transformers GPT-2 directory).

`export hf RUN OUT` takes a run directory (what `tmcheck train --out` or a sweep wrote) or a checkpoint
file; OUT is a directory. `--overwrite` replaces only the files an earlier export wrote (its marker
lists them) and refuses a directory that holds anything else unless `--force-clean` is given; never
the current directory, the run or a directory above it. Library: tmcheck.empirics.lm.hf.export_hf.
"""

from __future__ import annotations

from pathlib import Path

import typer

from tmcheck.cli.common import console, handle_errors, print_json
from tmcheck.cli.options import JsonOpt, MaxParamsOpt
from tmcheck.util import safeio

app = typer.Typer(no_args_is_help=True, help="Export trained models (GPT-2 directory for transformers).")


@app.command()
@handle_errors
def hf(
    run: Path = typer.Argument(..., help="Checkpoint file or run directory (its best checkpoint)."),
    out: Path = typer.Argument(..., help="Output directory (must not exist unless --overwrite)."),
    tokenizer: Path | None = typer.Option(None, "--tokenizer", help="tokenizer.json (default: found beside the run)."),
    overwrite: bool = typer.Option(
        False,
        "--overwrite",
        help="Replace the files an earlier `tmcheck export hf` wrote into OUT; refused if OUT holds anything else.",
    ),
    force_clean: bool = typer.Option(
        False, "--force-clean", help="With --overwrite: also delete what OUT holds besides the earlier export."
    ),
    max_params: MaxParamsOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Write RUN as a GPT-2 directory: AutoModelForCausalLM and AutoTokenizer load it offline."""
    if tokenizer is not None and tokenizer.exists():  # refused before torch and transformers are imported
        safeio.check_regular(tokenizer, "a tokenizer")
    from tmcheck.empirics import schema
    from tmcheck.empirics.lm.hf import export_hf

    row = export_hf(
        run, out, tokenizer, overwrite=overwrite, max_params=max_params or schema.MAX_PARAMS, force_clean=force_clean
    )
    if json_:
        print_json(row)
    else:
        console.print(
            f"exported {row['checkpoint']} ({row['params']:,} parameters, vocabulary {row['vocab_size']}, "
            f"eos {row['eos_token']}) to {row['out']}: {', '.join(row['files'])}"
        )

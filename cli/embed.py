"""`tmcheck embed`: token embeddings of a model, any layer (paper Section 3, Appendix A protocol).

MODEL is a tmcheck checkpoint (best.pt, or a run directory) or a local transformers causal-LM
directory; nothing is downloaded. Library: tmcheck.empirics.embed.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Optional

import typer

from tmcheck.cli.common import console, handle_errors, print_json


@handle_errors
def command(
    model: Path = typer.Argument(..., help="tmcheck checkpoint or run directory, or a transformers model directory."),
    text: Path = typer.Option(..., "--text", help="Text file; documents are separated by blank lines."),
    out: Path = typer.Option(Path("embeddings.npy"), "--out", help="Output .npy of shape (points, width)."),
    tokenizer: Optional[Path] = typer.Option(None, "--tokenizer", help="tokenizer.json (tmcheck checkpoints; "
                                             "default: data/<corpus>/tokenizer.json of the sweep)."),
    layer: Optional[int] = typer.Option(None, "--layer", help="Block, 1-based; 0 = input embeddings (default: last)."),
    final_ln: str = typer.Option("after", "--final-ln", help="Last layer: after or before the final LayerNorm."),
    window: str = typer.Option("random", "--window", help="random (paper text) or prefix (paper code)."),
    context: int = typer.Option(1024, "--context", help="Tokens per document fed to the model."),
    tokens_per_doc: int = typer.Option(32, "--tokens-per-doc", help="Hidden states kept per document."),
    seed: int = typer.Option(0, "--seed", help="Seed of windows and positions."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Embed the documents of a text file and write the hidden states to a .npy file."""
    import numpy as np

    from tmcheck.util.atomic import write_bytes
    from tmcheck.empirics.embed import EmbedOptions, embed_documents, encode_text, load_model

    if out.suffix != ".npy":
        raise ValueError(f"--out must end in .npy, got {out}")
    if not text.is_file():
        raise FileNotFoundError(2, "no such text file", str(text))
    opts = EmbedOptions(context=context, tokens_per_doc=tokens_per_doc, window=window, final_ln=final_ln, layer=layer,
                        seed=seed)
    lm = load_model(model)
    if lm.kind == "tmcheck" and tokenizer is None:
        tokenizer = _sweep_tokenizer(Path(lm.source))
    docs = [d.strip() for d in text.read_text(encoding="utf-8").split("\n\n") if d.strip()]
    X = embed_documents(lm, encode_text(lm, docs, tokenizer), opts)
    buf = io.BytesIO()
    np.save(buf, X)
    write_bytes(out, buf.getvalue())
    info = {"model": lm.source, "kind": lm.kind, "documents": len(docs), "shape": list(X.shape), "out": str(out),
            **opts.as_dict()}
    if as_json:
        print_json(info)
    else:
        console.print(f"wrote {X.shape[0]} embeddings of width {X.shape[1]} ({len(docs)} documents, layer "
                      f"{layer if layer is not None else 'last'}) to {out}")


def _sweep_tokenizer(checkpoint: Path) -> Path:
    """tokenizer.json saved with the run: SWEEP/data/<corpus>/ for SWEEP/runs/<run>/best.pt (tmcheck sweep),
    OUT/data/ for OUT/run/best.pt (tmcheck train)."""
    from tmcheck.empirics.train import load_checkpoint

    corpus = str(load_checkpoint(checkpoint)["meta"].get("corpus"))
    run_dir = checkpoint.parent
    for cand in (run_dir.parent.parent / "data" / corpus / "tokenizer.json", run_dir.parent / "data" / "tokenizer.json"):
        if cand.exists():
            return cand
    raise ValueError(f"no tokenizer found for {checkpoint}; pass --tokenizer")

"""`tmcheck embed`: token embeddings of a model, any layer (paper Section 3, Appendix A protocol).

MODEL is a tmcheck checkpoint (file or run directory) or a local transformers directory of a causal
LM (GPT-2, Pythia, ...) or an encoder (BERT, MiniLM, ...); nothing is downloaded. Batches are padded
with an attention mask (the result does not depend on --batch-docs) and the tokenizer's special
tokens are not counted as points unless --special-tokens include. Library: tmcheck.empirics.lm.embed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tmcheck.cli.common import console, handle_errors, print_json
from tmcheck.cli.options import DeviceOpt, JsonOpt, SeedOpt, WindowOpt, nonneg_int, positive_int
from tmcheck.util import progress, safeio

TEXT_LIMIT = 1 << 30  # bytes of --text read (documents are embedded from memory)
PROGRESS_MIN_DOCS = 64  # below this an embedding takes about a second: no progress display

# why kept: one Annotated alias per option, as in id and fit: alike in shape, each its own flag and help
ModelOpt = Annotated[
    Path, typer.Argument(help="tmcheck checkpoint or run directory, or a transformers model directory.")
]
TextOpt = Annotated[Path, typer.Option("--text", help="Text file; documents are separated by blank lines.")]
OutputOpt = Annotated[
    Path,
    typer.Option(
        "--output",
        help="Output file, (points, width): .safetensors (metadata inside) or .npy (metadata in a .json beside).",
    ),
]
TokenizerOpt = Annotated[
    Path | None,
    typer.Option("--tokenizer", help="tokenizer.json (tmcheck checkpoints; default: the one saved with the run)."),
]
LayerOpt = Annotated[
    int | None,
    typer.Option("--layer", callback=nonneg_int, help="Block, 1-based; 0 = input embeddings (default: last)."),
]
FinalLnOpt = Annotated[
    str,
    typer.Option("--final-ln", help="Last layer: after or before the final LayerNorm (models with a final norm only)."),
]
ContextOpt = Annotated[
    int, typer.Option("--context", callback=positive_int, help="Tokens per document fed to the model.")
]
TokensPerDocOpt = Annotated[
    int, typer.Option("--tokens-per-doc", callback=positive_int, help="Hidden states kept per document.")
]
BatchDocsOpt = Annotated[
    int,
    typer.Option(
        "--batch-docs",
        callback=positive_int,
        help="Documents per forward pass (masked padding: the embeddings do not depend on it).",
    ),
]
SpecialTokensOpt = Annotated[
    str, typer.Option("--special-tokens", help="exclude ([CLS]/[SEP], BOS/EOS are fed but not kept) or include.")
]


@handle_errors
def command(
    model: ModelOpt,
    text: TextOpt,
    output: OutputOpt = Path("embeddings.safetensors"),
    tokenizer: TokenizerOpt = None,
    layer: LayerOpt = None,
    final_ln: FinalLnOpt = "after",
    window: WindowOpt = "random",
    context: ContextOpt = 1024,
    tokens_per_doc: TokensPerDocOpt = 32,
    batch_docs: BatchDocsOpt = 16,
    special_tokens: SpecialTokensOpt = "exclude",
    device: DeviceOpt = "auto",
    seed: SeedOpt = 0,
    json_: JsonOpt = False,
) -> None:
    """Embed the documents of a text file and write the hidden states with their metadata."""
    from tmcheck.empirics.device import resolve_device
    from tmcheck.empirics.lm.embed import (
        EMBEDDING_FORMATS,
        EmbedOptions,
        embed_documents,
        encode_text,
        load_model,
        save_embeddings,
    )

    if output.suffix not in EMBEDDING_FORMATS:
        raise ValueError(f"--output must end in {' or '.join(EMBEDDING_FORMATS)}, got {output}")
    try:  # the one rule for files: a FIFO, a device or a directory is refused at once, naming what it is
        raw = safeio.read_text(text, "a text file", TEXT_LIMIT)
    except FileNotFoundError:
        raise FileNotFoundError(2, "no such text file", str(text)) from None
    if tokenizer is not None:
        _check_tokenizer(tokenizer)
    _refuse_pickled_weights(model)
    # why kept: the library's options passed by name, as protocol.estimate_id passes its own: alike in shape only
    opts = EmbedOptions(
        context=context,
        tokens_per_doc=tokens_per_doc,
        window=window,
        final_ln=final_ln,
        layer=layer,
        seed=seed,
        batch_docs=batch_docs,
        special_tokens=special_tokens,
    )
    lm = load_model(model)
    lm.check_options(opts)
    lm.model.to(resolve_device(device))
    if lm.kind == "tmcheck" and tokenizer is None:
        tokenizer = _run_tokenizer(Path(lm.source))
    docs = [d.strip() for d in raw.split("\n\n") if d.strip()]
    ids = encode_text(lm, docs, tokenizer)
    _check_vocabulary(lm, ids, tokenizer)
    block = lm.n_layer if layer is None else layer  # what was embedded: the metadata names the block, never null
    with progress.bar(None, f"embedding {len(docs):,} documents at layer {block}", show=len(docs) >= PROGRESS_MIN_DOCS):
        X = embed_documents(lm, ids, opts)
    info = {
        "model": str(lm.source),
        "kind": lm.kind,
        "documents": len(docs),
        "shape": list(X.shape),
        **opts.as_dict(),
        "layer": block,
        "layers": lm.n_layer,
    }
    written = save_embeddings(output, X, info)
    info["output"] = [str(p) for p in written]
    if json_:
        print_json(info)
    else:
        console.print(
            f"wrote {X.shape[0]} embeddings of width {X.shape[1]} ({len(docs)} documents, {lm.kind} model, "
            f"layer {block} of {lm.n_layer}) to {', '.join(info['output'])}"
        )


def _check_tokenizer(path: Path) -> None:
    """--tokenizer must be a readable tokenizer.json (JSON object): refused in one line, not deep in tokenizers."""
    try:
        data = safeio.read_json(path, "a tokenizer.json")
    except FileNotFoundError:
        raise FileNotFoundError(2, "no such tokenizer file", str(path)) from None
    if not isinstance(data, dict) or "model" not in data:
        raise ValueError(f"--tokenizer {path}: not a tokenizer.json (no 'model' entry)")


def _refuse_pickled_weights(model: Path) -> None:
    """A transformers directory is read from safetensors only: pytorch_model.bin is a pickle and never loaded."""
    if not (model.is_dir() and (model / "config.json").is_file()):
        return
    if not any(model.glob("*.safetensors")) and any(model.glob("*.bin")):
        raise ValueError(
            f"{model} holds only pickled weights (*.bin); tmcheck loads safetensors only "
            "(convert them with transformers' save_pretrained(safe_serialization=True) where you trust them)"
        )


def _check_vocabulary(lm, ids, tokenizer) -> None:
    """Every token id must index the model's embedding table (a tokenizer of another model does not)."""
    emb = (
        lm.model.get_input_embeddings() if hasattr(lm.model, "get_input_embeddings") else getattr(lm.model, "wte", None)
    )
    vocab = getattr(getattr(emb, "weight", None), "shape", (None,))[0]
    top = max((int(a.max()) for a in ids if a.size), default=-1)
    if vocab is not None and top >= vocab:
        where = f"--tokenizer {tokenizer}" if tokenizer is not None else "the tokenizer"
        raise ValueError(f"{where} gives token id {top} but the model's vocabulary has {vocab} entries")


def _run_tokenizer(checkpoint: Path) -> Path:
    """tokenizer.json saved with the run (beside it, or the sweep's data/<corpus>/ for SWEEP/runs/<run>/)."""
    from tmcheck.empirics.lm.checkpoint import load_checkpoint
    from tmcheck.empirics.lm.hf import find_tokenizer

    found = find_tokenizer(checkpoint)
    if found is not None:
        return found
    corpus = str(load_checkpoint(checkpoint).get("meta", {}).get("corpus"))
    cand = checkpoint.parent.parent.parent / "data" / corpus / "tokenizer.json"
    if cand.is_file():
        return cand
    raise ValueError(f"no tokenizer found for {checkpoint}; pass --tokenizer")

"""Our GPT to and from a transformers GPT-2 directory (the paper's models are GPT-2 style, Section 3).

`export_hf(checkpoint, out)` writes a directory that `AutoModelForCausalLM.from_pretrained(out,
local_files_only=True)` and `AutoTokenizer.from_pretrained(out)` load offline: model.safetensors,
config.json, generation_config.json and the run's byte-level BPE as a GPT2TokenizerFast with
<|endoftext|> as its BOS, EOS and padding token. The directory is written under a temporary name and
renamed into place, so a crash never leaves a half-exported model at `out`.

`load_hf_dir(path)` is the inverse for `tmcheck train --init-from`: our GPT with the GPT-2 weights,
and the tokenizer.json of the directory.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from tmcheck.empirics.lm.checkpoint import load_gpt, resolve
from tmcheck.util import atomic

EOT = "<|endoftext|>"


def find_tokenizer(checkpoint: Path) -> Path | None:
    """tokenizer.json of the run: beside the checkpoint, OUT/data/ for OUT/run/ (`tmcheck train`), or
    SWEEP/data/<corpus>/ for SWEEP/runs/<run>/ (`tmcheck sweep`, corpus from the checkpoint)."""
    from tmcheck.empirics.lm.checkpoint import load_checkpoint
    from tmcheck.empirics.data import corpus_slug

    ck = resolve(checkpoint)
    cands = [ck.parent, ck.parent.parent / "data"]
    corpus = (load_checkpoint(ck).get("meta") or {}).get("corpus")
    try:
        cands.append(ck.parent.parent.parent / "data" / corpus_slug(str(corpus)))
    except ValueError:  # not a corpus name: only the first two places
        pass
    return next((d / "tokenizer.json" for d in cands if (d / "tokenizer.json").is_file()), None)


def _hf_tokenizer(tokenizer_json: Path):
    from transformers import PreTrainedTokenizerFast

    from tmcheck.empirics.data.tokens import load_tokenizer

    tok = load_tokenizer(tokenizer_json)
    if tok.token_to_id(EOT) is None:
        raise ValueError(f"{tokenizer_json} has no {EOT} token")
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token=EOT,
        eos_token=EOT,
        pad_token=EOT,
        unk_token=EOT,
        model_max_length=None,
        clean_up_tokenization_spaces=False,
    )


def export_hf(checkpoint: Path, out: Path, tokenizer: Path | None = None, overwrite: bool = False) -> dict:
    """Write our checkpoint (file or run directory) as a transformers GPT-2 directory; returns a summary."""
    from transformers import GenerationConfig

    from tmcheck.empirics.lm.gpt import to_hf

    out = Path(out)
    if out.exists() and not overwrite:
        raise ValueError(f"{out} exists; pass --overwrite or choose another directory")
    tok_path = Path(tokenizer) if tokenizer else find_tokenizer(checkpoint)
    if tok_path is None:
        raise ValueError(f"no tokenizer.json found beside {checkpoint}; pass --tokenizer PATH")
    model = load_gpt(checkpoint)
    hf_tok = _hf_tokenizer(tok_path)
    if len(hf_tok) != model.config.vocab_size:
        raise ValueError(f"{tok_path} has {len(hf_tok)} tokens, the model's vocabulary is {model.config.vocab_size}")
    eot = hf_tok.eos_token_id
    hf = to_hf(model)
    hf.config.bos_token_id = hf.config.eos_token_id = hf.config.pad_token_id = eot
    hf.generation_config = GenerationConfig(
        bos_token_id=eot, eos_token_id=eot, pad_token_id=eot, max_length=model.config.block_size
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp"))
    try:
        hf.save_pretrained(tmp, safe_serialization=True)
        hf_tok.save_pretrained(tmp)
        for f in tmp.iterdir():  # save_pretrained does not fsync; make the files durable before the rename
            with open(f, "rb") as fh:
                os.fsync(fh.fileno())
        if out.exists():
            shutil.rmtree(out)
        os.replace(tmp, out)
        atomic.fsync_dir(out.parent)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return {
        "checkpoint": str(resolve(checkpoint)),
        "out": str(out),
        "tokenizer": str(tok_path),
        "params": model.num_params(non_embedding=False),
        "vocab_size": model.config.vocab_size,
        "eos_token": EOT,
        "eos_token_id": eot,
        "files": sorted(p.name for p in out.iterdir()),
    }


def load_hf_dir(path: Path):
    """(our GPT, path of tokenizer.json or None) from a local transformers GPT-2 directory, offline."""
    from transformers import GPT2LMHeadModel

    from tmcheck.empirics.lm.gpt import from_hf

    path = Path(path)
    if not (path / "config.json").is_file():
        raise ValueError(f"{path} is not a transformers model directory (no config.json)")
    try:
        hf = GPT2LMHeadModel.from_pretrained(path, local_files_only=True)
    except (OSError, ValueError, TypeError) as exc:
        raise ValueError(f"cannot load {path} as GPT-2: {str(exc).splitlines()[0]}") from None
    tok = path / "tokenizer.json"
    return from_hf(hf), (tok if tok.is_file() else None)

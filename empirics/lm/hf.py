"""Our GPT to and from a transformers GPT-2 directory (the paper's models are GPT-2 style, Section 3).

`export_hf(checkpoint, out)` writes a directory that `AutoModelForCausalLM.from_pretrained(out,
local_files_only=True)` and `AutoTokenizer.from_pretrained(out)` load offline, under the oldest and
the newest transformers of tmcheck's range (.ci/transformers-floor.sh): model.safetensors, config.json,
generation_config.json, and the run's byte-level BPE as tokenizer.json with a tokenizer_config.json
that tmcheck writes itself, naming the standard class PreTrainedTokenizerFast (not the class name a
given transformers release would save), <|endoftext|> as BOS, EOS, padding and unknown token, and
`model_max_length` = the model's context, so `truncation=True` cuts a prompt to what the model can
read. The generation config sets no max_length (that would warn on every `generate` given
max_new_tokens).

The directory is written under a temporary name and renamed into place, so a crash never leaves a
half-exported model at `out`; a failed write (a full disk) is one line and leaves `out` as it was.
It holds a marker file (MARKER): `--overwrite` replaces only a directory that holds it, and never
the current directory, the source run or a directory above it (the run's sweep).

`load_hf_dir(path)` is the inverse for `tmcheck train --init-from`: our GPT with the GPT-2 weights
(safetensors only, never a pickle; the size checked before the model is built), and the tokenizer.json
of the directory.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import tempfile
from pathlib import Path

from tmcheck.empirics import schema
from tmcheck.empirics.lm.checkpoint import CheckpointError, load_gpt, resolve
from tmcheck.util import atomic
from tmcheck.util.quiet import quiet_transformers

EOT = "<|endoftext|>"
MARKER = ".tmcheck-export.json"  # written into every export; --overwrite removes only such a directory
PICKLED = ("pytorch_model.bin", "tf_model.h5", "flax_model.msgpack", "model.ckpt.index")


def find_tokenizer(checkpoint: Path) -> Path | None:
    """tokenizer.json of the run: beside the checkpoint, OUT/data/ for OUT/run/ (older `tmcheck train`
    layouts), or SWEEP/data/<corpus>/ for SWEEP/runs/<run>/ (`tmcheck sweep`, corpus from the checkpoint)."""
    from tmcheck.empirics.data import corpus_slug
    from tmcheck.empirics.lm.checkpoint import load_checkpoint

    ck = resolve(checkpoint)
    cands = [ck.parent, ck.parent / "data", ck.parent.parent / "data"]
    meta = load_checkpoint(ck).get("meta")
    corpus = meta.get("corpus") if isinstance(meta, dict) else None
    try:
        cands.append(ck.parent.parent.parent / "data" / corpus_slug(str(corpus)))
    except ValueError:  # not a corpus name: only the first places
        pass
    return next((d / "tokenizer.json" for d in cands if (d / "tokenizer.json").is_file()), None)


def tokenizer_files(tokenizer_json: Path, context: int) -> dict[str, str]:
    """The tokenizer files of an export, by name: tokenizer.json as trained, and the configuration
    every transformers release of the range reads the same way."""
    from tmcheck.empirics.data.tokens import load_tokenizer

    tok = load_tokenizer(tokenizer_json)
    if tok.token_to_id(EOT) is None:
        raise ValueError(f"{tokenizer_json} has no {EOT} token")
    tok.no_truncation()
    tok.no_padding()
    special = {"bos_token": EOT, "eos_token": EOT, "pad_token": EOT, "unk_token": EOT}
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        **special,
        "model_max_length": context,
        "clean_up_tokenization_spaces": False,
        "add_prefix_space": False,
    }
    return {
        "tokenizer.json": tok.to_str(),
        "tokenizer_config.json": json.dumps(config, indent=2) + "\n",
        "special_tokens_map.json": json.dumps(special, indent=2) + "\n",
    }


def check_overwrite(out: Path, checkpoint: Path) -> None:
    """ValueError unless `out` may be replaced: a directory that an export of tmcheck wrote (it holds
    MARKER), not a link, not the current directory or one above it, not the source or one above it."""
    if out.is_symlink():
        raise ValueError(f"{out} is a symbolic link; --overwrite replaces only an export directory itself")
    if not out.is_dir():
        raise ValueError(f"{out} exists and is not a directory; --overwrite replaces only an earlier export")
    real = out.resolve()
    if Path.cwd().resolve().is_relative_to(real):
        raise ValueError(f"--overwrite would remove {out}, which holds the current directory; choose another OUT")
    source = resolve(checkpoint).resolve()
    if source.is_relative_to(real):
        raise ValueError(f"--overwrite would remove {out}, which holds the checkpoint being exported")
    if not (out / MARKER).is_file() or (out / MARKER).is_symlink():
        raise ValueError(
            f"{out} was not written by `tmcheck export hf` (no {MARKER}); --overwrite replaces only such a directory"
        )


def export_hf(
    checkpoint: Path,
    out: Path,
    tokenizer: Path | None = None,
    overwrite: bool = False,
    max_params: int = schema.MAX_PARAMS,
) -> dict:
    """Write our checkpoint (file or run directory) as a transformers GPT-2 directory; returns a summary."""
    from safetensors import SafetensorError
    from transformers import GenerationConfig

    from tmcheck.empirics.data.tokens import load_tokenizer
    from tmcheck.empirics.lm.gpt import to_hf

    out = Path(out)
    if out.exists() or out.is_symlink():
        if not overwrite:
            raise ValueError(f"{out} exists; pass --overwrite or choose another directory")
        check_overwrite(out, checkpoint)
    tok_path = Path(tokenizer) if tokenizer else find_tokenizer(checkpoint)
    if tok_path is None:
        raise ValueError(f"no tokenizer.json found beside {checkpoint}; pass --tokenizer PATH")
    model = load_gpt(checkpoint, max_params)
    files = tokenizer_files(tok_path, model.config.block_size)
    tok = load_tokenizer(tok_path)
    if tok.get_vocab_size() != model.config.vocab_size:
        raise ValueError(
            f"{tok_path} has {tok.get_vocab_size()} tokens, the model's vocabulary is {model.config.vocab_size}"
        )
    eot = tok.token_to_id(EOT)
    with quiet_transformers():
        hf = to_hf(model)
        hf.config.bos_token_id = hf.config.eos_token_id = hf.config.pad_token_id = eot
        hf.generation_config = GenerationConfig(bos_token_id=eot, eos_token_id=eot, pad_token_id=eot)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp"))
    try:
        try:
            with quiet_transformers():
                hf.save_pretrained(tmp, safe_serialization=True)
            for name, text in files.items():
                atomic.write_text(tmp / name, text)
            atomic.write_json(tmp / MARKER, {"format": "tmcheck-hf-export/1", "checkpoint": str(resolve(checkpoint))})
            for f in tmp.iterdir():  # save_pretrained does not fsync; make the files durable before the rename
                with open(f, "rb") as fh:
                    os.fsync(fh.fileno())
        except (OSError, RuntimeError, SafetensorError) as exc:  # a full disk, a file-size limit
            raise OSError(f"could not write the export into {out.parent}: {write_error(exc)}") from None
        replace_dir(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return {
        "checkpoint": str(resolve(checkpoint)),
        "out": str(out),
        "tokenizer": str(tok_path),
        "params": model.num_params(non_embedding=False),
        "vocab_size": model.config.vocab_size,
        "context": model.config.block_size,
        "eos_token": EOT,
        "eos_token_id": eot,
        "files": sorted(p.name for p in out.iterdir() if p.name != MARKER),
    }


def write_error(exc: BaseException) -> str:
    """What failed while writing, in words (ENOSPC: no space left on the device)."""
    text = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    if getattr(exc, "errno", None) == errno.ENOSPC or any(
        m in text for m in ("No space left", "os error 28", "code: 28")
    ):
        return "no space left on the device"
    return text[:200]


def replace_dir(new: Path, out: Path) -> None:
    """Put directory `new` at `out`: an existing `out` is moved aside first and removed only once
    `new` is in place, so a crash leaves either the old export or the new one."""
    old = None
    if out.exists():
        old = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.", suffix=".old"))
        os.replace(out, old / "export")
    os.replace(new, out)
    atomic.fsync_dir(out.parent)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def check_hf_dir(path: Path, max_params: int = schema.MAX_PARAMS) -> dict:
    """config.json of a GPT-2 directory, checked before anything is built: a GPT-2 configuration of
    bounded size, and weights in model.safetensors (a directory holding only pickled weights is
    refused: tmcheck never unpickles)."""
    cfg_path = path / "config.json"
    if not cfg_path.is_file():
        raise ValueError(f"{path} is not a transformers model directory (no config.json)")
    try:
        cfg = json.loads(cfg_path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError):
        raise ValueError(f"{cfg_path} is not JSON") from None
    if not isinstance(cfg, dict) or cfg.get("model_type") != "gpt2":
        raise ValueError(f"{cfg_path} is not a GPT-2 configuration (model_type must be gpt2)")
    sizes = {
        "vocab_size": cfg.get("vocab_size"),
        "block_size": cfg.get("n_positions"),
        "n_layer": cfg.get("n_layer"),
        "n_head": cfg.get("n_head"),
        "n_embd": cfg.get("n_embd"),
    }
    shape = schema.validate(schema.GPTShape, sizes, f"{cfg_path}")
    schema.check_model_size(shape, None, f"{cfg_path}", max_params)
    if not (path / "model.safetensors").is_file():
        pickled = [name for name in PICKLED if (path / name).exists()]
        if pickled:
            raise ValueError(
                f"{path} holds pickled weights ({pickled[0]}), which tmcheck never loads; convert them with "
                f"transformers' save_pretrained(safe_serialization=True) where you trust them"
            )
        raise ValueError(f"{path} has no model.safetensors")
    return cfg


def load_hf_dir(path: Path, max_params: int = schema.MAX_PARAMS):
    """(our GPT, path of tokenizer.json or None) from a local transformers GPT-2 directory, offline."""
    from transformers import GPT2LMHeadModel

    from tmcheck.empirics.lm.gpt import from_hf

    path = Path(path)
    check_hf_dir(path, max_params)
    try:
        with quiet_transformers():
            hf = GPT2LMHeadModel.from_pretrained(path, local_files_only=True, use_safetensors=True)
    except (OSError, ValueError, TypeError, RuntimeError) as exc:
        raise CheckpointError(f"cannot load {path} as GPT-2: {str(exc).strip().splitlines()[0][:200]}") from None
    tok = path / "tokenizer.json"
    return from_hf(hf), (tok if tok.is_file() else None)

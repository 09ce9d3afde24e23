"""Our GPT to and from a transformers GPT-2 directory (the paper's models are GPT-2 style, Section 3).

`export_hf(checkpoint, out)` writes a directory that `AutoModelForCausalLM.from_pretrained(out,
local_files_only=True)` and `AutoTokenizer.from_pretrained(out)` load offline, under the oldest and
the newest transformers of tmcheck's range (.ci/transformers-floor.sh): model.safetensors, config.json,
generation_config.json, and the run's byte-level BPE as tokenizer.json with a tokenizer_config.json
that tmcheck writes itself, naming the standard class PreTrainedTokenizerFast (not the class name a
given transformers release would save), <|endoftext|> as BOS, EOS, padding and unknown token, and
`model_max_length` = the model's context, so `truncation=True` cuts a prompt to what the model can
read, and `model_input_names` = input_ids and attention_mask, so `model(**tok(text))` never passes
token_type_ids (transformers 4.x returned them by default and GPT-2 adds their embeddings: wrong
logits). The generation config sets no max_length (that would warn on every `generate` given
max_new_tokens). Directory and files get the modes save_pretrained gives (0755 and 0644 under umask 022).

The directory is written under a temporary name and renamed into place, so a crash never leaves a
half-exported model at `out`; a failed write (a full disk) is one line naming `out` and leaves `out`
as it was. It holds a marker file (MARKER) listing the files the export wrote: `--overwrite` replaces
only a directory that holds it, and only when it holds nothing else (`--force-clean` deletes the
rest); never the current directory, the source run or a directory above it (the run's sweep). A
mount point, which cannot be renamed, gets its files replaced one by one and keeps no staging
directory. `--tokenizer` and the marker are read by the one rule for files (tmcheck.util.safeio: a
FIFO, a device or a directory is refused at once).

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
from tmcheck.util import atomic, safeio, safepath
from tmcheck.util.quiet import quiet_transformers

EOT = "<|endoftext|>"
MARKER = ".tmcheck-export.json"  # written into every export, listing its files; --overwrite replaces only those
FORMAT = "tmcheck-hf-export/2"  # format 1 (before the marker listed its files) wrote WRITTEN
WRITTEN = (
    "config.json",
    "generation_config.json",
    "model.safetensors",
    "special_tokens_map.json",
    "tokenizer.json",
    "tokenizer_config.json",
)
MODEL_INPUTS = ("input_ids", "attention_mask")  # what the tokenizer returns: never token_type_ids
STAGING = ".tmcheck-export-"  # prefix of the staging directories beside OUT
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


def tokenizer_files(tokenizer_json: Path, context: int) -> tuple[dict[str, str], object]:
    """The tokenizer files of an export, by name, and the tokenizer: tokenizer.json as trained, and
    the configuration every transformers release of the range reads the same way. `model_input_names`
    is what the tokenizer returns: without it transformers 4.x adds `token_type_ids`, which GPT-2 adds
    to every position as embeddings of token 0 (the logits of `model(**tok(text))` were then off by
    up to 3.96). The file is read by the one rule for files (a FIFO or a directory is refused at once)."""
    from tokenizers import Tokenizer

    text = safeio.read_text(tokenizer_json, "a tokenizer.json", safeio.JSON_LIMIT)
    try:
        tok = Tokenizer.from_str(text)
    except Exception as exc:  # tokenizers raises its own Exception subclass on a malformed file
        raise ValueError(f"{tokenizer_json} is not a tokenizer.json ({str(exc).splitlines()[0][:120]})") from None
    if tok.token_to_id(EOT) is None:
        raise ValueError(f"{tokenizer_json} has no {EOT} token")
    tok.no_truncation()
    tok.no_padding()
    special = {"bos_token": EOT, "eos_token": EOT, "pad_token": EOT, "unk_token": EOT}
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        **special,
        "model_input_names": list(MODEL_INPUTS),
        "model_max_length": context,
        "clean_up_tokenization_spaces": False,
        "add_prefix_space": False,
    }
    files = {
        "tokenizer.json": tok.to_str(),
        "tokenizer_config.json": json.dumps(config, indent=2) + "\n",
        "special_tokens_map.json": json.dumps(special, indent=2) + "\n",
    }
    return files, tok


def marked_files(out: Path) -> list[str]:
    """The names an earlier export wrote into `out`, from its marker (read by the one rule for files);
    ValueError when `out` holds no marker of tmcheck's. A marker of format 1 lists no files: such an
    export wrote WRITTEN."""
    unmarked = f"{out} was not written by `tmcheck export hf` (no {MARKER}); --overwrite replaces only such a directory"
    try:
        mark = safeio.read_json(safepath.below(out, MARKER), "an export marker", safeio.MiB)
    except (FileNotFoundError, safepath.LinkRefused, safeio.NotRegularFile):
        raise ValueError(unmarked) from None
    if not isinstance(mark, dict) or mark.get("format") not in (FORMAT, "tmcheck-hf-export/1"):
        raise ValueError(unmarked)
    names = mark.get("files", list(WRITTEN))
    if not isinstance(names, list) or not all(
        isinstance(n, str) and n not in ("", ".", "..", MARKER) and "/" not in n and "\x00" not in n for n in names
    ):
        raise ValueError(f"{out / MARKER} lists files that are no plain names; move {out} away")
    return names


def check_overwrite(out: Path, checkpoint: Path, force_clean: bool = False) -> None:
    """ValueError unless `out` may be replaced: a directory that an export of tmcheck wrote (it holds
    MARKER), not a link, not the current directory or one above it, not the source or one above it,
    and holding nothing but the regular files its marker lists (anything else is the user's: refused
    unless `force_clean`)."""
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
    if not force_clean and (extra := others(out, marked_files(out))):
        raise ValueError(
            f"{out} holds {extra[0]}, which `tmcheck export hf` did not write; move it out of {out}, "
            f"or pass --force-clean to delete it with the export"
        )


def others(directory: Path, ours: list[str]) -> list[str]:
    """The entries of `directory` that are not the regular files an export listed or its marker, sorted."""
    mine = {*ours, MARKER}
    return sorted(e.name for e in os.scandir(directory) if not (e.name in mine and e.is_file(follow_symlinks=False)))


def export_hf(
    checkpoint: Path,
    out: Path,
    tokenizer: Path | None = None,
    overwrite: bool = False,
    max_params: int = schema.MAX_PARAMS,
    force_clean: bool = False,
) -> dict:
    """Write our checkpoint (file or run directory) as a transformers GPT-2 directory; returns a summary."""
    from safetensors import SafetensorError
    from transformers import GenerationConfig

    from tmcheck.empirics.lm.gpt import to_hf

    out = Path(out)
    if force_clean and not overwrite:
        raise ValueError("--force-clean goes with --overwrite: it lets --overwrite delete what an export did not write")
    replacing = out.exists() or out.is_symlink()
    if replacing:
        if not overwrite:
            raise ValueError(f"{out} exists; pass --overwrite or choose another directory")
        check_overwrite(out, checkpoint, force_clean)
    tok_path = Path(tokenizer) if tokenizer else find_tokenizer(checkpoint)
    if tok_path is None:
        raise ValueError(f"no tokenizer.json found beside {checkpoint}; pass --tokenizer PATH")
    model = load_gpt(checkpoint, max_params)
    files, tok = tokenizer_files(tok_path, model.config.block_size)
    if tok.get_vocab_size() != model.config.vocab_size:
        raise ValueError(
            f"{tok_path} has {tok.get_vocab_size()} tokens, the model's vocabulary is {model.config.vocab_size}"
        )
    eot = tok.token_to_id(EOT)
    with quiet_transformers():
        hf = to_hf(model)
        hf.config.bos_token_id = hf.config.eos_token_id = hf.config.pad_token_id = eot
        hf.generation_config = GenerationConfig(bos_token_id=eot, eos_token_id=eot, pad_token_id=eot)
    marker = {"format": FORMAT, "checkpoint": str(resolve(checkpoint))}
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = None
    try:
        tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=STAGING, suffix=".tmp"))
        write_staged(hf, files, marker, tmp)
        if replacing:
            replace_export(tmp, out, force_clean)
        else:
            os.replace(tmp, out)
            atomic.fsync_dir(out.parent)
    except (OSError, RuntimeError, SafetensorError) as exc:  # a full disk, a file-size limit, no permission
        raise OSError(f"could not write the export into {out}: {write_error(exc, tmp, out)}") from None
    finally:
        if tmp is not None and os.path.lexists(tmp):
            shutil.rmtree(tmp, ignore_errors=True)
    return {
        "checkpoint": marker["checkpoint"],
        "out": str(out),
        "tokenizer": str(tok_path),
        "params": model.num_params(non_embedding=False),
        "vocab_size": model.config.vocab_size,
        "context": model.config.block_size,
        "eos_token": EOT,
        "eos_token_id": eot,
        "files": sorted(p.name for p in out.iterdir() if p.name != MARKER),
    }


def write_staged(hf, files: dict[str, str], marker: dict, tmp: Path) -> None:
    """The export written into the new directory `tmp`: the model, the tokenizer files and the marker
    listing them, each fsynced, with the modes save_pretrained gives under the umask (0755 and 0644
    under 022: colleagues can read it) instead of mkdtemp's 0700 (and safetensors' 0600)."""
    mask = umask()
    with quiet_transformers():
        hf.save_pretrained(tmp, safe_serialization=True)
    for name, text in files.items():
        atomic.write_text(tmp / name, text)
    names = sorted(e.name for e in os.scandir(tmp))
    atomic.write_json(tmp / MARKER, {**marker, "files": names})
    for name in [*names, MARKER]:  # save_pretrained does not fsync; make the files durable before the rename
        os.chmod(tmp / name, 0o666 & ~mask)
        with open(tmp / name, "rb") as fh:
            os.fsync(fh.fileno())
    os.chmod(tmp, 0o777 & ~mask)


def umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_error(exc: BaseException, tmp: Path | None = None, out: Path | None = None) -> str:
    """What failed while writing, in words (ENOSPC: no space left on the device), naming `out` where
    the library named a staging directory (`tmp`, or any of tmcheck's beside `out`)."""
    text = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    if getattr(exc, "errno", None) == errno.ENOSPC or any(
        m in text for m in ("No space left", "os error 28", "code: 28")
    ):
        return "no space left on the device"
    if tmp is not None and out is not None:
        text = text.replace(str(tmp), str(out))
    if out is not None and STAGING in text:  # the old export's place aside, or a path the library built
        text = f"{type(exc).__name__} ({getattr(exc, 'strerror', None) or 'failed'})"
    return text[:200]


def replace_export(new: Path, out: Path, force_clean: bool = False) -> None:
    """Put the staged export `new` at `out`, which check_overwrite accepted. Where `out` can be renamed,
    it is moved aside first and removed only once `new` is in place, so a crash leaves either the old
    export or the new one; a file of the user's that appeared since the check puts it back, refused.
    A mount point (or a bind mount) cannot be renamed: its entries are replaced one by one inside it."""
    old = Path(tempfile.mkdtemp(dir=out.parent, prefix=STAGING, suffix=".old"))
    try:
        os.replace(out, old / "export")
    except OSError as exc:
        old.rmdir()
        if exc.errno not in (errno.EBUSY, errno.EXDEV):
            raise
        replace_in_place(new, out, force_clean)
        return
    if not force_clean and (extra := others(old / "export", marked_files(old / "export"))):
        os.replace(old / "export", out)
        old.rmdir()
        raise ValueError(f"{out} holds {extra[0]}, which `tmcheck export hf` did not write; nothing changed")
    os.replace(new, out)
    atomic.fsync_dir(out.parent)
    shutil.rmtree(old, ignore_errors=True)


def replace_in_place(new: Path, out: Path, force_clean: bool) -> None:
    """The staged files of `new` copied into `out` one by one through the atomic writer (which replaces
    a link at a name, never writes through it): first the marker lists the old and the new names, then
    the old export's files go (everything with `force_clean`), the new ones come, the marker last."""
    old = marked_files(out)
    if not force_clean and (extra := others(out, old)):
        raise ValueError(f"{out} holds {extra[0]}, which `tmcheck export hf` did not write; nothing changed")
    names = sorted(e.name for e in os.scandir(new) if e.name != MARKER)
    marker = safeio.read_json(new / MARKER, "an export marker", safeio.MiB)
    atomic.write_json(out / MARKER, {**marker, "files": sorted({*names, *old})})
    for entry in list(os.scandir(out)):
        path = Path(entry.path)
        is_dir = entry.is_dir(follow_symlinks=False)
        if (entry.name in (MARKER, *names) and not is_dir) or not (force_clean or entry.name in old):
            continue
        if is_dir:
            shutil.rmtree(path)
        else:
            path.unlink()
    for name in [*names, MARKER]:
        with safeio.open_regular(new / name, "a staged export file") as src, atomic.writer(out / name) as dst:
            shutil.copyfileobj(src, dst)
    atomic.fsync_dir(out)


def check_hf_dir(path: Path, max_params: int = schema.MAX_PARAMS) -> dict:
    """config.json of a GPT-2 directory, checked before anything is built: a GPT-2 configuration of
    bounded size, and weights in model.safetensors (a directory holding only pickled weights is
    refused: tmcheck never unpickles)."""
    cfg_path = path / "config.json"
    try:
        cfg = safeio.read_json(cfg_path, "a transformers config.json", safeio.MiB)
    except FileNotFoundError:
        raise ValueError(f"{path} is not a transformers model directory (no config.json)") from None
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

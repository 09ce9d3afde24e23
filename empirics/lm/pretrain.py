"""One language model trained on n tokens of a corpus (paper Section 3, Appendix A recipe).

`train_lm` is what `tmcheck train` runs: the preset's GPT (sizes overridable with `with_model`), or a
local GPT-2 directory to fine-tune (`init`), trained by tmcheck.empirics.lm.train.train on the first n
training tokens; the test loss is measured at the best-validation checkpoint. Corpora are the
built-in ones or one's own (`text:PATH`, `dir:PATH`, tmcheck.empirics.data.corpora), split and
deduplicated the same way.

For a sweep, the same knobs are plain fields: `corpora` may list `text:PATH` / `dir:PATH`, and a
preset's `model` (GPTConfig: n_layer, n_embd, n_head, block_size) is what `with_model` replaces.
"""

from __future__ import annotations

from dataclasses import asdict, replace
from pathlib import Path

from tmcheck.empirics import schema
from tmcheck.util import atomic, safeio

MODEL_SIZES = ("n_layer", "n_embd", "n_head", "block_size")


def with_model(preset, **sizes):
    """The preset with its GPT's n_layer / n_embd / n_head / block_size replaced (None keeps a size)."""
    unknown = sorted(set(sizes) - set(MODEL_SIZES))
    if unknown:
        raise ValueError(f"no model size {unknown[0]!r}; choose from {', '.join(MODEL_SIZES)}")
    given = {k: int(v) for k, v in sizes.items() if v is not None}
    bad = [k for k, v in given.items() if v < 1]
    if bad:
        raise ValueError(f"--{bad[0].replace('_', '-')} must be at least 1, got {given[bad[0]]}")
    return replace(preset, model=replace(preset.model, **given)) if given else preset


def check_model_memory(
    model, batch_size: int, device: str = "auto", option: str = "--n-layer/--n-embd/--block-size"
) -> int:
    """The bytes training `model` (a GPTConfig) takes, estimated before it is built, refused in one line
    naming the options when it exceeds the machine's memory (tmcheck.util.bounds) or the schema's
    bounds on a GPT's shape: parameters with their gradient and AdamW's two moments (16 bytes each),
    and the activations kept for the backward pass (about 20 floats per token, layer and channel,
    plus the logits and their gradient), against the memory of the device it trains on."""
    from tmcheck.empirics.device import resolve_device
    from tmcheck.util.bounds import check_memory

    shape = schema.validate(schema.GPTShape, asdict(model), option)
    tokens = batch_size * shape.block_size
    acts = tokens * (20 * shape.n_layer * shape.n_embd + 3 * shape.vocab_size) * 4
    dev = resolve_device(device)
    avail = None
    if dev.type == "cuda":
        import torch

        avail = torch.cuda.get_device_properties(dev).total_memory
    return check_memory(option, 16 * shape.params() + acts, "the model and its training state", avail)


def dataset_spec(preset, corpus: str):
    """The DatasetSpec of a corpus under a preset: its vocabulary, caps on the splits, BPE sample."""
    from tmcheck.empirics.data import DatasetSpec

    return DatasetSpec(
        corpus=corpus,
        vocab_size=preset.vocab_size,
        max_train_tokens=preset.n_max,
        max_eval_tokens=preset.max_eval_tokens,
        tokenizer_bytes=preset.tokenizer_bytes,
        min_test_docs=preset.id_docs,
    )


def init_tokenizer(init: Path) -> Path:
    """tokenizer.json of a GPT-2 directory to fine-tune: the data must be tokenized with it."""
    tok = Path(init) / "tokenizer.json"
    try:
        return safeio.check_regular(tok, "a tokenizer")
    except FileNotFoundError:
        raise ValueError(f"{init} has no tokenizer.json; --init-from needs the model's own tokenizer") from None


def held_run(run_dir: Path, run_meta: dict) -> dict | None:
    """The run.json the run directory holds (None: a new run), refused when it records another run."""
    try:
        held = safeio.read_json(Path(run_dir) / "run.json", "a run record")
    except FileNotFoundError:
        return None
    held = held if isinstance(held, dict) else {}
    if {k: v for k, v in held.items() if k != "schema_version"} != {
        k: v for k, v in run_meta.items() if k != "schema_version"
    }:
        raise ValueError(
            f"{run_dir} holds a different run (corpus {held.get('corpus')}, n={held.get('n')}, "
            f"seed {held.get('seed')}); use another directory"
        )
    return held


def train_lm(
    preset, data_dir: Path, n: int, seed: int, run_dir: Path, progress: bool = True, init: Path | None = None
) -> dict:
    """Train one GPT on the first n training tokens of data_dir; test loss at the best-val checkpoint.

    With `init` (a local transformers GPT-2 directory) training starts from its weights; the context
    is then min(preset block_size, the model's n_positions)."""
    import torch

    from tmcheck.empirics.data import open_split
    from tmcheck.empirics.data.batches import LMBatches, eval_windows
    from tmcheck.empirics.data.tokens import read_dataset
    from tmcheck.empirics.device import resolve_device
    from tmcheck.empirics.lm.checkpoint import BEST, load_gpt, read_result
    from tmcheck.empirics.lm.gpt import GPT, lm_loss
    from tmcheck.empirics.lm.train import evaluate, train

    data_dir, run_dir = Path(data_dir), Path(run_dir)
    meta = read_dataset(data_dir)
    torch.manual_seed(seed)
    if init is not None:
        from tmcheck.empirics.lm.hf import load_hf_dir

        model, _ = load_hf_dir(init)
        if model.config.vocab_size < meta["vocab_size"]:
            raise ValueError(f"{init} has a vocabulary of {model.config.vocab_size}, the data {meta['vocab_size']}")
    else:
        model = GPT(replace(preset.model, vocab_size=meta["vocab_size"]))
    T, B = min(preset.model.block_size, model.config.block_size), preset.batch_size
    V = model.config.vocab_size  # every id of the shards must lie in the model's vocabulary
    batches = LMBatches(open_split(data_dir, "train", V), n, T, B, seed)  # raises if n exceeds the split
    val = eval_windows(open_split(data_dir, "val", V), T, B, preset.max_eval_tokens)
    cfg = replace(preset.train, seed=seed, progress=progress)
    run_meta = {
        "schema_version": schema.CHECKPOINT_META_VERSION,  # the checkpoints' meta (tmcheck.empirics.schema)
        "model_config": asdict(model.config),
        "n": n,
        "seed": seed,
        "corpus": meta["spec"]["corpus"],
        "init_from": str(Path(init).resolve()) if init is not None else None,
    }
    held = held_run(run_dir, run_meta)
    read_result(run_dir)  # a finished run's record is checked before the trainer returns it
    if held != run_meta:  # a finished run on a read-only disk is read, not rewritten
        atomic.write_json(run_dir / "run.json", run_meta)
    result = train(model, batches, lm_loss, lambda: val, cfg, run_dir, meta=run_meta)
    device = resolve_device(cfg.device)
    best = load_gpt(run_dir / BEST).to(device)  # the checkpoint loads on the CPU; evaluated where it trained
    test = eval_windows(open_split(data_dir, "test", V), T, B, preset.max_eval_tokens)
    test_loss = evaluate(best, lm_loss, test, device)
    return {
        "corpus": meta["spec"]["corpus"],
        "n": n,
        "seed": seed,
        "run": run_dir.name,
        "test_loss": test_loss,
        "best_val": result.best_val,
        "best_step": result.best_step,
        "steps": result.steps,
        "tokens_seen": result.tokens,
        "seconds": result.seconds,
        "stopped_early": result.stopped_early,
        "params": best.num_params(),
        "model_config": asdict(best.config),
        "init_from": run_meta["init_from"],
        "full_split": n == meta["splits"]["train"]["tokens"],
    }

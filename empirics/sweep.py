"""Pretraining runs and the data-scaling sweep (Section 3, Figure 2 of the paper).

A sweep is a directory:
    config.json          the preset and corpora it was created with
    data/<corpus>/       tokenizer and token shards (see data/tokens.py)
    runs/<run>/          one folder per (corpus, n, seed): checkpoints and result.json
    results.jsonl        one line per finished run, rewritten atomically after each run
    .lock                held (flock) while a process works on the sweep

Rerunning resumes: finished runs (in results.jsonl or with a result.json) are not redone, an
interrupted run continues from its last checkpoint. A second process on the same directory is
refused. Test loss is measured on the fixed test split at the best-validation checkpoint.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from dataclasses import asdict, replace
from pathlib import Path
from typing import Callable

from tmcheck.util import atomic
from tmcheck.empirics.data import CORPORA, DatasetSpec, open_split, prepare_dataset
from tmcheck.empirics.presets import Preset, get_preset


class SweepBusy(ValueError):
    """Another process holds the sweep directory."""


@contextlib.contextmanager
def sweep_lock(sweep_dir: Path):
    """An exclusive, non-blocking flock on sweep_dir/.lock (released by the OS even on SIGKILL)."""
    sweep_dir.mkdir(parents=True, exist_ok=True)
    path = sweep_dir / ".lock"
    f = open(path, "a+")
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        f.seek(0)
        holder = f.read().strip() or "unknown"
        f.close()
        raise SweepBusy(f"sweep directory {sweep_dir} is in use by another process (pid {holder}); "
                        "wait for it to finish") from None
    try:
        f.seek(0)
        f.truncate()
        f.write(str(os.getpid()))
        f.flush()
        yield
    finally:
        f.close()


def dataset_spec(preset: Preset, corpus: str) -> DatasetSpec:
    return DatasetSpec(corpus=corpus, vocab_size=preset.vocab_size, max_train_tokens=preset.n_max,
                       max_eval_tokens=preset.max_eval_tokens, tokenizer_bytes=preset.tokenizer_bytes,
                       min_test_docs=min(preset.id_docs, 10**6))


def build_model(preset: Preset, vocab_size: int, seed: int):
    import torch

    from tmcheck.empirics.model import GPT

    torch.manual_seed(seed)
    return GPT(replace(preset.model, vocab_size=vocab_size))


def load_gpt(path: Path):
    """Our GPT from a checkpoint written by the trainer (best.pt or last.pt)."""
    from tmcheck.empirics.model import GPT, GPTConfig
    from tmcheck.empirics.train import load_checkpoint

    ck = load_checkpoint(path)
    if "model_config" not in ck.get("meta", {}):
        raise ValueError(f"{path} is not a GPT checkpoint of tmcheck (no model_config)")
    model = GPT(GPTConfig(**ck["meta"]["model_config"]))
    model.load_state_dict(ck["model"])
    return model.eval()


def train_lm(preset: Preset, data_dir: Path, n: int, seed: int, run_dir: Path, progress: bool = True) -> dict:
    """Train one GPT on the first n training tokens of data_dir; test loss at the best-val checkpoint."""
    from tmcheck.empirics.data.batches import LMBatches, eval_windows
    from tmcheck.empirics.model import lm_loss
    from tmcheck.empirics.train import evaluate, resolve_device, train

    meta = json.loads((Path(data_dir) / "dataset.json").read_text())
    train_tokens = open_split(data_dir, "train")
    T, B = preset.model.block_size, preset.batch_size
    batches = LMBatches(train_tokens, n, T, B, seed)  # raises if n exceeds the training split
    val = eval_windows(open_split(data_dir, "val"), T, B, preset.max_eval_tokens)
    model = build_model(preset, meta["vocab_size"], seed)
    cfg = replace(preset.train, seed=seed, progress=progress)
    run_meta = {"model_config": asdict(model.config), "n": n, "seed": seed, "corpus": meta["spec"]["corpus"]}
    spec_path = Path(run_dir) / "run.json"
    if spec_path.exists() and (held := json.loads(spec_path.read_text())) != run_meta:
        raise ValueError(f"{run_dir} holds a different run (corpus {held.get('corpus')}, n={held.get('n')}, "
                         f"seed {held.get('seed')}); use another directory")
    atomic.write_json(spec_path, run_meta)
    result = train(model, batches, lm_loss, lambda: val, cfg, run_dir, meta=run_meta)
    best = load_gpt(Path(run_dir) / "best.pt")
    test = eval_windows(open_split(data_dir, "test"), T, B, preset.max_eval_tokens)
    test_loss = evaluate(best, lm_loss, test, resolve_device(cfg.device))
    return {"corpus": meta["spec"]["corpus"], "n": n, "seed": seed, "run": Path(run_dir).name,
            "test_loss": test_loss, "best_val": result.best_val, "best_step": result.best_step,
            "steps": result.steps, "tokens_seen": result.tokens, "seconds": result.seconds,
            "stopped_early": result.stopped_early, "params": best.num_params(),
            "full_split": n == meta["splits"]["train"]["tokens"]}


def run_name(corpus: str, n: int, seed: int) -> str:
    return f"{corpus}-n{n}-s{seed}"


def load_config(sweep_dir: Path) -> dict:
    path = Path(sweep_dir) / "config.json"
    if not path.exists():
        raise FileNotFoundError(2, "not a sweep directory (no config.json)", str(sweep_dir))
    return json.loads(path.read_text())


def preset_from_config(config: dict) -> Preset:
    from tmcheck.empirics.model import GPTConfig
    from tmcheck.empirics.train import TrainConfig

    p = dict(config["preset"])
    p["model"], p["train"] = GPTConfig(**p["model"]), TrainConfig(**{**p["train"], "betas": tuple(p["train"]["betas"])})
    p["corpora"], p["seeds"] = tuple(p["corpora"]), tuple(p["seeds"])
    return Preset(**p)


def run_sweep(sweep_dir: Path, preset: str | Preset | None = None, corpora: list[str] | None = None,
              progress: bool = True, log: Callable[[str], None] = print, data_root: Path | None = None) -> list[dict]:
    """Create or resume the sweep in sweep_dir; returns all result rows."""
    sweep_dir = Path(sweep_dir)
    with sweep_lock(sweep_dir):
        cfg_path = sweep_dir / "config.json"
        if cfg_path.exists():
            config = json.loads(cfg_path.read_text())
            p = preset_from_config(config)
            if preset is not None and (preset if isinstance(preset, str) else preset.name) != p.name:
                raise ValueError(f"{sweep_dir} holds a sweep of preset {p.name!r}; use a new directory")
            if corpora and list(corpora) != config["corpora"]:
                raise ValueError(f"{sweep_dir} holds a sweep of corpora {config['corpora']}; use a new directory")
        else:
            p = get_preset(preset or "tiny") if not isinstance(preset, Preset) else preset
            config = {"preset": p.as_dict(), "corpora": list(corpora or p.corpora)}
            unknown = [c for c in config["corpora"] if c not in CORPORA]
            if unknown:
                raise ValueError(f"unknown corpus {unknown[0]!r}; choose from {', '.join(CORPORA)}")
            atomic.write_json(cfg_path, config)
        results_path = sweep_dir / "results.jsonl"
        rows = atomic.read_jsonl(results_path)
        done = {r["run"] for r in rows}
        for corpus in config["corpora"]:
            data_dir = sweep_dir / "data" / corpus
            meta = prepare_dataset(dataset_spec(p, corpus), data_dir, data_root)
            grid = p.grid(meta["splits"]["train"]["tokens"])
            log(f"{corpus}: {meta['splits']['train']['tokens']:,} training tokens; n = {', '.join(f'{n:,}' for n in grid)}")
            for n in grid:
                for seed in p.seeds:
                    name = run_name(corpus, n, seed)
                    if name in done:
                        continue
                    row = train_lm(p, data_dir, n, seed, sweep_dir / "runs" / name, progress)
                    rows.append(row)
                    done.add(name)
                    atomic.write_jsonl(results_path, rows)
                    log(f"  {name}: test loss {row['test_loss']:.4f} after {row['steps']} steps "
                        f"({row['seconds']:.1f}s{', early stop' if row['stopped_early'] else ''})")
        return rows


def full_split_run(sweep_dir: Path, corpus: str) -> Path:
    """The run directory of the model trained on the full training split (first seed)."""
    config = load_config(sweep_dir)
    p = preset_from_config(config)
    meta = json.loads((Path(sweep_dir) / "data" / corpus / "dataset.json").read_text())
    n = p.grid(meta["splits"]["train"]["tokens"])[-1]
    path = Path(sweep_dir) / "runs" / run_name(corpus, n, p.seeds[0])
    if not (path / "best.pt").exists():
        raise FileNotFoundError(2, "full-split model not trained yet; run the sweep first", str(path / "best.pt"))
    return path

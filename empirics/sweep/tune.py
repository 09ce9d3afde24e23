"""Choosing the synthetic study's transformer settings on validation data (Definition 1, eq. 3).

The data-scaling test of α_D = 2β/(2β+d) only measures a rate when the estimator at every n is a
good one: a transformer that at small n does no better than the training mean measures leaving the
trivial regime. This module chooses, for one problem (d, β) and one training-set size n, the
optimiser and architecture of the paper's regression transformer (Definition 1: ReLU attention, no
normalisation; the class does not change, only its sizes and its training) by successive halving:

- the data: a tuning draw of the problem's training pool (`Experiment.pool`, seeds `data_seeds`,
  which the sweep's seeds are not), of n + `select_points` labelled points. Its first n form the
  sweep's split of a size-n data set (training points and the validation points that early-stop the
  fit); the next `select_points` are the selection set, on which every candidate, the training mean
  and the kNN and kernel-ridge baselines are scored by their MSE against the noisy labels y (σ² above
  the MSE against f). The test split (`Experiment.test_set`) is never drawn here;
- the candidates: the preset's own setting, then `candidates - 1` distinct draws from SEARCH, from a
  generator seeded by (seed, d, β) alone, so every n of a problem sees the same list;
- the rungs: every candidate trains under the step cap `rungs[0]` (schedule plateau: it stops earlier
  on patience), the `keep[0]` best by mean selection MSE over the data seeds go on to `rungs[1]`, and
  so on; the best at the last rung wins. Ties go to the earlier candidate.

Tuning a problem at several n (`choose`) evaluates each size's winner at every other size, under
that size's last rung, and keeps the one whose worst ratio to the better baseline is smallest: one
setting per (d, β), so that the sweep's curve over n is one estimator's.

Every trial is recorded (its setting, cap, selection MSE, steps, why it stopped, seconds) in one
JSON file, written after each trial: a rerun skips what is recorded.
"""

from __future__ import annotations

import itertools
import json
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from tmcheck.empirics.sweep.synthetic_preset import SynthPreset, SynthTuned
from tmcheck.empirics.synthetic.problem import Experiment, Split, knn_baseline, krr_baseline, validation_size
from tmcheck.util import atomic, safeio

SEARCH: dict[str, tuple] = {  # the search space: a SynthPreset field -> its choices
    "lr": (1e-3, 3e-3, 1e-2, 3e-2),
    "weight_decay": (1e-4, 1e-2, 1e-1),
    "batch_size": (32, 128, 512),
    "patience": (10, 20),
    "d_embd": (8, 16),
    "n_blocks": (1, 2, 3),
    "n_heads": (2, 4),
    "ffn_width": (32, 64, 128),
}
TRIALS = "trials.json"  # every trial and baseline of a tuning directory
CHOSEN = "chosen.json"  # the chosen setting of each (d, β), with its scores
FORMAT = 1
CAP_MARGIN = 2  # a tuned setting's step cap over the largest rung it was chosen under


@dataclass(frozen=True)
class TuneSettings:
    """The budget of one tuning of (d, β, n)."""

    candidates: int = 7  # settings drawn (the preset's own first)
    rungs: tuple[int, ...] = (1000, 3000)  # step caps of the successive-halving rungs
    keep: tuple[int, ...] = (2,)  # candidates kept after each rung but the last
    data_seeds: tuple[int, ...] = (1000,)  # tuning draws of the training pool (not the sweep's seeds)
    select_points: int = 2000  # labelled points of the selection set
    seed: int = 0  # seeds the candidate draw

    def __post_init__(self) -> None:
        if self.candidates < 1:
            raise ValueError(f"candidates must be >= 1, got {self.candidates}")
        if not self.rungs or any(r < 1 for r in self.rungs) or list(self.rungs) != sorted(self.rungs):
            raise ValueError(f"rungs must be increasing step caps >= 1, got {list(self.rungs)}")
        if len(self.keep) != len(self.rungs) - 1 or any(k < 1 for k in self.keep):
            raise ValueError(
                f"keep needs one count >= 1 for each rung but the last ({len(self.rungs) - 1}), got {list(self.keep)}"
            )
        if (
            not self.data_seeds
            or any(s < 0 for s in self.data_seeds)
            or len(set(self.data_seeds)) < len(self.data_seeds)
        ):
            raise ValueError(f"data_seeds must be distinct seeds >= 0, got {list(self.data_seeds)}")
        if self.select_points < 1 or self.seed < 0:
            raise ValueError(f"select_points must be >= 1 and seed >= 0, got {self.select_points} and {self.seed}")

    def as_dict(self) -> dict:
        return asdict(self)


# ------------------------------------------------------------------------------------ candidates
def own_setting(preset: SynthPreset) -> dict:
    """The preset's values of the searched fields."""
    return {k: getattr(preset, k) for k in SEARCH}


def candidates(preset: SynthPreset, d: int, beta: float, count: int, seed: int) -> list[dict]:
    """The preset's own setting, then count - 1 distinct settings drawn from SEARCH (seeded by seed, d, β)."""
    grid = list(itertools.product(*SEARCH.values()))
    rng = np.random.default_rng([seed, d, round(beta * 1000)])
    out = [own_setting(preset)]
    for i in rng.permutation(len(grid)):
        if len(out) >= count:
            break
        c = dict(zip(SEARCH, grid[i], strict=True))
        if c not in out:
            out.append(c)
    return out


# ------------------------------------------------------------------------------------------ data
def selection_split(exp: Experiment, n: int, data_seed: int, select_points: int, val_fraction: float, min_val: int):
    """The size-n split of a tuning draw of the training pool and its selection set, as a Split whose
    test fields hold the selection set (X, noisy y), so a method's "test" MSE is its selection MSE.
    The problem's test split is not drawn."""
    n_val = validation_size(n, val_fraction, min_val)
    X, y = exp.pool(n + select_points, data_seed)
    return Split(X[n_val:n], y[n_val:n], X[:n_val], y[:n_val], X[n:], y[n:])


def baseline_scores(split: Split, seed: int) -> dict:
    """Selection MSE of the training mean, kNN and kernel ridge (each tuned on the split's validation part)."""
    t0 = time.perf_counter()
    trivial = float(np.mean((split.y_train.mean() - split.f_test) ** 2))
    knn = knn_baseline(split)
    krr = krr_baseline(split, seed)
    return {
        "trivial": trivial,
        "knn": knn["test_mse"],
        "knn_k": knn["k"],
        "krr": krr["test_mse"],
        "seconds": time.perf_counter() - t0,
    }


def trial(preset: SynthPreset, setting: Mapping, split: Split, cap: int, data_seed: int) -> dict:
    """Train the setting under step cap `cap` on the split, as the sweep trains a run; its selection MSE."""
    import torch

    from tmcheck.empirics.sweep.regression import fit_transformer
    from tmcheck.empirics.sweep.synthetic import train_config
    from tmcheck.empirics.synthetic.model import RegressionTransformer, n_params

    p = preset.with_overrides(**setting, min_steps=cap, max_steps=cap)
    cfg = p.model_config(p.ffn_width)
    torch.set_num_threads(1)
    torch.manual_seed(data_seed)
    model = RegressionTransformer(cfg)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="tmcheck-tune-") as tmp:
        out = fit_transformer(model, split, train_config(p, len(split.X_train)), p.batch_size, data_seed, Path(tmp))
    return {
        "val_mse": out["test_mse"],
        "early_stop_val": out["best_val"],
        "best_step": out["best_step"],
        "steps": out["steps"],
        "stop": out["stop"],
        "params": n_params(cfg),
        "seconds": time.perf_counter() - t0,
    }


# ----------------------------------------------------------------------------------------- store
class Store:
    """The trials and baselines of a tuning directory, in TRIALS, rewritten after each new record."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.file = self.path / TRIALS
        self.doc = {"format": FORMAT, "trials": [], "baselines": [], "tunings": []}
        if self.file.exists():
            doc = safeio.read_json(self.file, "a tuning record")
            if not isinstance(doc, dict) or doc.get("format") != FORMAT:
                raise ValueError(f"{self.file}: not a tuning record of format {FORMAT}")
            self.doc = doc

    def _find(self, table: str, key: Mapping) -> dict | None:
        return next((r for r in self.doc[table] if all(r.get(k) == v for k, v in key.items())), None)

    def get_or_run(self, table: str, key: dict, compute: Callable[[], dict]) -> tuple[dict, bool]:
        """The record of `key` (computed and saved when absent) and whether it was computed now."""
        found = self._find(table, key)
        if found is not None:
            return found, False
        row = {**key, **compute()}
        self.doc[table].append(row)
        self.save()
        return row, True

    def put_tuning(self, row: dict) -> None:
        """Record the tuning of (d, β, n), in the place of an earlier one of the same (d, β, n)."""
        rows, row = self.doc["tunings"], json.loads(json.dumps(row))  # as the file holds it
        same = [i for i, t in enumerate(rows) if (t["d"], t["beta"], t["n"]) == (row["d"], row["beta"], row["n"])]
        if same:
            rows[same[0]] = row
        else:
            rows.append(row)
        self.save()

    def tuning(self, d: int, beta: float, n: int) -> dict | None:
        return self._find("tunings", {"d": d, "beta": beta, "n": n})

    def save(self) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        atomic.write_json(self.file, self.doc)


# ---------------------------------------------------------------------------------------- tuning
def _score(
    store: Store, preset: SynthPreset, exp: Experiment, d, beta, n, setting, cap, settings: TuneSettings, on_trial
) -> float:
    """Mean selection MSE of a setting at cap over the data seeds (each trial recorded)."""
    vals = []
    for s in settings.data_seeds:
        key = {"d": d, "beta": beta, "n": n, "data_seed": s, "select_points": settings.select_points}
        key.update(setting=dict(setting), cap=cap)

        def compute(s=s):
            split = selection_split(exp, n, s, settings.select_points, preset.val_fraction, preset.min_val)
            return trial(preset, setting, split, cap, s)

        row, new = store.get_or_run("trials", key, compute)
        on_trial(row, new)
        vals.append(row["val_mse"])
    return float(np.mean(vals))


def baselines(store: Store, preset: SynthPreset, exp: Experiment, d, beta, n, settings: TuneSettings) -> dict:
    """The baselines' mean selection MSE over the data seeds at (d, β, n) (each recorded)."""
    rows = []
    for s in settings.data_seeds:
        key = {"d": d, "beta": beta, "n": n, "data_seed": s, "select_points": settings.select_points}

        def compute(s=s):
            split = selection_split(exp, n, s, settings.select_points, preset.val_fraction, preset.min_val)
            return baseline_scores(split, s)

        rows.append(store.get_or_run("baselines", key, compute)[0])
    return {m: float(np.mean([r[m] for r in rows])) for m in ("trivial", "knn", "krr")}


def trials_needed(settings: TuneSettings) -> int:
    """Trials one tuning runs (each rung's candidates times the data seeds)."""
    alive, total = settings.candidates, 0
    for i in range(len(settings.rungs)):
        total += alive * len(settings.data_seeds)
        if i < len(settings.keep):
            alive = min(alive, settings.keep[i])
    return total


def tune(
    out: Path,
    preset: SynthPreset,
    d: int,
    beta: float,
    n: int,
    settings: TuneSettings,
    on_trial: Callable[[dict, bool], None] = lambda row, new: None,
) -> dict:
    """Successive halving for (d, β, n) (module docstring); records in out/TRIALS; returns the tuning:
    the rungs (each candidate's score), the winner and the baselines' selection MSE."""
    if (d, beta) not in {(x, b) for x in preset.dims for b in preset.betas}:
        raise ValueError(f"d={d}, beta={beta:g} is not in preset {preset.name!r}'s grid")
    validation_size(n, preset.val_fraction, preset.min_val)
    store = Store(out)
    exp = Experiment(preset.problem(d, beta, preset.noise))
    cands = candidates(preset, d, beta, settings.candidates, settings.seed)
    for c in cands:
        preset.with_overrides(**c)  # every candidate is a valid preset before anything trains
    alive = list(range(len(cands)))
    rungs = []
    for i, cap in enumerate(settings.rungs):
        scores = {j: _score(store, preset, exp, d, beta, n, cands[j], cap, settings, on_trial) for j in alive}
        rungs.append({"cap": cap, "scores": [{"candidate": j, "val_mse": scores[j]} for j in alive]})
        ranked = sorted(alive, key=lambda j: (scores[j], j))
        alive = ranked[: settings.keep[i]] if i < len(settings.keep) else ranked[:1]
    winner = alive[0]
    row = {
        "d": d,
        "beta": beta,
        "n": n,
        "settings": settings.as_dict(),
        "candidates": cands,
        "rungs": rungs,
        "winner": winner,
        "val_mse": rungs[-1]["scores"][[s["candidate"] for s in rungs[-1]["scores"]].index(winner)]["val_mse"],
        "baselines": baselines(store, preset, exp, d, beta, n, settings),
    }
    store.put_tuning(row)
    return row


def choose(
    out: Path, preset: SynthPreset, d: int, beta: float, on_trial: Callable[[dict, bool], None] = lambda r, n: None
) -> dict:
    """One setting for (d, β) from its tunings in `out` (module docstring): every size's winner scored
    at every size (under that size's last rung and data seeds); the winner with the smallest worst
    ratio of its selection MSE to the better baseline's. Returns the choice with every score."""
    store = Store(out)
    tunings = sorted((t for t in store.doc["tunings"] if t["d"] == d and t["beta"] == beta), key=lambda t: t["n"])
    if not tunings:
        raise ValueError(f"{out}: no tuning of d={d}, beta={beta:g} recorded")
    exp = Experiment(preset.problem(d, beta, preset.noise))
    winners = []
    for t in tunings:
        w = t["candidates"][t["winner"]]
        if w not in winners:
            winners.append(w)
    table = []
    for w in winners:
        per_n = {}
        for t in tunings:
            s = TuneSettings(**{k: tuple(v) if isinstance(v, list) else v for k, v in t["settings"].items()})
            score = _score(store, preset, exp, d, beta, t["n"], w, s.rungs[-1], s, on_trial)
            best = min(t["baselines"]["knn"], t["baselines"]["krr"])
            per_n[str(t["n"])] = {"val_mse": score, "ratio": score / best, **t["baselines"]}
        table.append({"setting": w, "per_n": per_n, "worst_ratio": max(v["ratio"] for v in per_n.values())})
    best = min(range(len(table)), key=lambda i: (table[i]["worst_ratio"], i))
    caps = [t["settings"]["rungs"][-1] for t in tunings]
    chosen = {
        "d": d,
        "beta": beta,
        "setting": table[best]["setting"],
        "won_at": [t["n"] for t in tunings if t["candidates"][t["winner"]] == table[best]["setting"]],
        "largest_rung": max(caps),
        "per_n": table[best]["per_n"],
        "compared": table,
    }
    return chosen


def tuned_entry(chosen: Mapping, source: str = "") -> SynthTuned:
    """The SynthPreset.tuned entry of a choice: its setting, and CAP_MARGIN times its largest rung as
    the step cap (every trial ran under min_steps = max_steps = its cap and stops earlier on patience;
    the margin leaves a sweep's run on another seed room to stop on patience too)."""
    cap = CAP_MARGIN * chosen["largest_rung"]
    return SynthTuned(
        d=chosen["d"], beta=chosen["beta"], min_steps=cap, max_steps=cap, source=source, **chosen["setting"]
    )


def write_chosen(out: Path, chosen: list[dict], preset: SynthPreset) -> Path:
    """out/CHOSEN: the choices and the preset fields they give (validated as the preset's tuned entries)."""
    entries = tuple(tuned_entry(c, str(out)) for c in chosen)
    replace(preset, tuned=entries).validate()
    store = Store(out)
    seconds = sum(r["seconds"] for table in ("trials", "baselines") for r in store.doc[table])
    doc = {
        "format": FORMAT,
        "preset": preset.name,
        "chosen": chosen,
        "tuned": [asdict(e) for e in entries],
        "trials": len(store.doc["trials"]),
        "seconds": seconds,
    }
    atomic.write_json(Path(out) / CHOSEN, doc)
    return Path(out) / CHOSEN


def load_tuned(path: Path, preset: SynthPreset) -> SynthPreset:
    """The preset with the tuned entries of a CHOSEN file (or a list of entries), validated."""
    from tmcheck.empirics import schema

    doc = safeio.read_json(path, "a tuning record")
    entries = doc.get("tuned") if isinstance(doc, dict) else doc
    tuned = schema.validate(tuple[SynthTuned, ...], entries, str(path))
    p = replace(preset, tuned=tuned)
    p.validate()
    return p

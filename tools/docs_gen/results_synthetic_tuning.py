"""Generated blocks of docs/results/synthetic-tuning.md, from the committed tuning (results/synth-tune:
trials.json, chosen.json, run.json) and the search space in tmcheck.empirics.sweep.tune."""

from __future__ import annotations

import json
import math
from pathlib import Path

PAGES = ("docs/results/synthetic-tuning.md",)
ROOT = Path(__file__).resolve().parents[2]
TUNE = ROOT / "results" / "synth-tune"
GRID = (100, 316, 1000, 3162, 10_000)  # the proposed deciding grid: 5 sizes over 2 decades
GRID_SEEDS = 5


def _load(name: str) -> dict:
    path = TUNE / name
    return json.loads(path.read_text()) if path.is_file() else {}


def _missing() -> str:
    return "*(results/synth-tune holds no tuning yet: run `tmcheck synth tune results/synth-tune ...`)*"


def _words(s: dict) -> str:
    return (
        f"lr {s['lr']:g}, weight decay {s['weight_decay']:g}, batch {s['batch_size']}, patience {s['patience']}, "
        f"d_embd {s['d_embd']}, {s['n_blocks']} block{'s' if s['n_blocks'] > 1 else ''}, {s['n_heads']} heads, "
        f"FFN width {s['ffn_width']}"
    )


def search() -> str:
    from tmcheck.empirics.sweep.tune import SEARCH

    rows = ["| field | choices |", "|---|---|"]
    rows += [f"| `{k}` | {', '.join(f'{v:g}' for v in vs)} |" for k, vs in SEARCH.items()]
    n = math.prod(len(v) for v in SEARCH.values())
    return "\n".join(rows) + f"\n\n{n:,} settings in all; the preset's own (`cpu`) is always the first candidate."


def budget() -> str:
    doc, run = _load("trials.json"), _load("run.json")
    if not doc:
        return _missing()
    rows = ["| n | (d, β) | candidates | rungs (step caps) | kept after each rung | data seeds | selection points |"]
    rows.append("|---|---|---|---|---|---|---|")
    groups: dict[tuple, list] = {}
    for t in sorted(doc["tunings"], key=lambda t: (t["n"], t["d"], -t["beta"])):
        groups.setdefault((t["n"], json.dumps(t["settings"], sort_keys=True)), []).append((t["d"], t["beta"]))
    for (n, text), problems in groups.items():
        s = json.loads(text)
        rows.append(
            f"| {n:,} | {', '.join(f'({d}, {b:g})' for d, b in problems)} | {s['candidates']} "
            f"| {', '.join(map(str, s['rungs']))} | {', '.join(map(str, s['keep']))} "
            f"| {', '.join(map(str, s['data_seeds']))} | {s['select_points']:,} |"
        )
    trial_s = sum(r["seconds"] for r in doc["trials"])
    base_s = sum(r["seconds"] for r in doc["baselines"])
    steps = sum(r["steps"] for r in doc["trials"])
    capped = sum(r["stop"] == "cap" for r in doc["trials"])
    text = [
        "\n".join(rows),
        "",
        f"{len(doc['trials'])} transformer trials ({steps:,} optimizer steps, {capped} of them stopped on their "
        f"rung's cap, the others on patience) took {trial_s / 60:.1f} minutes, the baselines "
        f"{base_s / 60:.1f} minutes, one thread.",
    ]
    if run:
        calls = "; ".join(f"{c['args']}: {c['wall_s'] / 60:.1f} min" for c in run["calls"])
        wall = sum(c["wall_s"] for c in run["calls"])
        text.append(f"Wall clock: {wall / 60:.1f} minutes in {len(run['calls'])} calls ({calls}); {run['note']}.")
    return "\n".join(text)


def _per_n_rows(doc: dict, chosen: dict) -> list[str]:
    rows = [
        "| d | β | n | size's winner | chosen setting | trivial | kNN | kernel ridge | chosen / better baseline |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    choice = {(c["d"], c["beta"]): c for c in chosen.get("chosen", [])}
    for t in sorted(doc["tunings"], key=lambda t: (t["d"], -t["beta"], t["n"])):
        b = t["baselines"]
        c = choice.get((t["d"], t["beta"]), {}).get("per_n", {}).get(str(t["n"]))
        mine = f"{c['val_mse']:.4f}" if c else "—"
        ratio = f"{c['ratio']:.2f}" if c else "—"
        rows.append(
            f"| {t['d']} | {t['beta']:g} | {t['n']:,} | {t['val_mse']:.4f} | {mine} | {b['trivial']:.4f} | "
            f"{b['knn']:.4f} | {b['krr']:.4f} | {ratio} |"
        )
    return rows


def results() -> str:
    doc, chosen = _load("trials.json"), _load("chosen.json")
    if not doc:
        return _missing()
    rows = _per_n_rows(doc, chosen)
    per = {(c["d"], c["beta"], int(k)): v for c in chosen.get("chosen", []) for k, v in c["per_n"].items()}
    beats = [k for k, p in per.items() if p["val_mse"] < p["trivial"]]
    within = [k for k, p in per.items() if p["ratio"] <= 1.0]
    near = [k for k, p in per.items() if p["ratio"] <= 1.1]

    def cases(keys) -> str:
        return ", ".join(
            f"(d = {d}, β = {b:g}, n = {n:,})" for d, b, n in sorted(keys, key=lambda k: (k[0], -k[1], k[2]))
        )

    rows += [
        "",
        f"Selection MSE against the noisy labels y (σ² = 0.25 above the MSE against f). The chosen setting beats "
        f"the training mean in {len(beats)} of {len(per)} (d, β, n), matches or beats the better baseline in "
        f"{len(within)} and comes within 10% of it in {len(near)}.",
    ]
    if len(beats) < len(per):
        rows.append(f"It does not beat the training mean at {cases(set(per) - set(beats))}.")
    if len(near) < len(per):
        rows.append(f"It is more than 10% above the better baseline at {cases(set(per) - set(near))}.")
    return "\n".join(rows)


def chosen() -> str:
    doc = _load("chosen.json")
    if not doc:
        return _missing()
    caps = {(t["d"], t["beta"]): t["max_steps"] for t in doc["tuned"]}
    rows = ["| d | β | chosen setting | its size's winner at | sweep's step cap |", "|---|---|---|---|---|"]
    for c in sorted(doc["chosen"], key=lambda c: (c["d"], -c["beta"])):
        won = ", ".join(f"n = {int(k):,}" for k in c.get("won_at", [])) or "—"
        rows.append(f"| {c['d']} | {c['beta']:g} | {_words(c['setting'])} | {won} | {caps[(c['d'], c['beta'])]:,} |")
    return "\n".join(rows)


def _seconds_at(doc: dict, c: dict, n: int) -> float:
    """Mean measured seconds of the chosen setting's last-rung trials at n."""
    t = [
        r
        for r in doc["trials"]
        if r["d"] == c["d"] and r["beta"] == c["beta"] and r["n"] == n and r["setting"] == c["setting"]
    ]
    cap = max(r["cap"] for r in t)
    return sum(r["seconds"] for r in t if r["cap"] == cap) / sum(r["cap"] == cap for r in t)


def grid() -> str:
    doc, ch = _load("trials.json"), _load("chosen.json")
    if not ch:
        return _missing()
    total = 0.0
    for c in ch["chosen"]:
        ns = sorted(int(k) for k in c["per_n"])
        lo, hi = ns[0], ns[-1]
        s_lo, s_hi = _seconds_at(doc, c, lo), _seconds_at(doc, c, hi)
        for n in GRID:
            w = math.log(n / lo) / math.log(hi / lo)
            total += GRID_SEEDS * s_lo ** (1 - w) * s_hi**w
    base = [r for r in doc["baselines"]]
    base_s = sum(r["seconds"] for r in base) / max(1, len(base)) * len(ch["chosen"]) * len(GRID) * GRID_SEEDS
    return (
        f"n ∈ {{{', '.join(f'{n:,}' for n in GRID)}}} (5 sizes over 2 decades), {GRID_SEEDS} seeds, the 6 (d, β): "
        f"{len(ch['chosen']) * len(GRID) * GRID_SEEDS} transformer runs, estimated at "
        f"{total / 3600:.1f} CPU hours from the chosen settings' measured trial times (interpolated geometrically "
        f"in n between the tuned sizes) and {base_s / 3600:.1f} hours of baselines; on 2 workers about half that "
        f"in wall clock."
    )


GENERATORS = {
    "synth_tune.search": search,
    "synth_tune.budget": budget,
    "synth_tune.results": results,
    "synth_tune.chosen": chosen,
    "synth_tune.grid": grid,
}

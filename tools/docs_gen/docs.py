"""Generators of the docs owner: the CLI and API references, the results pages, the speed page and the
README's numbers. Each reads a generated file (the Typer app, the package tree, results/*/report.json,
benchmarks/results/*.json, results/test-run.json, results/timings.json) and returns markdown; nothing
here holds a measured number of its own.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "results"
BENCH = ROOT / "benchmarks" / "results"
DOCS = ROOT / "docs"


def _cell(text: object) -> str:
    """Text for a markdown table cell: one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _read(path: Path) -> dict | list | None:
    return json.loads(path.read_text()) if path.is_file() else None


# ------------------------------------------------------------------------------------ CLI reference
def command_tree() -> list[tuple[tuple[str, ...], object]]:
    """(path, click command) for every group and command of `tmcheck`, depth first in registration order."""
    import typer

    from tmcheck.cli.main import app

    out = []

    def walk(cmd, path):
        out.append((path, cmd))
        for name, sub in getattr(cmd, "commands", {}).items():
            walk(sub, (*path, name))

    walk(typer.main.get_command(app), ())
    return out


def _help_text(cmd) -> str:
    return (cmd.help or "").strip()


def _options_table(cmd, ctx) -> list[str]:
    rows = []
    for p in cmd.params:
        if getattr(p, "hidden", False):
            continue
        record = p.get_help_record(ctx)
        if record is None:
            continue
        spelling, help_ = record
        kind = "argument" if p.param_type_name == "argument" else "option"
        rows.append(f"| `{_cell(spelling)}` | {kind} | {_cell(help_)} |")
    return ["| spelling | kind | help |", "|---|---|---|", *rows, ""] if rows else []


def cli_reference() -> str:
    """Every command of the Typer app: its help, usage, and every argument and option with its help."""
    from typer._click import Context

    from tmcheck.cli.main import renames

    renamed_options, renamed_commands = renames()
    parts = []
    for path, cmd in command_tree():
        name = " ".join(("tmcheck", *path))
        level = "#" * min(2 + max(len(path) - 1, 0), 4)
        parts += [f"{level} `{name}`", ""]
        ctx = Context(cmd, info_name=name)
        if not getattr(cmd, "commands", None):
            parts += ["```text", cmd.get_usage(ctx).strip(), "```", ""]
        parts += [_help_text(cmd) or "(no help text)", ""]
        if getattr(cmd, "commands", None):
            parts += [f"Commands: {', '.join(f'`{s}`' for s in cmd.commands)}.", ""]
        parts += _options_table(cmd, ctx)
        old = renamed_options.get(path, {})
        if old:
            parts.append(
                "Deprecated spellings (they work for one release, with a line on stderr): "
                + ", ".join(f"`{o}` → `{n}`" for o, n in sorted(old.items()))
                + "."
            )
            parts.append("")
    if renamed_commands:
        parts += ["## Renamed commands", ""]
        for old, new in sorted(renamed_commands.items()):
            parts.append(f"- `tmcheck {' '.join(old)}` → `tmcheck {' '.join(new)}`")
        parts.append("")
    return "\n".join(parts)


def cli_count() -> str:
    leaves = [p for p, c in command_tree() if p and not getattr(c, "commands", None)]
    groups = [p for p, c in command_tree() if p and getattr(c, "commands", None)]
    return f"`tmcheck` has {len(leaves)} commands; {len(groups)} of its names are groups of commands."


# ------------------------------------------------------------------------------------ API reference
# Members whose docstrings do not render in strict mode, in files owned by others (listed in the report
# of this page's owner): module -> member names left out of the page.
API_EXCLUDE: dict[str, tuple[str, ...]] = {
    "tmcheck.empirics.fit": ("exponent_report",),
    "tmcheck.empirics.fit.exponent": ("exponent_report",),
}


def modules(part: str) -> list[str]:
    """Every module of tmcheck.<part>, from the source tree (package-dir of pyproject.toml)."""
    import tomllib

    mapping = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    base = ROOT / mapping[f"tmcheck.{part}"]
    out = []
    for path in sorted(base.rglob("*.py")):
        rel = path.relative_to(base).with_suffix("")
        names = [n for n in rel.parts if n != "__init__"]
        if any(n.startswith("_") for n in names):
            continue
        out.append(".".join(["tmcheck", part, *names]))
    return sorted(set(out))


def api_page(part: str) -> str:
    lines = []
    for mod in modules(part):
        lines.append(f"::: {mod}")
        excluded = API_EXCLUDE.get(mod)
        if excluded:
            pattern = "|".join(excluded)
            lines += ["    options:", f'      filters: ["!^_", "!^({pattern})$"]']
        lines.append("")
    return "\n".join(lines)


def api_index() -> str:
    rows = ["| package | modules |", "|---|---|"]
    for part in ("theory", "proofs_check", "empirics", "cli", "util"):
        rows.append(f"| [`tmcheck.{part}`]({part}.md) | {len(modules(part))} |")
    left = [f"`{m}`: {', '.join(f'`{x}`' for x in xs)}" for m, xs in sorted(API_EXCLUDE.items())]
    if left:
        rows += ["", "Left out because their docstrings do not render yet: " + "; ".join(left) + "."]
    return "\n".join(rows)


# ------------------------------------------------------------------------------------ results
EXPERIMENTS = {
    # name: (page, title, what the paper measures there)
    "pretrain": ("results/pretrain.md", "Figure 2: data scaling", "α̂_D of GPTs on three corpora against 2/(2+d̂)"),
    "model": ("results/model.md", "Figure 3: model scaling", "α̂_N against 2β/d̂ and the ID-free α̂_D/(1 − α̂_D)"),
    "ablate": ("results/ablate.md", "Figure 4: ID ablations", "d̂ against parameters, width, layer and position"),
    "synth": ("results/synthetic.md", "The synthetic study", "α̂_D against 2β/(2β+d) where d and β are known"),
    "synth-decide": (
        "results/synthetic-decide.md",
        "The synthetic study, two decades of n",
        "α̂_D against 2β/(2β+d) (tuned transformer, n 100 to 10,000, 5 seeds) and α̂_N against 2β/d",
    ),
    "synth-decide2": (
        "results/synthetic-decide2.md",
        "The synthetic study, d = 4 past the trivial regime",
        "as above, with d = 4 on n 1000 to 100,000, where the transformer leaves the trivial regime",
    ),
}


def _report(name: str) -> dict:
    rep = _read(RESULTS / name / "report.json")
    if rep is None:
        raise FileNotFoundError(2, "no committed report", str(RESULTS / name / "report.json"))
    return rep


def report_body(name: str, figures: str) -> str:
    """The committed report.md of results/<name> without its title, headings one level down, figure
    links pointing at `figures` (where the page finds results/<name>/)."""
    lines = (RESULTS / name / "report.md").read_text(encoding="utf-8").splitlines()
    out = []
    for line in lines[1:] if lines and lines[0].startswith("# ") else lines:
        if line.startswith("#"):
            line = "#" + line
        out.append(line.replace("](fig_", f"]({figures}/fig_"))
    return "\n".join(out).strip("\n")


def _verdict_counts(verdicts: list[str]) -> str:
    counts: dict[str, int] = {}
    for v in verdicts:
        counts[v] = counts.get(v, 0) + 1
    return ", ".join(f"{v} in {k}" for v, k in sorted(counts.items()))


def _pretrain_cells() -> list[str]:
    from tmcheck.empirics.report.common import prediction_of

    rep = _report("pretrain")
    out = []
    for c, e in rep["table"].items():
        t = prediction_of(e, "loglog")
        if e["exponent"] is None or t is None:
            out.append(f"{c}: withheld")
            continue
        f = e["exponent"]["fits"]["loglog"]
        out.append(
            f"{c}: α̂_D = {f['alpha']:.3f} against α_D = {t['alpha_pred']:.3f}, difference "
            f"{t['difference']:+.3f} [{t['difference_ci'][0]:+.3f}, {t['difference_ci'][1]:+.3f}]: {t['verdict']}"
        )
    return out


def _model_cells() -> list[str]:
    rep = _report("model")
    f, t = rep["alpha_N"]["fits"]["loglog"], rep["alpha_N"]["prediction"]["loglog"]
    return [
        f"α̂_N = {f['alpha']:.3f} [{f['interval']['lo']:.3f}, {f['interval']['hi']:.3f}] against 2β/d̂ = "
        f"{t['alpha_pred']:.3f}: {rep['verdicts']['2beta/d-hat']}",
        f"against the ID-free α̂_D/(1 − α̂_D): {rep['verdicts']['ID-free from alpha-hat_D']}",
    ]


def _synth_cells(name: str = "synth") -> list[str]:
    from tmcheck.empirics.report.common import verdict

    rep = _report(name)
    out = []
    for method, label in (("transformer", "transformer"), ("knn", "kNN"), ("krr", "kernel ridge")):
        sel = [e for e in rep["data_scaling"] if e["method"] == method]
        if sel:
            counts = _verdict_counts([verdict(e, "loglog", "true d") for e in sel])
            out.append(f"{label}, over {len(sel)} (d, β): {counts}")
    versus = rep.get("against_baselines") or []
    cases = {(e["d"], e["beta"]) for e in versus}
    if cases:
        below = {c for c in cases if all(e["below_trivial"] for e in versus if (e["d"], e["beta"]) == c)}
        out.append(f"transformer below the trivial predictor at every n in {len(below)} of {len(cases)} (d, β)")
    model = rep.get("model_scaling") or []
    if model:
        counts = _verdict_counts([verdict(e, "loglog", "true d") for e in model])
        out.append(f"α̂_N (transformer), over {len(model)} (d, β): {counts}")
    return out


def _ablate_cells() -> list[str]:
    out = []
    for name in ("suite", "minilm"):
        res = _read(RESULTS / "ablate" / name / "ablate.json")
        if res is None:
            continue
        shown = [p for p in ("params", "width", "layer", "position") if p in res["panels"]]
        out.append(f"{res['source']}: d̂ against " + ", ".join(shown))
    return out


def headline(link_prefix: str) -> str:
    """The headline results: one row per committed experiment, each cell computed from its report."""
    cells = {
        "pretrain": _pretrain_cells,
        "model": _model_cells,
        "synth": _synth_cells,
        "synth-decide": lambda: _synth_cells("synth-decide"),
        "synth-decide2": lambda: _synth_cells("synth-decide2"),
        "ablate": _ablate_cells,
    }
    rows = [
        "| experiment | what is tested | result (95% intervals; verdicts of the prediction test) |",
        "|---|---|---|",
    ]
    for name, (page, title, what) in EXPERIMENTS.items():
        target = f"{link_prefix}{page}"
        rows.append(f"| [{title}]({target}) | {_cell(what)} | {_cell('; '.join(cells[name]()))} |")
    return "\n".join(rows)


def ablate_tables() -> str:
    """Per ablation result: each panel's estimates (d̂ [95%] per estimator), and the change from its
    first to its last point with an interval (the two estimates' intervals read as normal and independent)."""
    from tmcheck.empirics.report.common import id_difference

    parts = []
    for name in ("suite", "minilm"):
        res = _read(RESULTS / "ablate" / name / "ablate.json")
        if res is None:
            continue
        names = res["options"]["estimators"]
        parts += [
            f"### {res['source']}",
            "",
            f"![ID ablations: {res['source']}](../figures/ablate/{name}/fig_ablate.png)",
            "",
        ]
        for panel in ("params", "width", "layer", "position"):
            data = res["panels"].get(panel)
            if data is None:
                parts += [f"**{panel}**: not measured (one model, or too few points per bin).", ""]
                continue
            head = "| x | " + " | ".join(f"{n} d̂ [95%]" for n in names) + " |"
            rows = [head, "|---" * (len(names) + 1) + "|"]
            for p in data["points"]:
                x = f"{p['positions'][0]}–{p['positions'][1] - 1}" if "positions" in p else f"{p['x']:,.0f}"
                cells = []
                for n in names:
                    e = p["estimates"][n]
                    cells.append("refused" if e["d"] is None else f"{e['d']:.2f} [{e['ci'][0]:.2f}, {e['ci'][1]:.2f}]")
                rows.append(f"| {x} | " + " | ".join(cells) + " |")
            changes = []
            for n in names:
                pts = [p for p in data["points"] if p["estimates"][n]["d"] is not None]
                if len(pts) >= 2:
                    a, b = ({"d": pts[i]["estimates"][n]["d"], "d_ci": pts[i]["estimates"][n]["ci"]} for i in (-1, 0))
                    diff = id_difference(a, b)
                    if diff:
                        changes.append(f"{n} {diff['difference']:+.2f} [{diff['ci'][0]:+.2f}, {diff['ci'][1]:+.2f}]")
            parts += [f"**{panel}** ({data['n_points']} points per estimate)", "", *rows, ""]
            if changes:
                parts += ["Last point minus first point, 95%: " + "; ".join(changes) + ".", ""]
    return "\n".join(parts)


def d4_small_n() -> str:
    """synth-decide's d = 4 rows below n = 1000 (transformer, trivial predictor, baselines): why
    synth-decide2 starts d = 4 at n = 1000."""
    from tmcheck.empirics.report.synthetic import versus_lines, versus_table

    rows = [e for e in _report("synth-decide")["against_baselines"] if e["d"] == 4 and e["n"] < 1000]
    return versus_table(rows) + "\n\n" + "\n".join(x for x in versus_lines(rows) if "trivial" in x)


def made(name: str) -> str:
    """How a committed sweep was made: its kind, preset, runs, and the training time its rows record."""
    cfg = _read(RESULTS / name / "config.json")
    rows = [json.loads(x) for x in (RESULTS / name / "results.jsonl").read_text().splitlines() if x.strip()]
    secs = sum(float(r.get("seconds", r.get("wall_s", 0.0))) for r in rows)
    walls = sum(float(r.get("wall_s", r.get("seconds", 0.0))) for r in rows)
    preset = cfg["preset"].get("name")
    line = (
        f"Kind `{cfg.get('kind', 'pretrain')}`, preset `{preset}`: {len(rows)} runs, "
        f"{secs / 60:.1f} minutes of training recorded in their rows"
    )
    if walls != secs:
        line += f" ({walls / 60:.1f} minutes of wall time per run, summed)"
    reused = [r for r in rows if (RESULTS / name / "runs" / str(r.get("run")) / "reused.json").exists()]
    if reused:
        sources = sorted({_read(RESULTS / name / "runs" / r["run"] / "reused.json")["from"] for r in reused})
        took = sum(float(r.get("wall_s", r.get("seconds", 0.0))) for r in reused)
        line += (
            f". {len(reused)} of the runs were taken from {', '.join(f'`{x}`' for x in sources)} (`--reuse`: same "
            f"spec, same settings of their (d, β)), {took / 60:.1f} minutes of them; the other "
            f"{len(rows) - len(reused)} trained here, {(walls - took) / 60:.1f} minutes"
        )
    return line + "."


def ablate_weights() -> str:
    """What re-making the suite's model weights costs: the full-n runs of the model sweep, from its rows."""
    rows = [json.loads(x) for x in (RESULTS / "model" / "results.jsonl").read_text().splitlines() if x.strip()]
    full = [r for r in rows if r.get("full_split")]
    secs = sum(float(r["seconds"]) for r in full)
    return (
        f"The {len(full)} models were the full-n runs of `results/model/`; their rows record "
        f"{secs / 60:.1f} minutes of training (one thread each, two workers)."
    )


def rerun_table() -> str:
    """The pretraining re-run against the original rows (results/pretrain/rerun.json)."""
    doc = _read(RESULTS / "pretrain" / "rerun.json")
    if doc is None:
        return "No re-run is recorded."
    runs = doc["runs"]
    rel = [abs(r["test_loss"] - r["original_test_loss"]) / r["original_test_loss"] for r in runs]
    same = sum(r["steps"] == r["original_steps"] for r in runs)
    exact = sum(r["test_loss"] == r["original_test_loss"] for r in runs)
    worst = max(range(len(runs)), key=lambda i: rel[i])
    lines = [
        f"Re-run on {doc['rerun']['cpu']} (torch {doc['rerun']['torch']}, {doc['rerun']['date']}); the original "
        f"rows were made on {doc['original']['cpu']}. Of {len(runs)} runs, {same} stopped at the same step as the "
        f"original, {exact} have a bit-identical test loss, and the largest relative difference of a test loss "
        f"is {rel[worst]:.1e} ({runs[worst]['run']}).",
        "",
        "| corpus | d̂ original | d̂ re-run | loglog α̂ original | loglog α̂ re-run |",
        "|---|---|---|---|---|",
    ]
    rep = _report("pretrain")
    for c, e in rep["table"].items():
        o, i = doc["original_report"].get(c, {}), doc["id"].get(c, {})
        new = e["exponent"]["fits"]["loglog"]["alpha"] if e["exponent"] else float("nan")
        lines.append(
            f"| {c} | {i.get('original_d', float('nan')):.3f} | {i.get('d', float('nan')):.3f} | "
            f"{o.get('loglog', float('nan')):.3f} | {new:.3f} |"
        )
    return "\n".join(lines)


# ------------------------------------------------------------------------------------ speed
QUIET_SHARE = 0.10  # ../shared/tools/quiet: other processes above this share of the machine -> DISTURBED


def quiet_ok(q) -> bool:
    """A recorded quiet verdict that allows quoting a figure: "quiet", not DISTURBED, other processes'
    share and (where recorded) the host's steal share <= 10%."""
    if not isinstance(q, dict):
        return False
    v = str(q.get("verdict", ""))
    share, steal = q.get("other_cpu_share"), q.get("host_steal_share")
    return (
        v.lower().startswith("quiet")
        and "disturbed" not in v.lower()
        and (share is None or share <= QUIET_SHARE)
        and (steal is None or steal <= QUIET_SHARE)
    )


def _flatten(obj, prefix: str = "") -> list[tuple[str, object]]:
    """(path, value) of the scalar leaves of a benchmark document, lists of up to 12 records as rows."""
    out: list[tuple[str, object]] = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k in ("quiet", "machine"):
                continue
            out += _flatten(v, f"{prefix} › {k}" if prefix else str(k))
    elif isinstance(obj, list):
        if all(not isinstance(v, (dict, list)) for v in obj) and len(obj) <= 8:
            out.append((prefix, ", ".join(_fmt(v) for v in obj)))
        elif len(obj) <= 12:
            for i, v in enumerate(obj):
                out += _flatten(v, f"{prefix}[{i}]")
        else:
            out.append((prefix, f"{len(obj)} entries"))
    else:
        out.append((prefix, obj))
    return out


def _fmt(v) -> str:
    if isinstance(v, bool) or v is None:
        return str(v)
    if isinstance(v, float):
        return f"{v:.4g}" if math.isfinite(v) else str(v)
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def quiet_sections(doc: dict) -> list[tuple[str, dict, dict]]:
    """(title, section, quiet record) for the parts of a benchmark file that carry a quiet verdict: the
    whole file when its top level does, else each top-level section that does."""
    top = doc.get("quiet")
    if isinstance(top, dict) and "entries" not in top:  # a file stamped as a whole
        return [("", doc, top)]
    # benchmarks/run_all.py stamps each entry a run changed; an unstamped entry was not measured alone
    return [(k, v, v["quiet"]) for k, v in doc.items() if isinstance(v, dict) and isinstance(v.get("quiet"), dict)]


def speed() -> str:
    """Every benchmark figure of benchmarks/results/*.json that was measured alone (quiet verdict
    recorded, not DISTURBED); files or sections without one are listed, not quoted."""
    quoted, left = [], []
    for path in sorted(BENCH.glob("*.json")):
        doc = _read(path)
        if not isinstance(doc, dict) or path.name == "gpu.json":  # its own section (speed_gpu)
            continue
        sections = quiet_sections(doc)
        ok = [(t, sec, q) for t, sec, q in sections if quiet_ok(q)]
        if not ok:
            why = "no quiet verdict recorded" if not sections else "measured while the machine was busy (DISTURBED)"
            left.append(f"`{path.name}` ({why})")
            continue
        for title, sec, q in ok:
            name = f"{path.stem}" + (f" › {title}" if title else "")
            machine = sec.get("machine") or doc.get("machine")
            head = [f"### `{name}`", ""]
            head.append(
                f"Measured {q.get('date', 'on an unrecorded date')}; other processes took "
                + (
                    f"{q['other_cpu_share']:.0%}"
                    if isinstance(q.get("other_cpu_share"), (int, float))
                    else "an unrecorded share"
                )
                + " of the machine (quiet)"
                + (
                    f"; the host took {q['host_steal_share']:.0%} of its CPU time (steal)."
                    if isinstance(q.get("host_steal_share"), (int, float))
                    else "."
                )
                + (f" Machine: {_cell(json.dumps(machine, sort_keys=True))}." if machine else "")
            )
            rows = ["| measurement | value |", "|---|---|"]
            rows += [f"| {_cell(k)} | {_cell(_fmt(v))} |" for k, v in _flatten(sec)]
            quoted += [*head, "", *rows, ""]
    parts = quoted or ["No benchmark result has been measured alone yet: nothing is quoted.", ""]
    if left:
        parts.append("Not quoted: " + ", ".join(left) + ".")
    return "\n".join(parts)


def _get(doc, *keys):
    for k in keys:
        if not isinstance(doc, dict) or k not in doc:
            return None
        doc = doc[k]
    return doc


def _quiet_part(name: str, section: str) -> dict | None:
    """benchmarks/results/<name>.json's `section` when it was measured alone (its quiet verdict), else None."""
    doc = _read(BENCH / f"{name}.json")
    sec = _get(doc, section)
    q = _get(sec, "quiet") or (_get(doc, "quiet") if section in (_get(doc, "quiet", "entries") or []) else None)
    return sec if isinstance(sec, dict) and quiet_ok(q) else None


def speed_targets() -> str:
    """The speed goals of the project with the figures measured alone (quiet) against them, one row each;
    a goal without a quiet figure says so."""
    rows = ["| workload | tmcheck | anchor | ratio | goal | met |", "|---|---|---|---|---|---|"]

    def row(what, ours, anchor, ratio, goal, met):
        cell = lambda v, unit="s": "–" if v is None else (f"{v:.3g} {unit}" if isinstance(v, float) else str(v))  # noqa: E731
        rows.append(
            f"| {what} | {cell(ours)} | {anchor} | {'–' if ratio is None else f'{ratio:.2f}×'} | {goal} | "
            + ("not measured alone" if ratio is None and ours is None else ("yes" if met else "**no**"))
            + " |"
        )

    knn = _quiet_part("id", "knn_engine") or {}
    m = knn.get("mle_32768", {})
    r = _get(m, "speedup_vs_skdim", "best")
    row(
        "exact MLE, K = 20, N = 32768, D = 768, in-process",
        _get(m, "tmcheck", "best"),
        f"scikit-dimension {_fmt(_get(m, 'skdim', 'best'))} s",
        r,
        "≥ 5×",
        r is not None and r >= 5,
    )
    r = _get(m, "speedup_vs_faiss", "best")
    row(
        "the same, against faiss-cpu exact search + the same MLE",
        _get(m, "tmcheck", "best"),
        f"faiss-cpu {_fmt(_get(m, 'faiss', 'best'))} s",
        r,
        "≥ 2×",
        r is not None and r >= 2,
    )
    lim, best = _get(m, "limit", "half_gram_seconds"), _get(m, "tmcheck", "best")
    r = best / lim if lim and best else None
    kind = _get(m, "limit", "type") or "bfloat16"  # entries before the type was recorded measured bf16
    row(
        f"that MLE fit (engine and estimator) against the {kind} half-Gram time (the whole-space search's "
        "GEMM) at the measured GEMM rate",
        best,
        f"half Gram {_fmt(lim)} s",
        r,
        "within 2.5×",
        r is not None and r <= 2.5,
    )
    mm = knn.get("minilm_8192", {})
    r = _get(mm, "speedup_vs_faiss", "best")
    row(
        f"kNN alone, all-MiniLM-L6-v2 token embeddings, N = 8192 ({_fmt(_get(mm, 'tmcheck', 'n_recomputed'))} rows "
        "recomputed)",
        _get(mm, "tmcheck", "best"),
        f"faiss-cpu {_fmt(_get(mm, 'faiss', 'best'))} s",
        r,
        "≥ 1×",
        r is not None and r >= 1,
    )
    r = _get(mm, "mle", "speedup_vs_skdim", "best")
    row(
        "MLE on the same embeddings (scikit-dimension's estimate: "
        f"{_fmt(_get(mm, 'mle', 'skdim', 'dimension'))}, tmcheck's: {_fmt(_get(mm, 'mle', 'tmcheck', 'dimension'))}, "
        "after removing duplicate tokens)",
        _get(mm, "mle", "tmcheck", "best"),
        f"scikit-dimension {_fmt(_get(mm, 'mle', 'skdim', 'best'))} s",
        r,
        "≥ 2×",
        r is not None and r >= 2,
    )
    o = knn.get("one_thread_32768", {})
    r = _get(o, "speedup_vs_faiss", "best")
    row(
        "kNN on one thread, N = 32768, D = 768",
        _get(o, "tmcheck", "best"),
        f"faiss-cpu {_fmt(_get(o, 'faiss', 'best'))} s",
        r,
        "≥ 1.5×",
        r is not None and r >= 1.5,
    )
    w = knn.get("whole_process_32768", {})
    r = _get(w, "speedup_vs_skdim", "best")
    row(
        "whole process `tmcheck id estimate X.npy --json` (its defaults)",
        _get(w, "tmcheck", "best"),
        f"scikit-dimension's process {_fmt(_get(w, 'skdim', 'best'))} s",
        r,
        "≥ 4×",
        r is not None and r >= 4,
    )
    # (section, its case key, the row's words, goal, threshold): the tools as each runs, then the models
    # in one process
    training = [
        (
            "alone",
            "preset {}, every core",
            "training step, `{}`, every core: tmcheck's trainer and GPT2LMHeadModel each in processes of its "
            "own, as each runs",
            "≥ 1.5×",
            1.5,
        ),
        (
            "cases",
            "preset {}, 2 threads",
            "the same two models in one process, alternating (one allocator state: the models, not the tools), `{}`",
            "≥ 1× (ahead)",
            1,
        ),
    ]
    for section, key, words, goal, least in training:
        part = _quiet_part("train", section) or {}
        for preset in ("cpu-demo", "cpu-small"):
            c = part.get(key.format(preset), {})
            r = c.get("speedup")
            ours = _get(c, "tokens_per_s", "ours")
            row(
                words.format(preset),
                None if ours is None else f"{ours:,.0f} tok/s",
                f"GPT2LMHeadModel {_get(c, 'tokens_per_s', 'GPT2LMHeadModel') or 0:,.0f} tok/s",
                r,
                goal,
                r is not None and r >= least,
            )
    lem = _quiet_part("lemma1", "cli_lemma1") or {}
    t = lem.get("best_s")
    rows.append(
        f"| `{lem.get('command', 'tmcheck lemma 1')}`, whole process | {'–' if t is None else f'{t:.3g} s'} | – | – "
        f"| < 10 s | {'not measured alone' if t is None else ('yes' if t < 10 else '**no**')} |"
    )
    h = _get(_quiet_part("cli", "help"), "best")
    rows.append(
        f"| `tmcheck --help`, whole process | {'–' if h is None else f'{h:.3g} s'} | – | – | < 1 s | "
        f"{'not measured alone' if h is None else ('yes' if h < 1 else '**no**')} |"
    )
    mach = knn.get("machine") or {}
    if not mach:
        return "\n".join(rows)
    bf16 = mach.get("cpu_bf16_dot")
    where = (
        f"The kNN rows were measured on {mach.get('cpu_model', 'an unrecorded CPU')}, {mach.get('cores', '?')} cores, "
        + (
            "with native bf16 dot products (the engine's candidate search in bfloat16)."
            if bf16
            else "without native bf16 dot products (the engine's candidate search in float32)."
        )
    )
    return where + "\n\n" + "\n".join(rows)


# ------------------------------------------------------------------------------------ timings
def _timing(name: str) -> dict | None:
    doc = _read(RESULTS / "timings.json") or {}
    return doc.get(name)


def _timing_words(name: str, what: str) -> str:
    t = _timing(name)
    if t is None:
        return f"{what}: not measured yet."
    q = t.get("quiet", {})
    where = f"{t['cores']} cores, other processes {q.get('other_cpu_share', float('nan')):.0%} of the machine"
    when = f"{q.get('date', '?')[:10]}, commit {t.get('commit') or '?'}"
    if not quiet_ok(q):
        return f"{what}: last timed while the machine was busy ({where}; {when}); not quoted."
    return f"{what}: {t['seconds'] / 60:.1f} minutes, exit {t['exit']} ({where}; {when})."


def full_demo_estimate() -> str:
    """What `tmcheck demo --full` re-runs: the committed experiments' training time, from their rows."""
    total, parts = 0.0, []
    for name in ("pretrain", "synth", "model"):
        path = RESULTS / name / "results.jsonl"
        if not path.is_file():
            continue
        rows = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
        secs = sum(float(r.get("wall_s", r.get("seconds", 0.0))) for r in rows)
        total += secs
        parts.append(f"{name} {secs / 60:.0f} min")
    return f"{total / 60:.0f} minutes of training in the committed rows ({', '.join(parts)}), one run at a time"


def timings() -> str:
    test = _read(RESULTS / "test-run.json")
    if test is None:
        tline = "`make test`: no test run recorded yet."
    else:
        tline = (
            f"`make test`: {test['passed']:,} passed, {test['failed']} failed, {test['skipped']} skipped, "
            f"{test['errors']} errors in {test['seconds'] / 60:.1f} minutes of suite time "
            f"({test['cores']} cores, load {test['load_average'][0]:.1f} at the end; "
            f"commit {test.get('commit') or '?'})."
        )
    lines = [
        f"- {tline}",
        f"- {_timing_words('demo', '`make demo`')}",
        f"- {_timing_words('demo-full', '`tmcheck demo --full`')} It re-runs {full_demo_estimate()}.",
    ]
    return "\n".join(lines)


def ci_timing() -> str:
    return _timing_words("ci", "The last timed `.ci/run`")


def _gpu_doc() -> dict | None:
    """benchmarks/results/gpu.json when it holds a real CUDA run (a smoke run's file is never quoted)."""
    doc = _read(BENCH / "gpu.json")
    return doc if isinstance(doc, dict) and doc.get("mode") == "cuda" else None


def _gpu_checks_words(doc: dict) -> str:
    st = _get(doc, "stages", "parity")
    checks = _get(st, "result", "checks") or {}
    if not checks:
        return "the parity stage did not run" if st is None else f"the parity stage ended {st.get('status')}"
    passed = sum(bool(c.get("passed")) for c in checks.values())
    failed = [n for n, c in checks.items() if not c.get("passed")]
    return f"{passed} of {len(checks)} parity checks pass" + (f" (failed: {', '.join(failed)})" if failed else "")


def gpu_status() -> str:
    doc = _gpu_doc()
    if doc is None:
        return (
            "`benchmarks/results/gpu.json` holds no CUDA run: the GPU check has not been run on a GPU, "
            "and no GPU figure is quoted."
        )
    env = doc.get("environment", {})
    return (
        f"The last GPU check ran on {_cell(env.get('device_name', 'an unrecorded device'))} "
        f"({doc.get('started_utc', 'an unrecorded date')}, torch {env.get('torch')}): "
        f"{_gpu_checks_words(doc)}; its figures are on [Speed](speed.md#gpu)."
    )


def _gpu_parity_row(name: str, c: dict) -> str:
    if "rows_differing" in c:
        got = f"{c['rows_differing']} rows differ, distances within {c['max_rel_distance_diff']:.1e} (relative)"
        got += f"; {c['rows_recomputed_device']:,} rows re-searched on the device"
    elif "loss_after" in c:
        got = f"loss after the steps differs by {c['loss_after']['abs_diff']:.1e}"
        got += f"; weights by at most {c['weights_max_abs_diff']:.1e}"
    elif "abs_diff" in c:
        got = f"CPU {c['cpu']:.6g}, device {c['device']:.6g} (difference {c['abs_diff']:.1e})"
    else:
        diff, ref = c.get("max_abs_diff", float("nan")), c.get("max_abs_ref", 0)
        got = f"largest difference {diff:.1e} (largest value {ref:.3g})"
    return f"| {name} | {'pass' if c.get('passed') else '**FAIL**'} | {_cell(got)} | {_cell(c.get('tolerance', ''))} |"


def speed_gpu() -> str:
    """The GPU check (benchmarks/gpu_check.sh) from benchmarks/results/gpu.json: the parity of every CUDA
    path with the CPU, the 125M configuration's training rate, the kNN engine at N = 10^6, the sweep."""
    doc = _gpu_doc()
    if doc is None:
        return "No GPU figure exists until `benchmarks/gpu_check.sh` has run on a GPU."
    env, stages = doc.get("environment", {}), doc.get("stages", {})
    out = [
        f"Measured {doc.get('started_utc')} by `benchmarks/gpu_check.sh` on {env.get('device_name')} "
        f"({env.get('multiprocessors')} multiprocessors, {env.get('memory_gib', 0):.0f} GiB; driver "
        f"{env.get('driver')}, torch {env.get('torch')}, CUDA {env.get('cuda')}, Python {env.get('python')}), "
        f"a machine lent to this one run: the `quiet` tool watches this project's CPU host, not that one. "
        f"The whole check took {doc.get('elapsed_s', 0):.0f} s; {_gpu_checks_words(doc)}.",
        "",
    ]
    checks = _get(stages, "parity", "result", "checks") or {}
    if checks:
        out += ["| CUDA against the CPU | verdict | measured | tolerance |", "|---|---|---|---|"]
        out += [_gpu_parity_row(n, c) for n, c in checks.items()]
        out.append("")
    rows = ["| stage | figure |", "|---|---|"]
    tp = _get(stages, "throughput", "result")
    if tp:
        c = tp["config"]
        mfu = (
            "no datasheet peak"
            if tp.get("mfu") is None
            else f"{tp['mfu']:.1%} of {tp['peak_bf16_dense_flops'] / 1e12:.0f} TFLOP/s"
        )
        rows.append(
            f"| training, {c['n_layer']} layers × {c['n_embd']} (context {c['block_size']}, batch {tp['batch']}), "
            f"{_cell(tp['step'])} | {tp['tokens_per_s']:,.0f} tokens/s; MFU {mfu} (the datasheet's dense bf16, "
            f"{tp['peak_entry']}); {tp['mfu_vs_measured_gemm']:.1%} of the bf16 GEMM measured in the same run "
            f"({tp['gemm_bf16_flops_measured'] / 1e12:.0f} TFLOP/s at {tp['gemm_size']}³); peak memory "
            f"{tp['peak_memory_gib']:.1f} GiB |"
        )
    idl = _get(stages, "id_large", "result")
    if idl:
        rows.append(
            f"| exact kNN (K = {idl['k']}) and MLE, {idl['manifold']}, N = {idl['N']:,} | kNN "
            f"{idl['knn_seconds']:.1f} s on {idl['knn_device']} ({idl['rows_recomputed']:,} rows re-searched), "
            f"MLE {idl['mle_seconds']:.1f} s; d = {idl['dimension']:.3f} [{idl['ci'][0]:.3f}, {idl['ci'][1]:.3f}] "
            f"({_cell(idl['interval'])}; true d = {idl['true_d']}); peak memory {idl['peak_memory_gib']:.1f} GiB |"
        )
    sw = _get(stages, "sweep", "result")
    if sw and sw.get("runs"):
        words = f"{sw['runs']} runs, {sw['train_tokens_per_s']:,.0f} training tokens/s over {sw['train_seconds']:.0f} s"
        for corpus, e in (sw.get("id") or {}).items():
            words += f"; {corpus}: d = {e['d']:.2f} [{e['d_ci'][0]:.2f}, {e['d_ci'][1]:.2f}], α_D = {e['alpha_D']:.3f}"
            rep = _get(sw, "report", corpus) or {}
            test = _get(rep, "exponent", "prediction", "loglog")
            if rep.get("withheld"):
                words += f"; {rep['withheld']}"
            elif test:
                words += f"; fit on {len(rep['fitted_sizes'])} sizes: {test['words']}"
        rows.append(f"| the pretraining sweep through the CLI, preset `{sw['preset']['name']}` | {_cell(words)} |")
    elif sw is not None or "sweep" in stages:
        rows.append(f"| the pretraining sweep | {_cell(_get(stages, 'sweep', 'error') or 'no runs')} |")
    out += rows
    return "\n".join(out)


# ------------------------------------------------------------------------------------ where to read more
def read_more(prefix: str) -> str:
    """The pages of the site that exist, as the nav of mkdocs.yml orders them."""
    import yaml

    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]

    def walk(items, depth) -> list[str]:
        out = []
        for item in items:
            ((title, value),) = item.items()
            if isinstance(value, list):
                sub = walk(value, depth + 1)
                if sub:
                    out += [f"{'  ' * depth}- {title}", *sub]
            elif (DOCS / value).is_file():
                out.append(f"{'  ' * depth}- [{title}]({prefix}{value})")
        return out

    return "\n".join(walk(nav, 0))


# ------------------------------------------------------------------------------------ install
def requirements() -> str:
    """The runtime ranges and the extras of pyproject.toml, and the size of the lock."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = [x for x in (ROOT / "constraints.txt").read_text().splitlines() if x.strip() and not x.startswith("#")]
    lines = [
        "Runtime ranges: " + ", ".join(f"`{d}`" for d in project["dependencies"]) + ".",
        "",
        "| extra | what it adds |",
        "|---|---|",
    ]
    for extra, reqs in project.get("optional-dependencies", {}).items():
        lines.append(f"| `{extra}` | {', '.join(f'`{r}`' for r in reqs)} |")
    lines += ["", f"The lock, `constraints.txt`, pins {len(pins)} packages exactly."]
    return "\n".join(lines)


GENERATORS: dict[str, Callable[[], str]] = {
    "install.requirements": requirements,
    "cli.reference": cli_reference,
    "cli.count": cli_count,
    "api.index": api_index,
    **{
        f"api.{part}": (lambda part=part: api_page(part))
        for part in ("theory", "proofs_check", "empirics", "cli", "util")
    },
    "readme.results": lambda: headline("docs/"),
    "readme.timings": timings,
    "readme.more": lambda: read_more("docs/"),
    "results.headline": lambda: headline("../"),
    "home.results": lambda: headline(""),
    "results.pretrain": lambda: report_body("pretrain", "../figures/pretrain"),
    "results.model": lambda: report_body("model", "../figures/model"),
    "results.synth": lambda: report_body("synth", "../figures/synth"),
    "results.synth-decide": lambda: report_body("synth-decide", "../figures/synth-decide"),
    "results.synth-decide2": lambda: report_body("synth-decide2", "../figures/synth-decide2"),
    "results.synth-decide.d4-small": d4_small_n,
    "results.ablate": ablate_tables,
    "results.rerun": rerun_table,
    "results.ablate-weights": ablate_weights,
    "results.timings": timings,
    **{
        f"results.made.{n}": (lambda n=n: made(n))
        for n in ("pretrain", "model", "synth", "synth-decide", "synth-decide2")
    },
    "speed": speed,
    "speed.targets": speed_targets,
    "dev.ci-timing": ci_timing,
    "dev.gpu": gpu_status,
    "speed.gpu": speed_gpu,
}

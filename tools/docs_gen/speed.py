"""The speed page (docs/speed.md), from benchmarks/results/*.json: a figure is quoted only when its quiet
verdict is recorded and quiet. Every block here is filled when the site is built."""

from __future__ import annotations

import json
from collections.abc import Callable

from docs_gen._common import BENCH, cell, flatten, fmt, get, gpu_checks_words, gpu_doc, quiet_ok, read

PAGES = ("docs/speed.md",)


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
        doc = read(path)
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
                + (f" Machine: {cell(json.dumps(machine, sort_keys=True))}." if machine else "")
            )
            rows = ["| measurement | value |", "|---|---|"]
            rows += [f"| {cell(k)} | {cell(fmt(v))} |" for k, v in flatten(sec)]
            quoted += [*head, "", *rows, ""]
    parts = quoted or ["No benchmark result has been measured alone yet: nothing is quoted.", ""]
    if left:
        parts.append("Not quoted: " + ", ".join(left) + ".")
    return "\n".join(parts)


def _quiet_part(name: str, section: str) -> dict | None:
    """benchmarks/results/<name>.json's `section` when it was measured alone (its quiet verdict), else None."""
    doc = read(BENCH / f"{name}.json")
    sec = get(doc, section)
    q = get(sec, "quiet") or (get(doc, "quiet") if section in (get(doc, "quiet", "entries") or []) else None)
    return sec if isinstance(sec, dict) and quiet_ok(q) else None


def _goal_row(what, ours, anchor, ratio, goal, met) -> str:
    cell = lambda v, unit="s": "–" if v is None else (f"{v:.3g} {unit}" if isinstance(v, float) else str(v))  # noqa: E731
    return (
        f"| {what} | {cell(ours)} | {anchor} | {'–' if ratio is None else f'{ratio:.2f}×'} | {goal} | "
        + ("not measured alone" if ratio is None and ours is None else ("yes" if met else "**no**"))
        + " |"
    )


def _knn_goal_rows(knn: dict) -> list[str]:
    """The ID engine's goals (bench_knn): in-process MLE against its anchors and its limit, MiniLM, threads."""
    m, mm = knn.get("mle_32768", {}), knn.get("minilm_8192", {})
    return [
        _speedup_goal_row(m, "exact MLE, K = 20, N = 32768, D = 768, in-process", "skdim", "scikit-dimension", 5),
        _speedup_goal_row(m, "the same, against faiss-cpu exact search + the same MLE", "faiss", "faiss-cpu", 2),
        _half_gram_goal_row(m),
        _speedup_goal_row(
            mm,
            f"kNN alone, all-MiniLM-L6-v2 token embeddings, N = 8192 ({fmt(get(mm, 'tmcheck', 'n_recomputed'))} "
            "rows recomputed)",
            "faiss",
            "faiss-cpu",
            1,
        ),
        _first_call_goal_row(get(mm, "mle")),
        _speedup_goal_row(
            knn.get("one_thread_32768", {}), "kNN on one thread, N = 32768, D = 768", "faiss", "faiss-cpu", 1.5
        ),
        _speedup_goal_row(
            knn.get("whole_process_32768", {}),
            "whole process `tmcheck id estimate X.npy --json` (its defaults)",
            "skdim",
            "scikit-dimension's process",
            4,
        ),
        _memory_goal_row(knn.get("estimate_memory_float32")),
    ]


def _first_call_goal_row(mle: dict | None) -> str:
    """The MLE on the MiniLM embeddings as a user calls it: the first fit of a fresh MLE(k=20) in a process where
    tmcheck and torch are imported, against scikit-dimension's first call (issue 40: at least 2x)."""
    r = get(mle, "first_call_speedup_vs_skdim")
    first = lambda who: (get(mle, who, "seconds") or [None])[0]  # noqa: E731
    return _goal_row(
        "MLE on the same embeddings, first call of a fresh estimator (distinct tokens; scikit-dimension's estimate "
        f"{fmt(get(mle, 'skdim', 'dimension'))}, tmcheck's {fmt(get(mle, 'tmcheck', 'dimension'))})",
        first("tmcheck"),
        f"scikit-dimension's first call {fmt(first('skdim'))} s",
        r,
        "≥ 2×",
        r is not None and r >= 2,
    )


def _memory_goal_row(mem: dict | None) -> str:
    """Peak memory of `tmcheck id estimate` on float32 points, in units of the input (issue 40: at most 2.5x, the
    memory the data costs: the peak above the same command's on 500 points, which is the interpreter, torch and
    tmcheck; the whole peak is given beside it)."""
    whole, above = get(mem, "tmcheck_peak_over_input"), get(mem, "tmcheck_peak_above_baseline_over_input")
    peak = get(mem, "tmcheck", "peak_rss_mb")
    return (
        f"| peak memory of `tmcheck id estimate` on {fmt(get(mem, 'input_mb'))} MiB of float32 points, above the "
        f"same command's on 500 points ({fmt(get(mem, 'tmcheck_baseline_500_points', 'peak_rss_mb'))} MB: the "
        f"interpreter, torch and tmcheck) | {'–' if peak is None else f'{peak:.0f} MB whole'} | scikit-dimension "
        f"{fmt(get(mem, 'skdim', 'peak_rss_mb'))} MB whole | "
        f"{'–' if above is None else f'{above:.2f}× the input ({whole:.2f}× whole)'} | ≤ 2.5× the input | "
        + ("not measured alone" if above is None else ("yes" if above <= 2.5 else "**no**"))
        + " |"
    )


def _speedup_goal_row(part: dict | None, what: str, anchor: str, anchor_words: str, least: float) -> str:
    """A goal row "tmcheck's best time at least `least` times faster than the anchor's" (part's `tmcheck`,
    `<anchor>` and `speedup_vs_<anchor>` entries, bench_knn's layout)."""
    r = get(part, f"speedup_vs_{anchor}", "best")
    return _goal_row(
        what,
        get(part, "tmcheck", "best"),
        f"{anchor_words} {fmt(get(part, anchor, 'best'))} s",
        r,
        f"≥ {least:g}×",
        r is not None and r >= least,
    )


def _half_gram_goal_row(m: dict) -> str:
    """The MLE fit's time against its limit: the half-Gram GEMM of the whole-space search at the measured rate."""
    lim, best = get(m, "limit", "half_gram_seconds"), get(m, "tmcheck", "best")
    r = best / lim if lim and best else None
    kind = get(m, "limit", "type") or "bfloat16"  # entries before the type was recorded measured bf16
    return _goal_row(
        f"that MLE fit (engine and estimator) against the {kind} half-Gram time (the whole-space search's "
        "GEMM) at the measured GEMM rate",
        best,
        f"half Gram {fmt(lim)} s",
        r,
        "within 2.5×",
        r is not None and r <= 2.5,
    )


def _training_goal_rows() -> list[str]:
    """The trainer's goals (bench_train) against transformers' GPT2LMHeadModel."""
    rows: list[str] = []
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
    # issue 40: ahead by 1.3x in one process at cpu-small, on one thread and on two
    one_process = [
        ("cases", f"preset cpu-small, {t} threads", f"the same, `cpu-small`, {t} thread{'s' * (t > 1)}", "≥ 1.3×", 1.3)
        for t in (1, 2)
    ]
    for section, key, words, goal, least in training:
        part = _quiet_part("train", section) or {}
        for preset in ("cpu-demo", "cpu-small"):
            c = part.get(key.format(preset), {})
            r = c.get("speedup")
            ours = get(c, "tokens_per_s", "ours")
            rows.append(
                _goal_row(
                    words.format(preset),
                    None if ours is None else f"{ours:,.0f} tok/s",
                    f"GPT2LMHeadModel {get(c, 'tokens_per_s', 'GPT2LMHeadModel') or 0:,.0f} tok/s",
                    r,
                    goal,
                    r is not None and r >= least,
                )
            )
    part = _quiet_part("train", "cases") or {}
    for _, key, words, goal, least in one_process:
        c = part.get(key, {})
        r, ours = c.get("speedup"), get(c, "tokens_per_s", "ours")
        anchor = f"GPT2LMHeadModel {get(c, 'tokens_per_s', 'GPT2LMHeadModel') or 0:,.0f} tok/s"
        rows.append(
            _goal_row(
                words, None if ours is None else f"{ours:,.0f} tok/s", anchor, r, goal, r is not None and r >= least
            )
        )
    return rows


def _peer_goal_rows() -> list[str]:
    """Issue 42: each estimator beside scikit-dimension's, faster (bench_id_peers, one call each in one run)."""
    doc = read(BENCH / "id_peers.json")
    if not isinstance(doc, dict):
        return []
    rows = []
    for name, c in doc.items():
        if not (isinstance(c, dict) and "speedup" in c and quiet_ok(c.get("quiet"))):
            continue
        data = c.get("data", {})
        what = f"{name}, {data.get('name', '?')} N = {data.get('n', '?')}, D = {data.get('D', '?')}, in-process"
        anchor = f"scikit-dimension {fmt(get(c, 'skdim', 'seconds'))} s"
        r = c["speedup"]
        rows.append(_goal_row(what, get(c, "tmcheck", "seconds"), anchor, r, "> 1× (faster)", r > 1))
    return rows


def _command_goal_rows() -> list[str]:
    """The whole-process goals of two commands (bench_lemma1, bench_cli)."""
    rows: list[str] = []
    lem = _quiet_part("lemma1", "cli_lemma1") or {}
    t = lem.get("best_s")
    rows.append(
        f"| `{lem.get('command', 'tmcheck lemma 1')}`, whole process | {'–' if t is None else f'{t:.3g} s'} | – | – "
        f"| < 10 s | {'not measured alone' if t is None else ('yes' if t < 10 else '**no**')} |"
    )
    h = get(_quiet_part("cli", "help"), "best")
    rows.append(
        f"| `tmcheck --help`, whole process | {'–' if h is None else f'{h:.3g} s'} | – | – | < 1 s | "
        f"{'not measured alone' if h is None else ('yes' if h < 1 else '**no**')} |"
    )
    return rows


def _machine_words(knn: dict) -> str:
    mach = knn.get("machine") or {}
    if not mach:
        return ""
    bf16 = mach.get("cpu_bf16_dot")
    where = (
        f"The kNN rows were measured on {mach.get('cpu_model', 'an unrecorded CPU')}, {mach.get('cores', '?')} cores, "
        + (
            "with native bf16 dot products (the engine's candidate search in bfloat16)."
            if bf16
            else "without native bf16 dot products (the engine's candidate search in float32)."
        )
    )
    return where


def speed_targets() -> str:
    """The speed goals of the project with the figures measured alone (quiet) against them, one row each;
    a goal without a quiet figure says so."""
    knn = _quiet_part("id", "knn_engine") or {}
    rows = ["| workload | tmcheck | anchor | ratio | goal | met |", "|---|---|---|---|---|---|"]
    rows += _knn_goal_rows(knn) + _peer_goal_rows() + _training_goal_rows() + _command_goal_rows()
    where = _machine_words(knn)
    return (where + "\n\n" if where else "") + "\n".join(rows)


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
    return f"| {name} | {'pass' if c.get('passed') else '**FAIL**'} | {cell(got)} | {cell(c.get('tolerance', ''))} |"


def speed_gpu() -> str:
    """The GPU check (benchmarks/gpu_check.sh) from benchmarks/results/gpu.json: the parity of every CUDA
    path with the CPU, the 125M configuration's training rate, the kNN engine at N = 10^6, the sweep."""
    doc = gpu_doc()
    if doc is None:
        return "No GPU figure exists until `benchmarks/gpu_check.sh` has run on a GPU."
    env, stages = doc.get("environment", {}), doc.get("stages", {})
    out = [
        f"Measured {doc.get('started_utc')} by `benchmarks/gpu_check.sh` on {env.get('device_name')} "
        f"({env.get('multiprocessors')} multiprocessors, {env.get('memory_gib', 0):.0f} GiB; driver "
        f"{env.get('driver')}, torch {env.get('torch')}, CUDA {env.get('cuda')}, Python {env.get('python')}), "
        f"a machine lent to this one run: the `quiet` tool watches this project's CPU host, not that one. "
        f"The whole check took {doc.get('elapsed_s', 0):.0f} s; {gpu_checks_words(doc)}.",
        "",
    ]
    checks = get(stages, "parity", "result", "checks") or {}
    if checks:
        out += ["| CUDA against the CPU | verdict | measured | tolerance |", "|---|---|---|---|"]
        out += [_gpu_parity_row(n, c) for n, c in checks.items()]
        out.append("")
    rows = ["| stage | figure |", "|---|---|"]
    tp = get(stages, "throughput", "result")
    if tp:
        c = tp["config"]
        mfu = (
            "no datasheet peak"
            if tp.get("mfu") is None
            else f"{tp['mfu']:.1%} of {tp['peak_bf16_dense_flops'] / 1e12:.0f} TFLOP/s"
        )
        rows.append(
            f"| training, {c['n_layer']} layers × {c['n_embd']} (context {c['block_size']}, batch {tp['batch']}), "
            f"{cell(tp['step'])} | {tp['tokens_per_s']:,.0f} tokens/s; MFU {mfu} (the datasheet's dense bf16, "
            f"{tp['peak_entry']}); {tp['mfu_vs_measured_gemm']:.1%} of the bf16 GEMM measured in the same run "
            f"({tp['gemm_bf16_flops_measured'] / 1e12:.0f} TFLOP/s at {tp['gemm_size']}³); peak memory "
            f"{tp['peak_memory_gib']:.1f} GiB |"
        )
    idl = get(stages, "id_large", "result")
    if idl:
        rows.append(
            f"| exact kNN (K = {idl['k']}) and MLE, {idl['manifold']}, N = {idl['N']:,} | kNN "
            f"{idl['knn_seconds']:.1f} s on {idl['knn_device']} ({idl['rows_recomputed']:,} rows re-searched), "
            f"MLE {idl['mle_seconds']:.1f} s; d = {idl['dimension']:.3f} [{idl['ci'][0]:.3f}, {idl['ci'][1]:.3f}] "
            f"({cell(idl['interval'])}; true d = {idl['true_d']}); peak memory {idl['peak_memory_gib']:.1f} GiB |"
        )
    sw = get(stages, "sweep", "result")
    if sw and sw.get("runs"):
        words = f"{sw['runs']} runs, {sw['train_tokens_per_s']:,.0f} training tokens/s over {sw['train_seconds']:.0f} s"
        for corpus, e in (sw.get("id") or {}).items():
            words += f"; {corpus}: d = {e['d']:.2f} [{e['d_ci'][0]:.2f}, {e['d_ci'][1]:.2f}], α_D = {e['alpha_D']:.3f}"
            rep = get(sw, "report", corpus) or {}
            test = get(rep, "exponent", "prediction", "loglog")
            if rep.get("withheld"):
                words += f"; {rep['withheld']}"
            elif test:
                words += f"; fit on {len(rep['fitted_sizes'])} sizes: {test['words']}"
        rows.append(f"| the pretraining sweep through the CLI, preset `{sw['preset']['name']}` | {cell(words)} |")
    elif sw is not None or "sweep" in stages:
        rows.append(f"| the pretraining sweep | {cell(get(stages, 'sweep', 'error') or 'no runs')} |")
    out += rows
    return "\n".join(out)


# benchmark numbers (benchmarks/results/*.json): filled when the site is built, never committed
AT_BUILD = {"speed", "speed.gpu", "speed.targets"}

GENERATORS: dict[str, Callable[[], str]] = {
    "speed": speed,
    "speed.targets": speed_targets,
    "speed.gpu": speed_gpu,
}

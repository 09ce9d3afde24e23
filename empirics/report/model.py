"""The report of a model-scaling sweep (kind "model"): the paper's Figure 3 and its alpha_N test.

alpha-hat_N: test loss against non-embedding parameters N of the runs at the full n
(tmcheck.empirics.fit.exponent_report: the paper's log-log line and the offset law, profile
intervals with their coverage measured at this design), tested against
- alpha_N = 2 beta / d-hat, d-hat the MLE (K = 20, bootstrap interval) of the largest model's
  test-set embeddings, cached in id.json with its protocol;
- the ID-free conversion alpha_N = alpha-hat_D / (1 - alpha-hat_D) (Section 3, Table 1), alpha-hat_D
  from the sweep's data arm on the same corpus; it enters the test as the d it implies,
  d = 2 beta (1 - alpha_D) / alpha_D, with a normal error from alpha-hat_D's interval.
A run that hit the step cap has not converged: when any run of an exponent did, its verdicts are
withheld (the fit and the intervals are still shown). d-hat carries a certificate
(tmcheck.empirics.lm.certify: the same model, layer and protocol probed with inputs of known dimension);
without one, or with a failed one, 2 beta / d-hat feeds no test and its verdict reads "withheld: d̂ not
validated at layer L" (the ID-free test does not use d-hat and stays). Writes report.md, report.json and
fig_model_scaling.png.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tmcheck.empirics.fit.plot import legend_outside
from tmcheck.empirics.lm.certify import METHOD as CERTIFICATE_METHOD
from tmcheck.empirics.lm.certify import ProbeOptions, validation
from tmcheck.empirics.report.common import Outputs, cached_id, format_interval, pyplot, readable_log_ticks
from tmcheck.empirics.report.pretrain import certificate, lazy_model, with_certificate
from tmcheck.empirics.sweep import SweepDir, layout

FIGURE = "fig_model_scaling.png"
ID_K, ID_BOOTSTRAP = 20, 200
ID_BATCH = 4096  # unused by the full protocol; the certificate's probes hold at most this many points


def _exponent(sizes, losses, prediction=None, predictions=None, seed=0) -> dict:
    from tmcheck.empirics.fit import exponent_report

    forms = ("loglog", "offset") if len(set(sizes)) >= 4 else ("loglog",)
    return exponent_report(
        np.asarray(sizes, float),
        np.asarray(losses, float),
        forms=forms,
        prediction=prediction,
        predictions=predictions,
        methods=("profile",),
        seed=seed,
    )


def id_embed(preset):
    """The embedding options of d-hat at a preset's sizes (the paper's protocol otherwise)."""
    from tmcheck.empirics.lm.embed import EmbedOptions

    return EmbedOptions(context=preset.id_context, tokens_per_doc=preset.id_tokens_per_doc)


def final_model_id(sweep: SweepDir, preset, run: str, device: str = "auto", probe: ProbeOptions | None = None) -> dict:
    """d-hat of one run's test-set embeddings (the paper's protocol at the preset's sizes), via id.json,
    with its certificate (report.pretrain.certificate, probed with `probe`) where the run's weights are
    there to probe."""
    from tmcheck.empirics.lm.checkpoint import resolve
    from tmcheck.empirics.lm.embed import test_documents
    from tmcheck.empirics.sweep.pretrain import corpus_tag

    eo = id_embed(preset)
    protocol = {
        "run": run,
        "docs": preset.id_docs,
        "embed": eo.as_dict(),
        "estimator": "mle",
        "k": ID_K,
        "protocol": "full",
        "bootstrap": ID_BOOTSTRAP,
    }

    model = lazy_model(sweep.run_dir(run), device)
    probe = probe or ProbeOptions()

    def documents() -> list:
        return test_documents(sweep.data_dir(corpus_tag(sweep.read_config()["corpus"])), preset.id_docs)

    def compute() -> dict:
        from tmcheck.empirics.id import estimate_id
        from tmcheck.empirics.lm.embed import embed_documents

        X = embed_documents(model(), documents(), eo)
        res = estimate_id(X, estimator="mle", k=ID_K, protocol="full", bootstrap=ID_BOOTSTRAP, device=device, seed=0)
        return {
            "d": float(res.dimension),
            "d_ci": [float(v) for v in res.ci],
            "points": int(X.shape[0]),
            "width": int(X.shape[1]),
            "interval": res.protocol.get("interval", ""),
        }

    key = f"model:{run}"
    estimate = cached_id(sweep.id_path, key, protocol, compute)
    try:
        resolve(sweep.run_dir(run))
    except FileNotFoundError:  # no weights to probe (a committed sweep): d-hat stays uncertified, its test withheld
        return estimate
    io = {"estimator": "mle", "k": ID_K, "protocol": "full", "batch_size": ID_BATCH, "bootstrap": ID_BOOTSTRAP}
    return with_certificate(
        sweep.id_path,
        key,
        protocol,
        estimate,
        lambda: certificate(model(), documents(), eo.as_dict(), io, estimate["points"], probe, device),
        probe,
    )


def _id_free(rep_D: dict, beta: float) -> dict | None:
    """The prediction test's input for alpha_N = alpha_D/(1 - alpha_D): the d that alpha-hat_D implies."""
    from tmcheck.theory.bounds import alpha_N_from_alpha_D, id_from_alpha_D

    f = rep_D["fits"]["loglog"]
    a, lo, hi = f["alpha"], f["interval"]["lo"], f["interval"]["hi"]
    if not (0 < lo and hi < 1):  # alpha_N = alpha_D/(1 - alpha_D) needs 0 < alpha_D < 1 over the interval
        return None
    return {
        "alpha_D": a,
        "alpha_D_ci": [lo, hi],
        "alpha_N": alpha_N_from_alpha_D(a),
        "alpha_N_ci": [alpha_N_from_alpha_D(lo), alpha_N_from_alpha_D(hi)],
        "test": {
            "kind": "N",
            "beta": beta,
            "d_hat": id_from_alpha_D(a, beta),
            "d_ci": [id_from_alpha_D(hi, beta), id_from_alpha_D(lo, beta)],
        },
    }


def build(sweep: SweepDir, bootstrap: int = 1000) -> dict:
    """Fit alpha-hat_N (and alpha-hat_D of the data arm), test them, draw Figure 3, write the report.
    `bootstrap` is unused: the profile intervals need none (their coverage is simulated)."""
    preset = sweep.preset()
    rows = sweep.rows()
    if not rows:
        raise ValueError(f"{sweep.path} has no finished runs yet (results.jsonl is empty); run the sweep first")
    model_rows = sorted((r for r in rows if r["full_split"]), key=lambda r: (r["non_embedding_params"], r["seed"]))
    data_rows = sorted(
        (r for r in rows if (r["n_layer"], r["n_embd"]) == (preset.data_layers, preset.data_width)),
        key=lambda r: (r["n"], r["seed"]),
    )
    if len({r["non_embedding_params"] for r in model_rows}) < 3:
        raise ValueError(f"{sweep.path} has finished runs at fewer than 3 model sizes; run the sweep to the end")
    top = max(model_rows, key=lambda r: (r["non_embedding_params"], -r["seed"]))
    d = final_model_id(sweep, preset, top["run"])
    check = validation(d, id_embed(preset).as_dict(), top["n_layer"])
    beta = preset.beta
    rep_D = (
        _exponent([r["n"] for r in data_rows], [r["test_loss"] for r in data_rows])
        if len({r["n"] for r in data_rows}) >= 3
        else None
    )
    free = _id_free(rep_D, beta) if rep_D else None
    rep_N = _exponent(
        [r["non_embedding_params"] for r in model_rows],
        [r["test_loss"] for r in model_rows],
        prediction={"kind": "N", "beta": beta, "d_hat": d["d"], "d_ci": d["d_ci"]} if check["validated"] else None,
        predictions={"ID-free from alpha-hat_D": free["test"]} if free else None,
    )
    capped_N = [r["run"] for r in model_rows if r["capped"]]
    capped_D = [r["run"] for r in data_rows if r["capped"]]
    report = {
        "kind": "model",
        "sweep": str(sweep.path),
        "preset": preset.name,
        "corpus": sweep.read_config()["corpus"],
        "beta": beta,
        "runs": len(rows),
        "train_seconds": float(sum(r["seconds"] for r in rows)),
        "model_runs": [_run_entry(r) for r in model_rows],
        "data_runs": [_run_entry(r) for r in data_rows],
        "decades_N": float(np.log10(model_rows[-1]["non_embedding_params"] / model_rows[0]["non_embedding_params"])),
        "id": {**d, "model": top["run"], "validation": check},
        "alpha_N": rep_N,
        "alpha_D": rep_D,
        "id_free": free,
        "capped": {"model": capped_N, "data": capped_D},
        "verdicts": _verdicts(rep_N, rep_D, free, capped_N, capped_D, check["reason"]),
        "files": [layout.REPORT_MD, layout.REPORT_JSON, FIGURE],
    }
    out = Outputs(sweep.path)
    out.figure(FIGURE, draw(report))
    out.json(layout.REPORT_JSON, report)
    out.text(layout.REPORT_MD, markdown(report, preset))
    out.write()
    return report


def _run_entry(r: dict) -> dict:
    return {
        k: r[k]
        for k in (
            "run",
            "n_layer",
            "n_embd",
            "non_embedding_params",
            "n",
            "seed",
            "test_loss",
            "steps",
            "best_step",
            "stopped_early",
            "capped",
            "seconds",
        )
    }


def _verdicts(
    rep_N: dict, rep_D: dict | None, free: dict | None, capped_N: list, capped_D: list, id_withheld: str | None = None
) -> dict:
    """The verdict of each test on the paper's log-log fit, or why it is withheld (`id_withheld`: why
    d-hat may not feed 2 beta / d-hat, from certify.validation; that test was then not run)."""

    def words(test, capped, what):
        if capped:
            return f"withheld: {len(capped)} {what} run(s) hit the step cap (not converged)"
        return test["verdict"]

    if id_withheld:
        cap = f"; and {len(capped_N)} model-arm run(s) hit the step cap (not converged)" if capped_N else ""
        out = {"2beta/d-hat": id_withheld + cap}
    else:
        out = {"2beta/d-hat": words(rep_N["prediction"]["loglog"], capped_N, "model-arm")}
    if free:
        out["ID-free from alpha-hat_D"] = words(
            rep_N["predictions"]["ID-free from alpha-hat_D"]["loglog"], capped_N + capped_D, "model- or data-arm"
        )
    else:
        out["ID-free from alpha-hat_D"] = (
            "undecided: the interval of alpha-hat_D leaves (0, 1), where alpha_D/(1 - alpha_D) is defined"
            if rep_D
            else "no data arm (fewer than 3 sizes)"
        )
    return out


def summary(report: dict) -> str:
    files = ", ".join(str(Path(report["sweep"]) / f) for f in report["files"])
    return f"{table(report)}\n\nwritten: {files}"


def table(report: dict) -> str:
    f = report["alpha_N"]["fits"]["loglog"]
    t = (report["alpha_N"]["prediction"] or {}).get("loglog")
    d = report["id"]
    lines = [
        "| quantity | value | 95% interval | verdict |",
        "|---|---|---|---|",
        f"| α̂_N (log-log, {len(report['model_runs'])} runs, {report['decades_N']:.2f} decades of N) "
        f"| {f['alpha']:.3f} | {f['interval']['text']} | |",
    ]
    if "offset" in report["alpha_N"]["fits"]:
        o = report["alpha_N"]["fits"]["offset"]
        lines.append(
            f"| α̂_N (offset law E + B N^-α, status {o['status']}) | {o['alpha']:.3f} | {o['interval']['text']} | |"
        )
    lines.append(
        f"| d̂ (MLE, K={ID_K}, {d['points']} tokens of {d['model']}) | {d['d']:.2f} | "
        f"{format_interval(d['d_ci'], 2)} ({d['interval']}) | |"
    )
    if t is None:  # d-hat not validated: no test was run
        a_N = 2 * report["beta"] / d["d"]
        ci = [2 * report["beta"] / d["d_ci"][1], 2 * report["beta"] / d["d_ci"][0]]
        lines.append(
            f"| α_N = 2β/d̂ (β = {report['beta']:g}) | {a_N:.3f} | {format_interval(ci)} "
            f"| {report['verdicts']['2beta/d-hat']} |"
        )
    else:
        lines.append(
            f"| α_N = 2β/d̂ (β = {report['beta']:g}) | {t['alpha_pred']:.3f} | {format_interval(t['alpha_pred_ci'])} "
            f"| {report['verdicts']['2beta/d-hat']} (α̂_N − α_N in {format_interval(t['difference_ci'])}) |"
        )
    free = report["id_free"]
    if free:
        a = report["alpha_D"]["fits"]["loglog"]
        ft = report["alpha_N"]["predictions"]["ID-free from alpha-hat_D"]["loglog"]
        lines.append(
            f"| α̂_D (data arm, {len(report['data_runs'])} runs) | {a['alpha']:.3f} | {a['interval']['text']} | |"
        )
        lines.append(
            f"| α_N = α̂_D/(1 − α̂_D) (ID-free) | {free['alpha_N']:.3f} | {format_interval(free['alpha_N_ci'])} "
            f"| {report['verdicts']['ID-free from alpha-hat_D']} (α̂_N − α_N in "
            f"{format_interval(ft['difference_ci'])}) |"
        )
    elif report["alpha_D"]:
        a = report["alpha_D"]["fits"]["loglog"]
        lines.append(
            f"| α̂_D (data arm) | {a['alpha']:.3f} | {a['interval']['text']} | "
            f"{report['verdicts']['ID-free from alpha-hat_D']} |"
        )
    return "\n".join(lines)


def markdown(report: dict, preset) -> str:
    runs = ["| run | depth | width | N | n | steps | stopped | test loss |", "|---|---|---|---|---|---|---|---|"]
    for r in report["model_runs"] + [r for r in report["data_runs"] if r not in report["model_runs"]]:
        stop = "step cap" if r["capped"] else f"patience (best step {r['best_step']})"
        runs.append(
            f"| {r['run']} | {r['n_layer']} | {r['n_embd']} | {r['non_embedding_params']:,} | {r['n']:,} "
            f"| {r['steps']} | {stop} | {r['test_loss']:.4f} |"
        )
    return (
        f"# Model-scaling report: preset `{preset.name}`, corpus `{report['corpus']}`\n\n"
        f"GPTs of depth {', '.join(map(str, preset.depths))} and width {', '.join(map(str, preset.widths))} "
        f"(head size {preset.head_dim}, context {preset.model.block_size}, vocabulary {preset.vocab_size}) "
        f"trained on the full training split (n = {report['model_runs'][0]['n']:,} tokens) for at most "
        f"{preset.train.max_steps} steps of {preset.batch_size} sequences, early stopping on validation loss "
        f"(patience {preset.train.patience} evaluations of every {preset.train.eval_every} steps); test loss at the "
        f"best-validation checkpoint. {report['runs']} runs, {report['train_seconds'] / 60:.1f} minutes of "
        f"training. N counts parameters without the token and position embeddings.\n\n"
        f"{table(report)}\n\n"
        f"Intervals: profile likelihood of the log-log fit, coverage measured at this design "
        f"(fit statistics: tmcheck.empirics.fit). The ID-free prediction enters the test as the d that α̂_D "
        f"implies, with a normal error from α̂_D's interval. A verdict is withheld when a run of the fit "
        f"hit the step cap, and 2β/d̂ feeds a test only when d̂'s protocol is certified at its layer "
        f"({CERTIFICATE_METHOD}). Here: {report['id']['validation']['reason'] or 'd̂ is certified'}.\n\n"
        f"{report['alpha_N']['words']}\n\n"
        f"![test loss against N]({FIGURE})\n\n" + "\n".join(runs) + "\n"
    )


def _panel(ax, x, y, capped, fit, color, xlabel, label):
    """Points (hollow: capped), the log-log fit, and the band of its slope interval around the centre."""
    ax.scatter(x[~capped], y[~capped], s=22, color=color, zorder=3, label="runs (early stop)")
    if capped.any():
        ax.scatter(x[capped], y[capped], s=22, facecolors="none", edgecolors=color, zorder=3, label="runs (step cap)")
    grid = np.geomspace(x.min(), x.max(), 60)
    x0 = float(np.exp(np.log(x).mean()))  # the band pivots at the fit's centre
    a, iv = fit["alpha"], fit["interval"]
    y0 = fit["params"]["B"] * x0**-a
    ax.plot(grid, y0 * (grid / x0) ** -a, color=color, lw=2, label=f"fit: {label} = {a:.3f}")
    lo, hi = y0 * (grid / x0) ** -iv["lo"], y0 * (grid / x0) ** -iv["hi"]
    ax.fill_between(
        grid,
        np.minimum(lo, hi),
        np.maximum(lo, hi),
        color=color,
        alpha=0.18,
        label=f"95% interval [{iv['lo']:.3f}, {iv['hi']:.3f}]",
    )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(x.min() / 1.3, x.max() * 1.3)
    readable_log_ticks(ax, "x", x.min() / 1.3, x.max() * 1.3)
    ax.set_ylim(y.min() / 1.1, y.max() * 1.1)  # the data decide the range; a predicted slope may leave it
    readable_log_ticks(ax, "y", y.min() / 1.1, y.max() * 1.1)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("test loss (nats per token)")
    ax.grid(True, which="both", alpha=0.3)
    return grid, x0, y0


def draw(report: dict):
    """Figure 3 analogue (loss vs N, fitted law with band, predicted slopes) and, when the sweep has
    one, the data arm beside it. Returns the figure."""
    plt = pyplot()
    arm = bool(report["alpha_D"])
    fig, axes = plt.subplots(1, 2 if arm else 1, figsize=(11 if arm else 5.8, 4.6), squeeze=False)
    axes = axes[0]
    m = report["model_runs"]
    x = np.array([r["non_embedding_params"] for r in m], float)
    y = np.array([r["test_loss"] for r in m], float)
    grid, x0, y0 = _panel(
        axes[0],
        x,
        y,
        np.array([r["capped"] for r in m]),
        report["alpha_N"]["fits"]["loglog"],
        "tab:blue",
        "non-embedding parameters N",
        "α̂_N",
    )
    t = (report["alpha_N"]["prediction"] or {}).get("loglog")
    if t is not None:  # drawn only where d-hat was validated and the test run
        axes[0].plot(
            grid,
            y0 * (grid / x0) ** -t["alpha_pred"],
            "k--",
            lw=1.2,
            label=f"2β/d̂ = {t['alpha_pred']:.3f} (d̂ = {report['id']['d']:.1f})",
        )
    if report["id_free"]:
        axes[0].plot(
            grid,
            y0 * (grid / x0) ** -report["id_free"]["alpha_N"],
            ":",
            color="tab:red",
            lw=1.5,
            label=f"α̂_D/(1−α̂_D) = {report['id_free']['alpha_N']:.3f} (ID-free)",
        )
    axes[0].set_title(f"{report['corpus']}: test loss vs model size at n = {m[0]['n']:,} tokens", fontsize=10)
    if arm:
        dr = report["data_runs"]
        axes[1].set_title(f"data arm (depth {dr[0]['n_layer']}, width {dr[0]['n_embd']}): test loss vs n", fontsize=10)
        _panel(
            axes[1],
            np.array([r["n"] for r in dr], float),
            np.array([r["test_loss"] for r in dr], float),
            np.array([r["capped"] for r in dr]),
            report["alpha_D"]["fits"]["loglog"],
            "tab:green",
            "training-set size n (tokens)",
            "α̂_D",
        )
    for ax in axes:
        legend_outside(ax, fontsize=7)
    fig.tight_layout()
    return fig

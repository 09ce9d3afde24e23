"""The report recovers a known exponent from synthetic sweep results and draws its figures."""

import json

import numpy as np
import pytest

from tmcheck.util import atomic
from tmcheck.empirics.presets import get_preset
from tmcheck.empirics.report import build_report
from tmcheck.empirics.report.pretrain import fit_corpus


def fake_sweep(path, alpha=0.2, d=8.0):
    rng = np.random.default_rng(0)
    atomic.write_json(path / "config.json", {"preset": get_preset("tiny").as_dict(), "corpora": ["stories"]})
    rows = []
    for n in np.geomspace(1e4, 1e6, 5).astype(int):
        for seed in (0, 1):
            loss = float(7 * n ** -alpha * np.exp(rng.normal(0, 0.01)))
            run = f"stories-n{n}-s{seed}"
            hist = [{"step": s, "val_loss": loss + 1 / s, "train_loss": loss, "tokens": s, "lr": 1e-3} for s in (10, 20, 30)]
            atomic.write_json(path / "runs" / run / "result.json",
                              {"history": hist, "best_step": 30, "best_val": hist[-1]["val_loss"]})
            rows.append({"corpus": "stories", "n": int(n), "seed": seed, "run": run, "test_loss": loss, "seconds": 1.0})
    atomic.write_jsonl(path / "results.jsonl", rows)
    atomic.write_json(path / "id.json", {"stories": {
        "d": d, "d_ci": [d - 1, d + 1], "alpha_D": 2 / (2 + d), "alpha_D_ci": [2 / (3 + d), 2 / (1 + d)], "beta": 1.0,
        "alpha_D_beta": 2 / (2 + d), "embed_options": {"tokens_per_doc": 32, "window": "random", "context": 64,
                                                        "layer": None, "final_ln": "after"},
        "id_options": {"estimator": "mle", "k": 20, "protocol": "paper", "batch_size": 4096, "beta": 1.0}}})
    return rows


def test_recovers_exponent_and_writes_report(tmp_path):
    rows = fake_sweep(tmp_path)
    fit = fit_corpus(rows, bootstrap=200)
    assert fit["alpha_hat"] == pytest.approx(0.2, abs=0.01)
    lo, hi = fit["ci"]
    assert lo < 0.2 < hi and hi - lo < 0.05
    rep = build_report(tmp_path, bootstrap=200)
    assert rep["kind"] == "pretrain"
    e = rep["table"]["stories"]
    assert e["alpha_D"] == pytest.approx(0.2) and e["predicted_in_ci"]
    assert e["difference"] == pytest.approx(fit["alpha_hat"] - 0.2)
    md = (tmp_path / "report.md").read_text()
    assert "| stories | 8.0 [7.0, 9.0] | 0.200" in md and "fig_scaling.png" in md
    for fig in ("fig_scaling.png", "fig_curves.png"):
        assert (tmp_path / fig).stat().st_size > 10_000
    assert json.loads((tmp_path / "report.json").read_text())["runs"] == 10


def test_report_needs_results(tmp_path):
    atomic.write_json(tmp_path / "config.json", {"kind": "pretrain", "preset": get_preset("tiny").as_dict(),
                                                 "corpora": ["stories"]})
    with pytest.raises(ValueError, match="no finished runs"):
        build_report(tmp_path)
    with pytest.raises(FileNotFoundError):
        build_report(tmp_path / "nope")

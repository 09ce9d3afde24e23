"""ID ablations (Figure 4): position bins, parameter counts, equal-N curves, the estimators on known
dimensions, token positions from embed_documents, and `tmcheck id ablate` end to end on tiny local
models of both kinds made here (a GPT-2 and two BERTs of different widths)."""

import io
import json
import os
import sys
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from tmcheck.empirics.id import validation_points
from tmcheck.empirics.lm.embed import EmbedOptions, embed_documents, load_model
from tmcheck.empirics.lm.gpt import GPT, GPTConfig
from tmcheck.empirics.report import ablation as ab

sys.path.insert(0, str(Path(__file__).parent))
from test_embed_models import TEXTS, make_bert, make_gpt2, save_ours

os.environ["HF_HUB_OFFLINE"] = "1"


@given(st.integers(1, 5000))
def test_position_bins_partition_the_context(context):
    bins = ab.position_bins(context)
    assert bins[0] == (0, 1) and bins[-1][1] == context
    assert all(a[1] == b[0] and a[0] < a[1] for a, b in pairwise(bins))  # contiguous, non-empty
    assert all(hi <= 2 * lo + 1 for lo, hi in bins)  # geometric: each bin at most doubles


def test_non_embedding_params_of_our_gpt():
    from tmcheck.empirics.sweep.model import non_embedding_params

    m = GPT(GPTConfig(vocab_size=100, block_size=16, n_layer=2, n_head=2, n_embd=16))
    assert ab.non_embedding_params(m) == non_embedding_params(2, 16)
    assert ab.non_embedding_params(m) < sum(p.numel() for p in m.parameters())


def test_estimators_on_known_dimensions_and_equal_n():
    opts = ab.AblateOptions(bootstrap=50)
    low = validation_points("sphere", 3000, d=3, D=12, seed=0)
    high = validation_points("sphere", 1200, d=8, D=12, seed=1)
    curve = ab._curve([({"x": 1}, low), ({"x": 2}, high)], opts)
    assert curve["n_points"] == 1200  # both estimated at the smaller cloud's size
    e_low, e_high = (p["estimates"] for p in curve["points"])
    for name in ("mle", "twonn"):
        assert abs(e_low[name]["d"] - 3) < 0.6, e_low
        assert e_high[name]["d"] > e_low[name]["d"] + 2  # a different dimension gives a different answer
        lo, hi = e_low[name]["ci"]
        assert lo < e_low[name]["d"] < hi and "bootstrap" in e_low[name]["interval"]


def test_refused_cloud_is_recorded_not_raised():
    X = np.repeat(np.eye(3), 40, axis=0)  # 3 distinct points
    e = ab.estimate(X, ab.AblateOptions(bootstrap=0), len(X), np.random.default_rng(0))
    assert e["mle"]["d"] is None and "distinct" in e["mle"]["error"]


def test_bad_options():
    with pytest.raises(ValueError, match="unknown estimator"):
        ab.AblateOptions(estimators=("nope",))
    with pytest.raises(ValueError, match="positive"):
        ab.AblateOptions(docs=0)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("ablate-models")
    make_gpt2(root / "gpt2", TEXTS, block_size=64)
    make_bert(root / "bert16", TEXTS, layers=2, width=16)
    make_bert(root / "bert32", TEXTS, layers=2, width=32)
    (root / "text.txt").write_text("\n\n".join(TEXTS * 3))
    return root


def test_positions_from_embed_documents(models):
    lm = load_model(models / "bert16")
    docs = [np.arange(5, 5 + n) % 150 + 5 for n in (3, 20, 70)]
    X, pos = embed_documents(lm, docs, EmbedOptions(context=40, tokens_per_doc=40, window="prefix"), positions=True)
    window = 40 - 2  # [CLS] and [SEP] take two places
    want = np.concatenate([np.arange(min(len(d), window)) for d in docs])
    assert len(X) == len(pos) and np.array_equal(pos, want)
    X2 = embed_documents(lm, docs, EmbedOptions(context=40, tokens_per_doc=40, window="prefix"))
    assert np.array_equal(X, X2)  # the flag changes nothing else


@pytest.mark.parametrize("name", ["bert16", "gpt2"])
def test_all_layers_in_one_pass_equal_each_layer(models, name):
    lm = load_model(models / name)
    docs = [np.arange(5, 5 + n) % 150 + 5 for n in (3, 20, 70)]
    many = embed_documents(lm, docs, EmbedOptions(context=40, tokens_per_doc=8), layers=[0, 1, 2])
    for L in (0, 1, 2):
        one = embed_documents(lm, docs, EmbedOptions(context=40, tokens_per_doc=8, layer=L))
        assert np.array_equal(many[L], one), L
    assert not np.array_equal(many[0], many[2])


def test_cli_ablate_on_local_models(models, tmp_path):
    from tmcheck.cli.main import app

    out = tmp_path / "abl"
    args = [
        "id",
        "ablate",
        str(models / "bert16"),
        str(models / "bert32"),
        "--text",
        str(models / "text.txt"),
        "--context",
        "48",
        "--tokens-per-doc",
        "16",
        "--bootstrap",
        "20",
        "--k",
        "5",
        "--out",
        str(out),
        "--json",
    ]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    r = json.loads(res.stdout)
    assert r == json.loads((out / "ablate.json").read_text()) and (out / "fig_ablate.png").stat().st_size > 10_000
    assert set(r["panels"]) >= {"params", "width", "layer"}
    assert [p["x"] for p in r["panels"]["width"]["points"]] == [16, 32]
    assert [p["x"] for p in r["panels"]["layer"]["points"]] == [0, 1, 2]
    for panel in r["panels"].values():
        for p in panel["points"]:
            assert set(p["estimates"]) == {"mle", "twonn", "gride"}  # the default estimators
    res = CliRunner().invoke(
        app,
        [
            "id",
            "ablate",
            str(models / "gpt2"),
            "--text",
            str(models / "text.txt"),
            "--context",
            "64",
            "--bootstrap",
            "10",
            "--k",
            "5",
            "-e",
            "mle,gride",
            "--out",
            str(tmp_path / "g"),
        ],
    )
    assert res.exit_code == 0, res.output
    r = json.loads((tmp_path / "g" / "ablate.json").read_text())
    assert "params" not in r["panels"] and len(r["panels"]["layer"]["points"]) == 3  # one model: no suite curves


def test_cli_ablate_errors(models, tmp_path):
    from tmcheck.cli.main import app

    res = CliRunner().invoke(app, ["id", "ablate", str(tmp_path / "missing")])
    assert res.exit_code == 2 and "Traceback" not in res.output
    res = CliRunner().invoke(app, ["id", "ablate", str(models / "bert16"), "-e", "nope"])
    assert res.exit_code == 2 and "unknown estimator" in res.output
    save_ours(GPT(GPTConfig(vocab_size=300, block_size=16, n_layer=1, n_head=2, n_embd=8)), tmp_path / "best.pt")
    res = CliRunner().invoke(app, ["id", "ablate", str(tmp_path), "--text", str(models / "text.txt")])
    assert res.exit_code == 2 and "tmcheck export hf" in res.output


# ------------------------------------------------------------------------------------ a panel's trend
def _points(xs, per_estimator: dict, half: float) -> list[dict]:
    """Points at xs with each estimator's d-hat values and a symmetric interval of half-width `half`."""
    return [
        {"x": x, "estimates": {n: {"d": d[i], "ci": [d[i] - half, d[i] + half]} for n, d in per_estimator.items()}}
        for i, x in enumerate(xs)
    ]


def test_trend_known_answer_on_a_log_axis():
    xs = [1e3, 1e4, 1e5, 1e6]
    rising = [2.0 + 1.5 * np.log10(x) for x in xs]  # 1.5 per decade
    tr = ab.trend(_points(xs, {"mle": rising, "twonn": rising[::-1]}, 0.1), ("mle", "twonn"), logx=True)
    assert tr["estimators"]["mle"]["slope"] == pytest.approx(1.5) and tr["estimators"]["mle"]["sign"] == 1
    assert tr["estimators"]["twonn"]["slope"] == pytest.approx(-1.5) and tr["estimators"]["twonn"]["sign"] == -1
    # half-width of the slope's interval: 0.1 / sqrt(sum (t - mean t)^2) = 0.1 / sqrt(5)
    lo, hi = tr["estimators"]["mle"]["ci"]
    assert (hi - lo) / 2 == pytest.approx(0.1 / np.sqrt(5))
    assert not tr["agree"] and tr["sign"] is None
    assert ab.verdict(tr) == "sign depends on the estimator (mle rising, twonn falling)"
    same = ab.trend(_points(xs, {"mle": rising, "twonn": rising}, 0.1), ("mle", "twonn"), logx=True)
    assert same["agree"] and same["sign"] == 1 and ab.verdict(same) == "rising for every estimator"


@given(
    st.floats(-3, 3),
    st.floats(0.01, 2),
    st.integers(2, 8),
)
def test_trend_sign_is_that_of_the_slope_interval(slope, half, n):
    """Points d = slope * layer, each with half-width `half`: the slope's interval is slope +- half / sqrt(S),
    S = sum (t - mean t)^2, so the sign is +1 above that bound, -1 below its negative, 0 between."""
    from hypothesis import assume

    t = np.arange(n, dtype=float)
    bound = half / np.sqrt(np.sum((t - t.mean()) ** 2))
    assume(abs(abs(slope) - bound) > 1e-9)
    tr = ab.trend(_points(list(t), {"mle": list(slope * t)}, half), ("mle",), logx=False)
    want = 1 if slope > bound else -1 if slope < -bound else 0
    assert tr["estimators"]["mle"]["sign"] == want and tr["agree"] and tr["sign"] == want
    assert tr["estimators"]["mle"]["slope"] == pytest.approx(slope, abs=1e-9)


def test_trend_of_a_refused_point_or_a_missing_interval_is_undetermined():
    pts = _points([0, 1, 2], {"mle": [1.0, 2.0, 3.0], "twonn": [1.0, 2.0, 3.0]}, 0.1)
    for p in pts[1:]:
        p["estimates"]["twonn"] = {"d": None, "ci": None}  # refused: one point left
    tr = ab.trend(pts, ("mle", "twonn"), logx=False)
    assert tr["estimators"]["twonn"] == {"slope": None, "ci": None, "sign": None}
    assert not tr["agree"] and "twonn undetermined" in ab.verdict(tr)
    pts = _points([0, 1, 2], {"mle": [1.0, 2.0, 3.0]}, 0.1)
    pts[0]["estimates"]["mle"]["ci"] = None
    tr = ab.trend(pts, ("mle",), logx=False)
    assert tr["estimators"]["mle"]["slope"] == pytest.approx(1.0) and tr["estimators"]["mle"]["sign"] is None
    assert not tr["agree"] and tr["sign"] is None  # undetermined everywhere is not agreement


def test_a_committed_panel_whose_sign_agrees_flips_when_one_estimator_is_mutated():
    res = json.loads((Path(__file__).parents[2] / "results" / "ablate" / "suite" / "ablate.json").read_text())
    names = res["options"]["estimators"]
    panel = res["panels"]["params"]
    assert ab.trend(panel["points"], names, logx=True) == panel["trend"]  # the stored trend is recomputed
    assert panel["trend"]["agree"] and panel["trend"]["sign"] == 1
    twonn = [p["estimates"]["twonn"]["d"] for p in panel["points"]]
    for p, d in zip(panel["points"], reversed(twonn), strict=True):  # mutation: twonn's values in reverse order
        p["estimates"]["twonn"]["d"] = d
    mutated = ab.trend(panel["points"], names, logx=True)
    assert mutated["estimators"]["twonn"]["sign"] == -1 and not mutated["agree"]
    assert "depends on the estimator" in ab.verdict(mutated)


# ------------------------------------------------------------------------------------ a suite kept and run again
SMALL = ["--docs", "40", "--context", "32", "--tokens-per-doc", "8", "--bootstrap", "10", "--k", "5"]


def _tiny_members(root: Path) -> list:
    """Two GPTs of ours (widths 8 and 16, one block; seeded) saved as run directories, on 48 random documents."""
    import torch

    rng = np.random.default_rng(0)
    docs = [rng.integers(0, 64, size=int(n)) for n in rng.integers(20, 60, size=48)]
    members = []
    for i, width in enumerate((8, 16)):
        torch.manual_seed(i)
        gpt = GPT(GPTConfig(vocab_size=64, block_size=32, n_layer=1, n_head=2, n_embd=width)).eval()
        (root / f"w{width}").mkdir(parents=True)
        save_ours(gpt, root / f"w{width}" / "best.pt")
        if width == 16:  # as the trainer writes it: optimizer state and a step beside the weights
            from tmcheck.empirics.lm.checkpoint import save_checkpoint

            state = {"model": gpt.state_dict(), "meta": {"model_config": dict(gpt.config.__dict__)}}
            save_checkpoint(root / "w16" / "best.pt", {**state, "optimizer": {"m": torch.ones(3)}, "step": 5})
        members.append(
            ab.Member(f"w{width}", str(root / f"w{width}"), ab.non_embedding_params(gpt), width, 1, docs, 3.0 - i, 100)
        )
    return members


@pytest.fixture(scope="module")
def suite_result(tmp_path_factory):
    """An ablation made by `tmcheck id ablate` from a suite kept with save_suite: its directory and record."""
    from tmcheck.cli.main import app

    root = tmp_path_factory.mktemp("suite")
    ab.save_suite(_tiny_members(root / "runs"), root / "ab" / ab.SUITE_DIR, "a test suite")
    args = ["id", "ablate", str(root / "ab" / ab.SUITE_DIR), *SMALL, "-o", str(root / "ab")]
    res = CliRunner().invoke(app, args, env={"COLUMNS": "300"})  # wide: a verdict on one line
    assert res.exit_code == 0, res.output
    result = json.loads((root / "ab" / "ablate.json").read_text())
    assert "Trend per panel" in res.output and all(panel in res.output for panel in result["panels"])
    # the trend table, drawn wide (the CLI's console wraps at the terminal's width): a row per panel, with its verdict
    from rich.console import Console

    from tmcheck.cli.id import trend_table

    wide = Console(width=300, record=True, file=io.StringIO())
    wide.print(trend_table(result, result["options"]["estimators"]))
    text = wide.export_text()
    for panel, data in result["panels"].items():
        assert any(
            line.split("│")[1].strip() == panel and ab.verdict(data["trend"]) in line
            for line in text.splitlines()
            if line.count("│") > 4
        )
    return root / "ab", result


def test_a_suite_keeps_the_weights_and_documents_only(suite_result, tmp_path):
    from safetensors import safe_open

    from tmcheck.empirics.lm.checkpoint import load_gpt

    directory, res = suite_result
    suite = ab.read_suite(directory / ab.SUITE_DIR)
    assert [m["name"] for m in suite["models"]] == ["w8", "w16"] and suite["docs"] == 48
    assert [m["test_loss"] for m in suite["models"]] == [3.0, 2.0]
    f = directory / ab.SUITE_DIR / "w16.safetensors"
    with safe_open(str(f), framework="pt") as sf:
        assert all(k.startswith("model/") for k in sf.keys())  # no optimizer state, no RNG
        assert {str(sf.get_tensor(k).dtype) for k in sf.keys()} == {"torch.float32"}
    src = _tiny_members(tmp_path)[1]
    kept, orig = load_gpt(f).state_dict(), load_gpt(Path(src.path)).state_dict()
    assert all(np.array_equal(kept[k].numpy(), orig[k].numpy()) for k in orig)
    members, source = ab.suite_members(directory / ab.SUITE_DIR, ab.AblateOptions(docs=40))
    assert source == "a test suite" == res["source"] and len(members[0].docs) == 40
    assert [m["params"] for m in res["models"]] == [m.params for m in members]
    assert set(res["panels"]) >= {"params", "width", "layer"}
    for panel in res["panels"].values():
        assert set(panel["trend"]["estimators"]) == {"mle", "twonn", "gride"}  # gride is a default estimator


def test_a_suite_is_refused_when_asked_for_more_documents_or_malformed(suite_result, tmp_path):
    directory, _ = suite_result
    with pytest.raises(ValueError, match="holds 48 test documents"):
        ab.suite_members(directory / ab.SUITE_DIR, ab.AblateOptions(docs=49))
    (tmp_path / ab.SUITE).write_text(json.dumps({"source": "x", "docs": 1, "models": [{"name": "../a"}]}))
    with pytest.raises(ValueError, match="not a model suite"):
        ab.read_suite(tmp_path)
    m = _tiny_members(tmp_path / "r")
    m[1].docs = list(m[1].docs)  # another list: not the same documents
    with pytest.raises(ValueError, match="same documents"):
        ab.save_suite(m, tmp_path / "s", "x")


def test_a_rerun_from_the_suite_equals_the_record_and_an_edited_number_does_not(suite_result, tmp_path):
    import shutil

    directory, res = suite_result
    copy = tmp_path / "ab"
    shutil.copytree(directory, copy)  # elsewhere: the models' paths differ, and are not compared
    again = ab.rerun(copy)
    assert again["models"][0]["path"] != res["models"][0]["path"]
    assert ab.differences(res, again) == []
    edited = json.loads(json.dumps(res))
    e = edited["panels"]["width"]["points"][1]["estimates"]["gride"]
    e["d"] *= 1 + 1e-6  # within RERUN_RTOL: the rounding of another CPU's kernels
    assert ab.differences(edited, again) == []
    e["d"] *= 1 + 1e-3  # mutation: a number off by 1e-3
    assert [d.split(":")[0] for d in ab.differences(edited, again)] == ["/panels/width/points[1]/estimates/gride/d"]
    edited["panels"]["layer"]["trend"]["agree"] = not edited["panels"]["layer"]["trend"]["agree"]
    assert any("/panels/layer/trend/agree" in d for d in ab.differences(edited, again))
    assert ab.rerun(tmp_path) is None  # no suite kept there


def test_results_check_runs_a_kept_suite_again(suite_result, tmp_path):
    import shutil

    from test_reproduce import tool

    results = tool("results")
    directory, res = suite_result
    root = tmp_path / "results"
    shutil.copytree(directory, root / "ablate" / "tiny")
    lines = []
    assert results.check([], root, log=lines.append) == 0
    assert "when run again from the 2 kept models" in lines[0] and lines[0].startswith("ok")
    res["panels"]["params"]["trend"]["estimators"]["mle"]["slope"] += 1e-2  # mutation of a number not drawn
    (root / "ablate" / "tiny" / "ablate.json").write_text(json.dumps(res))
    lines = []
    assert results.check([], root, log=lines.append) == 1
    assert lines[0].startswith("FAIL") and "1 of 1 figures identical" in lines[0]
    assert any("/panels/params/trend/estimators/mle/slope" in s for s in lines)


def test_cli_keep_models_saves_the_sweep_models_and_ablates_from_them(tmp_path, monkeypatch):
    from tmcheck.cli.main import app

    sweep = tmp_path / "sweep"
    sweep.mkdir()
    (sweep / "config.json").write_text("{}")
    (sweep / "plan.json").write_text("[]")
    members = _tiny_members(tmp_path / "runs")
    monkeypatch.setattr(ab, "sweep_members", lambda path, opts: members if path == sweep else None)
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["id", "ablate", str(sweep), "--keep-models", *SMALL, "-o", str(out), "--json"])
    assert res.exit_code == 0, res.output
    r = json.loads(res.stdout)
    assert r["source"] == "the model sweep sweep"
    assert [Path(m["path"]).parent for m in r["models"]] == [out / ab.SUITE_DIR] * 2  # read from the kept files
    assert ab.read_suite(out / ab.SUITE_DIR)["docs"] == 48
    res = CliRunner().invoke(app, ["id", "ablate", str(members[0].path), "--keep-models", "--text", "x"])
    assert res.exit_code == 2 and "--keep-models keeps the models of a model-scaling sweep" in res.output


def test_the_figure_says_which_panels_depend_on_the_estimator():
    res = json.loads((Path(__file__).parents[2] / "results" / "ablate" / "suite" / "ablate.json").read_text())
    fig = ab.draw(res)
    titles = {ax.get_title().split("\n")[0]: ax.get_title() for ax in fig.axes if ax.get_title()}
    for panel, data in res["panels"].items():
        title = titles[ab.TITLES[panel][0]]
        assert title.endswith(ab.verdict(data["trend"], short=True))
        assert ("depends on the estimator" in title) == (not data["trend"]["agree"])

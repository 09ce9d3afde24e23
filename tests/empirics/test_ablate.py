"""ID ablations (Figure 4): position bins, parameter counts, equal-N curves, the estimators on known
dimensions, token positions from embed_documents, and `tmcheck id ablate` end to end on tiny local
models of both kinds made here (a GPT-2 and two BERTs of different widths)."""

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
            assert set(p["estimates"]) == {"mle", "twonn"}
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

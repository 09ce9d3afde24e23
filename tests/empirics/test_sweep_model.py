"""The model-scaling sweep (kind "model", Figure 3): presets, parameter counts, the prepared-corpus
check, the report's verdict rules, and the tiny preset end to end (sweep, report, CLI)."""

import json

import numpy as np
import pytest
import typer
from typer.testing import CliRunner

from tmcheck.empirics.lm.gpt import GPT, GPTConfig
from tmcheck.empirics.report import model as report_model
from tmcheck.empirics.sweep import get_kind
from tmcheck.empirics.sweep import model as kind_model
from tmcheck.empirics.sweep.kinds import get_preset, preset_from_dict
from tmcheck.empirics.sweep.model import PRESETS as MODEL


@pytest.mark.parametrize("L,C", [(1, 8), (2, 16), (3, 48), (4, 128)])
def test_non_embedding_params_count_the_model(L, C):
    m = GPT(GPTConfig(vocab_size=300, block_size=16, n_layer=L, n_head=2, n_embd=C))
    want = sum(p.numel() for p in m.parameters()) - m.wte.weight.numel() - m.wpe.weight.numel()
    assert kind_model.non_embedding_params(L, C) == want
    assert kind_model.non_embedding_params(L, C) != m.num_params()  # num_params keeps the token embedding


def test_presets_registered_and_valid():
    assert set(MODEL) >= {"tiny", "cpu"}
    assert get_kind("model").name == "model"
    for p in MODEL.values():
        p.validate()
        assert preset_from_dict("model", json.loads(json.dumps(p.as_dict()))) == p
    cpu = get_preset("cpu", "model")
    Ns = [kind_model.non_embedding_params(*s) for s in cpu.grid()]
    assert np.log10(max(Ns) / min(Ns)) >= 1.5  # the 1.5 decades on the CPU preset
    assert Ns == sorted(Ns)


@pytest.mark.parametrize(
    "change,msg",
    [
        ({"widths": (16,), "depths": (1, 2)}, "at least 3 distinct"),
        ({"widths": (24, 32, 64)}, "not divisible"),
        ({"data_ns": (10**9,)}, "data_ns"),
        ({"seeds": ()}, "seed"),
    ],
)
def test_bad_presets_refused(change, msg):
    with pytest.raises(ValueError, match=msg):
        get_preset("cpu", "model").with_overrides(**change)


def test_unprepared_corpus_is_one_clear_line(tmp_path, monkeypatch):
    monkeypatch.setenv("TMCHECK_DATA", str(tmp_path))
    with pytest.raises(OSError, match="tmcheck data prepare sql"):
        kind_model.new_config(get_preset("cpu", "model"), {})
    (tmp_path / "prepared").mkdir()
    (tmp_path / "prepared" / "sql.jsonl").write_text('"SELECT 1;"\n')
    assert kind_model.new_config(get_preset("cpu", "model"), {})["corpus"] == "sql"
    assert kind_model.new_config(get_preset("cpu", "model"), {"corpus": "stories"})["corpus"] == "stories"


def _test(verdict="equivalent within ±0.05"):
    return {"verdict": verdict}


def test_verdicts_withheld_on_capped_runs():
    rep_N = {
        "prediction": {"loglog": _test("differs by more than 0.05")},
        "predictions": {"ID-free from alpha-hat_D": {"loglog": _test()}},
    }
    free = {"test": {}}
    v = report_model._verdicts(rep_N, {}, free, [], [])
    assert v == {"2beta/d-hat": "differs by more than 0.05", "ID-free from alpha-hat_D": "equivalent within ±0.05"}
    v = report_model._verdicts(rep_N, {}, free, ["a-run"], [])
    assert all(s.startswith("withheld: 1 ") for s in v.values())
    v = report_model._verdicts(rep_N, {}, free, [], ["data-run"])
    assert v["2beta/d-hat"] == "differs by more than 0.05" and v["ID-free from alpha-hat_D"].startswith("withheld")
    assert report_model._verdicts(rep_N, None, None, [], [])["ID-free from alpha-hat_D"].startswith("no data arm")


def test_id_free_conversion_is_table1s():
    from tmcheck.theory.bounds import alpha_N

    rep = {"fits": {"loglog": {"alpha": 0.25, "interval": {"lo": 0.2, "hi": 0.3}}}}
    free = report_model._id_free(rep, beta=1.0)
    assert free["alpha_N"] == pytest.approx(1 / 3)  # 0.25 / 0.75
    assert free["alpha_N_ci"] == pytest.approx([0.25, 0.3 / 0.7])
    t = free["test"]  # the implied d gives back the same alpha_N through 2 beta / d
    assert alpha_N(t["d_hat"], 1.0) == pytest.approx(1 / 3)
    assert t["d_ci"][0] < t["d_hat"] < t["d_ci"][1]
    assert report_model._id_free({"fits": {"loglog": {"alpha": 0.3, "interval": {"lo": -0.1, "hi": 0.7}}}}, 1.0) is None


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """The tiny preset through `tmcheck sweep model` (a small Typer app until cli/sweep.py registers it)."""
    from tmcheck.cli.sweep import model

    app = typer.Typer()
    app.command("model")(model)
    app.command("other")(lambda: None)  # a group, so that "model" is a subcommand name
    d = tmp_path_factory.mktemp("tiny") / "sweep"
    res = CliRunner().invoke(app, ["model", str(d), "--preset", "tiny", "--json"])
    assert res.exit_code == 0, res.output
    return d, json.loads(res.stdout)


def test_tiny_sweep_rows(tiny):
    d, rows = tiny
    p = get_preset("tiny", "model")
    full = [r for r in rows if r["full_split"]]
    assert len(full) == len(p.grid()) and len(rows) == len(p.grid()) + len(p.data_ns)  # the data arm shares a run
    for r in rows:
        assert r["capped"] == (r["steps"] >= p.train.max_steps and not r["stopped_early"])
        assert r["non_embedding_params"] == kind_model.non_embedding_params(r["n_layer"], r["n_embd"])
        assert r["params"] - r["non_embedding_params"] == r["model_config"]["vocab_size"] * r["n_embd"]


def test_tiny_report(tiny):
    from tmcheck.cli.main import app

    d, rows = tiny
    res = CliRunner().invoke(app, ["report", str(d), "--json"])
    assert res.exit_code == 0, res.output
    rep = json.loads(res.stdout)
    assert rep["kind"] == "model" and (d / report_model.FIGURE).stat().st_size > 10_000
    assert rep["id"]["d"] > 0 and rep["id"]["d_ci"][0] < rep["id"]["d"] < rep["id"]["d_ci"][1]
    check = rep["id"]["validation"]  # d-hat's certificate, probed on the top model's last layer
    assert rep["id"]["certificate"]["layer"] == check["layer"] == max(r["n_layer"] for r in rows)
    t = (rep["alpha_N"]["prediction"] or {}).get("loglog")
    assert (t is not None) == check["validated"]  # 2β/d̂ is tested exactly when d-hat is certified
    if t is not None:
        assert t["alpha_pred"] == pytest.approx(2 * rep["beta"] / rep["id"]["d"], rel=0.05)
    capped = [r["run"] for r in rows if r["full_split"] and r["capped"]]
    assert rep["capped"]["model"] == capped
    assert rep["verdicts"]["2beta/d-hat"].startswith("withheld") == (bool(capped) or not check["validated"])
    assert "α̂_N" in (d / "report.md").read_text()
    ids = json.loads((d / "id.json").read_text())
    assert list(ids) == [f"model:{rep['id']['model']}"]  # cached: a second report reuses it
    again = report_model.build(__import__("tmcheck.empirics.sweep", fromlist=["SweepDir"]).SweepDir(d))
    assert again["id"]["d"] == rep["id"]["d"]


def test_cli_errors_are_one_line(tiny, tmp_path, monkeypatch):
    from tmcheck.cli.sweep import model

    app = typer.Typer()
    app.command("model")(model)
    app.command("other")(lambda: None)
    res = CliRunner().invoke(app, ["model", str(tmp_path / "a"), "--preset", "cpu-demo"])
    assert res.exit_code == 2 and "unknown preset" in res.output and "Traceback" not in res.output
    monkeypatch.setenv("TMCHECK_DATA", str(tmp_path / "empty"))
    res = CliRunner().invoke(app, ["model", str(tmp_path / "b"), "--preset", "cpu"])
    assert res.exit_code == 2 and "tmcheck data prepare sql" in res.output
    d, _ = tiny
    res = CliRunner().invoke(app, ["model", str(d), "--preset", "cpu", "--corpus", "stories"])
    assert res.exit_code == 2 and "other settings" in res.output

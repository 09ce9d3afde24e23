"""SynthPreset.tuned: per-(d, β) settings validated (each check fails on a mutated entry), applied by
`at` and by the sweep, and absent from every config written before it (results/synth still loads
and computes what it did)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tmcheck.cli.main import app
from tmcheck.empirics import schema
from tmcheck.empirics.sweep import SweepDir
from tmcheck.empirics.sweep.kinds import get_preset
from tmcheck.empirics.sweep.synthetic_preset import SynthPreset, SynthTuned
from tmcheck.empirics.sweep.tune import load_tuned

ROOT = Path(__file__).resolve().parents[2]
GOOD = {"d": 2, "beta": 1.0, "lr": 3e-3, "ffn_width": 64, "min_steps": 1000, "max_steps": 3000}


def _with(*entries: dict) -> SynthPreset:
    base = get_preset("cpu", "synthetic")
    return SynthPreset.from_dict({**base.as_dict(), "tuned": list(entries)})


def test_a_good_entry_is_applied_to_its_own_d_and_beta_only():
    p = _with(GOOD)
    assert p.at(2, 1.0).lr == 3e-3 and p.at(2, 1.0).ffn_width == 64 and p.at(2, 1.0).tuned == ()
    assert p.at(2, 0.5) == p and p.at(1, 1.0).lr == p.lr


@pytest.mark.parametrize(
    "entries, words",
    [
        ([GOOD, GOOD], "a second entry"),
        ([{**GOOD, "d": 3}], "not in the sweep's grid"),
        ([{**GOOD, "beta": 0.25}], "not in the sweep's grid"),
        ([{"d": 2, "beta": 1.0}], "replaces no field"),
        ([{**GOOD, "d_embd": 4}], "d_embd must be >= 5"),
        ([{**GOOD, "min_steps": 4000}], "min_steps <= max_steps"),
        ([{**GOOD, "lr": -1.0}], "tuned.0.lr"),
        ([{**GOOD, "n_heads": 0}], "tuned.0.n_heads"),
        ([{**GOOD, "beta": 1.5}], "tuned.0.beta"),
        ([{**GOOD, "lr": "fast"}], "tuned.0.lr"),
        ([{**GOOD, "depth": 3}], "tuned.0.depth"),
    ],
)
def test_a_mutated_entry_is_refused_in_one_line(entries, words):
    _with(GOOD)  # the unmutated entry passes
    with pytest.raises(schema.SchemaError) as exc:
        _with(*entries)
    msg = str(exc.value)
    assert words in msg.replace("[", ".").replace("]", "") or words in msg, msg
    assert "\n" not in msg


def test_tuned_file_refused_at_the_cli_with_exit_2(tmp_path):
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps({"tuned": [GOOD]}))
    bad.write_text(json.dumps({"tuned": [{**GOOD, "d_embd": 4}]}))
    runner = CliRunner()
    ok = runner.invoke(app, ["synth", "tuned", str(good), "--preset", "cpu", "--json"])
    assert ok.exit_code == 0, ok.output
    rows = {(r["d"], r["beta"]): r for r in json.loads(ok.stdout)}
    assert rows[(2, 1.0)]["ffn_width"] == 64 and rows[(2, 0.5)]["ffn_width"] == 32
    res = runner.invoke(app, ["synth", "tuned", str(bad), "--preset", "cpu"])
    assert res.exit_code == 2 and "d_embd must be >= 5" in res.output
    assert "Traceback" not in res.output and len(res.output.strip().splitlines()) == 1


def test_bad_tune_options_exit_2():
    res = CliRunner().invoke(app, ["synth", "tune", "x", "--n", "100", "--rungs", "400,200"])
    assert res.exit_code == 2 and "rungs must be increasing" in res.output


def test_the_committed_synthetic_config_loads_and_computes_what_it_did():
    sweep = SweepDir(ROOT / "results" / "synth")
    p = sweep.preset()
    assert p.tuned == ()
    stored = json.loads((ROOT / "results" / "synth" / "config.json").read_text())["preset"]
    assert (
        json.loads(json.dumps(p.as_dict())) == stored
    )  # no `tuned` key: the report's copy of the preset is byte-identical
    assert all(p.at(d, b) is p for d in p.dims for b in p.betas)
    tuned = replace(p, tuned=(SynthTuned(**GOOD),))
    assert "tuned" in tuned.as_dict() and tuned.at(2, 1.0) != p  # the same checks fail on a tuned preset


def test_the_sweep_trains_each_run_under_its_tuned_setting(tmp_path, monkeypatch):
    from tmcheck.empirics.sweep import core, regression
    from tmcheck.empirics.sweep.synthetic import KIND, run_name

    seen = {}

    def fake_fit(m, split, train_cfg, batch_size, seed, run_dir):
        seen.update(cfg=m.cfg, lr=train_cfg.lr, steps=train_cfg.max_steps, batch=batch_size)
        return {"test_mse": 0.0}

    monkeypatch.setattr(regression, "fit_transformer", fake_fit)
    p = replace(
        get_preset("tiny", "synthetic"),
        tuned=(SynthTuned(d=2, beta=1.0, lr=3e-3, batch_size=16, n_blocks=3, min_steps=77, max_steps=77),),
    )
    p.validate()
    params = {"sweep": "data", "method": "transformer", "d": 2, "beta": 1.0, "n": 50, "seed": 0}
    ctx = core.Context(sweep=SweepDir(tmp_path), config={}, kind=KIND, preset=p)
    KIND.run(ctx, core.RunSpec("synthetic", run_name(params), params))
    assert seen["lr"] == 3e-3 and seen["batch"] == 16 and seen["cfg"].n_blocks == 3 and seen["steps"] == 77
    KIND.run(ctx, core.RunSpec("synthetic", run_name({**params, "d": 1}), {**params, "d": 1}))
    assert seen["lr"] == p.lr and seen["cfg"].n_blocks == p.n_blocks


def test_load_tuned_reads_a_list_or_a_chosen_file(tmp_path):
    f = tmp_path / "t.json"
    f.write_text(json.dumps([GOOD]))
    assert load_tuned(f, get_preset("cpu", "synthetic")).at(2, 1.0).lr == 3e-3
    f.write_text(json.dumps([{**GOOD, "d": 7}]))
    with pytest.raises(ValueError, match="not in the sweep's grid"):
        load_tuned(f, get_preset("cpu", "synthetic"))


def test_synth_tune_cli_json_with_progress(tmp_path, monkeypatch):
    args = ["synth", "tune", str(tmp_path / "t"), "--preset", "tiny", "--d", "1", "--beta", "1", "--n", "40"]
    args += ["--candidates", "2", "--rungs", "20", "--keep", "", "--select-points", "32", "--json"]
    monkeypatch.setenv("TMCHECK_PROGRESS", "always")
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)  # stdout is one JSON document, the bar is on stderr
    assert doc["chosen"][0]["d"] == 1 and len(doc["tunings"][0]["rungs"]) == 1
    assert "tuning" in res.stderr
    monkeypatch.setenv("TMCHECK_PROGRESS", "never")  # mutation: progress off, no bar
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0 and "tuning" not in res.stderr


def test_the_decide_preset_carries_the_committed_choice():
    from tmcheck.empirics.sweep.synthetic_preset import PRESETS as SYNTHETIC

    p = SYNTHETIC["cpu-decide"]
    doc = json.loads((ROOT / "results" / "synth-tune" / "chosen.json").read_text())

    def key(t):
        return (t.d, -t.beta)

    assert sorted(p.tuned, key=key) == sorted((SynthTuned(**t) for t in doc["tuned"]), key=key)
    assert {(t.d, t.beta) for t in p.tuned} == {(d, b) for d in p.dims for b in p.betas}
    assert len(set(p.ns)) >= 5 and max(p.ns) / min(p.ns) >= 100  # two decades of n
    assert min(p.ns) == 100 and max(p.ns) == 10_000  # the sizes the tuning ran at are the grid's ends

"""The `tiny` preset end to end through the CLI (sweep -> id corpus -> report -> embed), and its errors.

This is the CI end-to-end test of the pretraining part; it takes about a minute on 2 cores."""

from __future__ import annotations

import json
import os

import pytest
from typer.testing import CliRunner

from tmcheck.cli.main import app

os.environ["HF_HUB_OFFLINE"] = "1"
runner = CliRunner()


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    d = tmp_path_factory.mktemp("pre") / "sweep"
    res = runner.invoke(app, ["sweep", "data", str(d), "--preset", "tiny", "--json"])
    assert res.exit_code == 0, res.output
    return d, json.loads(res.stdout)


def test_tiny_pipeline(sweep):
    d, rows = sweep
    assert len(rows) == 6 and {r["seed"] for r in rows} == {0, 1}
    assert all(r["test_loss"] < 5.9 for r in rows)  # below ln(vocab): the models learned something
    res = runner.invoke(app, ["id", "corpus", str(d), "--json"])
    assert res.exit_code == 0, res.output
    ids = json.loads(res.stdout)["stories"]
    assert 0 < ids["d"] < 32 and ids["alpha_D"] == pytest.approx(2 / (2 + ids["d"]))
    assert ids["points"] >= 500 and ids["protocol"]["embed"]["window"] == "random"
    stored = json.loads((d / "id.json").read_text())["stories"]  # the one id.json schema: protocol and estimate
    assert stored["protocol"] == ids["protocol"] and stored["estimate"]["d"] == ids["d"]
    full = max((r for r in rows if r["seed"] == 0), key=lambda r: r["n"])
    assert stored["protocol"]["model"] == full["run"]  # the full-split model, first seed
    again = runner.invoke(app, ["id", "corpus", str(d), "--json"])  # the same protocol: reused from id.json
    assert json.loads(again.stdout) == json.loads(res.stdout)
    res = runner.invoke(
        app,
        [
            "id",
            "corpus",
            str(d),
            "--window",
            "prefix",
            "--batch-points",
            "3600",
            "--final-ln",
            "before",
            "--estimator",
            "mle-mean",
            "--beta",
            "0.5",
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    alt = json.loads(res.stdout)["stories"]
    assert alt["protocol"]["id"]["batch_size"] == 3600 and alt["protocol"]["embed"]["final_ln"] == "before"
    assert json.loads((d / "id.json").read_text())["stories"]["protocol"] == alt["protocol"]  # replaced
    assert alt["alpha_D_beta"] == pytest.approx(1 / (1 + alt["d"]))  # 2β/(2β+d) at β = 1/2
    res = runner.invoke(app, ["report", str(d), "--bootstrap", "100"])
    assert res.exit_code == 0, res.output
    assert "stories" in res.stdout and (d / "report.md").exists() and (d / "fig_scaling.png").exists()
    rerun = runner.invoke(app, ["sweep", "data", str(d), "--json"])  # resumes: nothing to do
    assert rerun.exit_code == 0 and json.loads(rerun.stdout) == rows


def test_own_text_corpus_through_sweep_id_and_report(tmp_path):
    """A `text:` corpus lives in data/<corpus_tag>, not data/<corpus>: the corpus ID finds it there."""
    from tmcheck.empirics.data.stories import stories
    from tmcheck.empirics.sweep.pretrain import corpus_tag

    text = tmp_path / "mine.txt"
    text.write_text("\n\n".join(stories(3, 700)), encoding="utf-8")
    corpus, d = f"text:{text}", tmp_path / "sweep"
    res = runner.invoke(app, ["sweep", "data", str(d), "--preset", "tiny", "--corpus", corpus, "--json"])
    assert res.exit_code == 0, res.output
    assert (d / "data" / corpus_tag(corpus)).is_dir() and corpus_tag(corpus) != corpus
    res = runner.invoke(app, ["id", "corpus", str(d), "--json"])
    assert res.exit_code == 0, res.output
    assert 0 < json.loads(res.stdout)[corpus]["d"] < 32
    res = runner.invoke(app, ["report", str(d), "--bootstrap", "50", "--json"])
    assert res.exit_code == 0, res.output
    assert (
        json.loads(res.stdout)["table"][corpus]["id"]["d"]
        == json.loads((d / "id.json").read_text())[corpus]["estimate"]["d"]
    )


def test_an_id_json_from_before_the_one_schema_is_refused(sweep, tmp_path):
    import shutil

    d, _ = sweep
    old = tmp_path / "old"
    shutil.copytree(d, old)
    (old / "id.json").write_text(json.dumps({"stories": {"d": 3.0, "d_ci": [2.9, 3.1]}}))  # the old flat entry
    res = runner.invoke(app, ["report", str(old)])
    assert res.exit_code == 2 and "tmcheck id corpus" in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_embed_our_checkpoint(sweep, tmp_path):
    d, rows = sweep
    text = tmp_path / "t.txt"
    text.write_text("Once upon a time there was a cat.\n\nThe dog ran to the park and played with a ball.\n")
    run = d / "runs" / rows[-1]["run"]
    res = runner.invoke(
        app,
        [
            "embed",
            str(run),
            "--text",
            str(text),
            "--output",
            str(tmp_path / "e.npy"),
            "--tokens-per-doc",
            "4",
            "--layer",
            "1",
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["shape"] == [8, 32]


def test_errors_are_one_line_exit_2(sweep, tmp_path):
    d, _ = sweep
    cases = [
        ["train", "--preset", "tiny", "--corpus", "stories", "--tokens", "10000000", "--out", str(tmp_path / "t")],
        ["report", str(tmp_path / "missing")],
        ["id", "corpus", str(tmp_path / "missing")],
        ["embed", str(tmp_path / "missing"), "--text", str(tmp_path / "none.txt")],
        ["train", "--preset", "nope"],
        ["train", "--corpus", "klingon", "--out", str(tmp_path / "k")],
        ["sweep", "data", str(tmp_path / "k2"), "--corpus", "klingon"],
    ]
    for args in cases:
        res = runner.invoke(app, args)
        assert res.exit_code == 2, (args, res.output)
        assert len(res.stderr.strip().splitlines()) == 1, res.stderr
    res = runner.invoke(app, cases[0])
    assert "exceeds the training split" in res.stderr
    from tmcheck.empirics.sweep import SweepDir

    with SweepDir(d).lock():
        res = runner.invoke(app, ["sweep", "data", str(d)])
    assert res.exit_code == 2 and "in use by another process" in res.stderr
    (d / "runs" / "x").mkdir()
    ckpt = next((d / "runs").glob("*/best.pt"))
    data = bytearray(ckpt.read_bytes())
    data[200] ^= 0xFF
    ckpt.write_bytes(bytes(data))
    res = runner.invoke(app, ["embed", str(ckpt), "--text", str(tmp_path / "none.txt")])
    assert res.exit_code == 2
    (tmp_path / "none.txt").write_text("hello there")
    res = runner.invoke(app, ["embed", str(ckpt), "--text", str(tmp_path / "none.txt")])
    assert res.exit_code == 2 and "corrupt checkpoint" in res.stderr and "best.pt" in res.stderr


def test_data_stats_json():
    res = runner.invoke(app, ["data", "stats", "stories", "--vocab", "300", "--json"])
    assert res.exit_code == 0, res.output
    s = json.loads(res.stdout)[0]
    assert s["total"]["documents"] > 10_000 and 0 < s["total"]["gzip_ratio"] < 0.3


def test_train_command_refuses_a_different_run_in_the_same_directory(tmp_path):
    out = tmp_path / "t"
    res = runner.invoke(app, ["train", "--preset", "tiny", "--tokens", "3000", "--out", str(out), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["n"] == 3000 and (out / "best.pt").exists()
    res = runner.invoke(app, ["train", "--preset", "tiny", "--tokens", "4000", "--out", str(out)])
    assert res.exit_code == 2 and "holds a different run" in res.stderr

"""A sweep's config.json and a run's result.json read back from disk: a shared config cannot choose files to read, a
preset lacking fields or a field of the wrong type stops everything in one line naming the field, and a damaged
result.json is never printed as the run's result.

Each case says what the code did before (the comment), and comes with its mutation where there is one.
"""

from __future__ import annotations

import json

import pytest
from harness import invoke, one_line

from tmcheck.empirics.sweep import SweepDir, layout
from tmcheck.empirics.sweep.kinds import get_preset


@pytest.mark.parametrize("kind", ["text", "dir"])
def test_a_shared_config_cannot_choose_files_to_read(tmp_path, outside, kind):
    # before: resuming a sweep whose config.json named text:/any/path read it and stored its tokens
    sweep = tmp_path / "s"
    sweep.mkdir()
    corpus = f"{kind}:{outside if kind == 'text' else outside.parent}"
    config = {"kind": "pretrain", "preset": get_preset("tiny").as_dict(), "corpora": [corpus]}
    (sweep / layout.CONFIG).write_text(json.dumps(config))
    one_line(["sweep", "data", sweep], "never chooses files to read")
    assert sorted(p.name for p in sweep.iterdir()) == [".lock", layout.CONFIG]  # nothing read, nothing stored
    # mutation: the same corpus given on the command line passes the check (and fails on the tiny file)
    res = invoke(["sweep", "data", str(sweep), "--corpus", corpus])
    assert res.exit_code == 2 and "never chooses files" not in res.stderr, res.output


@pytest.mark.parametrize(
    "record,message",
    [
        ({"steps": -5}, "steps: expected greater than or equal to 0"),
        ({"best_val": "low"}, "best_val: expected a valid number"),
        ([], "expected a JSON object"),
    ],
    ids=["negative steps", "best_val a word", "a list"],
)
def test_a_damaged_result_json_is_never_printed_as_the_runs_result(tmp_path, record, message):
    # before: `train --json` printed the damaged record as the run's result (exit 0), or a TypeError
    out = tmp_path / "t"
    args = ["train", "--preset", "tiny", "--tokens", "3000", "--max-steps", "5", "--out", out, "--json"]
    good = {"best_val": 5.0, "best_step": 5, "steps": 5, "stopped_early": False, "tokens": 100, "seconds": 1.0}
    out.mkdir()
    (out / "result.json").write_text(json.dumps({**good, **record} if isinstance(record, dict) else record))
    one_line(args, message)
    (out / "result.json").unlink()  # mutation: without the damaged record the run trains and reports
    res = invoke(args)
    assert res.exit_code == 0 and json.loads(res.stdout)["steps"] == 5, res.output


def test_report_on_a_preset_lacking_fields_is_one_line(tmp_path):
    # before: TypeError from the preset's constructor
    (tmp_path / layout.CONFIG).write_text(json.dumps({"kind": "model", "preset": {"name": "cpu"}, "corpus": "sql"}))
    one_line(["report", tmp_path], "preset.corpus: missing (required)")


def test_a_wrong_type_in_a_sweep_config_stops_before_anything_runs(tmp_path):
    # before: a TypeError mid-run that named no field
    sweep = tmp_path / "s"
    SweepDir(sweep).open("pretrain", "tiny")
    config = json.loads((sweep / layout.CONFIG).read_text())
    config["preset"]["n_min"] = "abc"
    (sweep / layout.CONFIG).write_text(json.dumps(config))
    one_line(["sweep", "data", sweep], "preset.n_min: expected a valid integer, got 'abc'")
    assert sorted(p.name for p in sweep.iterdir()) == [".lock", layout.CONFIG]

"""The one typed, versioned schema (tmcheck.empirics.schema): every committed config loads, a file of
each earlier version loads (later fields take their defaults), a wrong type or value is one line naming
the field, unknown fields are refused, new files carry schema_version; checkpoint metadata and
result.json go through the same family. Each check is shown to fail on the input it guards against."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tmcheck.cli.main import app
from tmcheck.empirics import schema
from tmcheck.empirics.sweep import SweepDir, kinds, layout
from tmcheck.empirics.sweep.model import ModelPreset

ROOT = Path(__file__).parents[2]
VERSIONS = Path(__file__).parent / "config_versions"
COMMITTED = sorted({*ROOT.glob("docs/*/config.json"), *ROOT.glob("results/*/config.json")})
runner = CliRunner()


def copy_sweep(src: Path, dst: Path) -> Path:
    """The committed sweep's small files in a scratch directory (nothing is written into the tree)."""
    dst.mkdir(parents=True)
    for name in (layout.CONFIG, layout.PLAN, layout.RESULTS):
        if (src / name).exists():
            shutil.copy(src / name, dst / name)
    if (src / layout.RUNS).is_dir():
        for row in (src / layout.RUNS).glob(f"*/{layout.ROW}"):
            (dst / layout.RUNS / row.parent.name).mkdir(parents=True, exist_ok=True)
            shutil.copy(row, dst / layout.RUNS / row.parent.name / layout.ROW)
    return dst


def test_the_committed_configs_are_found():
    assert len(COMMITTED) >= 3, COMMITTED


@pytest.mark.parametrize("config", COMMITTED, ids=lambda p: p.parent.name)
def test_every_committed_config_loads_and_its_status_exits_0(config, tmp_path):
    d = copy_sweep(config.parent, tmp_path / config.parent.name)
    loaded = SweepDir(d).read_config()
    assert loaded["schema_version"] == schema.CONFIG_VERSION and loaded["kind"] in kinds.kind_names()
    res = runner.invoke(app, ["sweep", "status", str(d), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["counts"]["done"] > 0


def test_the_model_sweep_whose_training_config_gained_fields_loads():
    """docs/model (and results/model) were written before TrainConfig had schedule and cooldown."""
    config = next(p for p in COMMITTED if p.parent.name == "model")
    raw = json.loads(config.read_text())
    assert "schedule" not in raw["preset"]["train"], "the fixture is the older file"
    p = SweepDir(config.parent).preset()
    assert isinstance(p, ModelPreset) and p.train.schedule == "cosine" and p.train.cooldown == 0


EARLIER = sorted(VERSIONS.glob("*.json"))


@pytest.mark.parametrize("path", EARLIER, ids=lambda p: p.stem)
def test_a_file_of_each_earlier_version_loads(path, tmp_path):
    raw = json.loads(path.read_text())
    assert "schema_version" not in raw  # version 1: written before versions were stored
    (tmp_path / layout.CONFIG).write_text(path.read_text())
    config = SweepDir(tmp_path).read_config()
    kind = path.stem.split("-")[0]
    assert config["kind"] == kind and config["schema_version"] == schema.CONFIG_VERSION
    cls = kinds.preset_class(kind)
    defaults = {f.name: f.default for f in dataclasses.fields(cls) if f.default is not dataclasses.MISSING}
    for name, value in defaults.items():  # a field the old file lacks takes its declared default
        if name not in raw["preset"]:
            assert config["preset"][name] == json.loads(json.dumps(value)), name


def test_the_earliest_pretraining_config_needs_its_migration(tmp_path, monkeypatch):
    (tmp_path / layout.CONFIG).write_text((VERSIONS / "pretrain-1-before-kind.json").read_text())
    assert SweepDir(tmp_path).kind == "pretrain"
    monkeypatch.setattr(schema, "CONFIG_MIGRATIONS", {1: lambda doc: doc})  # mutation: no migration
    with pytest.raises(schema.SchemaError, match="kind: missing"):
        SweepDir(tmp_path).read_config()


def _tiny(**preset_changes) -> dict:
    config = {
        "schema_version": schema.CONFIG_VERSION,
        "kind": "pretrain",
        "preset": kinds.get_preset("tiny").as_dict(),
        "corpora": ["stories"],
    }
    config["preset"].update(preset_changes)
    return json.loads(json.dumps(config))


@pytest.mark.parametrize(
    "change,message",
    [
        ({"n_min": "abc"}, "preset.n_min: expected a valid integer, got 'abc'"),
        ({"n_min": 0}, "preset.n_min: expected greater than or equal to 1, got 0"),
        ({"seeds": [0, "1"]}, "preset.seeds[1]: expected a valid integer"),
        ({"vocab_size": 10**9}, "preset.vocab_size: expected less than or equal to 1048576"),
        ({"colour": 1}, "preset.colour: unknown field"),
        ({"train": {"lr": "fast"}}, "preset.train.lr: expected a valid number"),
        ({"model": {"n_embd": 30, "n_head": 4}}, "n_embd=30 is not divisible by n_head=4"),
        ({"train": {"schedule": "plateau"}}, "train.cooldown: expected >= 1 under schedule plateau"),
    ],
)
def test_a_wrong_type_or_value_is_one_line_naming_the_field(tmp_path, change, message):
    (tmp_path / layout.CONFIG).write_text(json.dumps(_tiny(**change)))
    with pytest.raises(schema.SchemaError) as err:
        SweepDir(tmp_path).read_config()
    assert message in str(err.value) and "\n" not in str(err.value)
    res = runner.invoke(app, ["sweep", "status", str(tmp_path)])
    assert res.exit_code == 2 and message in res.stderr and len(res.stderr.strip().splitlines()) == 1
    (tmp_path / layout.CONFIG).write_text(json.dumps(_tiny()))  # mutation: the valid file loads
    assert SweepDir(tmp_path).read_config()["preset"]["n_min"] == kinds.get_preset("tiny").n_min


@pytest.mark.parametrize(
    "config,message",
    [
        ({**_tiny(), "extra": 1}, "extra: unknown field"),
        ({**_tiny(), "schema_version": schema.CONFIG_VERSION + 1}, "is newer than this tmcheck reads"),
        ({**_tiny(), "schema_version": "2"}, "schema_version: expected an integer"),
        ({**_tiny(), "kind": "pretrain", "corpora": "stories"}, "corpora: expected a valid array"),
        ([1, 2], "expected a JSON object"),
    ],
)
def test_documents_of_the_wrong_shape_are_refused(tmp_path, config, message):
    (tmp_path / layout.CONFIG).write_text(json.dumps(config))
    with pytest.raises(schema.SchemaError, match=message.replace("(", r"\(").replace("[", r"\[")):
        SweepDir(tmp_path).read_config()


def test_new_configs_carry_the_schema_version(tmp_path):
    config = SweepDir(tmp_path).open("synthetic", "tiny")
    stored = json.loads((tmp_path / layout.CONFIG).read_text())
    assert stored["schema_version"] == config["schema_version"] == schema.CONFIG_VERSION


def test_every_preset_validates_and_round_trips():
    for kind, named in ((k, kinds.get_kind(k).presets) for k in kinds.kind_names()):
        for p in named.values():
            p.validate()
            assert kinds.preset_from_dict(kind, json.loads(json.dumps(p.as_dict()))) == p
    with pytest.raises(schema.SchemaError, match="n_min: expected greater than or equal to 1"):
        kinds.get_preset("tiny").with_overrides(n_min=-1)


def test_the_record_schemas_mirror_the_classes_they_check():
    from tmcheck.empirics.lm.gpt import GPTConfig
    from tmcheck.empirics.lm.train import TrainResult

    def names(tp):
        return {f.name for f in dataclasses.fields(tp)}

    assert names(schema.GPTShape) == names(GPTConfig)
    assert names(schema.TrainRecord) - {"schema_version"} == names(TrainResult)


RESULT = {"best_val": 2.5, "best_step": 10, "steps": 20, "stopped_early": True, "tokens": 640, "seconds": 1.0}


@pytest.mark.parametrize(
    "change,message",
    [
        ({"steps": -5}, "steps: expected greater than or equal to 0"),
        ({"best_val": "low"}, "best_val: expected a valid number"),
        ({"best_step": 30}, "best_step 30 lies after the last step 20"),
        ({"stop": "cap"}, "contradicts stopped_early=True"),
        ({"history": [{"step": 1}]}, "history[0].train_loss: missing"),
        ({"when": "now"}, "when: unknown field"),
    ],
)
def test_result_json_is_checked_and_older_ones_migrated(change, message):
    assert schema.load_result(dict(RESULT), "result.json")["stop"] == "patience"  # version 1: stop derived
    with pytest.raises(schema.SchemaError) as err:
        schema.load_result({**RESULT, **change}, "result.json")
    assert message in str(err.value)


def test_checkpoint_metadata_bounds_the_model_before_it_is_built():
    shape = schema.validate(schema.GPTShape, {"n_layer": 2, "n_embd": 16, "n_head": 2, "block_size": 8}, "m")
    n = shape.params()
    assert schema.check_model_size(shape, n, "ck") == n
    with pytest.raises(schema.SchemaError, match="but the file holds"):
        schema.check_model_size(shape, n - 1, "ck")
    with pytest.raises(schema.SchemaError, match="over the limit of 1,000"):
        schema.check_model_size(shape, n, "ck", max_params=1000)
    for bad in ({"n_embd": -32}, {"n_layer": 200_000}, {"dropout": 1.5}):
        with pytest.raises(schema.SchemaError):
            schema.validate(schema.GPTShape, bad, "m")

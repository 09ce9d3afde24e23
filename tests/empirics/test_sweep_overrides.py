"""tmcheck.empirics.sweep.overrides: `FIELD=VALUE` settings read by the preset's declared types and
applied to a preset, validated; unknown fields and bad values are one line naming the field."""

from __future__ import annotations

import pytest

from tmcheck.empirics.schema import SchemaError
from tmcheck.empirics.sweep import overrides
from tmcheck.empirics.sweep.kinds import get_preset, preset_class


@pytest.fixture(scope="module")
def tiny():
    return get_preset("tiny", "synthetic")


def test_values_are_read_by_the_fields_types(tiny):
    got = overrides.parse(tiny, ["dims=1,2,4", "betas=1,0.5", "noise=0.1", "D=8", "baselines=knn", "model_dims="])
    assert got == {
        "dims": (1, 2, 4),
        "betas": (1.0, 0.5),
        "noise": 0.1,
        "D": 8,
        "baselines": ("knn",),
        "model_dims": (),
    }
    assert type(got["betas"][0]) is float and type(got["D"]) is int


def test_the_last_setting_of_a_field_wins(tiny):
    assert overrides.parse(tiny, ["D=8", "D=9"]) == {"D": 9}


def test_apply_validates_and_names_the_changed_preset(tiny):
    p = overrides.apply(tiny, ["dims=1", "noise=0"])
    assert (p.dims, p.noise, p.name) == ((1,), 0.0, "tiny-custom")
    assert overrides.apply(tiny, []) is tiny
    assert overrides.apply(tiny, [f"D={tiny.D}"]).name == "tiny"  # no change, no new name
    with pytest.raises(ValueError, match="min_steps <= max_steps"):
        overrides.apply(tiny, ["min_steps=10", "max_steps=5"])


def test_a_new_grid_replaces_the_tuned_grids_as_the_old_option_did():
    p = get_preset("cpu-decide2", "synthetic")
    assert any(t.ns for t in p.tuned)
    q = overrides.apply(p, ["ns=1000,3000,10000"])
    assert q == p.with_overrides(ns=(1000, 3000, 10000)).with_overrides(name="cpu-decide2-custom")
    assert not any(t.ns for t in q.tuned)


def test_nested_fields_are_set_by_their_dotted_path():
    p = get_preset("tiny", "pretrain")
    q = overrides.apply(p, ["model.n_layer=3", "train.lr=0.01", "seeds=0"])
    assert (q.model.n_layer, q.train.lr, q.seeds, q.model.n_embd) == (3, 0.01, (0,), p.model.n_embd)
    assert "model.n_layer" in overrides.settable(preset_class("pretrain"))


@pytest.mark.parametrize(
    "item,message",
    [
        ("d=1", "unknown field 'd' of a synthetic preset; settable: dims, betas, ns, seeds"),
        ("name=x", "unknown field 'name'"),
        ("tuned=1", "unknown field 'tuned'"),  # a list of records: not settable from text
        ("dims", "expected FIELD=VALUE"),
        ("=1", "expected FIELD=VALUE"),
        ("dims=one", "--set dims: expected a valid integer"),
        ("dims=1,,2", "--set dims: empty item"),
        ("dims=", "--set dims: empty list"),
        ("noise=nan", "--set noise: expected a finite number"),
        ("noise=-1", "--set noise: expected greater than or equal to 0"),
        ("betas=1.5", "--set betas: expected less than or equal to 1"),
        ("D=0", "--set D: expected greater than or equal to 1"),
    ],
)
def test_bad_settings_are_one_line_naming_the_field(tiny, item, message):
    with pytest.raises(SchemaError, match=None) as exc:
        overrides.apply(tiny, [item])
    assert message in str(exc.value) and "\n" not in str(exc.value)


def test_type_words_for_the_help():
    fields = overrides.settable(preset_class("synthetic"))
    assert overrides.type_words(fields["dims"]) == "list of int"
    assert overrides.type_words(fields["noise"]) == "float"
    assert "name" not in fields and "notes" not in fields and "tuned" not in fields

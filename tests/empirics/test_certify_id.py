"""ID certificates (tmcheck.empirics.lm.certify, issue 39 item 3): a smooth torus of known d is certified and
the same points with their coordinates shuffled are not; a planted probe through a small random GPT recovers
d = 1 and 2 through the embedding hook (and a hook that plants nothing is caught); a record claimed without
its estimates, or with estimates that do not say what it says, is unsound."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from tmcheck.empirics.lm import certify
from tmcheck.empirics.lm.embed import LanguageModel
from tmcheck.empirics.lm.gpt import GPT, GPTConfig

FAST = {"k": 20, "protocol": "full", "batch_size": 4096, "bootstrap": 20}  # the ID options of a quick protocol


def torus(n: int, d: int, width: int = 64, seed: int = 0) -> np.ndarray:
    """n points of the flat torus T^d (a circle per coordinate) placed by a random isometry in R^width."""
    rng = np.random.default_rng(seed)
    theta = 2 * np.pi * rng.random((n, d))
    Y = np.concatenate([np.cos(theta), np.sin(theta)], axis=1)  # (n, 2d)
    Q = np.linalg.qr(rng.normal(size=(width, width)))[0][: 2 * d]  # (2d, width), orthonormal rows
    return Y @ Q


def shuffled(X: np.ndarray, seed: int = 0) -> np.ndarray:
    """Each coordinate permuted across rows on its own: the marginals kept, the manifold destroyed."""
    rng = np.random.default_rng(seed)
    return np.stack([rng.permutation(col) for col in X.T], axis=1)


def sound_record(dims=certify.DIMS, layer: int = 1, recovered: bool = True) -> dict:
    """A certificate whose estimates say what it says (each estimator's interval holds d, or misses it)."""
    shift = 0.0 if recovered else 5.0
    planted = [
        {
            "d": d,
            "estimates": {
                n: {"d": d + shift, "ci": [d - 0.05 + shift, d + 0.05 + shift], "recovered": recovered}
                for n in certify.ESTIMATORS
            },
            "recovered": recovered,
        }
        for d in dims
    ]
    probe = {"context": 32, "radius": 1.0, "seed": 0, "layer_option": None, "final_ln": "after"}
    return {
        "layer": layer,
        "planted": planted,
        "certified": recovered,
        "tolerance": certify.TOLERANCE,
        "points": 600,
        "probe": probe,
        "method": certify.METHOD,
    }


EMBED = {"layer": None, "final_ln": "after"}


def test_a_smooth_torus_is_certified_and_its_shuffled_points_are_not():
    clouds = {d: torus(600, d, seed=d) for d in certify.DIMS}
    rec = certify.certify_points(clouds, FAST, device="cpu")
    assert rec["certified"] and rec["points"] == 600 and [p["d"] for p in rec["planted"]] == list(certify.DIMS)
    for p in rec["planted"]:
        assert set(p["estimates"]) == set(certify.ESTIMATORS)
        for e in p["estimates"].values():
            assert abs(e["d"] - p["d"]) <= certify.TOLERANCE * p["d"] + (e["ci"][1] - e["ci"][0])
    assert certify.check_certificate({**rec, "layer": 1, "probe": {}}) == []
    bad = certify.certify_points({d: shuffled(X, d) for d, X in clouds.items()}, FAST, device="cpu")
    assert not bad["certified"] and not any(p["recovered"] for p in bad["planted"])
    assert all(e["d"] > 3 * p["d"] for p in bad["planted"] for e in p["estimates"].values())


def test_an_estimator_that_refuses_the_points_recovers_nothing():
    """40 points: MLE and TwoNN run, GRIDE needs more neighbours and refuses; the record says so, soundly."""
    rec = certify.certify_points({d: torus(40, d, seed=d) for d in certify.DIMS}, {**FAST, "k": 10}, device="cpu")
    assert not rec["certified"] and all(p["estimates"]["gride"]["refused"] for p in rec["planted"])
    assert all(p["estimates"]["gride"]["d"] is None and not p["recovered"] for p in rec["planted"])
    rec = {**rec, "layer": 1, "probe": {"final_ln": "after", "layer_option": None}}
    assert certify.check_certificate(rec) == []
    assert "gride refused" in certify.validation({"certificate": rec}, EMBED, 1)["reason"]
    rec["planted"][0]["estimates"]["gride"]["recovered"] = True  # a refusal claimed as a recovery
    assert any("refused the points, yet says recovered=True" in p for p in certify.check_certificate(rec))


def random_gpt(seed: int = 0) -> LanguageModel:
    torch.manual_seed(seed)
    return LanguageModel(GPT(GPTConfig(vocab_size=64, block_size=32, n_layer=2, n_head=2, n_embd=32)), "tmcheck")


def test_a_probe_planted_through_a_random_gpt_recovers_its_dimension():
    lm = random_gpt()
    window = np.random.default_rng(1).integers(0, 64, 40)
    opts = certify.ProbeOptions(context=16)
    plan = certify.plan_probe(window, opts)
    assert plan["slots"] == sorted(set(plan["slots"])) and max(plan["slots"]) < opts.context - 1
    assert all(
        t[0] == plan["window"][s] and len(set(t)) == 3 for s, t in zip(plan["slots"], plan["tokens"], strict=True)
    )
    clouds = {d: certify.planted_points(lm, plan, d, 500, 2, "after", opts) for d in (1, 2)}
    assert not lm.model.wte._forward_hooks  # the hook is removed after the probe
    rec = certify.certify_points(clouds, FAST, device="cpu")
    assert rec["certified"], rec["planted"]
    again = certify.planted_points(lm, plan, 1, 500, 2, "after", opts)
    assert np.array_equal(again, clouds[1])  # seeded: the same probe gives the same points


def test_a_hook_that_plants_nothing_gives_no_manifold(monkeypatch):
    """The mutant whose hook sits on a module the model never calls: every probe input is the window
    itself, one point repeated, which every estimator refuses: nothing is certified."""
    lm = random_gpt()
    plan = certify.plan_probe(np.random.default_rng(1).integers(0, 64, 40), certify.ProbeOptions(context=16))
    stray = torch.nn.Embedding(64, 32)
    monkeypatch.setattr(certify, "input_embedding", lambda lm: stray)
    X = certify.planted_points(lm, plan, 2, 200, 2, "after", certify.ProbeOptions(context=16))
    assert np.ptp(X, axis=0).max() == 0
    rec = certify.certify_points({2: X}, FAST, device="cpu")  # one point repeated: every estimator refuses it
    assert not rec["certified"] and all(e["refused"] for e in rec["planted"][0]["estimates"].values())


def test_certify_model_records_its_layer_and_probe_and_tries_the_protocols_estimator():
    lm = random_gpt()
    docs = [np.arange(5) % 64, np.random.default_rng(2).integers(0, 64, 40)]  # the first is too short
    io = {"estimator": "mle-mean", "k": 20, "protocol": "full", "batch_size": 4096, "bootstrap": 10}
    rec = certify.certify_model(lm, docs, layer=None, final_ln="after", id_options=io, points=300, device="cpu")
    assert rec["layer"] == 2 and rec["points"] == 300 and rec["probe"]["layer_option"] is None
    assert rec["probe"]["slots"] and certify.check_certificate(rec) == []
    assert all(set(p["estimates"]) == {*certify.ESTIMATORS, "mle-mean"} for p in rec["planted"])
    check = certify.validation({"certificate": rec}, EMBED, 2, "mle-mean")
    assert check["validated"] == rec["certified"]
    assert "does not try danco" in certify.validation({"certificate": rec}, EMBED, 2, "danco")["reason"]


def test_a_certificate_claimed_without_running_the_probe_is_caught(monkeypatch):
    """The mutant that skips the probe: certify_points answers 'certified' with no estimates. The record
    then fails check_certificate, and validation withholds the prediction."""
    monkeypatch.setattr(certify, "certify_points", lambda clouds, options, **kw: {"planted": [], "certified": True})
    io = {"estimator": "mle", "k": 20, "protocol": "full", "batch_size": 4096, "bootstrap": 10}
    rec = certify.certify_model(
        random_gpt(), [np.arange(40) % 64], layer=None, final_ln="after", id_options=io, points=9
    )
    assert rec["certified"] and certify.check_certificate(rec)
    check = certify.validation({"certificate": rec}, EMBED, 2)
    assert not check["validated"] and check["reason"].startswith("withheld: d̂ not validated at layer 2")
    assert "unsound" in check["reason"]


@pytest.mark.parametrize(
    "mutate, words",
    [
        (lambda r: r["planted"].pop(), "planted d [1, 2], not [1, 2, 4]"),
        (lambda r: r["planted"][0]["estimates"].pop("gride"), "no gride estimate"),
        (lambda r: r["planted"][1]["estimates"]["mle"].update(d=9.0, ci=[8.9, 9.1]), "its interval says False"),
        (lambda r: r["planted"][2].update(recovered=False), "recovered=False, its estimates say True"),
        (lambda r: r.update(tolerance=5.0), "tolerance"),
        (lambda r: r.pop("probe"), "no probe"),
    ],
)
def test_each_inconsistency_of_a_record_is_found(mutate, words):
    rec = sound_record()
    assert certify.check_certificate(rec) == []
    mutate(rec)
    problems = certify.check_certificate(rec)
    assert problems and any(words in p for p in problems), problems


def test_certified_must_follow_the_planted_d():
    rec = sound_record(recovered=False)
    assert certify.check_certificate(rec) == []
    rec["certified"] = True
    assert certify.check_certificate(rec) == ["certified=True, its planted d say otherwise"]


def test_validation_says_why_a_d_hat_is_withheld():
    ok = certify.validation({"certificate": sound_record(layer=2)}, EMBED, 2)
    assert ok == {"validated": True, "layer": 2, "reason": None}
    none = certify.validation({"d": 3.0}, EMBED, 2)
    assert (
        none["reason"] == "withheld: d̂ not validated at layer 2: no certificate (no probe of known dimension was run)"
    )
    failed = certify.validation({"certificate": sound_record(layer=2, recovered=False)}, EMBED, 2)
    assert failed["reason"].startswith("withheld: d̂ not validated at layer 2 (planted d not recovered: d = 1: mle 6.00")
    other = copy.deepcopy(sound_record(layer=1))
    assert "probes layer 1" in certify.validation({"certificate": other}, EMBED, 2)["reason"]
    assert (
        "probes layer 2" in certify.validation({"certificate": sound_record(layer=2)}, {**EMBED, "layer": 1})["reason"]
    )
    before = certify.validation({"certificate": sound_record(layer=2)}, {**EMBED, "final_ln": "before"}, 2)
    assert not before["validated"]


def test_recovered_widens_by_the_tolerance():
    assert certify.recovered(4, [4.3, 4.5]) and not certify.recovered(4, [4.41, 4.5])
    assert certify.recovered(1, [0.5, 0.95]) and not certify.recovered(1, [0.5, 0.85])
    assert not certify.recovered(2, None)
    assert certify.probe_points(6387) == certify.MAX_POINTS and certify.probe_points(512) == 512

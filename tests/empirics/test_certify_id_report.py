"""The reports trust a d-hat only with its certificate (issue 39 item 3): the pretraining report withholds the
prediction test of a d-hat without one, with a failed one or with one claimed without its estimates (a probe
skipped), and says why in report.md and report.json; the second ID (all-MiniLM-L6-v2) likewise; the model
report withholds 2β/d̂; a certificate is stored beside its estimate in id.json and made once."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tmcheck.empirics.lm import certify
from tmcheck.empirics.lm.certify import ProbeOptions
from tmcheck.empirics.report import build_report
from tmcheck.empirics.report import model as report_model
from tmcheck.empirics.report import pretrain as report_pretrain
from tmcheck.util import atomic

sys.path.insert(0, str(Path(__file__).parent))
from test_certify_id import sound_record  # noqa: E402
from test_report_scaling import fake_sweep  # noqa: E402

HEAD = "withheld: d̂ not validated at layer 1"


def prediction_row(md: str) -> str:
    return next(line for line in md.splitlines() if line.startswith("| stories | 8.00 [7.00, 9.00] |"))


@pytest.mark.parametrize(
    "certificate, why",
    [
        (None, f"{HEAD}: no certificate (no probe of known dimension was run)"),
        (sound_record(layer=1, recovered=False), f"{HEAD} (planted d not recovered: d = 1: mle 6.00, twonn 6.00"),
        ({**sound_record(layer=1), "planted": []}, f"{HEAD}: its certificate is unsound (planted d [], not"),
        (sound_record(layer=2), f"{HEAD}: its certificate probes layer 2"),
    ],
    ids=["none", "failed", "claimed-without-estimates", "other-layer"],
)
def test_a_d_hat_not_validated_feeds_no_prediction(tmp_path, certificate, why):
    fake_sweep(tmp_path, certificate=certificate)
    rep = build_report(tmp_path, bootstrap=50)
    e = rep["table"]["stories"]
    assert e["exponent"]["prediction"] is None  # no test was run on it
    assert not e["id"]["validation"]["validated"] and e["id"]["validation"]["reason"].startswith(why)
    md = (tmp_path / "report.md").read_text()
    row = prediction_row(md)
    assert row.count(why) == 2 and "equivalent" not in row  # both forms withheld, with the reason
    words = next(line for line in md.splitlines() if line.startswith("- **stories**"))
    assert f"The test against α_D = 2/(2+d̂): {why}" in words
    stored = json.loads((tmp_path / "report.json").read_text())["table"]["stories"]["id"]
    assert stored["validation"]["reason"] == e["id"]["validation"]["reason"]


def test_a_certified_d_hat_is_tested_and_its_certificate_shown(tmp_path):
    fake_sweep(tmp_path)
    rep = build_report(tmp_path, bootstrap=50)
    assert rep["table"]["stories"]["exponent"]["prediction"]["loglog"]["verdict"] == "equivalent within ±0.05"
    md = (tmp_path / "report.md").read_text()
    assert "## ID certificates" in md and "| stories | the sweep's own | 1 | mle 1.00 ✓" in md and "| yes |" in md


def second_entry(path, certificate=None):
    """all-MiniLM-L6-v2's d-hat of the fake sweep's documents (the protocol second_id asks for) in id.json."""
    store = json.loads((path / "id.json").read_text())
    first = store["stories"]["protocol"]
    protocol = {
        "model": report_pretrain.SECOND_ID_MODEL,
        "package": report_pretrain.SECOND_ID_PACKAGE,
        "corpus": "stories",
        "documents": 200,
        "embed": first["embed"],
        "id": first["id"],
    }
    estimate = {"d": 8.0, "d_ci": [7.5, 8.5], "points": 600, "width": 384, "documents": 200}
    if certificate is not None:
        estimate["certificate"] = certificate
    store[f"stories:{report_pretrain.SECOND_ID_MODEL}"] = {"protocol": protocol, "estimate": estimate}
    atomic.write_json(path / "id.json", store)


def test_the_second_id_is_withheld_without_its_certificate(tmp_path):
    fake_sweep(tmp_path)
    second_entry(tmp_path)
    rep = build_report(tmp_path, bootstrap=50)
    e = rep["table"]["stories"]
    assert e["exponent"]["predictions"] is None and e["id_second"]["validation"]["reason"].startswith(
        "withheld: d̂ not validated at the last layer: no certificate"
    )
    md = (tmp_path / "report.md").read_text()
    assert "Against α_D from all-MiniLM-L6-v2's d̂: withheld: d̂ not validated at the last layer" in md
    second_entry(tmp_path, sound_record(layer=6))  # MiniLM's last block, certified
    rep = build_report(tmp_path, bootstrap=50)
    assert rep["table"]["stories"]["exponent"]["predictions"][report_pretrain.SECOND_ID_TEST]["loglog"]["verdict"]
    assert rep["table"]["stories"]["id_second"]["validation"] == {"validated": True, "layer": 6, "reason": None}


def test_a_certificate_is_stored_beside_its_estimate_and_made_once(tmp_path):
    path, protocol = tmp_path / "id.json", {"corpus": "stories"}
    estimate = report_pretrain.cached_id(path, "stories", protocol, lambda: {"d": 3.0})
    calls = []

    def probe():
        calls.append(1)
        return {**sound_record(), "probe": {**ProbeOptions().as_dict(), "final_ln": "after"}}

    first = report_pretrain.with_certificate(path, "stories", protocol, estimate, probe, ProbeOptions())
    again = report_pretrain.with_certificate(path, "stories", protocol, first, probe, ProbeOptions())
    assert len(calls) == 1 and first == again and first["d"] == 3.0
    stored = json.loads(path.read_text())["stories"]
    assert stored["protocol"] == protocol and stored["estimate"]["certificate"]["certified"]
    report_pretrain.with_certificate(path, "stories", protocol, first, probe, ProbeOptions(context=16))
    assert len(calls) == 2  # other probe options: probed again


def test_the_model_report_withholds_2beta_over_an_unvalidated_d_hat():
    why = "withheld: d̂ not validated at layer 2: no certificate (no probe of known dimension was run)"
    rep_N = {"prediction": None, "predictions": None}
    v = report_model._verdicts(rep_N, None, None, [], [], why)
    assert v["2beta/d-hat"] == why
    with pytest.raises(TypeError):  # the mutant that ignores the reason reads a test that was never run
        report_model._verdicts(rep_N, None, None, [], [])
    assert certify.validation({"d": 3.0}, {"layer": None, "final_ln": "after"}, 2)["reason"] == why

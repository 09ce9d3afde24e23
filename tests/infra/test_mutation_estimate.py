"""The mutation report's estimate of the score over all mutants from per-file samples (tools/mutation.py)."""

import importlib.util
import math
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _tool():
    spec = importlib.util.spec_from_file_location("mutation_tool", ROOT / "tools" / "mutation.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_files_are_weighted_by_their_mutants_not_by_their_sample():
    """File a ran in full (100 of 100, 90 detected), file b on a sample (30 of 300, 15 detected): the estimate
    is 0.25 * 0.9 + 0.75 * 0.5 = 0.6, not the pooled 105 / 130 = 0.81; only b's sample has variance,
    0.75^2 * q (1 - q) / 30 * (1 - 30/300) with q = 16/32."""
    est = _tool().stratified(
        {"a": {"mutants": 100, "ran": 100, "killed": 88, "timeout": 2}, "b": {"mutants": 300, "ran": 30, "killed": 15}}
    )
    assert est["estimate"] == pytest.approx(0.6)
    half = 1.959963984540054 * math.sqrt(0.75**2 * 0.25 / 30 * 0.9)
    assert est["ci95"] == pytest.approx([0.6 - half, 0.6 + half])
    assert est["mutants"] == 400


def test_credit_and_unsampled_files():
    tool = _tool()
    per = {"a": {"mutants": 10, "ran": 10, "killed": 8}, "b": {"mutants": 10, "ran": 10, "killed": 10}}
    assert tool.stratified(per)["estimate"] == pytest.approx(0.9)
    assert tool.stratified(per, {"a": 2})["estimate"] == pytest.approx(1.0)
    assert tool.stratified(per)["ci95"] == pytest.approx([0.9, 0.9])  # both ran in full: no sampling error
    assert tool.stratified({**per, "c": {"mutants": 5, "ran": 0}}) is None  # a stratum with no sample: unknown
    assert tool.stratified({**per, "d": {"mutants": 0, "ran": 0}})["estimate"] == pytest.approx(0.9)  # no mutants

"""The speed page quotes a benchmark only when its quiet verdict is recorded and quiet."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import helpers  # noqa: E402, F401  (puts tools/ on sys.path)


def _gen(monkeypatch=None, bench: Path | None = None):
    """The speed and development pages' generators as one namespace, reading benchmark files from `bench`."""
    from types import SimpleNamespace

    from docs_gen import _common, development, speed

    if bench is not None:
        for module in (_common, speed, development):
            monkeypatch.setattr(module, "BENCH", bench, raising=False)
    return SimpleNamespace(**{**vars(_common), **vars(speed), **vars(development)})


def test_only_quiet_runs_are_quoted(tmp_path, monkeypatch):
    docs = _gen(monkeypatch, tmp_path)
    q = {"verdict": "quiet", "other_cpu_share": 0.03, "date": "2026-12-02"}
    (tmp_path / "a.json").write_text(json.dumps({"quiet": q, "speedup": 4.25, "machine": {"cores": 2}}))
    (tmp_path / "b.json").write_text(json.dumps({"speedup": 9.5}))
    busy = {**q, "verdict": "DISTURBED: rerun before quoting it", "other_cpu_share": 0.4}
    (tmp_path / "c.json").write_text(json.dumps({"quiet": busy, "speedup": 7.75}))
    (tmp_path / "d.json").write_text(json.dumps({"one": {"quiet": q, "t": 1.5}, "two": {"t": 8.5}}))
    page = docs.speed()
    assert "4.25" in page and "1.5" in page
    assert "9.5" not in page and "7.75" not in page and "8.5" not in page
    assert "`b.json` (no quiet verdict recorded)" in page and "`c.json` (measured while the machine was busy" in page


def test_a_share_above_ten_percent_is_not_quiet_whatever_the_word():
    docs = _gen()
    assert docs.quiet_ok({"verdict": "quiet", "other_cpu_share": 0.05})
    assert not docs.quiet_ok({"verdict": "quiet", "other_cpu_share": 0.2})
    assert not docs.quiet_ok({"verdict": "DISTURBED", "other_cpu_share": 0.0})
    assert not docs.quiet_ok(None)


def test_the_goals_table_quotes_quiet_figures_and_judges_them(tmp_path, monkeypatch):
    docs = _gen(monkeypatch, tmp_path)
    q = {"verdict": "quiet", "other_cpu_share": 0.0}
    mle = {
        "tmcheck": {"best": 2.0},
        "skdim": {"best": 12.0},
        "faiss": {"best": 3.0},
        "speedup_vs_skdim": {"best": 6.0},
        "speedup_vs_faiss": {"best": 1.5},
        "limit": {"half_gram_seconds": 1.0},
    }
    (tmp_path / "id.json").write_text(json.dumps({"knn_engine": {"quiet": q, "mle_32768": mle}}))
    rows = {r.split("|")[1].strip(): r for r in docs.speed_targets().splitlines()[2:]}
    assert rows["exact MLE, K = 20, N = 32768, D = 768, in-process"].rstrip(" |").endswith("yes")  # 6x >= 5x
    assert rows["the same, against faiss-cpu exact search + the same MLE"].endswith("**no** |")  # 1.5x < 2x
    assert "within 2.5×" in docs.speed_targets() and "2.00×" in docs.speed_targets()
    busy = {"knn_engine": {"quiet": {**q, "verdict": "DISTURBED"}, "mle_32768": mle}}
    (tmp_path / "id.json").write_text(json.dumps(busy))  # mutation: the same figures, measured under load
    assert "6.00×" not in docs.speed_targets() and "not measured alone" in docs.speed_targets()


def _gpu_file(tmp_path, mode: str = "cuda", fail: str | None = None) -> dict:
    """The committed GPU check's file, its mode and one check's verdict changed."""
    doc = json.loads((Path(__file__).parents[2] / "benchmarks" / "results" / "gpu.json").read_text())
    doc["mode"] = mode
    if fail:
        doc["stages"]["parity"]["result"]["checks"][fail]["passed"] = False
    (tmp_path / "gpu.json").write_text(json.dumps(doc))
    return doc


def test_the_gpu_section_quotes_a_cuda_run_with_each_checks_verdict(tmp_path, monkeypatch):
    docs = _gen(monkeypatch, tmp_path)
    doc = _gpu_file(tmp_path)
    page, status = docs.speed_gpu(), docs.gpu_status()
    n = len(doc["stages"]["parity"]["result"]["checks"])
    assert f"{n} of {n} parity checks pass" in page and "**FAIL**" not in page
    assert f"{doc['stages']['throughput']['result']['tokens_per_s']:,.0f} tokens/s" in page
    assert f"N = {doc['stages']['id_large']['result']['N']:,}" in page
    assert doc["environment"]["device_name"] in status and "gpu.json" not in docs.speed()  # not in the CPU list
    _gpu_file(tmp_path, fail="knn_default")  # mutation: one check failed on the device
    assert "**FAIL**" in docs.speed_gpu() and "(failed: knn_default)" in docs.gpu_status()


def test_a_smoke_runs_file_is_never_quoted_as_a_gpu_figure(tmp_path, monkeypatch):
    docs = _gen(monkeypatch, tmp_path)
    _gpu_file(tmp_path, mode="cpu-smoke")
    assert docs.speed_gpu().startswith("No GPU figure exists") and "holds no CUDA run" in docs.gpu_status()

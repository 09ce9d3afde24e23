"""Reports write after they have read everything: a report whose inputs are missing, or that fails
while drawing, leaves every existing output byte for byte as it was (for every kind); shown to fail
when figures are written as they are drawn."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tmcheck.cli.main import app
from tmcheck.empirics.report import build_report, common, model, pretrain, synthetic
from tmcheck.util import atomic

RESULTS = Path(__file__).resolve().parents[2] / "results"
OUTPUTS = {
    "pretrain": ["report.md", "report.json", "fig_scaling.png", "fig_curves.png"],
    "synth": ["report.md", "report.json", "fig_alpha.png", "fig_loss.png"],
    "model": ["report.md", "report.json", "fig_model_scaling.png"],
}
runner = CliRunner()


def copy_with_sentinels(name: str, tmp_path: Path) -> tuple[Path, dict[str, bytes]]:
    """A copy of the committed experiment whose outputs hold sentinel bytes (a rebuild would change them)."""
    dest = tmp_path / name
    shutil.copytree(RESULTS / name, dest)
    before = {}
    for f in OUTPUTS[name]:
        before[f] = f"sentinel {f}".encode()
        (dest / f).write_bytes(before[f])
    return dest, before


def unchanged(dest: Path, before: dict[str, bytes]) -> bool:
    return all((dest / f).read_bytes() == b for f, b in before.items())


def test_a_missing_training_record_is_one_line_exit_2_and_no_output_changes(tmp_path):
    dest, before = copy_with_sentinels("pretrain", tmp_path)
    victim = sorted((dest / "runs").iterdir())[-1] / "result.json"
    victim.unlink()
    res = runner.invoke(app, ["report", str(dest)])
    assert res.exit_code == 2 and len(res.stderr.strip().splitlines()) == 1 and "result.json" in res.stderr
    assert unchanged(dest, before)


@pytest.mark.parametrize(
    "name,module,drawer",
    [("pretrain", pretrain, "draw_curves"), ("synth", synthetic, "draw_loss"), ("model", model, "draw")],
)
def test_a_failure_while_drawing_leaves_every_output_as_it_was(tmp_path, monkeypatch, name, module, drawer):
    dest, before = copy_with_sentinels(name, tmp_path)

    def boom(*args, **kwargs):
        raise ValueError("drawing failed")

    monkeypatch.setattr(module, drawer, boom)
    with pytest.raises(ValueError, match="drawing failed"):
        build_report(dest)
    assert unchanged(dest, before)


def test_the_check_fails_when_figures_are_written_as_they_are_drawn(tmp_path, monkeypatch):
    dest, before = copy_with_sentinels("pretrain", tmp_path)

    def eager(self, name, fig):  # the mutant: each figure written at once, not after everything is read
        atomic.write_bytes(self.directory / name, common.figure_bytes(fig))

    def boom(*args, **kwargs):
        raise ValueError("drawing failed")

    monkeypatch.setattr(common.Outputs, "figure", eager)
    monkeypatch.setattr(pretrain, "draw_curves", boom)
    with pytest.raises(ValueError):
        build_report(dest)
    assert not unchanged(dest, before)  # fig_scaling.png was replaced before the failure

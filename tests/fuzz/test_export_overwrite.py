"""`export hf --overwrite` removes only an export tmcheck wrote: onto `.`, the run, its parent, the sweep, an unmarked
directory or a link it is refused with every file in place; an earlier export is replaced; a full disk (injected, and
a real full tmpfs where the tests run as root) is one line and leaves the old export.

Each case says what the code did before (the comment), and comes with its mutation where there is one.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from harness import SECRET, invoke, one_line

from tmcheck.empirics.lm.hf import MARKER, export_hf


@pytest.mark.parametrize("target", [".", "run", "runs", "sweep", "unmarked", "link"])
def test_overwrite_removes_only_an_export_tmcheck_wrote(tmp_path, run_dir, target, monkeypatch):
    # before: OUT was removed without a check: `.` emptied the working directory, the run, its parent
    # or the sweep lost their checkpoints
    sweep = run_dir.parents[1]
    cwd = tmp_path / "work"
    cwd.mkdir()
    (cwd / "mine.txt").write_text(SECRET)
    monkeypatch.chdir(cwd)
    out = {
        ".": Path("."),
        "run": run_dir,
        "runs": run_dir.parent,
        "sweep": sweep,
        "unmarked": tmp_path / "someone",
        "link": tmp_path / "link",
    }[target]
    if target == "unmarked":
        out.mkdir()
        (out / "config.json").write_text("{}")
    if target == "link":
        export_hf(run_dir, tmp_path / "real")
        out.symlink_to(tmp_path / "real")
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    one_line(["export", "hf", run_dir, out, "--overwrite"], "--overwrite" if target != "unmarked" else MARKER)
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before and (cwd / "mine.txt").read_text() == SECRET


def test_overwrite_replaces_an_earlier_export(tmp_path, run_dir):
    out = tmp_path / "hf"
    export_hf(run_dir, out)
    (out / "model.safetensors").write_bytes(b"stale")
    res = invoke(["export", "hf", str(run_dir), str(out), "--overwrite", "--json"])
    assert res.exit_code == 0, res.output
    assert (out / MARKER).is_file() and (out / "model.safetensors").stat().st_size > 100
    assert not list(tmp_path.glob(".hf.*"))  # the old export moved aside and removed


def test_export_on_a_full_disk_is_one_line_and_leaves_the_old_export(tmp_path, run_dir, monkeypatch):
    # before: save_pretrained's SafetensorError escaped as a traceback
    from safetensors import SafetensorError
    from transformers import PreTrainedModel

    out = tmp_path / "hf"
    export_hf(run_dir, out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def full(self, *a, **k):
        raise SafetensorError("Error while serializing: I/O error: No space left on device (os error 28)")

    monkeypatch.setattr(PreTrainedModel, "save_pretrained", full)
    one_line(["export", "hf", run_dir, out, "--overwrite"], "no space left on the device")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before and not list(tmp_path.glob(".hf.*"))


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small tmpfs needs root")
def test_export_onto_a_real_full_tmpfs_is_one_line(tmp_path, run_dir):
    disk = tmp_path / "disk"
    disk.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(disk)]).returncode != 0:
        pytest.skip("tmpfs cannot be mounted here")
    try:
        st = os.statvfs(disk)
        (disk / "filler").write_bytes(b"\0" * (st.f_bavail * st.f_frsize - 8192))  # 8 KB left: less than the model
        one_line(["export", "hf", run_dir, disk / "hf"], "no space left on the device")
        assert [p.name for p in disk.iterdir()] == ["filler"]
    finally:
        subprocess.run(["umount", str(disk)])

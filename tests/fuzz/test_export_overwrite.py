"""`export hf --overwrite` removes only an export tmcheck wrote: onto `.`, the run, its parent, the sweep, an unmarked
directory or a link it is refused with every file in place; an earlier export is replaced; a full disk (injected, and
a real full tmpfs where the tests run as root) is one line and leaves the old export.

Each case says what the code did before (the comment), and comes with its mutation where there is one.
"""

from __future__ import annotations

import os
import subprocess
from contextlib import contextmanager
from pathlib import Path

import pytest
from harness import SECRET, invoke, one_line

from tmcheck.empirics.lm.hf import MARKER, export_hf

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")


@contextmanager
def tmpfs(path: Path, size: str):
    """A tmpfs of ``size`` mounted on the directory ``path`` (made if missing) for the block, then
    unmounted; the test is skipped where it cannot be mounted."""
    path.mkdir(exist_ok=True)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)]).returncode != 0:
        pytest.skip("tmpfs cannot be mounted here")
    try:
        yield path
    finally:
        subprocess.run(["umount", str(path)])


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


@needs_root
def test_export_onto_a_real_full_tmpfs_is_one_line(tmp_path, run_dir):
    with tmpfs(tmp_path / "disk", "64k") as disk:
        st = os.statvfs(disk)
        (disk / "filler").write_bytes(b"\0" * (st.f_bavail * st.f_frsize - 8192))  # 8 KB left: less than the model
        one_line(["export", "hf", run_dir, disk / "hf"], "no space left on the device")
        assert [p.name for p in disk.iterdir()] == ["filler"]


def tree(root: Path) -> dict[str, bytes | str]:
    """Every entry under root: a file's bytes, a link's target, a directory as 'dir'."""
    out: dict[str, bytes | str] = {}
    for p in sorted(root.rglob("*")):
        key = str(p.relative_to(root))
        out[key] = f"-> {os.readlink(p)}" if p.is_symlink() else "dir" if p.is_dir() else p.read_bytes()
    return out


@pytest.mark.parametrize(("mask", "dir_mode", "file_mode"), [(0o022, 0o755, 0o644), (0o077, 0o700, 0o600)])
def test_export_modes_follow_the_umask(tmp_path, run_dir, mask, dir_mode, file_mode):
    # before: the directory kept mkdtemp's 0700 (model.safetensors 0600): colleagues could not read it
    old = os.umask(mask)
    try:
        for out in (tmp_path / "hf", tmp_path / "hf"):  # a new export, then --overwrite
            export_hf(run_dir, out, overwrite=out.exists())
            assert out.stat().st_mode & 0o777 == dir_mode
            assert {p.name: p.stat().st_mode & 0o777 for p in out.iterdir()} == dict.fromkeys(
                [p.name for p in out.iterdir()], file_mode
            )
    finally:
        os.umask(old)


@pytest.mark.parametrize("added", ["eval.txt", "finetuned/weights.bin", "config.json->outside", "MARKER->outside"])
def test_overwrite_refuses_what_the_export_did_not_write(tmp_path, run_dir, outside, added):
    # before: --overwrite removed the whole directory, with the user's OUT/finetuned/ and OUT/eval.txt in it
    out = tmp_path / "hf"
    export_hf(run_dir, out)
    name, _, link = added.partition("->")
    name = MARKER if name == "MARKER" else name
    if link:
        (out / name).unlink()
        (out / name).symlink_to(outside)
    else:
        (out / name).parent.mkdir(exist_ok=True)
        (out / name).write_text(SECRET)
    before, secret = tree(tmp_path), outside.read_text()
    message = MARKER if name == MARKER else f"{out} holds {name.split('/')[0]}, which `tmcheck export hf` did not write"
    one_line(["export", "hf", run_dir, out, "--overwrite"], message)
    assert tree(tmp_path) == before
    if name == MARKER:
        return
    res = invoke(["export", "hf", str(run_dir), str(out), "--overwrite", "--force-clean", "--json"])
    assert res.exit_code == 0, res.output
    from tmcheck.empirics.lm.hf import WRITTEN

    assert sorted(p.name for p in out.iterdir() if p.is_file() and not p.is_symlink()) == sorted([*WRITTEN, MARKER])
    assert len(list(out.iterdir())) == len(WRITTEN) + 1  # the user's entry went with --force-clean
    assert outside.read_text() == secret  # the link was replaced, never written through
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_the_marker_lists_the_files_and_an_older_marker_is_still_replaced(tmp_path, run_dir):
    import json

    from tmcheck.empirics.lm.hf import WRITTEN

    out = tmp_path / "hf"
    export_hf(run_dir, out)
    mark = json.loads((out / MARKER).read_text())
    assert mark["files"] == sorted(p.name for p in out.iterdir() if p.name != MARKER) == sorted(WRITTEN)
    (out / MARKER).write_text(json.dumps({"format": "tmcheck-hf-export/1", "checkpoint": "x"}))  # before the list
    export_hf(run_dir, out, overwrite=True)
    assert json.loads((out / MARKER).read_text())["format"] == "tmcheck-hf-export/2"
    one_line(["export", "hf", run_dir, out, "--force-clean"], "--force-clean goes with --overwrite")


def test_a_failed_write_names_the_users_directory_never_a_staging_one(tmp_path, run_dir, monkeypatch):
    from transformers import PreTrainedModel

    def denied(self, path, *a, **k):
        raise PermissionError(13, "Permission denied", str(Path(path) / "model.safetensors"))

    monkeypatch.setattr(PreTrainedModel, "save_pretrained", denied)
    res = one_line(["export", "hf", run_dir, tmp_path / "hf"], f"could not write the export into {tmp_path / 'hf'}")
    assert str(tmp_path / "hf" / "model.safetensors") in res.stderr  # the library's path, moved to the user's
    assert ".tmcheck-export-" not in res.stderr and not list(tmp_path.glob(".*"))


@pytest.mark.parametrize("special", ["fifo", "device", "directory"])
def test_a_tokenizer_that_is_no_regular_file_is_refused_at_once(tmp_path, run_dir, special):
    # before: tokenizers opened a FIFO and waited for a writer, forever
    import time

    path = {"fifo": tmp_path / "tok.fifo", "device": Path("/dev/zero"), "directory": tmp_path / "tokdir"}[special]
    if special == "fifo":
        os.mkfifo(path)
    if special == "directory":
        path.mkdir()
    t0 = time.monotonic()
    one_line(["export", "hf", run_dir, tmp_path / "hf", "--tokenizer", path], f"{path} is a")
    assert time.monotonic() - t0 < 1.0 and not (tmp_path / "hf").exists()


def test_a_bind_mount_that_cannot_be_renamed_is_replaced_in_place(tmp_path, run_dir, monkeypatch):
    # before: the rename of a mount point failed and left an empty hidden directory beside it each time
    import errno

    out = tmp_path / "hf"
    export_hf(run_dir, out)
    (out / "model.safetensors").write_bytes(b"stale")
    real = os.replace

    def busy(src, dst):
        if Path(src) == out:
            raise OSError(errno.EBUSY, "Device or resource busy", str(src))
        return real(src, dst)

    monkeypatch.setattr(os, "replace", busy)
    export_hf(run_dir, out, overwrite=True)
    assert (out / "model.safetensors").stat().st_size > 100
    assert not list(tmp_path.glob(".*")) and [p.name for p in out.glob(".*")] == [MARKER]


@needs_root
def test_overwrite_onto_a_mount_point_leaves_no_hidden_directory(tmp_path, run_dir):
    with tmpfs(tmp_path / "hf", "8m") as out:
        (out / MARKER).write_text('{"format": "tmcheck-hf-export/2", "checkpoint": "x", "files": []}')
        for _ in range(2):
            res = invoke(["export", "hf", str(run_dir), str(out), "--overwrite"])
            assert res.exit_code == 0, res.output
            assert not list(tmp_path.glob(".*")) and [p.name for p in out.glob(".*")] == [MARKER]
        (out / "eval.txt").write_text(SECRET)
        before = tree(out)
        one_line(["export", "hf", run_dir, out, "--overwrite"], "eval.txt")
        assert tree(out) == before

"""Files reached through links, and lock files: no write through a symbolic link (a sweep's lock, a run's lock, the
token shards, test index and tokenizer of an interrupted data preparation, an append-only log), and a lock that is
another file's hard link refused; the link's target is left as it was.

Each case is what a hostile but realistic user did to the code (the comment says what happened then), and each
comes with its mutation: the same input made valid, so that the test is seen to fail where the guard is missing.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from harness import SECRET

from tmcheck.empirics.data import DatasetSpec, prepare_dataset
from tmcheck.empirics.sweep import SweepDir, layout, register_kind, run_spec, run_sweep

sys.path.insert(0, str(Path(__file__).parents[1] / "empirics"))
import sweep_toy

TOY = sweep_toy.ToyPreset(name="toy", xs=(1, 2))


def quiet(s):
    pass


@pytest.fixture(autouse=True)
def toy():
    register_kind(sweep_toy.KIND)


def test_a_symlinked_sweep_lock_is_refused_and_its_target_untouched(tmp_path, outside):
    # before: the lock was opened 'a+' and truncated, and the submitter's pid written into the target
    sweep = tmp_path / "s"
    SweepDir(sweep).open("exectoy", TOY)
    (sweep / layout.LOCK).symlink_to(outside)
    with pytest.raises(ValueError, match="is a symbolic link, not a lock file"):
        run_sweep(sweep, "exectoy", TOY, progress=False, log=quiet)
    assert outside.read_text() == SECRET and not (sweep / layout.PLAN).exists()
    (sweep / layout.LOCK).unlink()  # mutation: without the link the sweep runs
    assert len(run_sweep(sweep, "exectoy", TOY, progress=False, log=quiet)) == 2


def test_a_symlinked_run_lock_is_refused_and_its_target_untouched(tmp_path, outside):
    sweep = SweepDir(tmp_path / "s")
    sweep.open("exectoy", TOY)
    spec = sweep_toy.plan(sweep.context(), quiet)[0]
    sweep.run_dir(spec.run).mkdir(parents=True)
    (sweep.run_dir(spec.run) / layout.LOCK).symlink_to(outside)
    with pytest.raises(ValueError, match="is a symbolic link"):
        run_spec(sweep, spec)
    assert outside.read_text() == SECRET
    (sweep.run_dir(spec.run) / layout.LOCK).unlink()
    assert run_spec(sweep, spec)["y"] == 1 + TOY.steps


def test_a_lock_that_is_another_files_hard_link_is_refused(tmp_path, outside):
    sweep = tmp_path / "s"
    SweepDir(sweep).open("exectoy", TOY)
    os.link(outside, sweep / layout.LOCK)
    with pytest.raises(ValueError, match="not a lock file of tmcheck"):
        run_sweep(sweep, "exectoy", TOY, progress=False, log=quiet)
    assert outside.read_text() == SECRET


SPEC = DatasetSpec(corpus="stories", vocab_size=300, max_train_tokens=20_000, max_eval_tokens=2_000)


@pytest.mark.parametrize("name", ["train.bin", "test.idx.npy", "tokenizer.json"])
def test_symlinked_data_files_of_an_interrupted_preparation_are_replaced_not_written_through(tmp_path, outside, name):
    # before: np.memmap(mode='w+') and np.save wrote the token ids through the link
    data = tmp_path / "data"
    data.mkdir()
    (data / name).symlink_to(outside)  # left there, with no dataset.json: an interrupted preparation
    meta = prepare_dataset(SPEC, data)
    assert outside.read_text() == SECRET
    assert not (data / name).is_symlink() and (data / name).stat().st_size > 0
    assert meta["splits"]["train"]["tokens"] > 0


def test_append_only_logs_refuse_a_link(tmp_path, outside):
    from tmcheck.util.atomic import open_append

    (tmp_path / "worker.log").symlink_to(outside)
    with pytest.raises(ValueError, match="symbolic link"):
        open_append(tmp_path / "worker.log")
    with open_append(tmp_path / "other.log") as f:  # mutation: a new file is appended to
        f.write("a line\n")
    assert outside.read_text() == SECRET and (tmp_path / "other.log").read_text() == "a line\n"

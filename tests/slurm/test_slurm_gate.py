"""The gate of the SLURM tests (slurm_cluster.py): runs everywhere, cluster or not."""

import pytest
import slurm_cluster


def test_missing_cluster_fails_when_expected_and_skips_otherwise(monkeypatch, tmp_path):
    """The gate itself: no sinfo on PATH, or sinfo showing only a down node, is a problem; with
    TMCHECK_SLURM=1 the problem fails the test, without it the test skips."""
    monkeypatch.setenv("PATH", str(tmp_path))
    assert "not installed" in slurm_cluster.cluster_problem()
    fake = tmp_path / "sinfo"
    fake.write_text("#!/bin/sh\necho 'down*'\n")
    fake.chmod(0o755)
    assert "no usable node" in slurm_cluster.cluster_problem()
    fake.write_text("#!/bin/sh\necho idle\n")
    assert slurm_cluster.cluster_problem() is None
    with pytest.raises(pytest.fail.Exception, match="TMCHECK_SLURM=1"):
        slurm_cluster.require_cluster("no usable node", is_expected=True)
    with pytest.raises(pytest.skip.Exception, match="slurm-up.sh"):
        slurm_cluster.require_cluster("no usable node", is_expected=False)
    slurm_cluster.require_cluster(None, is_expected=True)
    monkeypatch.setenv("TMCHECK_SLURM", "1")
    assert slurm_cluster.expected()
    monkeypatch.setenv("TMCHECK_SLURM", "0")
    assert not slurm_cluster.expected()

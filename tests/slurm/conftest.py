"""Fixtures for tests that submit to a real SLURM cluster (see slurm_cluster.py for the rules)."""

import os
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import slurm_cluster


@pytest.fixture(scope="session")
def slurm_cluster_ready() -> None:
    """The cluster answers and has a usable node; otherwise fail or skip (slurm_cluster.py)."""
    slurm_cluster.require_cluster(slurm_cluster.cluster_problem(), slurm_cluster.expected())


@pytest.fixture
def slurm_scratch(slurm_cluster_ready, tmp_path_factory) -> Path:
    """A directory the jobs can write (logs, pickled results). On the one-node cluster any local
    path works, since slurmd runs on this host; on a multi-node cluster set TMCHECK_SLURM_SCRATCH
    to a directory on a filesystem every node mounts."""
    shared = os.environ.get("TMCHECK_SLURM_SCRATCH")
    if shared:
        return Path(tempfile.mkdtemp(prefix="tmcheck-slurm-", dir=shared))
    return tmp_path_factory.mktemp("slurm")

"""tmcheck.util.bounds: a size over the memory available is one line naming the option, before any
allocation; TMCHECK_MEMORY_BYTES sets what is available (and shows each refusal can fail)."""

from __future__ import annotations

import pytest

from tmcheck.util import bounds


def test_memory_is_read_and_can_be_set(monkeypatch):
    assert bounds.available_memory() > 0
    monkeypatch.setenv("TMCHECK_MEMORY_BYTES", "1000")
    assert bounds.available_memory() == 1000


def test_a_size_over_the_memory_is_refused_naming_the_option(monkeypatch):
    monkeypatch.setenv("TMCHECK_MEMORY_BYTES", str(10**9))
    assert bounds.check_memory("--points", 10**9) == 10**9  # at the bound: accepted (the mutation)
    with pytest.raises(ValueError, match=r"^--points asks for about 1.0 GB of memory for the sample; this machine"):
        bounds.check_memory("--points", 10**9 + 1, "the sample")
    with pytest.raises(ValueError, match="--n"):
        bounds.check_memory("--n", float("nan"))
    assert bounds.check_memory("--n", 5, available=5) == 5
    with pytest.raises(ValueError):
        bounds.check_memory("--n", 6, available=5)


def test_counts_are_bounded():
    assert bounds.check_count("--trials", 10, 10) == 10
    with pytest.raises(ValueError, match=r"--trials must lie in \[0, 10\], got 11"):
        bounds.check_count("--trials", 11, 10)
    assert bounds.human(1.5e9) == "1.5 GB" and bounds.human(12) == "12 bytes"

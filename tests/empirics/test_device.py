"""The one device resolver (empirics/device.py): accepted forms, and every refusal is a ValueError."""

import pytest
import torch

from tmcheck.empirics.device import resolve_device


def test_auto_and_cpu():
    assert resolve_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device(" CPU ") == torch.device("cpu")
    assert resolve_device(torch.device("cpu")) == torch.device("cpu")


@pytest.mark.parametrize("bad", ["gpu", "cuda:", "cuda:x", "mps", "", "cpu:0", "cuda:-1"])
def test_unknown_names_are_refused(bad):
    with pytest.raises(ValueError, match="unknown device"):
        resolve_device(bad)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the refusal when CUDA is absent")
@pytest.mark.parametrize("name", ["cuda", "cuda:0", "CUDA:1"])
def test_cuda_refused_without_cuda(name):
    with pytest.raises(ValueError, match="no CUDA device"):
        resolve_device(name)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_index_range():
    assert resolve_device("cuda") == torch.device("cuda", 0)
    n = torch.cuda.device_count()
    assert resolve_device(f"cuda:{n - 1}") == torch.device("cuda", n - 1)
    with pytest.raises(ValueError, match="only"):
        resolve_device(f"cuda:{n}")

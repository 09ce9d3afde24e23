"""Fixtures of the fuzz suite: the hostile corpus (built once per session) and a scratch root whose
files outside each case's working directory are compared before and after the case."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from corpus import build


@pytest.fixture(scope="session")
def corpus(tmp_path_factory) -> dict[str, Path]:
    return build(tmp_path_factory.mktemp("hostile"))


@pytest.fixture(scope="session")
def scratch(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("cases")

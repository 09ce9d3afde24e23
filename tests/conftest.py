"""Hypothesis profiles: `ci` (derandomised, bounded; selected by .ci/run via HYPOTHESIS_PROFILE=ci)
and `dev` (random, more examples). The default is `dev`. Also puts tests/theory on sys.path so
tests can import the independent file-format implementation, and tools/ for the docs generators.
The fixtures `cli_json` (a command's --json document) and `cli_error` (its one-line error) serve any test folder."""

import json
import os
import sys
from pathlib import Path

# pytest -n 2 runs two workers on two cores: each may use one thread (torch reads this at import, the
# trainer's default thread count honours it), else the workers oversubscribe the cores many times over.
os.environ.setdefault("OMP_NUM_THREADS", "1")

import pytest
from hypothesis import HealthCheck, settings

sys.path.insert(0, str(Path(__file__).parent / "theory"))
# the docs generators (tools/docs_gen) import as `docs_gen`, whichever test module is collected first
sys.path.insert(0, str(Path(__file__).parents[1] / "tools"))
# the benchmarks package (tests/benchmarks import it), whichever test module is collected first: it came from a
# sys.path line in test_gpu_check.py, so a module collected before that one could not import it
sys.path.insert(0, str(Path(__file__).parents[1]))

settings.register_profile(
    "ci",
    derandomize=True,
    max_examples=40,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile("dev", max_examples=100, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


@pytest.fixture(scope="session")
def cli_json():
    """`cli_json(args, code=0)`: `tmcheck ARGS --json` through Typer's runner; asserts the exit code (`code`: 0,
    1 for a verdict that FAILS, or a tuple of those allowed) and returns the JSON document printed on stdout."""
    from typer.testing import CliRunner

    from tmcheck.cli.main import app

    runner = CliRunner()

    def run(args, code: int | tuple[int, ...] = 0):
        res = runner.invoke(app, [*map(str, args), "--json"])
        assert res.exit_code in (code if isinstance(code, tuple) else (code,)), res.output
        return json.loads(res.stdout)

    return run


@pytest.fixture(scope="session")
def cli_error():
    """`cli_error(args, code=2)`: `tmcheck ARGS` through Typer's runner; asserts the exit code (2: bad input) and
    that stderr is one line (no traceback anywhere), and returns that line."""
    from typer.testing import CliRunner

    from tmcheck.cli.main import app

    runner = CliRunner()

    def run(args, code: int = 2) -> str:
        res = runner.invoke(app, [*map(str, args)])
        assert res.exit_code == code and res.stderr.count("\n") == 1 and res.stderr.endswith("\n"), res.output
        assert "Traceback" not in res.output
        return res.stderr.strip()

    return run

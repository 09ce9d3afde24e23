"""handle_errors: every expected failure of a command is one line on stderr and exit code 2."""

import typer
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from tmcheck.cli.common import UserError, handle_errors

app = typer.Typer()


@app.command()
@handle_errors
def boom(kind: str) -> None:
    if kind == "memory":
        raise MemoryError("Unable to allocate 57.2 GiB for an array")
    if kind == "recursion":

        def deeper(n):
            return deeper(n + 1)

        deeper(0)
    if kind == "user":
        raise UserError("bad value")
    if kind == "bug":
        raise RuntimeError("a real bug")


def _run(kind):
    return CliRunner().invoke(app, [kind])


def test_memory_and_recursion_errors_are_one_line_exit_2():
    for kind, text in (
        ("memory", "out of memory (Unable to allocate 57.2 GiB"),
        ("recursion", "nested too deeply"),
        ("user", "bad value"),
    ):
        res = _run(kind)
        assert res.exit_code == 2, (kind, res.output)
        assert text in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_an_unexpected_exception_is_not_disguised_as_bad_input():
    res = _run("bug")  # a bug must stay visible (exit 1 with its exception), not become "bad input"
    assert res.exit_code == 1 and isinstance(res.exception, RuntimeError)


@given(st.floats(min_value=1e-12, max_value=1e12, allow_nan=False))
def test_a_printed_bound_is_still_a_bound_and_close(x):
    """A certificate's sup bound prints rounded up (6 digits): never below the bound, within one unit of its
    6th digit; 0.29995 at ε = 0.3 prints 0.29995 (.4g printed 0.3), and the plain .6g (round to nearest)
    prints 0.299995 for 0.2999951, below the bound."""
    from tmcheck.cli.common import _up

    printed = float(_up(x))
    assert x <= printed <= x * (1 + 2e-5)
    assert _up(0.29995) == "0.29995" and _up(0.2999951) == "0.299996"
    assert float(f"{0.2999951:.6g}") < 0.2999951  # the mutant's reading

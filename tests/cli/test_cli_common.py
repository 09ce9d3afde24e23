"""handle_errors: every expected failure of a command is one line on stderr and exit code 2."""

import typer
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

"""handle_errors turns every exception type a library raises on bad data into one line and exit 2
(SafetensorError, csv.Error, UnpicklingError, tokenizers' bare Exception, zlib.error, a RuntimeError
raised inside torch), while a RuntimeError raised by tmcheck's own code stays a bug: a traceback, exit 1."""

from __future__ import annotations

import csv
import io
import pickle
import zlib

import pytest
import typer
from typer.testing import CliRunner

from tmcheck.cli.common import handle_errors


def torch_runtime():
    import torch

    torch.nn.Linear(4, -1)  # raises inside torch: a negative width read from a file


def safetensors_error():
    from safetensors.torch import load

    load(b"\x08\x00\x00\x00\x00\x00\x00\x00garbage!")


def csv_error():
    csv.field_size_limit(16)
    try:
        list(csv.reader(io.StringIO("x" * 100)))
    finally:
        csv.field_size_limit(131072)


def tokenizers_error():
    from tokenizers import Tokenizer

    Tokenizer.from_str("{not a tokenizer")


CASES = {
    "torch RuntimeError": (torch_runtime, "bad data for torch"),
    "SafetensorError": (safetensors_error, "bad data (SafetensorError)"),
    "csv.Error": (csv_error, "bad data (Error): field larger than field limit"),
    "UnpicklingError": (lambda: pickle.loads(b"\x80\x04garbage"), "bad data (UnpicklingError)"),
    "tokenizers Exception": (tokenizers_error, "bad data (Exception)"),
    "zlib.error": (lambda: zlib.decompress(b"not zlib"), "bad data (error)"),
}


def invoke(fn):
    app = typer.Typer()

    @app.command()
    @handle_errors
    def boom() -> None:
        fn()

    return CliRunner().invoke(app, [])


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_library_errors_on_bad_data_are_one_line_exit_2(case):
    fn, message = CASES[case]
    res = invoke(fn)
    assert res.exit_code == 2, (res.output, res.exception)
    assert message in res.stderr and len(res.stderr.strip().splitlines()) == 1, res.stderr


def test_a_runtime_error_of_tmcheck_itself_stays_a_bug():
    def ours():
        raise RuntimeError("a real bug")

    res = invoke(ours)  # the mutation of the torch case: the same type, raised outside any library
    assert res.exit_code == 1 and isinstance(res.exception, RuntimeError)

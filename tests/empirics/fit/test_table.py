"""Strict table reading for `tmcheck fit`: every ambiguity of a CSV is refused with its row named."""

from __future__ import annotations

import time

import pytest
from typer.testing import CliRunner

from tmcheck.cli.main import app
from tmcheck.empirics.fit.table import count_rows, read_table

runner = CliRunner()
GOOD = "n,seed,loss\n100,0,1.0\n1000,0,0.5\n10000,0,0.25\n"


def test_a_clean_table_reads(tmp_path):
    f = tmp_path / "t.csv"
    f.write_text(GOOD + "\n")
    cols, header = read_table(f)
    assert header == ["n", "seed", "loss"] and cols["loss"] == ["1.0", "0.5", "0.25"] and count_rows(f) == 3


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("n,loss,loss\n100,1,2\n1000,1,2\n", "more than once"),  # two columns named loss
        ("n,seed,loss\n1,000,0,1.0\n1000,0,0.5\n", "line 2 has 4 fields, the header 3"),  # thousands separator
        ("n,seed,loss\n100,0\n1000,0,0.5\n", "line 2 has 2 fields"),  # a short row
        ("n,,loss\n100,0,1\n", "column 2 of the header has no name"),
        ('n,seed,loss\n100,0,"1.0\n', "not a readable CSV"),  # an unterminated quote
        ("n,seed,loss\n", "no data rows"),
        ("", "no header row"),
    ],
)
def test_ambiguous_tables_are_refused(tmp_path, text, words):
    f = tmp_path / "t.csv"
    f.write_text(text)
    with pytest.raises(ValueError, match=words):
        read_table(f)


def test_an_oversized_field_and_bad_bytes_are_one_line_errors(tmp_path):
    f = tmp_path / "big.csv"
    f.write_text("n,loss\n100," + "9" * 200_000 + "\n")
    res = runner.invoke(app, ["fit", str(f), "--x", "n"])
    assert res.exit_code == 2 and "field larger than field limit" in res.output and "Traceback" not in res.output
    f.write_bytes(b"n,loss\n100,\xff\xfe\n")
    res = runner.invoke(app, ["fit", str(f), "--x", "n"])
    assert res.exit_code == 2 and "not UTF-8" in res.output


def test_the_thousands_separator_case_exits_2_through_the_cli(tmp_path):
    f = tmp_path / "t.csv"
    f.write_text("n,seed,loss\n1,000,0,1.0\n10,000,0,0.5\n100000,0,0.25\n")
    res = runner.invoke(app, ["fit", str(f), "--x", "n"])
    assert res.exit_code == 2 and "line 2 has 4 fields" in res.output


def test_a_million_rows_are_refused_in_seconds_and_the_limit_is_an_option(tmp_path):
    f = tmp_path / "huge.csv"
    with open(f, "w") as fh:
        fh.write("n,loss\n")
        fh.writelines(f"{100 + i},{1.0 + 1e-7 * i}\n" for i in range(1_000_000))
    t0 = time.perf_counter()
    res = runner.invoke(app, ["fit", str(f), "--x", "n"])
    took = time.perf_counter() - t0
    assert res.exit_code == 2 and "1,000,000 data rows; the limit is 100,000" in res.output
    assert "--max-rows" in res.output
    assert took < 5 or pytest.skip(f"refusal took {took:.1f} s on this (loaded) machine")
    assert count_rows(f) == 1_000_000
    with pytest.raises(ValueError, match="limit is 10"):
        read_table(f, max_rows=10)

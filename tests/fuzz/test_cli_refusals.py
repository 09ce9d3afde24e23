"""Known hostile command lines, one table over every command group: huge target and derived expressions, exact
numbers past their digit limits, sizes past --size-limit, malformed network, point, table and checkpoint files,
out-of-range options. Each is refused with one line on stderr, exit 2, within 10 s, nothing written outside the
working directory and no payload run; the valid neighbours once wrongly refused are accepted; and the harness that
judges the cases is not blind. `{name}` is a file of the hostile corpus (corpus.py); the generated cases are in
test_fuzz_cli.py."""

from __future__ import annotations

import pytest
from harness import check, run

REFUSE_SECONDS = 10  # the bar: refused within 10 s

BAD = [  # (argv, a piece of the one-line message)
    ("lemma 1 --target 10**10**10", "decimal digits"),
    ("lemma 1 --target 9**9**9", "decimal digits"),
    ("lemma 1 --target 2**2**2**2**2**2", "decimal digits"),
    ("lemma 1 --target x0**100000", "exponent"),
    ("theorem 2 --target 10**10**10", "decimal digits"),
    ("theorem 2 --target 2**2**2**2**2**2", "decimal digits"),
    ("network eval {net_good.json} 1e100000000 1 1 1 1 1", "digits"),
    ("network eval {net_huge_exponent.json} 1 1 1", "digits"),
    ("network info {net_huge_exponent.json}", "digits"),
    ("lemma interaction --kappa 1e1000000000", "--kappa"),
    ("lemma 1 --eps 1e-300", "grid"),
    ("lemma 1 --eps 1e-100", "--size-limit"),
    ("lemma 1 --d 50 --target x0", "--size-limit"),
    ("network eval {net_grow40.json} 1 1 1 1 1 1", "--max-bits"),
    ("id synth --n 10000000000000", "--n"),
    ("id synth --n 10000000 --D 768", "--D"),
    ("theorem 2 --manifold circle --D 100000 --N 2", "D = 100000"),
    ("theorem 2 --manifold sphere --eps 0.05", "--size-limit"),
    ("network info {net_blocks5.json}", "expected a list"),
    ("network info {net_heads_null.json}", "expected a list"),
    ("network info {net_deep.json}", "nested too deeply"),
    ("network info {net_version_true.json}", "version True"),
    ("network info {net_version_float.json}", "version 1.0"),
    ("network info {net_underscore.json}", "'1_000'"),
    ("network info {net_arabic_digit.json}", "not an exact number"),
    ("network info {net_ragged.json}", "net_ragged.json"),
    ("network info {net_not_json.json}", "not valid JSON"),
    ("network eval {net_float_overflow.json} 1 1 1 1 1 1 --float", "overflowed"),
    ("id estimate {pts_huge_header.npy}", "header claims shape"),
    ("id estimate {pts_truncated.npy}", "header claims shape"),
    ("id estimate {pts_objects.npy}", "Python objects"),
    ("id estimate {pts_pickle.pt}", "never loaded"),
    ("id estimate {pts_truncated.pt}", "not a readable tensor file"),
    ("id estimate {pts_truncated.safetensors}", "not a readable safetensors file"),
    ("id estimate {pts_good.npy} --bootstrap -3", "--bootstrap"),
    ("id estimate {pts_good.npy} --device tpu", "unknown device"),
    ("lemma 1 --points -5", "--points"),
    ("bound theorem2 --H-f -1", "--H-f"),
    ("bound theorem1 --C-M -3", "--C-M"),
    ("bound theorem1 --d 5 --D 3", "exceeds the ambient dimension"),
    ("fit {fit_good.csv} --x N --beta -1", "--beta"),
    ("fit {fit_good.csv} --x N --beta 0", "--beta"),
    ("fit {fit_good.csv} --x N --beta nan", "--beta"),
    ("predict --id 2 --beta 5", "--beta"),
    ("fit {fit_good.csv} --x N --bootstrap -5", "--bootstrap"),
    ("fit {fit_good.csv} --x N --group gn", "NaN in every row"),
    ("fit {fit_good.csv} --x N --derive D=10**10**10", "decimal digits"),
    ("fit {fit_good.csv} --x N --where '9**9**9>1'", "decimal digits"),
    ("fit {fit_good.csv} --x N --derive 'D=N**(10**10)'", "exponent"),
    ("lemma interaction --query-kernel ''", "--query-kernel"),
    ("lemma interaction --q ''", "--query-kernel"),
    ("lemma interaction --l 100000", "--l"),
    ("theorem 2 --max-tokens -5", "--max-tokens"),
    ("embed {ckpt_pickle.pt} --text {fit_good.csv}", "ckpt_pickle.pt"),
    ("embed {run_bad} --text {fit_good.csv}", "run_bad"),
]

GOOD = [
    "lemma 1 --target 1e-3*x0 --H-f 1 --json",
    "network eval {net_good.json} 1/3 -1/2 0.5 1e-3 0 1",
    "id estimate {pts_bf16.safetensors} --json",
    "bound theorem1 --d 4 --D 16 --json",
]


def _argv(template: str, corpus) -> list[str]:
    import re
    import shlex

    return [re.sub(r"\{([^{}]+)\}", lambda m: str(corpus[m.group(1)]), a) for a in shlex.split(template)]


@pytest.mark.parametrize("template,message", BAD, ids=[b[0] for b in BAD])
def test_hostile_case_is_one_line_exit_2_fast(template, message, corpus, scratch):
    o = run(_argv(template, corpus), scratch)
    check(o, bad_input=True)
    assert message in o.stderr, o.describe()
    assert o.seconds < REFUSE_SECONDS, o.describe()
    assert not (corpus["net_good.json"].parent / "PWNED").exists()


@pytest.mark.parametrize("template", GOOD)
def test_valid_input_is_accepted(template, corpus, scratch):
    o = run(_argv(template, corpus), scratch)
    check(o)
    assert o.exit_code == 0, o.describe()


def test_the_check_catches_a_traceback(scratch):
    """The harness is not blind: a command that raises is reported as a traceback."""
    import typer
    from harness import Outcome

    o = Outcome(["x"], 1, "", "", "TypeError: boom", 0.1, [])
    with pytest.raises(AssertionError):
        check(o)
    o = Outcome(["x"], 0, "", "", None, 0.1, ["/elsewhere/file"])
    with pytest.raises(AssertionError):
        check(o)
    o = Outcome(["x"], 1, "error: a\nb\n", "", None, 0.1, [])
    with pytest.raises(AssertionError):
        check(o, bad_input=True)
    assert typer  # the real app is exercised by every case above

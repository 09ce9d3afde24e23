"""Safe column expressions for `tmcheck fit`: derived columns (``D=C/(6*N)``) and row filters
(``loss<3 and N>1e8``), parsed without ``eval``.

The text is parsed by Python's ``ast`` (parsing only), every node is checked against a small grammar
(numbers, column names, + - * / **, unary minus, comparisons, and/or/not, log/exp/sqrt/abs) and
rebuilt as a sympy expression, which sympy turns into a numpy function of the named columns.
Anything else (attributes, subscripts, calls of other names, strings, lambdas...) is refused.
"""

from __future__ import annotations

import ast
import re
from itertools import pairwise

import numpy as np
import sympy

FUNCTIONS = {"log": sympy.log, "exp": sympy.exp, "sqrt": sympy.sqrt, "abs": sympy.Abs}
_BINOPS = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.Pow: lambda a, b: a**b,
}
_CMPOPS = {
    ast.Lt: sympy.Lt,
    ast.LtE: sympy.Le,
    ast.Gt: sympy.Gt,
    ast.GtE: sympy.Ge,
    ast.Eq: sympy.Eq,
    ast.NotEq: sympy.Ne,
}
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

# Field conventions: a name that is not a column may stand for one of these (Chinchilla-style CSVs).
ALIASES = {
    "N": ("Model Size", "params", "parameters", "n_params"),
    "C": ("Training FLOP", "FLOPs", "flops", "compute"),
    "D": ("Training Tokens", "tokens", "n_tokens"),
}


# What a column means on a figure's axis, with its unit (`fit --plot`); keys are compared case-insensitively,
# and ALIASES' spellings read as their field. A column not listed keeps its own name.
MEANINGS = {
    "n": "training-set size n (samples or tokens)",
    "N": "model size N (parameters)",
    "D": "training data D (tokens)",
    "C": "training compute C (FLOP)",
    "loss": "loss (nats per token)",
    "test_loss": "test loss (nats per token)",
    "val_loss": "validation loss (nats per token)",
    "test_mse": "test MSE against f",
    "width": "width (units)",
    "steps": "optimizer steps",
}


def axis_label(name: str) -> str:
    """The axis label of a column: its meaning and unit where the name is a known field or an alias of
    one, else the name itself."""
    for field, spellings in ALIASES.items():
        if name in spellings:
            name = field
    if name in MEANINGS:
        return MEANINGS[name]
    lowered = {k.lower(): v for k, v in MEANINGS.items() if k.lower() not in ("n", "d", "c")}
    return lowered.get(name.lower(), name)


def _to_sympy(node, symbols: dict):
    if isinstance(node, ast.Expression):
        return _to_sympy(node.body, symbols)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return sympy.Float(node.value) if isinstance(node.value, float) else sympy.Integer(node.value)
    if isinstance(node, ast.Name):
        return symbols.setdefault(node.id, sympy.Symbol(node.id))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        return _BINOPS[type(node.op)](_to_sympy(node.left, symbols), _to_sympy(node.right, symbols))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _to_sympy(node.operand, symbols)
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return sympy.Not(_to_sympy(node.operand, symbols))
    if isinstance(node, ast.BoolOp):
        parts = [_to_sympy(v, symbols) for v in node.values]
        return sympy.And(*parts) if isinstance(node.op, ast.And) else sympy.Or(*parts)
    if isinstance(node, ast.Compare):
        terms = [_to_sympy(node.left, symbols)] + [_to_sympy(c, symbols) for c in node.comparators]
        if not all(type(op) in _CMPOPS for op in node.ops):
            raise ValueError("only <, <=, >, >=, ==, != comparisons are allowed")
        return sympy.And(*[_CMPOPS[type(op)](a, b) for op, (a, b) in zip(node.ops, pairwise(terms), strict=True)])
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in FUNCTIONS
        and len(node.args) == 1
        and not node.keywords
    ):
        return FUNCTIONS[node.func.id](_to_sympy(node.args[0], symbols))
    raise ValueError(
        f"not allowed in an expression: {ast.unparse(node)} "
        f"(numbers, column names, + - * / **, comparisons, and/or/not, {', '.join(FUNCTIONS)})"
    )


def parse(text: str):
    """The sympy expression of `text` and the names it uses (ValueError on anything outside the grammar)."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise ValueError(f"cannot parse {text!r}: {exc.msg}") from None
    except (RecursionError, MemoryError):
        raise ValueError(f"cannot parse {text!r}: nested too deeply") from None
    from tmcheck.theory.targets import check_size

    check_size(text.strip(), "expression")  # 10**10**10 is refused before sympy computes it
    symbols: dict = {}
    return _to_sympy(tree, symbols), sorted(symbols)


def resolve(name: str, columns: dict) -> str:
    """The column a name refers to: itself, or the one column matching its alias (see ALIASES)."""
    if name in columns:
        return name
    hits = [c for c in ALIASES.get(name, ()) if c in columns]
    if len(hits) == 1:
        return hits[0]
    raise ValueError(f"no column {name!r}; columns are {', '.join(columns)}")


def evaluate(text: str, columns: dict) -> tuple[np.ndarray, dict]:
    """The value of `text` on the columns ({name: array}) as a numpy array, and {name: column used}."""
    expr, names = parse(text)
    cols = [resolve(n, columns) for n in names]
    fn = sympy.lambdify([sympy.Symbol(n) for n in names], expr, modules="numpy")
    with np.errstate(all="ignore"):
        out = fn(*[np.asarray(columns[c], dtype=np.float64) for c in cols])
    length = len(next(iter(columns.values())))
    return np.broadcast_to(np.asarray(out), (length,)).copy(), dict(zip(names, cols, strict=True))


def derive(spec: str, columns: dict) -> tuple[str, np.ndarray, dict]:
    """``"D=C/(6*N)"`` -> ("D", values, {name: column used})."""
    name, sep, text = spec.partition("=")
    name = name.strip()
    if not sep or not NAME.match(name) or not text.strip() or text.lstrip().startswith("="):
        raise ValueError(f"--derive needs NAME=EXPRESSION, e.g. 'D=C/(6*N)', got {spec!r}")
    values, used = evaluate(text, columns)
    return name, values.astype(np.float64), used


def where(text: str, columns: dict) -> tuple[np.ndarray, dict]:
    """The boolean mask of a filter such as ``"loss < 3 and N > 1e8"``, and {name: column used}."""
    mask, used = evaluate(text, columns)
    if mask.dtype != bool:
        raise ValueError(f"--where must be a condition (a comparison), got {text!r}")
    return mask, used

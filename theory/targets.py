"""Target functions for Lemma 1 and Theorem 2 (Section 2.4, Appendix E): safe parsing and checks.

A target is a sympy expression in x0, ..., x{d-1}. It is parsed with `sympy.parsing.sympy_parser.
parse_expr` under a restricted namespace (no builtins, only the names below), never with Python's
`eval` on user text of our own; names outside the namespace and dunder tricks are refused before
parsing. The declared constants (H_f, β, R) are checked against the target on a sample: a sample
can refute a declared Hölder constant, never prove one, so a passing check is evidence only, and
every guarantee tmcheck states is conditional on the declaration.
"""

from __future__ import annotations

import ast
import functools
import itertools
import math
import re
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

# sympy and mpmath load on first use (parsing or evaluating a target): the grid functions below, which the
# resource bounds and every `tmcheck` start-up reach, need neither
FUNCTION_NAMES = (
    "sin",
    "cos",
    "tan",
    "exp",
    "log",
    "sqrt",
    "Abs",
    "sinh",
    "cosh",
    "tanh",
    "atan",
    "asin",
    "acos",
    "Min",
    "Max",
    "sign",
    "floor",
    "ceiling",
    "pi",
    "E",
    "Rational",
)
ALIASES = {"abs": "Abs", "min": "Min", "max": "Max"}


@functools.cache
def _namespace() -> dict:
    """The names a target may use, bound to sympy's objects, and the parser's own names."""
    import sympy

    out = {name: getattr(sympy, name) for name in FUNCTION_NAMES}
    out.update({alias: getattr(sympy, name) for alias, name in ALIASES.items()})
    parser = {"Integer": sympy.Integer, "Float": sympy.Float, "Symbol": sympy.Symbol, "Rational": sympy.Rational}
    return {"__builtins__": {}, **parser, **out}


KNOWN_NAMES = frozenset(FUNCTION_NAMES) | frozenset(ALIASES)
_TOKEN = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
# numeric literals, scientific notation included (1e-3, 2.5E+4): removed before names are looked up,
# so the exponent's "e" is not read as a name (a name never starts with a digit or a dot)
_NUMBER = re.compile(r"(?<![A-Za-z_0-9])(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_ALLOWED_CHARS = re.compile(r"^[A-Za-z0-9_+\-*/^(). ,]*$")
MAX_LENGTH = 500
# resource guards, checked on the syntax tree before sympy evaluates anything (sympy computes
# 10**10**10 exactly): a constant exponent may not exceed MAX_EXPONENT in magnitude, and no constant
# (a literal, or a power of constants) may have more than MAX_DIGITS decimal digits
MAX_EXPONENT = 10_000
MAX_DIGITS = 10_000
DYADIC = 2**40  # grid values are rounded to multiples of 2^-40 (the rounding enters the error budget)


class TargetError(ValueError):
    """A target that cannot be used: unparsable, wrong variables, not finite or not real on the domain."""


@dataclass(frozen=True)
class Target:
    """f: R^d -> R as a sympy expression, with a float64 evaluator and an exact-rounding evaluator."""

    text: str
    d: int
    expr: object  # a sympy.Expr

    @property
    def symbols(self) -> list:
        import sympy

        return [sympy.Symbol(f"x{i}", real=True) for i in range(self.d)]

    def __call__(self, X: np.ndarray) -> np.ndarray:
        """float64 values at the rows of X (n, d)."""
        import sympy

        X = np.atleast_2d(np.asarray(X, dtype=np.float64))
        f = sympy.lambdify(self.symbols, self.expr, modules="numpy")
        with np.errstate(all="ignore"):
            out = f(*[X[:, i] for i in range(self.d)])
        return np.broadcast_to(np.asarray(out, dtype=np.complex128), (X.shape[0],)).copy()

    def values_dyadic(self, points) -> list[Fraction]:
        """f at exact rational points, computed at 40 digits and rounded to the nearest multiple of 2^-40."""
        import mpmath
        import sympy

        f = sympy.lambdify(self.symbols, self.expr, modules="mpmath")
        out = []
        with mpmath.workdps(40):
            for p in points:
                v = f(*[mpmath.mpf(Fraction(c).numerator) / Fraction(c).denominator for c in p])
                if not isinstance(v, (mpmath.mpf, int, float)) or not mpmath.isfinite(v):
                    raise TargetError(f"target {self.text!r} is not finite and real at {tuple(str(c) for c in p)}")
                out.append(Fraction(int(mpmath.nint(v * DYADIC)), DYADIC))
        return out


def parse_target(text: str, d: int) -> Target:
    """Parse `text` as a function of x0..x{d-1}; raise TargetError with a one-line reason."""
    if not isinstance(d, int) or d < 1:
        raise TargetError(f"the dimension d must be an integer >= 1, got {d!r}")
    text = (text or "").strip()
    if not text:
        raise TargetError("the target is empty")
    if len(text) > MAX_LENGTH or not _ALLOWED_CHARS.match(text) or "__" in text:
        raise TargetError(f"target {text!r} contains characters or names that are not allowed")
    check_size(text)
    import sympy
    from sympy.parsing.sympy_parser import parse_expr, standard_transformations

    variables = {f"x{i}": sympy.Symbol(f"x{i}", real=True) for i in range(d)}
    for tok in _TOKEN.findall(_NUMBER.sub(" ", text)):
        if tok not in variables and tok not in KNOWN_NAMES:
            raise TargetError(
                f"unknown name {tok!r} in target {text!r}; variables are x0..x{d - 1}, functions "
                + ", ".join(sorted(k for k in KNOWN_NAMES if k[0].islower()))
            )
    namespace = dict(_namespace())
    try:
        expr = parse_expr(
            text.replace("^", "**"),
            local_dict=variables,
            global_dict=namespace,
            transformations=standard_transformations,
            evaluate=True,
        )
    except Exception as exc:  # sympy raises many types for bad syntax; all mean "does not parse"
        raise TargetError(f"target {text!r} does not parse ({type(exc).__name__})") from None
    if not isinstance(expr, sympy.Expr) or isinstance(
        expr, (sympy.logic.boolalg.BooleanFunction, sympy.logic.boolalg.BooleanAtom, sympy.core.relational.Relational)
    ):
        raise TargetError(f"target {text!r} is not a real-valued expression")
    extra = {s.name for s in expr.free_symbols} - set(variables)
    if extra:
        raise TargetError(f"target {text!r} uses {sorted(extra)}; variables are x0..x{d - 1}")
    if expr.has(sympy.zoo, sympy.oo, -sympy.oo, sympy.nan):
        raise TargetError(f"target {text!r} is not finite")
    return Target(text, d, expr)


def _digits(node: ast.AST, text: str, what: str = "target") -> float | None:
    """An upper bound on |log10 |v|| of a constant subexpression (None: it holds a name or a call).

    Sums bound products and quotients; a sum adds at most log10 2 to its larger term. Large
    exponents and oversized constants raise TargetError with the estimated size."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        seg = ast.get_source_segment(text, node) or str(node.value)
        mant, _, exp = seg.lower().partition("e")
        digits = len(mant.replace(".", "").lstrip("0")) + abs(int(exp or 0))
        if digits > MAX_DIGITS:
            raise TargetError(
                f"the number {seg[:20]}{'...' if len(seg) > 20 else ''} has about {digits} digits; "
                f"at most {MAX_DIGITS} are allowed in a {what}"
            )
        v = abs(node.value)
        return abs(math.log10(v)) if v not in (0, math.inf) else (0.0 if v == 0 else float(digits))
    if isinstance(node, ast.UnaryOp):
        return _digits(node.operand, text, what)
    if isinstance(node, ast.BinOp):
        a, b = _digits(node.left, text, what), _digits(node.right, text, what)
        if isinstance(node.op, ast.Pow):
            if b is None:
                return None
            if a is not None:
                size = 10 ** min(b, 300.0) * a  # log10 |a^b| <= |b| |log10 |a||
                if size > MAX_DIGITS:
                    seg = (ast.get_source_segment(text, node) or "a power")[:40]
                    raise TargetError(
                        f"{seg} in the {what} has about 10^{b + math.log10(max(a, 1e-300)):.4g} "
                        f"decimal digits; at most {MAX_DIGITS} are allowed"
                    )
                return size
            if b > math.log10(MAX_EXPONENT):
                raise TargetError(f"an exponent of about 10^{b:.4g} in the {what}; at most {MAX_EXPONENT} is allowed")
            return None
        if a is None or b is None:
            return None
        return a + b if isinstance(node.op, (ast.Mult, ast.Div)) else max(a, b) + math.log10(2)
    return None


def check_size(text: str, what: str = "target") -> None:
    """Refuse expressions whose exact evaluation would not fit (exponent and digit limits), before sympy
    runs; also used for `fit --derive/--where` (empirics/fit/columns.py)."""
    try:
        tree = ast.parse(text.replace("^", "**"), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise TargetError(f"{what} {text!r} does not parse") from None
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp):
            _digits(node, text.replace("^", "**"), what)


def check_sample(d: int, n_random: int, rng: np.random.Generator, per_axis: int = 0) -> np.ndarray:
    """Points of [0,1]^d for the checks: the 2^d corners, a regular grid, and uniform random points."""
    if per_axis == 0:
        per_axis = max(2, min(33, int(round(4000 ** (1 / d)))))
    grid = (
        np.array(list(itertools.product(np.linspace(0, 1, per_axis), repeat=d)))
        if per_axis**d <= 40000
        else np.empty((0, d))
    )
    corners = np.array(list(itertools.product((0.0, 1.0), repeat=d)))
    return np.vstack([corners, grid, rng.random((n_random, d))])


@dataclass(frozen=True)
class TargetReport:
    sup_abs: float  # max |f| on the sample
    holder_ratio: float  # max |f(x)-f(y)| / ||x-y||^β over the sampled pairs
    n_points: int


def check_target(
    target: Target, H: float, beta: float, R: float | None, rng: np.random.Generator, n_random: int = 2000
) -> TargetReport:
    """Refute bad declarations: f must be finite and real on [0,1]^d, |f| <= R, and the Hölder
    ratio on sampled nearby pairs must not exceed H (evidence, not proof; see module docstring)."""
    X = check_sample(target.d, n_random, rng)
    v = target(X)
    bad = ~np.isfinite(v) | (np.abs(v.imag) > 1e-12 * np.maximum(1.0, np.abs(v.real)))
    if bad.any():
        x = X[np.argmax(bad)]
        raise TargetError(
            f"target {target.text!r} is unbounded or not real on [0,1]^{target.d} (at x = {np.round(x, 4).tolist()})"
        )
    v = v.real
    sup = float(np.abs(v).max())
    if R is not None and sup > R:
        x = X[np.argmax(np.abs(v))]
        raise TargetError(f"declared R = {R} but |f| = {sup:.6g} at x = {np.round(x, 4).tolist()}")
    ratio = 0.0
    for scale in (1e-1, 1e-2, 1e-3):
        Y = np.clip(X + scale * rng.standard_normal(X.shape), 0.0, 1.0)
        w = target(Y).real
        dist = np.linalg.norm(X - Y, axis=1)
        ok = dist > 0
        ratio = max(ratio, float(np.max(np.abs(v[ok] - w[ok]) / dist[ok] ** beta)))
    if ratio > H * (1 + 1e-9):
        raise TargetError(
            f"declared H_f = {H} is too small for β = {beta}: a sampled pair has |f(x)-f(y)|/|x-y|^β = {ratio:.4g}"
        )
    return TargetReport(sup, ratio, len(X))


# --------------------------------------------------------------------------------------------
# grids and the error analysis of Lemma 1 (Appendix E.1)


def check_constants(d: int, H: float, beta: float, eps: float) -> None:
    if not isinstance(d, int) or d < 1:
        raise TargetError(f"d must be an integer >= 1, got {d!r}")
    if not (0 < eps < 1):
        raise TargetError(f"ε must lie in (0, 1) as in Lemma 1, got {eps}")
    if not (0 < beta <= 1):
        raise TargetError(f"β must lie in (0, 1], got {beta}")
    if not (H > 0 and math.isfinite(H)):
        raise TargetError(f"H_f must be a positive number, got {H}")


MAX_LOG10_N = 300  # grids beyond float64's range are refused (the size guard, spec.SIZE_LIMIT, refuses far less)


def _check_grid(log10_N: float, eps: float) -> None:
    if log10_N > MAX_LOG10_N:
        raise TargetError(
            f"ε = {eps} needs a grid of about 10^{log10_N:.4g} points per axis (at most 10^{MAX_LOG10_N}); "
            "take a larger ε"
        )


def paper_N(d: int, H: float, beta: float, eps: float) -> int:
    """The proof's grid: N = d (2^d H_f / ε)^{1/β} + 1, rounded up."""
    check_constants(d, H, beta, eps)
    _check_grid(math.log10(d) + (d * math.log10(2) + math.log10(H) - math.log10(eps)) / beta, eps)
    return math.ceil(d * (2**d * H / eps) ** (1 / beta) + 1 - 1e-12)


def paper_error_bound(d: int, H: float, beta: float, N: int) -> float:
    """The proof's bound 2^d d^β H_f / (N-1)^β."""
    return 2**d * d**beta * H / (N - 1) ** beta


def tight_error_bound(d: int, H: float, beta: float, N: int) -> float:
    """Corrected analysis: H_f (2√d / (3(N-1)))^β.

    φ_n(x) > 0 forces |3(N-1)(x^i - t_{n^i})| < 2 for every i, so ||x - x_n||_2 < 2√d/(3(N-1)); the
    φ_n are non-negative and sum to 1 on [0,1]^d, so |f̂(x) - f(x)| = |Σ φ_n (f_n - f(x))| is at most
    the largest |f_n - f(x)| over the patches with φ_n(x) > 0. The paper instead sums 2^d such terms
    (not needed: it is a convex combination) and bounds ||x - x_n||_2 by d/(N-1) (not needed: √d·2/3 suffices).
    """
    return H * (2 * math.sqrt(d) / (3 * (N - 1))) ** beta


def tight_N(d: int, H: float, beta: float, eps: float) -> int:
    """The smallest N >= 2 with tight_error_bound(N) <= ε: N = ⌈(2√d/3)(H_f/ε)^{1/β}⌉ + 1.

    The closed form is only a starting point: float rounding can put the least N one off it, so the
    least N is found by `least_N`, a bisection on the monotone predicate tight_error_bound(N) <= ε, in
    O(log N) evaluations whatever the start (stepping by one from a wrong start took ~10^14 steps).
    """
    check_constants(d, H, beta, eps)
    _check_grid(math.log10(2 * math.sqrt(d) / 3) + (math.log10(H) - math.log10(eps)) / beta, eps)
    N = max(2, math.ceil(2 * math.sqrt(d) / 3 * (H / eps) ** (1 / beta)) + 1)
    if N > 2**50:  # float64 cannot tell N from N - 1 here: the closed form is the answer
        return N
    return least_N(lambda k: tight_error_bound(d, H, beta, k) <= eps, N)


def least_N(holds, start: int, low: int = 2) -> int:
    """The least N >= low with holds(N), for a predicate monotone in N (false, ..., false, true, ...).

    Gallops from `start` (doubling the step) until the answer is bracketed, then bisects: O(log |N* - start|)
    calls of holds. Raises TargetError when no N below 2^1000 holds.
    """
    start = max(start, low)
    if holds(start):
        hi, step = start, 1
        while hi - step >= low and holds(hi - step):
            hi, step = hi - step, 2 * step
        lo = max(hi - step, low - 1)  # holds(lo) is false, or lo = low - 1 (nothing below low is asked)
    else:
        lo, step = start, 1
        while not holds(lo + step):
            lo, step = lo + step, 2 * step
            if step > 2**1000:
                raise TargetError("no grid size satisfies the bound (searched up to 2^1000)")
        hi = lo + step
    while hi - lo > 1:  # invariant: holds(hi), and lo < low or not holds(lo)
        mid = (lo + hi) // 2
        if holds(mid):
            hi = mid
        else:
            lo = mid
    return hi


def grid_N(kind: str, d: int, H: float, beta: float, eps: float) -> int:
    if kind == "paper":
        return paper_N(d, H, beta, eps)
    if kind == "tight":
        return tight_N(d, H, beta, eps)
    raise TargetError(f"unknown grid {kind!r}; expected 'paper' or 'tight'")

"""The formulas the Lemma 1 and Theorem 2 reports print beside their values (Section 2.4), read back as sympy
expressions, so that a test evaluates the printed text itself and compares it with the printed value."""

from __future__ import annotations

import sympy as sp
from sympy.parsing.sympy_parser import implicit_multiplication_application, parse_expr, standard_transformations


def formula(text: str) -> sp.Expr:
    """A printed formula ("d ε^{-d/β}", "O(log d): log2(d) + 5", "C_M (d N^d + d D)", "d² ε^{-2d/β}") as a sympy
    expression in d, D, N, C (for C_M), eps and beta: the text after an "O(·):" prefix."""
    t = text.split(": ", 1)[-1]
    t = t.replace("C_M", "C*").replace("²", "**2").replace("^{", "**(").replace("}", ")").replace("^", "**")
    t = t.replace("ε", "eps").replace("β", "beta")
    names = {k: sp.Symbol(k) for k in ("d", "D", "N", "C", "eps", "beta")}
    names["log2"] = lambda x: sp.log(x, 2)
    names["log"] = sp.log
    return parse_expr(
        t, local_dict=names, transformations=standard_transformations + (implicit_multiplication_application,)
    )

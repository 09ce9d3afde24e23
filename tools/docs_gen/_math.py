"""Formulas written in plain text (`N = d(2^d H_f/ε)^{1/β} + 1`, by proofs_check, theory and the pages),
marked as math for the site (`\\(N = d(2^d H_f/ε)^{1/β} + 1\\)`): the mkdocs hook of tools/docs.py runs
`math` on the theory pages as they are rendered, and MathJax typesets what it marks.

The text stays the registry's: `math` only finds the formulas in it and rewrites their notation into TeX
(multi-letter subscripts upright, `^(…)` as a group, Unicode super- and subscripts as `^{…}`, `||` as a
norm). A formula is a run of words that are not English words and not code (`theory.bounds.x`), holding at
least one `^` or `_`; the run is trimmed of the punctuation around it and must balance its brackets. The
browser check (.ci/browser-check.py) fails a page whose rendered text still shows `^{` or `_{`, so a
formula this misses is found when the site is built.
"""

from __future__ import annotations

import re

# Words that are math inside a formula (operators written as words), printed upright.
OPERATORS = {
    "log": r"\log",
    "max": r"\max",
    "min": r"\min",
    "exp": r"\exp",
    "sup": r"\sup",
    "ceil": r"\operatorname{ceil}",
}
UPRIGHT = {"Lip", "FFN", "MHA", "ReLU"}
SUPER = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789−+")
SUB = str.maketrans("₀₁₂₃₄₅₆₇₈₉", "0123456789")
_SUPERS = re.compile(r"[⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]+")
_SUBS = re.compile(r"[₀₁₂₃₄₅₆₇₈₉]+")
_WORD = re.compile(r"^(?:[a-z]{2,}|[A-Z][a-z]+|[A-Z]{2,})$")  # an English word, not lR or dN (products)
# Code, not math: a dotted name (theory.bounds.block_constants), a name of two underscores (alpha_D_hat), a
# possessive (tmcheck's), a quote mark (a ' after a bracket or before anything but a bracket is no prime).
_CODE = re.compile(
    r"[A-Za-z_]\w*\.[A-Za-z_]\w*|[A-Za-z0-9]_[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9]|[A-Za-z]'s\b|\)'|(?:^|\()'\w"
)
RELATIONS = {"<=": r"\le ", ">=": r"\ge ", "!=": r"\ne ", "<-": r"\leftarrow "}


def _group(s: str, i: int, open_: str, close: str) -> int:
    """The index just past the bracket that closes the one at s[i], or -1."""
    depth = 0
    for j in range(i, len(s)):
        depth += (s[j] == open_) - (s[j] == close)
        if depth == 0:
            return j + 1
    return -1


def to_tex(f: str) -> str:
    """One formula's notation in TeX: `x^(a)` -> `x^{a}`, `d_embd` -> `d_{\\mathrm{embd}}`, `L_T²` ->
    `L_T^{2}`, `δ₃` -> `δ_{3}`, `||x||` -> `\\|x\\|`, `log` -> `\\log`."""
    out, i = [], 0
    while i < len(f):
        if f[i] in "^_" and i + 1 < len(f) and f[i + 1] == "(":
            end = _group(f, i + 1, "(", ")")
            if end > 0:
                out.append(f"{f[i]}{{{to_tex(f[i + 2 : end - 1])}}}")
                i = end
                continue
        if f[i] in "^_" and (m := re.match(r".([A-Za-z]{2,})", f[i:])):
            out.append(rf"{f[i]}{{\mathrm{{{m.group(1)}}}}}")  # d_embd, Q^data: one upright word
            i += m.end()
            continue
        if f[i] in "^_" and (m := re.match(r".([A-Za-z]\d+|[-−]\w+|[A-Za-z]_(?:\w|\{[^{}]*\}))", f[i:])):
            out.append(f"{f[i]}{{{to_tex(m.group(1))}}}")  # I_t2, 2^-K, ^L_T: one group, not two scripts
            i += m.end()
            continue
        if f[i : i + 2] in RELATIONS:
            out.append(RELATIONS[f[i : i + 2]])
            i += 2
            continue
        if m := re.match(r"[A-Za-z]{2,}", f[i:]):
            w = m.group()
            if w == "log" and f[i + 3 : i + 4] == "2":
                out.append(r"\log_2 ")
                i += 4
                continue
            if (i == 0 or not f[i - 1].isalpha()) and (w in OPERATORS or w in UPRIGHT):
                out.append(OPERATORS[w] + " " if w in OPERATORS else rf"\mathrm{{{w}}}")
            else:
                out.append(w)
            i += m.end()
            continue
        out.append(f[i])
        i += 1
    s = "".join(out)
    s = _SUPERS.sub(lambda m: "^{" + m.group().translate(SUPER) + "}", s)
    s = _SUBS.sub(lambda m: "_{" + m.group().translate(SUB) + "}", s)
    return s.replace("||", r"\|")


def _is_text(token: str) -> bool:
    core = token.strip("()[],.;:'\"")
    return (
        token == "|"
        or bool(_CODE.search(token))
        or ("`" in token)
        or (bool(_WORD.match(core)) and core not in OPERATORS and core not in UPRIGHT)
    )


def _balanced(s: str) -> bool:
    """Every bracket closed, in order."""
    stack = []
    for c in s:
        if c in "({[":
            stack.append(c)
        elif c in ")}]":
            if not stack or "({["[")}]".index(c)] != stack.pop():
                return False
    return not stack


def _trim(run: str) -> tuple[str, str, str]:
    """(before, formula, after): the run less the punctuation and unmatched brackets at its ends."""
    before, after = "", ""
    while run:
        if run[0] in ",.;:" or (run[0] in "([" and run.count(run[0]) > run.count(")]"["([".index(run[0])])):
            before, run = before + run[0], run[1:]
        elif run[-1] in ",.;:" or (run[-1] in ")]" and run.count(run[-1]) > run.count("(["[")]".index(run[-1])])):
            after, run = run[-1] + after, run[:-1]
        else:
            break
    return before, run, after


def math(text: str) -> str:
    """Markdown with each formula of its prose and tables marked as inline math, `\\(…\\)`, in TeX notation;
    code blocks, code spans, math already marked and HTML comments are kept as they are."""
    out, fenced = [], False
    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        if fenced or line.lstrip().startswith(("```", "<!--", "::: ")):
            out.append(line)
            continue
        lead = re.match(r"\s*(?:(?:[-*+]|\d+\.|#+|>)\s+)?", line).group()  # a list marker or heading
        line = line[len(lead) :]
        parts = re.split(r"(`[^`]*`|\\\(.*?\\\))", line)
        out.append(lead + "".join(p if p.startswith(("`", "\\(")) else _math_plain(p) for p in parts))
    return "\n".join(out)


def _math_plain(text: str) -> str:
    tokens = re.split(r"(\s+)", text)
    out: list[str] = []
    run: list[str] = []

    def flush() -> None:
        if run:
            out.append(_wrap(run))
            run.clear()

    for tok in tokens:
        if not tok.strip():
            (run if run else out).append(tok)
        elif _is_text(tok):
            flush()
            out.append(tok)
        else:
            run.append(tok)
    flush()
    return "".join(out)


def _wrap(run: list[str]) -> str:
    """A run of math-like tokens (and the spaces between them) with its formulas marked: the whole run when
    it balances its brackets, else each longest balanced stretch of it that holds a script."""
    words = "".join(run)
    lead = words[: len(words) - len(words.lstrip())]
    core = words.strip()
    tail = words[len(lead) + len(core) :]
    before, formula, after = _trim(core)
    if _balanced(formula):
        if re.search(r"[\^_₀-₉]", formula):
            return f"{lead}{before}\\({to_tex(formula)}\\){after}{tail}"
        return words
    toks = [t for t in run if t.strip()]
    if len(toks) == 1:
        return words
    out, i = [], 0
    while i < len(toks):
        j = next((j for j in range(len(toks), i + 1, -1) if _balanced("".join(_trim(" ".join(toks[i:j]))[1]))), i + 1)
        out.append(_wrap([" ".join(toks[i:j])]))
        i = j
    return lead + " ".join(out) + tail

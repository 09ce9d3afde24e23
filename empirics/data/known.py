"""Token corpora whose data-scaling exponent is known by construction (issue #39, item 1).

The paper's α_D = 2β/(2β+d) (eq. 3) is tested on language, where neither d nor β is known. These
generators write documents whose next-token loss on marked *target* tokens has an excess over the Bayes
loss that falls as a known power of the training size n. Corpus names: `synth:KIND` or
`synth:KIND:key=value:...` (e.g. `synth:zipf:a=1.5:tokens=2000000`); every corpus tmcheck trains on
(`tmcheck train`, `sweep pretrain`) accepts them. A corpus is a pure function of its parameters: seeded,
deterministic, sized in tokens (`tokens`: the symbols of all splits, a record's coordinates, `=`, value and
line end, plus one end-of-text per document; a BPE whose vocabulary holds every symbol gives that count).

A document is `records` lines, each `INPUT = VALUE`; the VALUE tokens are the targets. Lines of one
document are independent draws (a document holds several so that no two documents repeat: the corpora
are deduplicated and split by document hash, tmcheck.empirics.data.corpora).

**manifold** (d and β known; α = 2β/(2β+d)). A point x of a d-manifold M ⊂ R^D (the problem's manifold,
tmcheck.empirics.synthetic.problem: a circle or a flat torus carried into R^D by a random isometry) is
spelled by its D ambient coordinates, each quantised to q = 10^digits levels on [-r, r] (r = the shape's
norm bound) as one `digits`-digit number. The value is y = f(x) + σε, ε ~ N(0, 1), f the problem's
β-Hölder `holder` field (mean 0, variance 1), quantised to bins of width h on [-R, R) (the end bins take
the tails), spelled as one number. Why the excess loss on the value tokens scales as n^{-2β/(2β+d)}:
- the Bayes law of the value given x is p_f(b) = ∫_{bin b} N(y; f(x), σ²) dy, a discretised Gaussian
  location family with location f(x). Any predictor q(·|x) of the bin has excess log loss E_x KL(p_f || q).
- Upper bound: the plug-in q = p_m with m(x) an estimate of f has KL(p_f || p_m) = I_h (f - m)²/2 + O((f-m)³),
  I_h the Fisher information of the discretised family about its location; for h ≪ σ, I_h = (1 + O(h²/σ²))/σ²
  (Sheppard's correction), so the excess is MSE(m)/(2σ²) to first order. kNN regression with k ≍ n^{2β/(2β+d)}
  reaches MSE ≍ n^{-2β/(2β+d)} for β ≤ 1 on a d-dimensional support (Györfi et al. 2002, Thm 6.2, with d the
  intrinsic dimension: Kpotufe 2011).
- Lower bound: the minimax KL risk of this conditional-density problem is of the order of the minimax
  squared-Hellinger/L² risk of f (Yang & Barron 1999, Ann. Statist. 27(5), Thm 1 and §6: the rate is set by
  the metric entropy of the class, log N(ε) ≍ ε^{-d/β} for β-Hölder functions on a d-manifold), which gives
  n^{-2β/(2β+d)}. So the best achievable excess on the targets falls as n^{-2β/(2β+d)}; a learner at the
  minimax rate shows exactly that exponent (the chain's premise, as in the synthetic regression).
Conditions: β ≤ 1 (the holder field; smoother f would need local polynomials); h ≪ σ (default h = σ/4:
I_h σ² = 0.995); |f| + 3σ inside [-R, R] (the clipping touches the tails only); the quantisation of x finer
than the estimation scale, n^{-1/(2β+d)} ≫ 1/q, i.e. n ≪ q^{2β+d} records (q = 1000: 10^9 for d = 1,
β = 0.5), so that the floor of O(q^{-2β}/σ²) from quantising x stays far below the excess; n counted in
records (tokens are a fixed multiple of records); the coordinate tokens, uniform given the document's
past, are learnt at the parametric rate and are excluded from the target loss.

**zipf** (Hutter 2021, "Learning curve theory", arXiv:2102.04074, §3-4; α = a/(1+a)). Keys i = 1..K,
drawn iid with P(i) ∝ (i + i₀)^{-(1+a)}, each spelled as `key_digits`/2 two-digit numbers of a random
bijection of the ranks (K = 10^key_digits; frequent keys are not small numbers), followed by its value:
one of V = 100 two-digit numbers, a fixed random function of the key. The values are deterministic, so
the Bayes loss of the target is 0. A memoriser that predicts a seen key's value and is uniform on an unseen
one has excess log V · Σ_{i unseen} P(i), of expectation log V · Σ_i P(i)(1 - P(i))^n ≍ n^{-a/(1+a)}
(Hutter's Thm: with θ_i ∝ i^{-(1+a)} the expected error of the deterministic memoriser is
Γ(1 - 1/(1+a)) (c n)^{-a/(1+a)}(1 + o(1)); an offset i₀ changes only the constant). No learner that sees
n draws does better in the exponent: a key never drawn carries no information about its value (Hutter §5).
Conditions: n ≫ i₀^{1+a} (the offset keeps any one key under 1% of records, so documents do not repeat), and
n ≪ K^{1+a}/c, past which the truncation at K bends the curve (with K = 10^6, a = 1, i₀ = 100 the local
slope is within 0.005 of 1/2 from 10^3 to 10^6 records). A key repeated inside one document can be copied in
context; with i₀ = 100 and 16 records a document that is rare and falls with the key's probability.

The estimators without a network that the tests fit (`knn_excess`, `memoriser_excess`) read the records
back from the documents' text; the excess each returns is its exact expectation over new records (not a
test-sample average), given the training records.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields, replace
from typing import ClassVar

import numpy as np

PREFIX = "synth:"
VALUE_RANGE = 4.0  # R: manifold values are binned on [-R, R)
VALUES = 100  # zipf: V distinct value tokens, two digits
SEP = " = "
MARGIN = 0.05  # the equivalence margin of the exponent tests (tmcheck.empirics.fit.prediction.MARGIN)


@dataclass(frozen=True)
class AnnotatedDoc:
    """A document, the character spans of its values (each with the space before it: the value's pre-token
    under byte-level BPE), and the Bayes log-probability of each
    record's value given its input (0 where the value is deterministic)."""

    text: str
    spans: tuple[tuple[int, int], ...]
    bayes_logp: tuple[float, ...]


def _int(name: str, v, lo: int, hi: int) -> None:
    if not (isinstance(v, int) and lo <= v <= hi):
        raise ValueError(f"{name} must be an integer in [{lo:,}, {hi:,}], got {v!r}")


@dataclass(frozen=True)
class Generator:
    """What both kinds share: the size, the records per document, the seed, and the name's grammar."""

    kind: ClassVar[str] = ""
    records: int = 16  # records (lines) per document
    tokens: int = 1_000_000  # symbols of the whole corpus (all splits; module doc)
    seed: int = 0

    def __post_init__(self) -> None:
        _int("records", self.records, 1, 10_000)
        _int("tokens", self.tokens, 1_000, 10**10)
        _int("seed", self.seed, 0, 2**32 - 1)
        self.check()

    def check(self) -> None:
        raise NotImplementedError

    @property
    def exponent(self) -> float:
        """The data-scaling exponent of the excess target loss, known by construction."""
        raise NotImplementedError

    @property
    def name(self) -> str:
        """The canonical corpus name: every parameter, in field order."""
        return f"{PREFIX}{self.kind}:" + ":".join(f"{f.name}={getattr(self, f.name)}" for f in fields(self))

    def symbols_per_record(self) -> int:
        raise NotImplementedError

    def n_records(self) -> int:
        """Records of the whole corpus: `tokens` symbols, one end-of-text per document counted."""
        per_doc = self.records * self.symbols_per_record() + 1
        return max(self.records, self.tokens // per_doc * self.records)

    def draw(self, m: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """m records: (integer inputs (m, width), integer values (m,), Bayes log-probabilities (m,))."""
        raise NotImplementedError

    def input_format(self) -> str:
        raise NotImplementedError

    def value_format(self) -> str:
        raise NotImplementedError

    def annotated(self) -> list[AnnotatedDoc]:
        """The corpus's documents in generation order, with their target spans and Bayes log-probabilities."""
        xs, vs, logp = self.draw(self.n_records(), np.random.default_rng([self.seed, 7]))
        fmt_in, fmt_val = self.input_format(), self.value_format()
        docs = []
        for start in range(0, len(vs), self.records):
            text, spans = "", []
            for j in range(start, min(start + self.records, len(vs))):
                if text:
                    text += "\n"
                text += " ".join(fmt_in % int(c) for c in xs[j]) + SEP
                spans.append((len(text) - 1, len(text) + len(fmt_val % int(vs[j]))))  # the value with its space
                text += fmt_val % int(vs[j])
            docs.append(AnnotatedDoc(text, tuple(spans), tuple(float(p) for p in logp[start : start + self.records])))
        return docs

    def documents(self) -> list[str]:
        return [doc.text for doc in self.annotated()]


@dataclass(frozen=True)
class ManifoldText(Generator):
    """Points of a d-manifold spelled by quantised coordinates, then a noisy quantised β-Hölder value."""

    kind: ClassVar[str] = "manifold"
    manifold: str = "circle"  # a shape with a global chart (circle, torus): the holder field's domain
    d: int = 1
    D: int = 0  # ambient coordinates spelled; 0: the fewest the shape needs (circle 2, torus 2d)
    beta: float = 0.5
    noise: float = 0.5  # σ of the value
    bin: float = 0.125  # h: the width of a value bin
    digits: int = 3  # digits per coordinate: q = 10^digits levels

    def check(self) -> None:
        _int("digits", self.digits, 1, 6)
        if not 0 < self.bin <= self.noise:
            raise ValueError(f"bin must lie in (0, noise={self.noise}], got {self.bin} (module doc: h ≪ σ)")
        if 2 * VALUE_RANGE / self.bin > 10_000:
            raise ValueError(f"bin={self.bin} gives more than 10,000 value bins on [-{VALUE_RANGE}, {VALUE_RANGE})")
        self.problem()  # the problem's own checks: manifold, d, D, β, σ

    def problem(self):
        from tmcheck.empirics.synthetic.problem import Problem
        from tmcheck.theory.manifolds import SHAPES

        shape = SHAPES.get(self.manifold)
        D = self.D or (shape.k(self.d, self.d) if shape is not None else self.d)
        return Problem(self.manifold, self.d, D, "holder", float(self.beta), "uniform", float(self.noise), self.seed)

    @property
    def exponent(self) -> float:
        return 2 * self.beta / (2 * self.beta + self.d)

    def bins(self) -> int:
        return math.ceil(2 * VALUE_RANGE / self.bin)

    def edges(self) -> np.ndarray:
        """Inner bin edges, (bins - 1,): bin b is [edges[b-1], edges[b]) with -inf and +inf at the ends."""
        return -VALUE_RANGE + self.bin * np.arange(1, self.bins())

    def symbols_per_record(self) -> int:
        return self.problem().D + 3  # coordinates, "=", value, line end

    def input_format(self) -> str:
        return f"%0{self.digits}d"

    def value_format(self) -> str:
        return f"%0{len(str(self.bins() - 1))}d"

    def experiment(self):
        from tmcheck.empirics.synthetic.problem import Experiment

        return Experiment(self.problem())

    def radius(self, experiment) -> float:
        return experiment.manifold.M_inf  # max ||x||_∞ on M: every coordinate lies in [-r, r]

    def quantise(self, X: np.ndarray, r: float) -> np.ndarray:
        q = 10**self.digits
        return np.clip(np.floor((X + r) / (2 * r) * q), 0, q - 1).astype(np.int64)

    def dequantise(self, xq: np.ndarray, r: float) -> np.ndarray:
        """The centre of each coordinate's cell: what a learner reads from the text."""
        return (xq + 0.5) / 10**self.digits * 2 * r - r

    def bin_probs(self, f: np.ndarray) -> np.ndarray:
        """(m, bins): the law of the binned value y = f + σε for each location f (a discretised Gaussian)."""
        from scipy import stats

        cdf = stats.norm.cdf((self.edges()[None, :] - f[:, None]) / self.noise)  # (m, bins - 1)
        cdf = np.concatenate([np.zeros((len(f), 1)), cdf, np.ones((len(f), 1))], axis=1)
        return np.diff(cdf, axis=1)

    def draw(self, m, rng):
        exp = self.experiment()
        X = exp.sample(m, rng)
        f = exp.field(X)
        y = f + self.noise * rng.standard_normal(m)
        b = np.clip(np.floor((y + VALUE_RANGE) / self.bin), 0, self.bins() - 1).astype(np.int64)
        p = self.bin_probs(f)[np.arange(m), b]
        return self.quantise(X, self.radius(exp)), b, np.log(p)


@dataclass(frozen=True)
class ZipfText(Generator):
    """Keys drawn by a Zipf law, each followed by its deterministic value (Hutter 2021)."""

    kind: ClassVar[str] = "zipf"
    a: float = 1.0  # P(i) ∝ (i + offset)^{-(1+a)}
    offset: int = 100  # i₀
    key_digits: int = 6  # K = 10^key_digits keys, spelled in two-digit groups

    def check(self) -> None:
        if not 0 < self.a <= 10:
            raise ValueError(f"a must lie in (0, 10], got {self.a}")
        _int("offset", self.offset, 0, 10**6)
        if self.key_digits not in (2, 4, 6, 8):
            raise ValueError(f"key_digits must be 2, 4, 6 or 8, got {self.key_digits}")

    @property
    def exponent(self) -> float:
        return self.a / (1 + self.a)

    def keys(self) -> int:
        return 10**self.key_digits

    def symbols_per_record(self) -> int:
        return self.key_digits // 2 + 3

    def input_format(self) -> str:
        return "%02d"

    def value_format(self) -> str:
        return "%02d"

    def probabilities(self) -> np.ndarray:
        """P(rank i), i = 0..K-1 (rank i + 1 in the module doc)."""
        p = (np.arange(1, self.keys() + 1, dtype=np.float64) + self.offset) ** -(1 + self.a)
        return p / p.sum()

    def tables(self) -> tuple[np.ndarray, np.ndarray]:
        """(key of each rank (K,), value of each key (K,)): a random bijection and a random function."""
        rng = np.random.default_rng([self.seed, 8])
        return rng.permutation(self.keys()), rng.integers(0, VALUES, self.keys())

    def split_key(self, keys: np.ndarray) -> np.ndarray:
        """(m, key_digits/2) two-digit groups, most significant first."""
        groups = self.key_digits // 2
        return np.stack([(keys // 100 ** (groups - 1 - g)) % 100 for g in range(groups)], axis=1)

    def draw(self, m, rng):
        cdf = np.cumsum(self.probabilities())
        ranks = np.minimum(np.searchsorted(cdf, rng.random(m) * cdf[-1], side="right"), self.keys() - 1)
        key_of, value_of = self.tables()
        keys = key_of[ranks]
        return self.split_key(keys), value_of[keys], np.zeros(m)


KINDS: dict[str, type[Generator]] = {"manifold": ManifoldText, "zipf": ZipfText}


def is_known(name: str) -> bool:
    return name.startswith(PREFIX)


def parse(name: str) -> Generator:
    """The generator a corpus name `synth:KIND[:key=value:...]` names; ValueError with one line otherwise."""
    if not is_known(name):
        raise ValueError(f"{name!r} is not a generated corpus (synth:KIND[:key=value:...])")
    kind, _, args = name[len(PREFIX) :].partition(":")
    if kind not in KINDS:
        raise ValueError(f"unknown generated corpus {kind!r}; choose from {', '.join(KINDS)}")
    cls = KINDS[kind]
    types = {f.name: f.type for f in fields(cls)}
    values = {}
    for item in filter(None, args.split(":")):
        key, eq, raw = item.partition("=")
        if not eq or key not in types:
            raise ValueError(f"{name}: {item!r} is not key=value with a key of {', '.join(types)}")
        cast = {"int": int, "float": float, "str": str}[str(types[key])]
        try:
            values[key] = cast(raw)
        except ValueError:
            raise ValueError(f"{name}: {key} must be a {types[key]}, got {raw!r}") from None
    return cls(**values)


def generator(kind: str, **params) -> Generator:
    """The generator of `kind` with the given parameters (the others at their defaults)."""
    if kind not in KINDS:
        raise ValueError(f"unknown generated corpus {kind!r}; choose from {', '.join(KINDS)}")
    return KINDS[kind](**params)


def describe(g: Generator) -> dict:
    """Plain data about a generator: its name, parameters, exponent and size."""
    return {
        "corpus": g.name,
        "kind": g.kind,
        "params": asdict(g),
        "exponent": g.exponent,
        "records": g.n_records(),
        "documents": math.ceil(g.n_records() / g.records),
        "symbols_per_record": g.symbols_per_record(),
    }


def shifted(g: Generator, shift: float) -> Generator:
    """The generator of the same kind whose exponent is g.exponent + shift (β changed for manifold text, a
    for Zipf text): the mutant a test of the exponent must tell apart."""
    target = g.exponent + shift
    if not 0 < target < 1:
        raise ValueError(f"no generator has exponent {target:.3f}")
    if isinstance(g, ManifoldText):
        return replace(g, beta=target * g.d / (2 * (1 - target)))
    return replace(g, a=target / (1 - target))


# ---------------------------------------------------------------------------- reading records back


def parse_records(docs: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(inputs (m, width), values (m,)) of every `INPUT = VALUE` line of the documents, in order."""
    inputs, values = [], []
    for doc in docs:
        for line in doc.split("\n"):
            left, _, right = line.partition(SEP)
            inputs.append([int(t) for t in left.split(" ")])
            values.append(int(right))
    return np.asarray(inputs, dtype=np.int64), np.asarray(values, dtype=np.int64)


def knn_excess(g: ManifoldText, inputs, values, X_test, f_test, c: float = 1.0) -> float:
    """Excess log loss (nats per record) of the kNN plug-in on the first records: m(x) the mean of the k
    nearest values' bin centres (k = c n^{2β/(2β+d)}, tmcheck.empirics.synthetic.controls), q = p_m (the
    discretised Gaussian at m with the generator's σ). Exact: Σ_b p_f(b) log(p_f(b)/p_m(b)), averaged over
    the test points (X_test on M, f_test = f(X_test)); the queries are the test points as the text spells them."""
    from tmcheck.empirics.synthetic.controls import knn_means, theory_k

    r = g.radius(g.experiment())
    centres = -VALUE_RANGE + g.bin * (values + 0.5)
    Xq = g.dequantise(g.quantise(X_test, r), r)
    k = theory_k(c, len(values), g.d, g.beta)
    m, _ = knn_means(g.dequantise(inputs, r), centres, Xq, [k])
    return kl_rows(g.bin_probs(f_test), g.bin_probs(m[:, 0]))


def kl_rows(p: np.ndarray, q: np.ndarray) -> float:
    """Mean over rows of KL(p || q), nats."""
    from scipy import special

    return float(np.mean(np.sum(special.rel_entr(p, np.maximum(q, 1e-300)), axis=1)))


def memoriser_excess(g: ZipfText, inputs: np.ndarray) -> float:
    """Excess log loss (nats per record) of the memoriser on these training records: log V times the
    probability that a new record's key was not among them."""
    groups = inputs.shape[1]
    keys = sum(inputs[:, j] * 100 ** (groups - 1 - j) for j in range(groups))
    key_of, _ = g.tables()
    rank_of = np.empty_like(key_of)
    rank_of[key_of] = np.arange(len(key_of))
    seen = np.zeros(g.keys(), dtype=bool)
    seen[rank_of[keys]] = True
    return float(math.log(VALUES) * g.probabilities()[~seen].sum())


def records_in(g: Generator, tokens: int) -> int:
    """Records in the first `tokens` training tokens under a BPE whose vocabulary holds every symbol (module
    doc: a record is symbols_per_record tokens, and a document adds one end-of-text to its `records` lines)."""
    return max(1, round(tokens / (g.symbols_per_record() + 1 / g.records)))


def expected_memoriser_excess(g: ZipfText, m: int) -> float:
    """The memoriser's expected excess after m records: log V · Σ_i P(i)(1 - P(i))^m (module doc), exact."""
    p = g.probabilities()
    return float(math.log(VALUES) * np.sum(p * np.exp(m * np.log1p(-p))))


def reference_excess(g: Generator, m: int, seed: int, test: int = 4096) -> float:
    """The excess (nats per record) of the generator's rate-optimal learner without a network after m training
    records: the memoriser's expectation for Zipf text (exact), the kNN plug-in at k = n^{2β/(2β+d)} for
    manifold text on m fresh records (seeded), scored exactly on `test` fresh points (knn_excess). The
    known-exponent report reads a GPT's excess against it at the same n (tmcheck.empirics.report.known)."""
    if isinstance(g, ZipfText):
        return expected_memoriser_excess(g, m)
    rng = np.random.default_rng([seed, m, 39])
    inputs, values, _ = g.draw(m, rng)
    exp = g.experiment()
    X_test = exp.sample(test, rng)
    return knn_excess(g, inputs, values, X_test, exp.field(X_test))


def slope_test(sizes, losses, exponent: float, margin: float = MARGIN) -> dict:
    """The log-log slope of excess losses against sizes (tmcheck.empirics.fit.exponent.fit_exponent, its
    profile interval at 1 - 2a) and the equivalence rule's outcome for slope - exponent at ±margin
    (tmcheck.empirics.fit.prediction.decide): "equivalent", "differs" or "undecided"."""
    from tmcheck.empirics.fit.exponent import fit_exponent
    from tmcheck.empirics.fit.prediction import SIZE, decide

    fit = fit_exponent(sizes, losses, "loglog", level=1 - 2 * SIZE, methods=("profile",), coverage_reps=50)
    lo, hi = fit["intervals"]["profile"]
    return {
        "alpha": fit["alpha"],
        "interval": [lo, hi],
        "exponent": exponent,
        "margin": margin,
        "outcome": decide(lo - exponent, hi - exponent, margin),
    }

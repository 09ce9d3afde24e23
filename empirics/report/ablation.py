"""ID ablations: the estimated intrinsic dimension against the embedding model (paper Section 3, Figure 4).

Four curves, as in the paper's Figure 4: d-hat against the number of non-embedding parameters and
against the embedding width (a suite of models on the same text), across the layers of one model,
and across context positions of one model. Sources: a model-scaling sweep (kind "model": its
models at the full n, their corpus's test documents) or local models (transformers directories,
tmcheck checkpoints) on the test split of a tmcheck corpus or on one's own text.

Every point of a curve is estimated from the same number of points (each cloud is subsampled to
the smallest cloud of the curve, at most `max_points`), because every ID estimator depends on N;
each point carries each estimator's value and interval (percentile bootstrap over points, 95%, as
`tmcheck id estimate` computes it). Context position: the hidden states of every token of prefix
windows, grouped into geometric bins of position (1, 2-3, 4-7, ... tokens of context before it).

A panel's trend (``trend``): per estimator, the least-squares slope of d-hat against the panel's x
(log10 x where the figure's axis is logarithmic: parameters, width, position; the layer index as it is),
with a 95% interval from the points' own intervals (each read as normal, the points independent: under a
common positive correlation between them, as estimates on the same documents have, the interval is
conservative), and its sign: +1 when the interval lies above 0, -1 below, 0 when it holds 0. The panel's
sign agrees across the estimators when every estimator has the same sign; otherwise it depends on the
estimator, and the table, the figure and the docs say so.

A suite (``save_suite``, ``suite_members``): the models of an ablation kept beside it, so that it can be
run again: a directory with `suite.json` (each model's file, size and the test loss its run recorded),
each model's weights as a tmcheck checkpoint holding only the weights and their shape (float32
safetensors), and the token ids of the test documents it embedded (`docs.safetensors`). ``rerun`` makes
the ablation again from the suite with the options ablate.json records; ``differences`` compares the two
to RERUN_RTOL.

The figure (``figure``, ``draw``): the panels a result holds, one line per estimator, its 95% interval
as a band, and the panel's trend verdict under its title.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from tmcheck.empirics.fit.plot import legend_outside
from tmcheck.empirics.lm.embed import (
    EmbedOptions,
    LanguageModel,
    embed_documents,
    encode_text,
    load_model,
    test_documents,
)
from tmcheck.empirics.report.common import LEVEL, pyplot, save_figure
from tmcheck.empirics.report.common import caption as wrap_caption
from tmcheck.util import safeio


@dataclass
class AblateOptions:
    estimators: tuple[str, ...] = ("mle", "twonn", "gride")  # the paper: MLE only; a trend's sign may hang on it
    k: int = 20  # neighbours of the MLE (the paper's K = 20)
    bootstrap: int = 200  # resamples of each interval
    docs: int = 256  # test documents embedded
    context: int = 256  # window length fed to the model (paper: 1024)
    tokens_per_doc: int = 32  # tokens kept per document for the params, width and layer curves (paper: 32)
    max_points: int = 4096  # cap on the points of one estimate (the paper's batch size)
    min_bin_points: int = 64  # context-position bins with fewer points are left out
    seed: int = 0
    device: str = "auto"

    def __post_init__(self):
        from tmcheck.empirics.id import ESTIMATORS

        self.estimators = tuple(self.estimators)
        bad = [e for e in self.estimators if e not in ESTIMATORS]
        if bad:
            raise ValueError(f"unknown estimator {bad[0]!r}; choose from {', '.join(ESTIMATORS)}")
        if not self.estimators:
            raise ValueError("give at least one estimator")
        if min(self.k, self.docs, self.context, self.tokens_per_doc, self.max_points) < 1:
            raise ValueError("k, docs, context, tokens_per_doc and max_points must be positive")


@dataclass
class Member:
    """One model of a suite: where it is, its size, and the token ids of the documents it embeds."""

    name: str
    path: str
    params: int  # non-embedding parameters
    width: int
    layers: int
    docs: list = field(repr=False, default_factory=list)
    test_loss: float | None = None  # a sweep's model: what its row records
    steps: int | None = None


def non_embedding_params(model) -> int:
    """Parameters outside the embedding tables (token, position, token-type): Kaplan et al.'s N."""
    import torch.nn as nn

    emb = sum(p.numel() for m in model.modules() if isinstance(m, nn.Embedding) for p in m.parameters(recurse=False))
    return int(sum(p.numel() for p in model.parameters()) - emb)


def _width(lm: LanguageModel) -> int:
    c = lm.model.config
    return int(c.n_embd if lm.kind == "tmcheck" else c.hidden_size)


def estimate(X: np.ndarray, opts: AblateOptions, n_points: int, rng) -> dict:
    """Every estimator's {d, ci, interval, duplicates} on n_points rows of X drawn without replacement.
    A cloud an estimator refuses (e.g. too few distinct points: a causal model's first position sees
    only its own token) gets d = None and the one-line reason."""
    import warnings

    from tmcheck.empirics.id import estimate_id

    idx = rng.choice(len(X), size=n_points, replace=False) if n_points < len(X) else np.arange(len(X))
    out = {}
    for name in opts.estimators:
        try:
            with warnings.catch_warnings():  # duplicates are counted in the result instead
                warnings.simplefilter("ignore")
                res = estimate_id(
                    X[idx],
                    estimator=name,
                    k=opts.k,
                    protocol="full",
                    bootstrap=opts.bootstrap,
                    device=opts.device,
                    seed=opts.seed,
                )
        except ValueError as exc:
            out[name] = {"d": None, "ci": None, "interval": "none", "error": str(exc)}
            continue
        out[name] = {
            "d": float(res.dimension),
            "ci": [float(v) for v in res.ci] if res.ci is not None else None,
            "interval": res.protocol.get("interval", "none"),
            "duplicates": int(res.n_duplicates),
        }
    return out


def _curve(clouds: list[tuple[dict, np.ndarray]], opts: AblateOptions) -> dict:
    """Estimate every cloud at the same number of points; returns {"n_points", "points": [...]}."""
    n = min(min(len(X) for _, X in clouds), opts.max_points)
    if n <= opts.k + 1:
        raise ValueError(f"a cloud of the ablation has only {n} points, too few for k = {opts.k}; embed more documents")
    rng = np.random.default_rng(opts.seed)
    return {"n_points": int(n), "points": [{**x, "estimates": estimate(X, opts, n, rng)} for x, X in clouds]}


def _embed(lm: LanguageModel, docs, opts: AblateOptions, prefix: bool = False, all_tokens: bool = False):
    eo = EmbedOptions(
        context=opts.context,
        tokens_per_doc=opts.context if all_tokens else opts.tokens_per_doc,
        window="prefix" if prefix else "random",
        seed=opts.seed,
    )
    return embed_documents(lm, docs, eo, positions=all_tokens)


def _load(member: Member, device: str) -> LanguageModel:
    from tmcheck.empirics.device import resolve_device

    lm = load_model(Path(member.path))
    lm.model.to(resolve_device(device))
    return lm


def position_bins(context: int) -> list[tuple[int, int]]:
    """[lo, hi) bins of 0-based token position: [0, 1), [1, 3), [3, 7), ... (a token at position p
    sees p tokens before it), up to the context."""
    bins, lo = [], 0
    while lo < context:
        hi = min(2 * lo + 1, context)
        bins.append((lo, hi))
        lo = hi
    return bins


def ablate(members: list[Member], opts: AblateOptions, source: str, log=lambda s: None) -> dict:
    """The four curves. params and width need two or more models (width: those of the commonest
    depth); layer and position use the largest model."""
    members = sorted(members, key=lambda m: m.params)
    out = {
        "source": source,
        "options": asdict(opts),
        "models": [{k: v for k, v in asdict(m).items() if k != "docs"} for m in members],
        "panels": {},
    }
    finals = []
    for m in members:
        log(f"embedding with {m.name} ({m.params:,} non-embedding parameters)")
        finals.append(_embed(_load(m, opts.device), m.docs, opts))
    if len(members) >= 2:
        out["panels"]["params"] = _curve(
            [({"x": m.params, "model": m.name}, X) for m, X in zip(members, finals, strict=True)], opts
        )
    depths = [m.layers for m in members]
    depth = max(set(depths), key=lambda L: (depths.count(L), L))
    same = [(m, X) for m, X in zip(members, finals, strict=True) if m.layers == depth]
    if len({m.width for m, _ in same}) >= 2:
        out["panels"]["width"] = {
            **_curve([({"x": m.width, "model": m.name}, X) for m, X in same], opts),
            "depth": depth,
        }
    top = members[-1]
    lm = _load(top, opts.device)
    log(f"layers 0..{lm.n_layer} of {top.name}")
    by_layer = embed_documents(
        lm,
        top.docs,
        EmbedOptions(context=opts.context, tokens_per_doc=opts.tokens_per_doc, seed=opts.seed),
        layers=list(range(lm.n_layer + 1)),
    )
    out["panels"]["layer"] = {**_curve([({"x": L}, X) for L, X in by_layer.items()], opts), "model": top.name}
    log(f"context positions of {top.name}")
    X, pos = _embed(lm, top.docs, opts, prefix=True, all_tokens=True)
    clouds = [
        ({"x": float(np.sqrt(max(lo, 0.5) * hi)), "positions": [lo, hi]}, X[(pos >= lo) & (pos < hi)])
        for lo, hi in position_bins(min(opts.context, lm.context))
    ]
    clouds = [(x, c) for x, c in clouds if len(c) >= max(opts.min_bin_points, opts.k + 2)]
    if len(clouds) >= 2:
        out["panels"]["position"] = {**_curve(clouds, opts), "model": top.name}
    for name, panel in out["panels"].items():
        panel["trend"] = trend(panel["points"], opts.estimators, TITLES[name][2])
    methods = {
        n: e["interval"]
        for p in out["panels"].values()
        for pt in p["points"]
        for n, e in pt["estimates"].items()
        if e["d"] is not None
    }
    out["intervals"] = "; ".join(f"{n}: {m}" for n, m in methods.items())
    return out


def trend(points: list[dict], estimators, logx: bool) -> dict:
    """The panel's trend (module docstring): {"x", "estimators": {name: {"slope", "ci", "sign"}}, "agree",
    "sign", "method"}. An estimator with fewer than two estimated points, one x, or a point without an
    interval has sign None, and then the panel's sign does not agree (it is not shown to)."""
    from scipy.stats import norm

    z = float(norm.ppf((1 + LEVEL) / 2))
    per = {}
    for name in estimators:
        pts = [p for p in points if p["estimates"][name]["d"] is not None]
        t = np.array([np.log10(p["x"]) if logx else p["x"] for p in pts], float)
        if len(pts) < 2 or np.ptp(t) == 0:
            per[name] = {"slope": None, "ci": None, "sign": None}
            continue
        w = (t - t.mean()) / np.sum((t - t.mean()) ** 2)  # slope = w @ d (ordinary least squares)
        slope = float(w @ np.array([p["estimates"][name]["d"] for p in pts]))
        cis = [p["estimates"][name]["ci"] for p in pts]
        if any(c is None for c in cis):
            per[name] = {"slope": slope, "ci": None, "sign": None}
            continue
        se = float(np.sqrt(np.sum((w * np.array([(hi - lo) / (2 * z) for lo, hi in cis])) ** 2)))
        lo, hi = slope - z * se, slope + z * se
        per[name] = {"slope": slope, "ci": [lo, hi], "sign": 1 if lo > 0 else -1 if hi < 0 else 0}
    signs = [e["sign"] for e in per.values()]
    agree = None not in signs and len(set(signs)) == 1
    return {
        "x": "log10 x" if logx else "x",
        "estimators": per,
        "agree": agree,
        "sign": signs[0] if agree else None,
        "method": f"least-squares slope of d-hat against {'log10 x' if logx else 'x'}; {LEVEL:.0%} interval "
        f"from the points' own intervals, each read as normal, the points independent",
    }


SIGN_WORDS = {1: "rising", -1: "falling", 0: "no resolved trend", None: "undetermined"}


SIGN_MARKS = {1: "+", -1: "\u2212", 0: "0", None: "?"}


def verdict(tr: dict, short: bool = False) -> str:
    """The trend in words: 'rising for every estimator', or 'sign depends on the estimator (mle rising, ...)';
    `short` (the figure's titles): 'trend + for every estimator', 'trend sign depends on the estimator: gride +, ...'.
    Estimators in alphabetical order, as ablate.json (written with sorted keys) holds them."""
    words = SIGN_MARKS if short else SIGN_WORDS
    if tr["agree"]:
        return f"{'trend ' if short else ''}{words[tr['sign']]} for every estimator"
    each = ", ".join(f"{n} {words[tr['estimators'][n]['sign']]}" for n in sorted(tr["estimators"]))  # as JSON keeps it
    return f"trend sign depends on the estimator: {each}" if short else f"sign depends on the estimator ({each})"


def sweep_members(sweep_dir: Path, opts: AblateOptions) -> list[Member]:
    """The models of a model-scaling sweep trained on the full n (first seed), with their test documents."""
    from tmcheck.empirics.sweep import SweepDir, get_kind

    sweep = SweepDir(sweep_dir)
    kind = sweep.kind
    get_kind(kind)  # registers the kind's preset class
    if kind != "model":
        raise ValueError(
            f"{sweep_dir} is a {kind} sweep; `id ablate` takes a model-scaling sweep (tmcheck sweep model)"
        )
    from tmcheck.empirics.sweep.pretrain import corpus_tag

    rows = [r for r in sweep.rows() if r.get("full_split")]
    if not rows:
        raise ValueError(f"{sweep_dir} has no finished model-scaling runs yet; run the sweep first")
    first = min(r["seed"] for r in rows)
    docs = test_documents(sweep.data_dir(corpus_tag(sweep.read_config()["corpus"])), opts.docs)
    return [
        Member(
            r["run"],
            str(sweep.run_dir(r["run"])),
            int(r["non_embedding_params"]),
            int(r["n_embd"]),
            int(r["n_layer"]),
            docs,
            float(r["test_loss"]),
            int(r["steps"]),
        )
        for r in rows
        if r["seed"] == first
    ]


def model_members(paths: list[Path], texts: list[str], opts: AblateOptions) -> list[Member]:
    """Local transformers directories (causal or encoder) on the same texts, each with its own tokenizer."""
    members = []
    for p in paths:
        lm = load_model(Path(p))
        if lm.kind == "tmcheck":
            raise ValueError(
                f"{p} is a tmcheck checkpoint without a tokenizer of its own; give its model sweep "
                f"directory (tmcheck sweep model) or export it with `tmcheck export hf`"
            )
        members.append(
            Member(
                Path(p).name,
                str(p),
                non_embedding_params(lm.model),
                _width(lm),
                lm.n_layer,
                encode_text(lm, texts)[: opts.docs],
            )
        )
    return members


SUITE = "suite.json"
SUITE_DOCS = "docs.safetensors"
SUITE_DIR = "models"  # a suite kept beside its ablate.json: <out>/models
# Every number of a re-run ablation against the committed one (relative above 1). The same machine gives the
# same bits; another CPU's kernels change the float32 embeddings' last bits. Measured on the suite: every
# embedding multiplied by (1 + 1e-5 * noise), equal vectors kept equal, moves its numbers by at most 4.2e-5
# relative (1e-6: 4.2e-6), so 1e-4 admits embedding differences up to about 2e-5 relative (some 200 float32
# ulps), while an edited number of the two decimals the docs print (5e-3 and more) fails.
RERUN_RTOL = 1e-4


def save_suite(members: list[Member], dest: Path, source: str) -> None:
    """Keep tmcheck models (``sweep_members``: a model-scaling sweep's full-n models) and their test documents
    in `dest` (a suite, module docstring): each model's weights and shape only (no optimizer state), float32,
    with the test loss and step count its run recorded. `source` names them in the ablation."""
    import torch
    from safetensors.numpy import save

    from tmcheck.empirics.lm.checkpoint import load_checkpoint, save_checkpoint
    from tmcheck.util import atomic

    if not members or any(m.docs is not members[0].docs for m in members):
        raise ValueError("a suite holds one or more models on the same documents")
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    models = []
    for m in members:
        ck = load_checkpoint(m.path)
        weights = {k: v.to(torch.float32) if v.is_floating_point() else v for k, v in ck["model"].items()}
        save_checkpoint(dest / f"{m.name}.safetensors", {"model": weights, "meta": ck["meta"]})
        keep = ("name", "params", "width", "layers", "test_loss", "steps")
        models.append({"file": f"{m.name}.safetensors", **{k: getattr(m, k) for k in keep}})
    docs = members[0].docs
    tokens = np.concatenate(docs)
    arrays = {
        "tokens": tokens.astype(np.uint16 if tokens.max() < 2**16 else np.int64),  # a small vocabulary: 2 bytes a token
        "starts": np.cumsum([0] + [len(d) for d in docs[:-1]]).astype(np.int64),
    }
    atomic.write_bytes(dest / SUITE_DOCS, save(arrays))
    atomic.write_json(dest / SUITE, {"source": source, "docs": len(docs), "models": models})


def read_suite(path: Path) -> dict:
    """suite.json of the suite directory `path`, its shape checked (ValueError naming what is wrong)."""
    doc = safeio.read_json(Path(path) / SUITE, "a model suite")
    ok = (
        isinstance(doc, dict)
        and isinstance(doc.get("source"), str)
        and isinstance(doc.get("docs"), int)
        and isinstance(doc.get("models"), list)
        and doc["models"]
        and all(
            isinstance(m, dict)
            and all(isinstance(m.get(k), int) for k in ("params", "width", "layers"))
            and all(isinstance(m.get(k), str) and "/" not in m[k] for k in ("name", "file"))
            for m in doc["models"]
        )
    )
    if not ok:
        raise ValueError(
            f"{Path(path) / SUITE} is not a model suite (source, docs, models: name, file, params, width, layers)"
        )
    return doc


def suite_members(path: Path, opts: AblateOptions) -> tuple[list[Member], str]:
    """The models of a suite directory with their first `opts.docs` test documents, and the suite's source."""
    from safetensors.numpy import load_file

    path = Path(path)
    suite = read_suite(path)
    if opts.docs > suite["docs"]:
        raise ValueError(f"{path} holds {suite['docs']} test documents; ask for at most that many (--docs)")
    arrays = load_file(str(safeio.check_regular(path / SUITE_DOCS, "the suite's documents")))
    tokens, starts = arrays["tokens"], arrays["starts"]
    ends = np.append(starts[1:], len(tokens))
    docs = [tokens[a:b] for a, b in zip(starts, ends, strict=True)][: opts.docs]
    members = [
        Member(
            m["name"],
            str(path / m["file"]),
            m["params"],
            m["width"],
            m["layers"],
            docs,
            m.get("test_loss"),
            m.get("steps"),
        )
        for m in suite["models"]
    ]
    return members, suite["source"]


def rerun(directory: Path, log=lambda s: None) -> dict | None:
    """The ablation of `directory` (its ablate.json) made again from the suite beside it (directory/models),
    with the options ablate.json records; None when no suite is kept there."""
    suite = Path(directory) / SUITE_DIR
    if not (suite / SUITE).is_file():
        return None
    committed = safeio.read_json(Path(directory) / "ablate.json", "an ablation record")
    opts = AblateOptions(**committed["options"])
    members, source = suite_members(suite, opts)
    return ablate(members, opts, source, log)


def differences(committed: dict, rebuilt: dict, tol: float = RERUN_RTOL) -> list[str]:
    """Every number of two ablation records that differs by more than tol (relative above 1), and any
    other value that differs; where the models were read from (their path) is not compared."""
    from tmcheck.util.jsondiff import number_differences

    def strip(doc: dict) -> dict:  # as JSON holds it (a tuple is a list)
        doc = json.loads(json.dumps(doc))
        return {**doc, "models": [{k: v for k, v in m.items() if k != "path"} for m in doc.get("models", [])]}

    return number_differences(strip(committed), strip(rebuilt), tol=tol)


def corpus_texts(corpus: str, n_docs: int) -> list[str]:
    """The first n_docs test documents of a tmcheck corpus (its split is by document hash)."""
    from tmcheck.empirics.data.corpora import load_corpus, split_corpus

    return split_corpus(load_corpus(corpus))["test"][:n_docs]


def read_texts(path: Path, n_docs: int) -> list[str]:
    """Documents of a text file: paragraphs separated by blank lines."""
    import re

    text = safeio.read_text(path, "a text file", safeio.FILE_LIMIT)
    docs = [d.strip() for d in re.split(r"\n\s*\n", text) if d.strip()]
    if not docs:
        raise ValueError(f"{path} holds no text")
    return docs[:n_docs]


# the figure

TITLES = {
    "params": ("ID vs. number of parameters", "non-embedding parameters N", True),
    "width": ("ID vs. embedding width", "embedding width (hidden size)", True),
    "layer": ("ID across layers", "layer (0 = input embeddings)", False),
    "position": ("ID across context position", "token position in the window (0-based; bins)", True),
}
COLORS = {
    "mle": "tab:blue",
    "twonn": "tab:orange",
    "gride": "tab:green",
    "mle-mean": "tab:purple",
    "twonn-mle": "tab:red",
    "mle-curve": "tab:brown",
}


def _short(v: float) -> str:
    """Tick labels: 12_345 -> '12.3k', 10_795_392 -> '10.8M', 3.5 -> '3.5'."""
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if v >= div:
            return f"{v / div:.3g}{suffix}"
    return f"{v:.3g}"


def _bin(positions) -> str:
    lo, hi = positions
    return str(lo) if hi == lo + 1 else f"{lo}-{hi - 1}"


def panels(result: dict) -> list[str]:
    """The panels the result holds, in the paper's order (params, width, layer, position)."""
    return [p for p in TITLES if result["panels"].get(p) is not None]


def draw(result: dict):
    """The figure of the measured panels only (a panel a result lacks is not drawn: one model gives no
    parameter or width curve), in a 2x2 grid when there are four, else in one row. Returns the figure."""
    plt = pyplot()
    shown = panels(result)
    if not shown:
        raise ValueError("the ablation result holds no panel to draw")
    rows, cols = (2, 2) if len(shown) == 4 else (1, len(shown))
    fig, axes = plt.subplots(rows, cols, figsize=(5 * cols, 3.9 * rows + 0.5), squeeze=False)
    banded = False
    for ax, panel in zip(axes.flat, shown, strict=True):
        title, xlabel, logx = TITLES[panel]
        data = result["panels"][panel]
        tr = data.get("trend")
        ax.set_title(title if tr is None else f"{title}\n{verdict(tr, short=True)}", fontsize=10 if tr is None else 9)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("estimated ID d-hat")
        ax.grid(True, which="both", alpha=0.3)
        for name in result["options"]["estimators"]:
            pts = [p for p in data["points"] if p["estimates"][name]["d"] is not None]  # refused clouds left out
            x = np.array([p["x"] for p in pts], float)
            d = np.array([p["estimates"][name]["d"] for p in pts])
            cis = [p["estimates"][name]["ci"] for p in pts]
            ax.plot(x, d, marker="o", ms=4, color=COLORS.get(name), label=name)
            if pts and all(c is not None for c in cis):
                ax.fill_between(
                    x,
                    [c[0] for c in cis],
                    [c[1] for c in cis],
                    color=COLORS.get(name),
                    alpha=0.2,
                    label=f"{name} 95% interval",
                )
                banded = True
        if logx:
            ax.set_xscale("log")
            ticks = sorted({p["x"] for p in data["points"]})
            labels = (
                [_bin(p["positions"]) for p in sorted(data["points"], key=lambda p: p["x"])]
                if panel == "position"
                else [_short(v) for v in ticks]
            )
            ax.set_xticks(ticks, labels, fontsize=7, rotation=30 if panel == "position" else 0)
            ax.minorticks_off()
        else:
            ax.set_xticks(sorted({int(p["x"]) for p in data["points"]}))
        where = f"; model {data['model']}" if "model" in data else f"; depth {data['depth']}" if "depth" in data else ""
        ax.text(0.02, 0.02, f"{data['n_points']} points per estimate{where}", transform=ax.transAxes, fontsize=7)
        legend_outside(ax, fontsize=7)
    text = f"Intrinsic dimension ablations on {result['source']} (MLE k = {result['options']['k']})"
    if banded:
        text += f"\nbands: 95% intervals ({result['intervals']})"
    if any("trend" in result["panels"][p] for p in shown):
        text += (
            "\ntrend: sign of the least-squares slope of d-hat against x (log10 x on a log axis) whose 95% interval "
            "(from the points' intervals) excludes 0; 0: the interval holds 0"
        )
    wrap_caption(fig, text)
    fig.tight_layout()
    return fig


def figure(result: dict, path: Path) -> None:
    """Draw the ablation figure and write it atomically to `path`."""
    save_figure(draw(result), path)

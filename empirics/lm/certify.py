"""ID certificates (issue 39, item 3): does an ID protocol recover a known dimension at the layer it measures?

The prediction alpha_D = 2 beta / (2 beta + d) (paper Section 3, eq. 3-4) takes d to be the ID d-hat of a
model's token embeddings, but nothing says the estimator tracks the true ID of such representations. A
certificate asks it on inputs whose image has a known dimension: the same model, layer, final-LayerNorm
choice and ID protocol (estimator options K, batch size, bootstrap) that made d-hat, fed a real window of
the corpus in which d slots are planted on a torus T^d.

Planting. At slot i (a token position of the window, whose token is a_i; b_i, c_i two other tokens of the
window) the input embedding is replaced by

    E[a_i] + r (cos theta_i (E[b_i] - E[a_i]) + sin theta_i (E[c_i] - E[a_i])),   theta = 2 pi u, u ~ U[0, 1)^d,

an ellipse through E[b_i] and E[c_i] around E[a_i]: the product over the d slots is a smooth embedding of
T^d in input space (the two differences are independent for distinct tokens). The network is smooth
(GELU, LayerNorm, softmax), so the hidden state at the window's last content position, read at the
protocol's layer, lies on a smooth image of T^d: one point per planted input, of dimension d wherever the
map is an immersion. The replacement is made by a forward hook on the input-embedding module (our GPT's
`wte`, a transformers model's get_input_embeddings()), so the model's code is untouched.

Verdict. At each planted d in DIMS and for each estimator in ESTIMATORS (MLE, TwoNN, GRIDE), the estimate's
interval widened by TOLERANCE * d on each side must hold d; the protocol is *certified at that layer* when
every pair does. A probe that fails says that d-hat at that layer is not known to measure dimension, and a
prediction from it is withheld (`validation`).

The pure part (point clouds per d -> record: `certify_points`, `check_certificate`, `validation`) needs no
model; the embedding part (`planted_points`, `certify_model`) runs one.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

DIMS = (1, 2, 4)  # planted dimensions
ESTIMATORS = ("mle", "twonn", "gride")  # every one must recover every planted d
TOLERANCE = 0.1  # the interval is widened by TOLERANCE * d on each side
MAX_POINTS = 4096  # points per planted d: the estimate's own count, at most this (one paper batch)
METHOD = (
    f"inputs planted on a torus T^d (d in {', '.join(map(str, DIMS))}) at d slots of a real window of the corpus, "
    "through the input embeddings; hidden state at the window's last content token at the protocol's layer; "
    f"certified when {', '.join(ESTIMATORS)}, with the protocol's K, batches and bootstrap, each hold the planted "
    f"d in their interval widened by {TOLERANCE:g}·d a side"
)


@dataclass
class ProbeOptions:
    """How a probe is planted (the record stores these with the slots and tokens they chose)."""

    context: int = 32  # tokens of the probe window (the first test document's first tokens)
    radius: float = 1.0  # r: the ellipse at a slot passes through E[b] and E[c]
    seed: int = 0  # slots, their tokens and the angles

    def __post_init__(self):
        if self.context < max(DIMS) + 1:
            raise ValueError(f"the probe context must hold {max(DIMS)} slots and a last token, got {self.context}")
        if not self.radius > 0:
            raise ValueError(f"the probe radius must be positive, got {self.radius}")

    def as_dict(self) -> dict:
        return asdict(self)


def probe_points(estimate_points: int) -> int:
    """Points per planted d: as many as the estimate used, at most MAX_POINTS."""
    return int(min(estimate_points, MAX_POINTS))


# ----------------------------------------------------------------------------------------- pure part
def recovered(d: float, ci, tolerance: float = TOLERANCE) -> bool:
    """Whether the planted d lies in the interval ci widened by tolerance * d on each side."""
    return ci is not None and ci[0] - tolerance * d <= d <= ci[1] + tolerance * d


ID_OPTIONS = ("k", "protocol", "batch_size", "bootstrap")  # what a certificate takes from d-hat's ID protocol


def certify_points(
    clouds: dict[int, np.ndarray],
    id_options: dict,
    *,
    seed: int = 0,
    device: str = "auto",
    tolerance: float = TOLERANCE,
    estimators: tuple[str, ...] = ESTIMATORS,
) -> dict:
    """The certificate of point clouds of known dimension ({planted d: (N, C) points}), estimated by every
    estimator of `estimators` (ESTIMATORS and, where another made the d-hat, that one) with one protocol's
    options `id_options` (ID_OPTIONS: K, protocol, batch size, bootstrap; tmcheck.empirics.id.estimate_id).

    Returns {"planted": [{"d", "estimates": {estimator: {"d", "ci", "recovered"}}, "recovered"}],
    "certified", "tolerance", "points", "method"}; the caller adds "layer" and "probe". An estimator that
    refuses the points (ValueError: too few for its neighbours, ...) records d and ci None, its reason
    under "refused", and recovers nothing."""
    from tmcheck.empirics.id import estimate_id

    sizes = {len(X) for X in clouds.values()}
    if len(sizes) != 1:
        raise ValueError(f"the planted clouds must hold one number of points each, got {sorted(sizes)}")
    options = {key: id_options[key] for key in ID_OPTIONS}
    planted = []
    for d, X in sorted(clouds.items()):
        estimates = {}
        for name in dict.fromkeys(estimators):
            try:
                res = estimate_id(X, estimator=name, **options, device=device, seed=seed)
            except ValueError as exc:  # e.g. too few points for its neighbours: it recovers nothing
                estimates[name] = {"d": None, "ci": None, "recovered": False, "refused": str(exc)}
                continue
            ci = [float(v) for v in res.ci] if res.ci is not None else None
            estimates[name] = {"d": float(res.dimension), "ci": ci, "recovered": recovered(d, ci, tolerance)}
        planted.append(
            {"d": int(d), "estimates": estimates, "recovered": all(e["recovered"] for e in estimates.values())}
        )
    return {
        "planted": planted,
        "certified": all(p["recovered"] for p in planted),
        "tolerance": tolerance,
        "points": int(sizes.pop()),
        "method": METHOD,
    }


def check_certificate(record) -> list[str]:
    """What is wrong with a certificate record: every planted d of DIMS present, an estimate with a finite d
    and interval from every estimator of ESTIMATORS (and any other it holds), and each 'recovered' and
    'certified' what those estimates say. [] when it holds; a record claimed without its estimates (a
    probe skipped) fails here."""
    if not isinstance(record, dict):
        return ["the certificate is not a record"]
    missing = [key for key in ("layer", "planted", "certified", "tolerance", "points", "probe") if key not in record]
    if missing:
        return [f"the certificate has no {', '.join(missing)}"]
    tol, problems = record["tolerance"], []
    if not (isinstance(tol, (int, float)) and 0 <= tol <= TOLERANCE):
        problems.append(f"its tolerance {tol!r} is not in [0, {TOLERANCE:g}]")
        tol = 0.0
    planted = record["planted"] if isinstance(record["planted"], list) else []
    dims = sorted(p.get("d") for p in planted if isinstance(p, dict))
    if dims != sorted(DIMS):
        problems.append(f"planted d {dims}, not {list(DIMS)}")
    for p in planted:
        if not isinstance(p, dict):
            continue
        est = p.get("estimates") if isinstance(p.get("estimates"), dict) else {}
        ok = []
        for name in dict.fromkeys([*ESTIMATORS, *in_order(est)]):
            e = est.get(name)
            if isinstance(e, dict) and isinstance(e.get("refused"), str) and e.get("d") is None:
                ok.append(False)
                if e.get("recovered") is not False:
                    problems.append(f"d = {p['d']}: {name} refused the points, yet says recovered={e.get('recovered')}")
                continue
            if not (isinstance(e, dict) and _finite(e.get("d")) and _interval(e.get("ci"))):
                problems.append(f"d = {p.get('d')}: no {name} estimate with an interval")
                ok.append(False)
                continue
            ok.append(recovered(p["d"], e["ci"], tol))
            if e.get("recovered") != ok[-1]:
                problems.append(f"d = {p['d']}: {name} says recovered={e.get('recovered')}, its interval says {ok[-1]}")
        if p.get("recovered") != all(ok):
            problems.append(f"d = {p.get('d')}: recovered={p.get('recovered')}, its estimates say {all(ok)}")
    if not problems and record["certified"] != all(p["recovered"] for p in planted):
        problems.append(f"certified={record['certified']}, its planted d say otherwise")
    return problems


def in_order(estimates: dict) -> list[str]:
    """The estimators of a planted d's record, ESTIMATORS first (id.json stores its keys sorted)."""
    return [n for n in ESTIMATORS if n in estimates] + sorted(n for n in estimates if n not in ESTIMATORS)


def _finite(v) -> bool:
    return isinstance(v, (int, float)) and math.isfinite(v)


def _interval(ci) -> bool:
    return isinstance(ci, (list, tuple)) and len(ci) == 2 and all(map(_finite, ci)) and ci[0] <= ci[1]


def validation(estimate: dict | None, embed: dict, n_layer: int | None = None, estimator: str = "mle") -> dict:
    """Whether a d-hat (an id.json estimate made with the embedding options `embed` and `estimator`) may feed
    a prediction: its certificate present, sound (`check_certificate`), made at the same layer and
    final-LayerNorm choice, holding `estimator` among its estimates, and certified. `n_layer`: the model's
    last block, named when `embed` says "last" (None: unknown).
    Returns {"validated", "layer", "reason"}: reason None when validated, else the sentence a withheld
    verdict prints ("withheld: d̂ not validated at layer L ...")."""
    cert = (estimate or {}).get("certificate")
    layer = embed.get("layer")
    if layer is None:
        layer = n_layer if n_layer is not None else cert.get("layer") if isinstance(cert, dict) else None
    head = f"withheld: d̂ not validated at {'the last layer' if layer is None else f'layer {layer}'}"
    if cert is None:
        reason = f"{head}: no certificate (no probe of known dimension was run)"
    elif problems := check_certificate(cert):
        reason = f"{head}: its certificate is unsound ({problems[0]})"
    elif (cert["layer"], cert["probe"].get("layer_option"), cert["probe"].get("final_ln")) != (
        layer,
        embed.get("layer"),
        embed.get("final_ln"),
    ):
        reason = f"{head}: its certificate probes layer {cert['layer']} ({cert['probe'].get('final_ln')} the final LN)"
    elif any(estimator not in p["estimates"] for p in cert["planted"]):
        reason = f"{head}: its certificate does not try {estimator}, the estimator of d̂"
    elif not cert["certified"]:
        failed = []
        for p in cert["planted"]:
            est = p["estimates"]
            missed = [
                f"{n} refused" if est[n]["d"] is None else f"{n} {est[n]['d']:.2f}"
                for n in in_order(est)
                if not est[n]["recovered"]
            ]
            if missed:
                failed.append(f"d = {p['d']}: {', '.join(missed)}")
        reason = f"{head} (planted d not recovered: {'; '.join(failed)})"
    else:
        reason = None
    return {"validated": reason is None, "layer": layer, "reason": reason}


# ----------------------------------------------------------------------------------- embedding part
def input_embedding(lm):
    """The module whose output is the token embeddings: our GPT's `wte`, a transformers model's
    get_input_embeddings()."""
    return lm.model.wte if lm.kind == "tmcheck" else lm.model.get_input_embeddings()


def probe_window(docs: list[np.ndarray], opts: ProbeOptions) -> np.ndarray:
    """The probe's window: the first opts.context tokens of the first document that has as many."""
    for doc in docs:
        if len(doc) >= opts.context:
            return np.asarray(doc[: opts.context], dtype=np.int64)
    raise ValueError(f"no test document has the probe's {opts.context} tokens")


def plan_probe(window: np.ndarray, opts: ProbeOptions) -> dict:
    """The slots (positions in the window, the last excluded) and each slot's tokens (a, b, c): a the
    window's own token there, b and c two other distinct tokens of the window (in-distribution inputs).
    Slots are nested: planting d uses the first d."""
    window = np.asarray(window, dtype=np.int64)
    if len(window) < opts.context:
        raise ValueError(f"the probe window needs {opts.context} tokens, the document has {len(window)}")
    window = window[: opts.context]
    rng = np.random.default_rng(opts.seed)
    slots = sorted(int(s) for s in rng.choice(opts.context - 1, size=max(DIMS), replace=False))
    tokens = []
    for s in slots:
        a = int(window[s])
        others = np.unique(window[window != a])
        if len(others) < 2:
            raise ValueError("the probe window has fewer than 3 distinct tokens: no torus can be planted")
        b, c = (int(t) for t in rng.choice(others, size=2, replace=False))
        tokens.append([a, b, c])
    return {"window": window.tolist(), "slots": slots, "tokens": tokens}


def planted_points(lm, plan: dict, d: int, n: int, layer: int, final_ln: str, opts: ProbeOptions, batch: int = 256):
    """(n, C) float32: the hidden state at the window's last content token, at `layer`, of n inputs whose
    first d slots are planted on T^d (angles u ~ U[0,1)^d from opts.seed and d)."""
    import torch

    before, after = lm.special_ids()
    ids = torch.tensor([*before, *plan["window"], *after], dtype=torch.long)
    slots = [len(before) + s for s in plan["slots"][:d]]
    read = len(before) + len(plan["window"]) - 1  # the window's last content token
    device = next(lm.model.parameters()).device
    emb = input_embedding(lm)
    with torch.no_grad():
        E = emb(torch.tensor(plan["tokens"][:d], dtype=torch.long, device=device))  # (d, 3, C)
    a, db, dc = E[:, 0], E[:, 1] - E[:, 0], E[:, 2] - E[:, 0]  # (d, C) each
    u = np.random.default_rng([opts.seed, d]).random((n, d))
    theta = torch.as_tensor(2 * np.pi * u, dtype=E.dtype, device=device)  # (n, d)
    vectors = a + opts.radius * (torch.cos(theta)[..., None] * db + torch.sin(theta)[..., None] * dc)  # (n, d, C)
    current = {}

    def plant(module, inputs, out):
        out = out.clone()
        out[:, slots] = current["v"].to(out.dtype)
        return out

    handle = emb.register_forward_hook(plant)
    rows = []
    try:
        for i in range(0, n, batch):
            current["v"] = vectors[i : i + batch]
            B = len(current["v"])
            x = ids.to(device).expand(B, -1)
            h = lm.hidden(x, torch.ones_like(x), layer, final_ln)  # (B, T, C)
            rows.append(h[:, read].float().cpu().numpy())
    finally:
        handle.remove()
    X = np.concatenate(rows).astype(np.float32)
    if not np.isfinite(X).all():
        raise ValueError(f"{lm.source or 'the model'} gives NaN or infinite hidden states on the probe")
    return X


def certify_model(
    lm,
    docs: list[np.ndarray],
    *,
    layer: int | None,
    final_ln: str,
    id_options: dict,
    points: int,
    opts: ProbeOptions | None = None,
    device: str = "auto",
    seed: int = 0,
) -> dict:
    """The certificate of one ID protocol at one layer of `lm`, probed in a window of the first of `docs`
    (token ids) long enough: `id_options` holds the protocol's "k",
    "protocol", "batch_size" and "bootstrap"; `points` the count its estimate used (capped at MAX_POINTS).
    The protocol's own "estimator" is tried beside ESTIMATORS. Returns certify_points' record with "layer"
    (the block index) and "probe" (options, slots, tokens)."""
    opts = opts or ProbeOptions()
    L = lm.n_layer if layer is None else layer
    plan = plan_probe(probe_window(docs, opts), opts)
    n = probe_points(points)
    clouds = {d: planted_points(lm, plan, d, n, L, final_ln, opts) for d in DIMS}
    estimators = (*ESTIMATORS, id_options.get("estimator", ESTIMATORS[0]))
    record = certify_points(clouds, id_options, seed=seed, device=device, estimators=estimators)
    probe = {
        **opts.as_dict(),
        "layer_option": layer,
        "final_ln": final_ln,
        "slots": plan["slots"],
        "tokens": plan["tokens"],
        "read": "last content token",
    }
    return {"layer": L, **record, "probe": probe}

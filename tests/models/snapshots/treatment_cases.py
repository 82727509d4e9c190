"""Fixed-seed cases of the treatment-effect estimators, shared by the snapshot script and test.

``run_case(name)`` fits one case and returns a JSON-ready summary of everything public:
``params``, ``bse``, a fingerprint of the influence values, ``rep_params`` and every numeric
field of ``diagnostics``, plus the warning categories raised.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

import privinfer as pi


def _continuous(n: int, seed: int, levels: int = 2) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x1 = 2 * rng.beta(2, 2, n) - 1
    x2 = 2 * rng.beta(1.5, 3, n) - 1
    if levels == 2:
        d = (rng.random(n) < 1 / (1 + np.exp(-(0.2 + 0.8 * x1 - 0.6 * x2)))).astype(int)
    else:
        d = rng.integers(0, levels, n)
    y = (1.0 + x1) * d + np.sin(2 * x1) + x2**2 + rng.normal(size=n)
    g = rng.integers(0, 40, n)  # public clusters
    h = rng.integers(0, 7, n)  # second clustering dimension
    wt = rng.uniform(0.5, 2.0, n)  # public sampling weights
    v = rng.normal(size=n)  # public covariate / policy input
    return pd.DataFrame({"y": y, "d": d, "x1": x1, "x2": x2, "g": g, "h": h, "wt": wt, "v": v})


def _mixed(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x1 = 2 * rng.beta(2, 2, n) - 1
    c = rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2])
    w = rng.normal(size=n)
    d = (rng.random(n) < 1 / (1 + np.exp(-(0.6 * x1 - 0.5 * (c == "b") + 0.4 * w)))).astype(int)
    y = (1.0 + 0.5 * x1) * d + x1**2 + (c == "b") + 0.5 * w + rng.normal(size=n)
    g = rng.integers(0, 30, n)
    wt = rng.uniform(0.5, 2.0, n)
    return pd.DataFrame({"y": y, "d": d, "x1": x1, "c": c, "w": w, "g": g, "wt": wt})


def _discrete(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    c = rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2])
    k = rng.binomial(4, 0.3, n)
    w = rng.normal(size=n)
    d = (rng.random(n) < 1 / (1 + np.exp(-(0.3 * k - 0.5 * (c == "b") + 0.3 * w)))).astype(int)
    y = d * (1 + 0.2 * k) + k + (c == "c") + w + rng.normal(size=n)
    return pd.DataFrame({"y": y, "d": d, "c": c, "k": k.astype(float), "w": w})


def _mech_continuous(alpha: float) -> pi.AlphaIdentity:
    return pi.AlphaIdentity(
        alpha, {"x1": pi.reference.Uniform(-1, 1), "x2": pi.reference.Uniform(-1, 1)}
    )


def _mech_mixed(alpha: float) -> pi.AlphaIdentity:
    return pi.AlphaIdentity(
        alpha,
        {"x1": pi.reference.Uniform(-1, 1), "c": pi.reference.Categorical(["a", "b", "c"])},
    )


def _mech_discrete(alpha: float) -> pi.AlphaIdentity:
    return pi.AlphaIdentity(
        alpha, {"c": pi.reference.Categorical(["a", "b", "c"]), "k": stats.binom(4, 0.5)}
    )


def _policy(public: pd.DataFrame, mu: np.ndarray) -> np.ndarray:
    treat = (public["v"].to_numpy() > 0).astype(float)
    return 0.5 + treat * mu[:, 1] + (1 - treat) * mu[:, 0]


def _contrast3(public: pd.DataFrame, mu: np.ndarray) -> np.ndarray:
    return mu[:, 2] - 0.5 * (mu[:, 0] + mu[:, 1])


# name -> (model class name, data builder, mechanism builder, formula, options, fit options)
CASES: dict[str, tuple[str, Any, Any, str, dict[str, Any], dict[str, Any]]] = {
    "ate_a07": (
        "PrivateATE",
        (_continuous, 2000, 1),
        (_mech_continuous, 0.7),
        "y ~ d | x1 + x2",
        {},
        {"random_state": 3},
    ),
    "ate_a1": (
        "PrivateATE",
        (_continuous, 2000, 2),
        (_mech_continuous, 1.0),
        "y ~ d | x1 + x2",
        {"degree": 2},
        {"random_state": 4},
    ),
    "ate_nosplit_deg3": (
        "PrivateATE",
        (_continuous, 3000, 3),
        (_mech_continuous, 0.8),
        "y ~ d | x1 + x2",
        {"degree": 3, "split_nuisances": False},
        {"random_state": 5},
    ),
    "ate_mixed_public": (
        "PrivateATE",
        (_mixed, 2500, 4),
        (_mech_mixed, 0.75),
        "y ~ d | x1 + C(c) + w",
        {},
        {"random_state": 6},
    ),
    "ate_discrete_exact": (
        "PrivateATE",
        (_discrete, 2500, 5),
        (_mech_discrete, 0.8),
        "y ~ d | C(c) + k + w",
        {"degree": 1},
        {"random_state": 7},
    ),
    "ate_propensity": (
        "PrivateATE",
        (_continuous, 2000, 6),
        (_mech_continuous, 0.8),
        "y ~ d | x1 + x2",
        {"riesz": "propensity", "clip": 0.02},
        {"random_state": 8},
    ),
    "ate_propensity_a1": (
        "PrivateATE",
        (_continuous, 1500, 7),
        (_mech_continuous, 1.0),
        "y ~ d | x1 + x2",
        {"riesz": "propensity"},
        {"random_state": 9},
    ),
    "ate_propensity_public": (
        "PrivateATE",
        (_mixed, 2000, 8),
        (_mech_mixed, 0.8),
        "y ~ d | x1 + C(c) + w",
        {"riesz": "propensity", "degree": 1},
        {"random_state": 10},
    ),
    "ate_degree_cv": (
        "PrivateATE",
        (_continuous, 2000, 9),
        (_mech_continuous, 0.8),
        "y ~ d | x1 + x2",
        {"degree": "cv"},
        {"random_state": 11},
    ),
    "ate_cluster": (
        "PrivateATE",
        (_continuous, 2000, 10),
        (_mech_continuous, 0.8),
        "y ~ d | x1 + x2",
        {"cluster": "g"},
        {"random_state": 12},
    ),
    "ate_cluster2_weights": (
        "PrivateATE",
        (_continuous, 2000, 11),
        (_mech_continuous, 0.8),
        "y ~ d | x1 + x2",
        {"cluster": ["g", "h"], "weights": "wt"},
        {"random_state": 13},
    ),
    "ate_weights_public": (
        "PrivateATE",
        (_mixed, 2000, 12),
        (_mech_mixed, 0.8),
        "y ~ d | x1 + C(c) + w",
        {"weights": "wt"},
        {"random_state": 14},
    ),
    "ate_nrep3": (
        "PrivateATE",
        (_continuous, 1500, 13),
        (_mech_continuous, 0.7),
        "y ~ d | x1 + x2",
        {"n_rep": 3, "n_folds": 4},
        {"random_state": 15},
    ),
    "ate_given_folds": (
        "PrivateATE",
        (_continuous, 1500, 14),
        (_mech_continuous, 0.8),
        "y ~ d | x1 + x2",
        {"n_folds": 3},
        {"random_state": 16, "folds": 3},
    ),
    "ate_kernel": (
        "PrivateATE",
        (_continuous, 1500, 15),
        (_mech_continuous, 0.8),
        "y ~ d | x1 + x2",
        {"outcome_model": "kernel"},
        {"random_state": 17},
    ),
    "ate_kernel_a1_bw": (
        "PrivateATE",
        (_continuous, 1200, 16),
        (_mech_continuous, 1.0),
        "y ~ d | x1 + x2",
        {"outcome_model": "kernel", "kernel_bandwidth": 0.4},
        {"random_state": 18},
    ),
    "ate_kernel_cv": (
        "PrivateATE",
        (_continuous, 800, 17),
        (_mech_continuous, 0.8),
        "y ~ d | x1 + x2",
        {"outcome_model": "kernel", "kernel_bandwidth": "cv", "n_folds": 3},
        {"random_state": 19},
    ),
    "ate_multilevel": (
        "PrivateATE",
        (_continuous, 2400, 18, 3),
        (_mech_continuous, 0.8),
        "y ~ d | x1 + x2",
        {"reference_level": 1},
        {"random_state": 20},
    ),
    "att_auto": (
        "PrivateATT",
        (_continuous, 2000, 19),
        (_mech_continuous, 0.8),
        "y ~ d | x1 + x2",
        {},
        {"random_state": 21},
    ),
    "att_auto_a1": (
        "PrivateATT",
        (_continuous, 2000, 20),
        (_mech_continuous, 1.0),
        "y ~ d | x1 + x2",
        {},
        {"random_state": 22},
    ),
    "att_propensity": (
        "PrivateATT",
        (_continuous, 2000, 21),
        (_mech_continuous, 0.8),
        "y ~ d | x1 + x2",
        {"riesz": "propensity"},
        {"random_state": 23},
    ),
    "att_propensity_clip": (
        "PrivateATT",
        (_continuous, 1500, 30),
        (_mech_continuous, 0.8),
        "y ~ d | x1 + x2",
        {"riesz": "propensity", "clip": 0.4},
        {"random_state": 32},
    ),
    "att_cluster_weights": (
        "PrivateATT",
        (_mixed, 2000, 22),
        (_mech_mixed, 0.8),
        "y ~ d | x1 + C(c) + w",
        {"cluster": "g", "weights": "wt", "n_rep": 2},
        {"random_state": 24},
    ),
    "att_kernel": (
        "PrivateATT",
        (_continuous, 1500, 23),
        (_mech_continuous, 0.8),
        "y ~ d | x1 + x2",
        {"outcome_model": "kernel"},
        {"random_state": 25},
    ),
    "pom_binary": (
        "PrivatePOM",
        (_continuous, 2000, 24),
        (_mech_continuous, 0.8),
        "y ~ d | x1 + x2",
        {},
        {"random_state": 26},
    ),
    "pom_3levels_a1": (
        "PrivatePOM",
        (_continuous, 2400, 25, 3),
        (_mech_continuous, 1.0),
        "y ~ d | x1 + x2",
        {"n_rep": 2},
        {"random_state": 27},
    ),
    "pom_discrete": (
        "PrivatePOM",
        (_discrete, 2500, 26),
        (_mech_discrete, 0.7),
        "y ~ d | C(c) + k + w",
        {"degree": 1, "weights": None},
        {"random_state": 28},
    ),
    "functional_policy": (
        "PrivateFunctional",
        (_continuous, 2000, 27),
        (_mech_continuous, 0.8),
        "y ~ d | x1 + x2 + v",
        {"functional": _policy, "name": "policy value", "degree": 1},
        {"random_state": 29},
    ),
    "functional_contrast_weights": (
        "PrivateFunctional",
        (_continuous, 2400, 28, 3),
        (_mech_continuous, 0.8),
        "y ~ d | x1 + x2",
        {"functional": _contrast3, "weights": "wt", "cluster": "g"},
        {"random_state": 30},
    ),
    "functional_a1": (
        "PrivateFunctional",
        (_continuous, 1500, 29),
        (_mech_continuous, 1.0),
        "y ~ d | x1 + x2 + v",
        {"functional": _policy},
        {"random_state": 31},
    ),
}


# Columns that run_case(perturb=...) perturbs: the outcome, and the continuous covariates
# and weights the propensity and Riesz fits see (not the discrete ``k``).
PERTURBED = ("y", "x1", "x2", "w", "v", "wt")


def _floats(values: Any) -> list[float]:
    return [float(v) for v in np.asarray(values, dtype=float).ravel()]


def run_case(name: str, perturb: float = 0.0) -> dict[str, Any]:
    """Fit case ``name`` and summarise its public output (JSON-ready).

    ``perturb`` scales the raw outcome and the continuous covariates and weights
    (``PERTURBED``) row by row by ``1 + perturb * sin(1.3 i)`` before privatisation: a
    deterministic round-off-level perturbation. The default 0 leaves the data untouched.
    """
    cls_name, data_spec, mech_spec, formula, options, fit_options = CASES[name]
    builder, n, seed, *extra = data_spec
    raw = builder(n, seed, *extra)
    if perturb:
        wiggle = 1.0 + perturb * np.sin(1.3 * np.arange(len(raw)))
        for col in PERTURBED:
            if col in raw:
                raw[col] = raw[col] * wiggle
    mech = mech_spec[0](mech_spec[1])
    # Row order and every column kept, so the draws match the pre-refactor oracle.
    private = set(mech.private_columns)
    public = [c for c in raw.columns if c not in private]
    released = mech.privatize(
        raw, public=public, shuffle=False, allow_derived=True, random_state=seed + 100
    )
    fit_options = dict(fit_options)
    if "folds" in fit_options:
        n_folds = fit_options["folds"]
        fit_options["folds"] = np.arange(len(raw)) % n_folds
    cls = getattr(pi, cls_name)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = cls.from_formula(formula, released, mechanism=mech, **options)
        res = model.fit(**fit_options)
    infl = res.influence.to_numpy()
    probe = np.sin(0.37 * np.arange(infl.shape[0]))
    diag = res.diagnostics
    return {
        "names": [str(v) for v in res.params.index],
        "params": _floats(res.params),
        "bse": _floats(res.bse),
        "influence_head": _floats(infl[:5]),
        "influence_probe": _floats(probe @ infl),
        "influence_sq": _floats((infl**2).sum(axis=0)),
        "rep_params": _floats(res.rep_params),
        "gram_repairs": [
            [
                g.label,
                float(g.min_eigenvalue),
                float(g.floor),
                int(g.n_floored),
                bool(g.ill_conditioned),
            ]
            for g in diag.gram_repairs
        ],
        "n_clipped": int(diag.n_clipped),
        "clip": None if diag.clip is None else float(diag.clip),
        "outcome_r2": float(diag.outcome_r2),
        "riesz_second_moment": {k: float(v) for k, v in diag.riesz_second_moment.items()},
        "reference_error": {k: float(v) for k, v in diag.reference_error.items()},
        "reference_points": int(diag.reference_points),
        "reference_exact": bool(diag.reference_exact),
        "rep_spread": {k: float(v) for k, v in diag.rep_spread.items()},
        "notes": list(diag.notes),
        "warnings": sorted({w.category.__name__ for w in caught}),
    }

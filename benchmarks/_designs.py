"""Simulation designs with known truths, shared by the Monte Carlo studies and tests."""

from __future__ import annotations

import numpy as np
import pandas as pd

import privinfer as pi

DESIGNS = ("nonlinear", "heterogeneous", "mixed")
FORMULAS = {
    "nonlinear": "y ~ d | x1 + x2",
    "heterogeneous": "y ~ d | x1 + x2",
    "mixed": "y ~ d | x1 + C(g) + w",
}


def _expit(v):
    return 1.0 / (1.0 + np.exp(-v))


def simulate(design: str, n: int, rng: np.random.Generator) -> pd.DataFrame:
    """Draw a raw (true) dataset; X is *not* distributed like the reference."""
    x1 = 2 * rng.beta(2, 2, n) - 1
    x2 = 2 * rng.beta(1.5, 3, n) - 1
    if design == "nonlinear":
        d = rng.random(n) < _expit(0.2 + 0.8 * x1 - 0.6 * x2)
        y = 1.0 * d + np.sin(2 * x1) + x2**2 + 0.5 * x1 * x2 + rng.normal(size=n)
        return pd.DataFrame({"y": y, "d": d.astype(int), "x1": x1, "x2": x2})
    if design == "heterogeneous":
        d = rng.random(n) < _expit(-0.3 + x1 + 0.5 * x2)
        tau = 1.0 + x1 + 0.5 * x2**2
        y = tau * d + x1 + x2 + x1**2 + rng.normal(size=n)
        return pd.DataFrame({"y": y, "d": d.astype(int), "x1": x1, "x2": x2})
    if design == "mixed":
        g = rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2])
        w = rng.normal(size=n)
        gb, gc = (g == "b"), (g == "c")
        d = rng.random(n) < _expit(0.6 * x1 - 0.5 * gb + 0.5 * gc + 0.4 * w)
        tau = 1.0 + 0.5 * gb - 0.5 * gc + 0.5 * x1
        y = tau * d + x1 + x1**2 + gb - gc + 0.5 * w + 0.3 * w * x1 + rng.normal(size=n)
        return pd.DataFrame({"y": y, "d": d.astype(int), "x1": x1, "g": g, "w": w})
    raise ValueError(design)


def mechanism(design: str, alpha: float) -> pi.AlphaIdentity:
    ref = {"x1": pi.reference.Uniform(-1, 1)}
    if design == "mixed":
        ref["g"] = pi.reference.Categorical(["a", "b", "c"])
    else:
        ref["x2"] = pi.reference.Uniform(-1, 1)
    return pi.AlphaIdentity(alpha, ref)


def truth(design: str, estimand: str, n_big: int = 2_000_000) -> float:
    """Population ATE or ATT (ATE in closed form where easy; ATT by a large draw)."""
    rng = np.random.default_rng(12345)
    x1 = 2 * rng.beta(2, 2, n_big) - 1
    x2 = 2 * rng.beta(1.5, 3, n_big) - 1
    if design == "nonlinear":
        tau = np.ones(n_big)
        ps = _expit(0.2 + 0.8 * x1 - 0.6 * x2)
    elif design == "heterogeneous":
        tau = 1.0 + x1 + 0.5 * x2**2
        ps = _expit(-0.3 + x1 + 0.5 * x2)
    else:
        g = rng.choice(["a", "b", "c"], n_big, p=[0.5, 0.3, 0.2])
        w = rng.normal(size=n_big)
        gb, gc = (g == "b"), (g == "c")
        tau = 1.0 + 0.5 * gb - 0.5 * gc + 0.5 * x1
        ps = _expit(0.6 * x1 - 0.5 * gb + 0.5 * gc + 0.4 * w)
    if estimand == "ATE":
        return float(tau.mean())
    return float(np.sum(ps * tau) / np.sum(ps))


def skewed_wide_reference(n: int, rng: np.random.Generator) -> pd.DataFrame:
    """A skewed private ``x`` (lognormal, clipped at 10) under a U(0, 10) reference far
    wider than the data, a uniform ``z``, sine outcome; ATE = 1 + 0.3 E[x] (about 1.36).
    The design of the fold-block bootstrap tests and of ``fixed_ridge.py``.
    """
    x = np.minimum(rng.lognormal(0.0, 0.6, n), 10.0)
    z = rng.uniform(-1, 1, n)
    p = 1 / (1 + np.exp(-(1.0 - 0.6 * x + 0.5 * z)))
    d = (rng.random(n) < p).astype(int)
    y = np.sin(1.5 * x) + z + d * (1 + 0.3 * x) + rng.normal(scale=0.5, size=n)
    return pd.DataFrame({"x": x, "z": z, "d": d, "y": y})


def limited_overlap(n: int, rng: np.random.Generator) -> pd.DataFrame:
    """Limited overlap (propensity 0.03-0.97) through a private ``x1`` on [-1, 1], a
    uniform ``x2``, S-shaped outcome; ATE = 1. The design of the bias-bound tests and of
    ``fixed_ridge.py``.
    """
    x1 = 2 * rng.beta(1.2, 1.2, n) - 1
    x2 = rng.uniform(-1, 1, n)
    p = np.clip(1 / (1 + np.exp(-(4.0 * x1 + 0.5 * x2))), 0.03, 0.97)
    d = (rng.random(n) < p).astype(int)
    s = np.tanh(3.0 * x1)
    y = 2.0 * s + 0.5 * x2 + d * (1.0 + 0.5 * s) + rng.normal(size=n)
    return pd.DataFrame({"x1": x1, "x2": x2, "d": d, "y": y})

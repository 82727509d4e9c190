r"""Privacy-utility planning before data are collected.

How much precision does a privacy level cost? For a grid of keep probabilities
:math:`\alpha`, :func:`plan` releases a pilot sample (non-private, or simulated from a
design one believes in) through the alpha-identity mechanism, fits
:class:`~privinfer.PrivateATE` and reads off the variance of the
:math:`Q_X^{-1}`-transformed influence values, :math:`\sigma^2(\alpha) = n\,\mathrm{SE}^2`:
the efficient variance in the private model (Kormos and van der Vaart, 2026, eq. (20)),
which grows as :math:`\alpha` falls. The standard error at a planned sample size :math:`n` is then
:math:`\sigma(\alpha)/\sqrt n`, and the sample size that gives a target CI half-width
:math:`h` is :math:`(z_{1-a/2}\,\sigma(\alpha)/h)^2`. Each :math:`\alpha` is reported with
its privacy guarantees (TV, LDP and, for finite private spaces, PML).

The releases at different :math:`\alpha` are coupled (common random numbers): one keep
uniform :math:`U_i` and one reference draw per row and simulated study, shared by every
:math:`\alpha`, and one cross-fitting split. Row :math:`i` is kept at :math:`\alpha`
iff :math:`U_i < \alpha`, so each release has exactly the mechanism's distribution and
the kept sets are nested. The alpha-identity channels are themselves nested (releasing
at :math:`\beta` the output of a release at :math:`\alpha` is a release at
:math:`\alpha\beta`), so the true :math:`\sigma(\alpha)` cannot fall as
:math:`\alpha` falls; what remains of non-monotonicity in the table is Monte Carlo
noise of the pilot simulations, and the table reports it (jackknife standard errors over
the ``n_sim`` releases).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import norm
from tqdm.auto import tqdm

from privinfer._repr import short_repr
from privinfer._typing import RandomStateLike
from privinfer._validation import check_alpha, check_in_interval, check_int, spawn_generators
from privinfer.exceptions import DataMismatchError, MechanismMismatchError, PrivinferWarning
from privinfer.mechanisms.alpha_identity import AlphaIdentity
from privinfer.models._inputs import release_guarantees
from privinfer.models.ate import PrivateATE

__all__ = ["PlanResults", "plan"]

#: Default grid of keep probabilities.
_DEFAULT_ALPHAS = (1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4)


@dataclass(frozen=True)
class PlanResults:
    """What :func:`plan` predicts, one row per keep probability.

    Attributes
    ----------
    table : DataFrame
        Indexed by ``alpha``; columns ``tv``, ``ldp_eps``, ``ldp_delta``, ``pml_eps``
        (guarantees), ``sigma`` (sd of the influence values), ``se`` (predicted SE at
        ``n``), ``se_inflation`` (``sigma / sigma`` at alpha = 1), ``n_required``
        (sample size for the half-width; NaN when no ``half_width``), and the Monte Carlo
        standard errors ``sigma_mc_se`` and ``se_inflation_mc_se``.
    n_pilot : int
        Rows of the pilot sample.
    n : int
        Planned sample size behind ``se``.
    half_width : float or None
        Target half-width of the CI.
    level : float
        Coverage of the CI behind ``n_required``.
    n_sim : int
        Simulated releases per alpha; ``sigma_mc_se`` and ``se_inflation_mc_se`` (the
        delete-one-release jackknife standard errors of ``sigma`` and ``se_inflation``)
        measure the Monte Carlo noise of the plan, NaN when ``n_sim`` is 1.

    Examples
    --------
    Plan a study of 4000 rows from a pilot of 1000, aiming at a 95% CI half-width of 0.1:

    >>> import numpy as np, pandas as pd
    >>> import privinfer as pi
    >>> rng = np.random.default_rng(0)
    >>> x = rng.uniform(-1, 1, 1000)
    >>> d = (rng.random(1000) < 1 / (1 + np.exp(-x))).astype(int)
    >>> pilot = pd.DataFrame({"x": x, "d": d, "y": d + x + rng.normal(size=1000)})
    >>> mech = pi.AlphaIdentity(1.0, {"x": pi.reference.Uniform(-1, 1)})
    >>> p = pi.plan(pilot, outcome="y", treatment="d", covariates="x", mechanism=mech,
    ...             alphas=[1.0, 0.7, 0.5], n=4000, half_width=0.1, n_sim=2, degree=2,
    ...             random_state=0)
    >>> p.n_pilot, p.n, p.half_width, p.level
    (1000, 4000, 0.1, 0.95)
    >>> p.table.index.tolist(), p.table["tv"].tolist()
    ([1.0, 0.7, 0.5], [1.0, 0.7, 0.5])
    >>> bool(p.table["n_required"].is_monotonic_increasing)  # more privacy, more rows
    True
    >>> str(p).splitlines()[0]
    'Privacy-utility plan (pilot n = 1000, planned n = 4000, 95% CI half-width 0.1)'
    """

    table: pd.DataFrame
    n_pilot: int
    n: int
    half_width: float | None
    level: float
    n_sim: int = 1
    __repr__ = short_repr  # one line: arrays and tables by their shape

    def plot(self, ax: Any = None) -> Any:
        r"""Predicted SE against alpha, with the :math:`\mathrm{SE}(1)/\alpha` guide.

        Reuses :func:`privinfer.plotting.privacy_tradeoff_plot` (matplotlib imported
        lazily).

        Returns
        -------
        matplotlib Axes
        """
        from privinfer.plotting import privacy_tradeoff_plot

        fits = {
            float(a): SimpleNamespace(
                params=pd.Series({"ATE": 0.0}), bse=pd.Series({"ATE": float(se)})
            )
            for a, se in self.table["se"].items()
        }
        ax = privacy_tradeoff_plot(fits, param="ATE", ax=ax)
        ax.set_ylabel(f"predicted SE of the ATE at n = {self.n}")
        return ax

    def __str__(self) -> str:
        head = f"Privacy-utility plan (pilot n = {self.n_pilot}, planned n = {self.n}"
        if self.half_width is not None:
            head += f", {100 * self.level:g}% CI half-width {self.half_width:g}"
        body = self.table.to_string(float_format=lambda v: f"{v:.4g}")
        foot = (
            f"\nMonte Carlo noise over {self.n_sim} simulated releases: *_mc_se columns "
            "(jackknife). Differences between neighbouring alphas smaller than about twice "
            "these are noise; raise n_sim to resolve them."
            if self.n_sim > 1
            else "\nOne simulated release (n_sim = 1): the plan's Monte Carlo noise is unknown."
        )
        return head + ")\n" + body + foot


def plan(
    pilot: pd.DataFrame,
    *,
    outcome: str,
    treatment: str,
    covariates: str | list[str],
    mechanism: AlphaIdentity,
    alphas: Any = _DEFAULT_ALPHAS,
    n: int | None = None,
    half_width: float | None = None,
    level: float = 0.95,
    n_sim: int = 5,
    degree: int | None = None,
    n_folds: int = 5,
    resample: bool = True,
    random_state: RandomStateLike = None,
    progress: bool = False,
) -> PlanResults:
    r"""Predict the precision of PrivateATE over a grid of privacy levels.

    Before collecting data: release the pilot through the mechanism at each
    :math:`\alpha` (``n_sim`` times), fit :class:`~privinfer.PrivateATE` and average the
    variance of the transformed influence values. Cost: ``len(alphas) * n_sim`` fits on
    the pilot.

    Parameters
    ----------
    pilot : DataFrame
        True (non-private) pilot data, or a sample simulated from a planning design, with
        the outcome, treatment and covariates of the planned analysis.
    outcome, treatment : str
        Column names (public).
    covariates : str or list of str
        Formulaic right-hand side or a list of columns, as in :class:`PrivateATE`.
    mechanism : AlphaIdentity
        Supplies the public reference distribution of the private columns; its own
        alpha is replaced by each value of ``alphas``.
    alphas : sequence of float, default=(1.0, 0.9, ..., 0.4)
        Keep probabilities in (0, 1]. The no-privacy baseline alpha = 1 is always fitted.
    n : int, optional
        Planned sample size for the ``se`` column (default: the pilot size).
    half_width : float, optional
        Target half-width of the ``level`` CI; fills ``n_required``.
    level : float, default=0.95
        Coverage of that CI.
    n_sim : int, default=5
        Simulated releases of the pilot (averaging out the mechanism's randomness); each
        is coupled across the alpha grid. Their spread gives the ``*_mc_se`` columns.
    degree : int, optional
        Series degree; pass the one of the planned analysis (the default rule depends
        on the sample size, which differs between pilot and study).
    n_folds : int, default=5
        Cross-fitting folds.
    resample : bool, default=True
        When ``n`` differs from the pilot size, draw each simulated study as ``n`` rows
        sampled with replacement from the pilot, so that the finite-sample noise of the
        deconvolved nuisances (which shrinks with ``n alpha^2``) matches the planned
        study. ``False`` uses the pilot as it is and rescales by ``1/sqrt(n)`` only.
    random_state : int, SeedSequence, Generator or None, default=None
        Seeds the releases and fits (independent child streams); ``None`` draws fresh
        OS entropy.
    progress : bool, default=False
        Show a progress bar over the fits.

    Returns
    -------
    PlanResults
        The table and a :meth:`~PlanResults.plot` of the trade-off.

    Raises
    ------
    MechanismMismatchError
        ``mechanism`` is not an :class:`AlphaIdentity`.
    DataMismatchError
        Empty grid; the pilot fails the checks of :class:`PrivateATE`.
    ValueError
        An alpha outside (0, 1], a bad ``n``, ``half_width``, ``level`` or ``n_sim``.

    See Also
    --------
    privinfer.plotting.privacy_tradeoff_plot : the plot used by :meth:`PlanResults.plot`.

    Notes
    -----
    .. math:: \sigma^2(\alpha) = \frac1{S}\sum_{s=1}^S \frac1{n_p}\sum_{i}
              \varphi^{(s)}_i(\alpha)^2,\qquad
              \widehat{\mathrm{SE}}_n(\alpha) = \frac{\sigma(\alpha)}{\sqrt n},\qquad
              n_{req}(\alpha) = \Big\lceil\Big(\frac{z_{1-a/2}\,\sigma(\alpha)}{h}\Big)^2
              \Big\rceil,

    with :math:`\varphi^{(s)}` the influence values of PrivateATE on the s-th release of
    the pilot (resampled to :math:`n` rows when ``resample``; then :math:`n_p` is
    :math:`n`), coupled across alphas as described in :mod:`privinfer.planner`.
    The influence variance contains the finite-sample noise of the deconvolved
    nuisances, which shrinks with :math:`n\alpha^2`; resampling to the planned size keeps
    it at the study's level. ``n_required`` scales :math:`\sigma` from
    ``n`` and is most accurate near ``n``.

    The true :math:`\sigma(\alpha)` is non-increasing in :math:`\alpha` (the
    alpha-identity channels are nested: a release at :math:`\alpha\beta` is a release
    at :math:`\beta` of a release at :math:`\alpha`). The estimate can still wiggle on a
    small or heavy-tailed pilot; the ``*_mc_se`` columns (delete-one-release jackknife)
    say by how much, and raising ``n_sim`` shrinks them like :math:`1/\sqrt{S}`.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> import privinfer as pi
    >>> rng = np.random.default_rng(0)
    >>> x = rng.uniform(-1, 1, 1500)
    >>> d = (rng.random(1500) < 1 / (1 + np.exp(-x))).astype(int)
    >>> pilot = pd.DataFrame({"x": x, "d": d, "y": d + x + rng.normal(size=1500)})
    >>> mech = pi.AlphaIdentity(1.0, {"x": pi.reference.Uniform(-1, 1)})
    >>> p = pi.plan(pilot, outcome="y", treatment="d", covariates="x", mechanism=mech,
    ...             alphas=[1.0, 0.5], half_width=0.1, n_sim=2, degree=2, random_state=0)
    >>> bool(p.table.loc[0.5, "se_inflation"] > 1.0)
    True
    """
    owner = "plan"
    if not isinstance(mechanism, AlphaIdentity):
        raise MechanismMismatchError(
            f"{owner}: mechanism must be an AlphaIdentity (its reference is used); got "
            f"{type(mechanism).__name__}."
        )
    if not isinstance(pilot, pd.DataFrame) or len(pilot) == 0:
        raise DataMismatchError(f"{owner}: pilot must be a non-empty pandas DataFrame.")
    grid = sorted({check_alpha(a, owner) for a in np.atleast_1d(np.asarray(alphas, dtype=object))},
                  reverse=True)
    if not grid:
        raise DataMismatchError(f"{owner}: the alpha grid is empty.")
    n_pilot = len(pilot)
    n_plan = n_pilot if n is None else check_int(n, "n", owner, 2)
    if half_width is not None:
        half_width = check_in_interval(half_width, "half_width", owner, 0.0, math.inf,
                                       low_open=True, high_open=True)
    level = check_in_interval(level, "level", owner, 0.0, 1.0, low_open=True, high_open=True)
    n_sim = check_int(n_sim, "n_sim", owner, 1)
    z = float(norm.ppf(0.5 + level / 2))
    # the pilot is raw data by design, and the mechanism's own alpha is not used
    mechanism.check_data(pilot, owner, verify=False)
    fit_alphas = grid if 1.0 in grid else [1.0, *grid]
    streams = spawn_generators(random_state, n_sim)
    n_rows = n_plan if resample and n_plan != n_pilot else n_pilot
    # vals[s, k]: n * SE^2 on the s-th coupled release at fit_alphas[k]
    vals = np.empty((n_sim, len(fit_alphas)))
    bar = tqdm(total=len(fit_alphas) * n_sim, disable=not progress, desc=owner)
    for s, rng in enumerate(streams):
        sample = (
            pilot.iloc[rng.integers(0, n_pilot, n_plan)].reset_index(drop=True)
            if n_rows != n_pilot
            else pilot.reset_index(drop=True)
        )
        # common random numbers: one keep uniform and one reference draw per row, shared
        # by every alpha (row i is kept at alpha iff u_i < alpha), and one fold split
        u = rng.random(n_rows)
        draws = mechanism.reference.sample(n_rows, random_state=rng)
        fit_seed = int(rng.integers(0, 2**63 - 1))
        for k, a in enumerate(fit_alphas):
            mech = AlphaIdentity(a, mechanism.reference)
            released = _coupled_release(sample, draws, u >= a, mech)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", PrivinferWarning)
                res = PrivateATE(
                    released,
                    outcome=outcome,
                    treatment=treatment,
                    covariates=covariates,
                    mechanism=mech,
                    degree=degree,
                    n_folds=n_folds,
                    # the plan is the influence variance (its bootstrap would cost 30
                    # nuisance stages per fit and scale differently in n)
                    variance="influence",
                ).fit(random_state=fit_seed)
            vals[s, k] = n_rows * float(res.bse.iloc[0]) ** 2
            bar.update(1)
    bar.close()
    rows = []
    for a in grid:
        mech = AlphaIdentity(a, mechanism.reference)
        g = release_guarantees(mech)
        rows.append(
            {
                "alpha": a,
                "tv": g.tv if g is not None else a,
                "ldp_eps": g.ldp_eps if g is not None else float("nan"),
                "ldp_delta": g.ldp_delta if g is not None else float("nan"),
                "pml_eps": (g.pml_eps if g is not None and g.pml_eps is not None
                            else float("nan")),
            }
        )
    table = pd.DataFrame(rows).set_index("alpha")
    cols = [fit_alphas.index(a) for a in table.index]
    base = fit_alphas.index(1.0)
    sigma2 = vals.mean(axis=0)
    sigma = np.sqrt(sigma2[cols])
    table["sigma"] = sigma
    table["se"] = sigma / math.sqrt(n_plan)
    table["se_inflation"] = sigma / math.sqrt(sigma2[base])
    table["n_required"] = (
        np.ceil((z * sigma / half_width) ** 2) if half_width is not None else np.nan
    )
    sigma_mc, infl_mc = _jackknife_se(vals, cols, base)
    table["sigma_mc_se"] = sigma_mc
    table["se_inflation_mc_se"] = infl_mc
    return PlanResults(table=table, n_pilot=n_pilot, n=n_plan, half_width=half_width,
                       level=level, n_sim=n_sim)


def _coupled_release(
    sample: pd.DataFrame, draws: pd.DataFrame, replaced: np.ndarray, mech: AlphaIdentity
) -> pd.DataFrame:
    """``sample`` with its private columns taken from ``draws`` on the ``replaced`` rows.

    With ``replaced = u >= alpha`` for i.i.d. uniforms ``u`` independent of ``draws``
    (i.i.d. reference points), this is one release of the alpha-identity mechanism; the
    same ``u`` and ``draws`` at several alphas give nested releases (planning only).
    """
    out = sample.copy()
    levels = mech.reference.categorical_levels()
    for col in mech.private_columns:
        if col in levels:
            values = np.where(replaced, draws[col].to_numpy(dtype=object),
                              out[col].to_numpy(dtype=object))
            out[col] = pd.Categorical(values, categories=levels[col])
        elif pd.api.types.is_numeric_dtype(draws[col]):
            out[col] = np.where(replaced, draws[col].to_numpy(dtype=float),
                                out[col].to_numpy(dtype=float))
        else:  # an empirical reference of labels (strings, dates): keep them as they are
            out[col] = np.where(replaced, draws[col].to_numpy(dtype=object),
                                out[col].to_numpy(dtype=object))
    return out


def _jackknife_se(vals: np.ndarray, cols: list[int], base: int) -> tuple[Any, Any]:
    """Delete-one-release jackknife SEs of sigma and of the SE inflation.

    ``vals[s, k]`` holds ``n SE^2`` of release ``s`` at alpha ``k``. The releases are
    i.i.d. over ``s`` (coupled across ``k``), so deleting one release at a time gives the
    Monte Carlo error of the ratio estimator including the correlation that the coupling
    induces. NaN with a single release.
    """
    S = vals.shape[0]
    if S < 2:
        nan = np.full(len(cols), np.nan)
        return nan, nan.copy()
    loo = (vals.sum(axis=0) - vals) / (S - 1)  # (S, K) leave-one-out means
    sig = np.sqrt(loo[:, cols])
    infl = sig / np.sqrt(loo[:, [base]])
    factor = (S - 1) / S
    sig_se = np.sqrt(factor * ((sig - sig.mean(axis=0)) ** 2).sum(axis=0))
    infl_se = np.sqrt(factor * ((infl - infl.mean(axis=0)) ** 2).sum(axis=0))
    return sig_se, infl_se

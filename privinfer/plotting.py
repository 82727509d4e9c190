r"""Plots of private estimates, overlap, privacy trade-offs and synthetic measures.

Every function draws on a matplotlib ``Axes`` (a new figure when ``ax`` is None) and
returns it; none calls ``show``. matplotlib is imported inside the functions only, so
``import privinfer`` never imports it (``pip install privinfer[plot]``).

Nothing here needs raw private values: :func:`overlap_plot` deconvolves the *released*
covariates by arm through :math:`Q_X^{-1}` (:func:`private_histogram`), and the other
plots draw estimates, standard errors and published measures.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from privinfer._typing import RandomStateLike
from privinfer._validation import check_in_interval, check_int, check_level
from privinfer.descriptive import private_histogram
from privinfer.exceptions import DataMismatchError
from privinfer.mechanisms import AlphaIdentity

__all__ = [
    "err_vs_noise_plot",
    "forest_plot",
    "overlap_plot",
    "privacy_tradeoff_plot",
    "private_histogram",
    "privtree_plot",
    "results_frame",
    "trimming_plot",
]

_FRAME_COLUMNS = ("label", "estimate", "lower", "upper")


def _import_pyplot() -> Any:
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - exercised only without matplotlib
        raise ImportError(
            "privinfer.plotting needs matplotlib; install it with "
            "`pip install privinfer[plot]`."
        ) from exc
    return plt


def _axes(ax: Any) -> Any:
    if ax is None:
        _, ax = _import_pyplot().subplots()
    return ax


def results_frame(results: Any, *, alpha: float = 0.05) -> pd.DataFrame:
    """Tidy table of estimates and intervals from several fitted results.

    One row per (label, parameter). Use it to tabulate fits across keep probabilities or
    models before plotting them with :func:`forest_plot`. O(number of parameters).

    Parameters
    ----------
    results : results, mapping, or sequence of results or (label, results)
        Fitted objects with ``params``, ``bse`` (or ``std_errors``) and
        ``conf_int(alpha)``, e.g. :class:`~privinfer.results.PrivateResults`: one of them,
        a dict ``{label: results}``, or a list (unlabelled fits are named after their
        model).
    alpha : float, default=0.05
        Significance level of the intervals (not the mechanism's keep probability).

    Returns
    -------
    DataFrame
        Columns ``label``, ``param``, ``estimate``, ``std err``, ``lower``, ``upper``;
        ``attrs["alpha"]`` records the significance level of the intervals.

    Raises
    ------
    DataMismatchError
        An input that is neither a fit, a mapping, nor a sequence of fits or pairs.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from privinfer.results import Diagnostics, PrivateResults, ResultsRecord
    >>> rec = ResultsRecord("Demo", "y", pd.Series({"mean": 1.0}),
    ...                     np.array([[1.0], [-1.0]]), {"alpha": 1.0}, None, (),
    ...                     Diagnostics(), pd.DataFrame())
    >>> results_frame({"demo": PrivateResults(rec)})[["label", "param", "estimate"]]
      label param  estimate
    0  demo  mean       1.0
    """
    alpha = check_level(alpha, "results_frame")
    items = _labelled_fits(results, "results_frame")
    rows = []
    for label, res in items:
        ci = res.conf_int(alpha)
        bse = res.bse if hasattr(res, "bse") else res.std_errors
        for name, value in res.params.items():
            rows.append(
                {
                    "label": str(label),
                    "param": str(name),
                    "estimate": float(value),
                    "std err": float(bse[name]),
                    "lower": float(ci.loc[name, "lower"]),
                    "upper": float(ci.loc[name, "upper"]),
                }
            )
    frame = pd.DataFrame(rows, columns=["label", "param", "estimate", "std err", "lower", "upper"])
    frame.attrs["alpha"] = alpha  # the level of the intervals, read by forest_plot
    return frame


def _is_fit(obj: Any) -> bool:
    """Whether ``obj`` looks like one fitted results object (params and conf_int)."""
    return hasattr(obj, "params") and callable(getattr(obj, "conf_int", None))


def _labelled_fits(results: Any, owner: str) -> list[tuple[str, Any]]:
    """Normalise one fit, a mapping, or a sequence of fits or (label, fit) pairs.

    Unlabelled fits are named after their model (``res.model``), numbered when that
    name repeats.
    """
    if _is_fit(results):
        items: list[Any] = [results]
    elif isinstance(results, Mapping):
        return [(str(k), v) for k, v in results.items()]
    elif isinstance(results, Sequence) and not isinstance(results, str):
        items = list(results)
    else:
        raise DataMismatchError(
            f"{owner}: expected a fitted results object, a list of them, a dict of "
            f"label -> results, or a DataFrame; got {type(results).__name__}."
        )
    pairs: list[tuple[str | None, Any]] = []
    for i, item in enumerate(items):
        if _is_fit(item):
            pairs.append((None, item))
        elif isinstance(item, tuple) and len(item) == 2 and _is_fit(item[1]):
            pairs.append((str(item[0]), item[1]))
        else:
            raise DataMismatchError(
                f"{owner}: item {i} is neither a fitted results object nor a "
                f"(label, results) pair; got {type(item).__name__}."
            )
    names = [str(getattr(r, "model", "fit")) for label, r in pairs if label is None]
    repeated = {m for m in names if names.count(m) > 1}
    seen: dict[str, int] = {}
    out = []
    for label, res in pairs:
        if label is None:
            label = str(getattr(res, "model", "fit"))
            if label in repeated:
                seen[label] = seen.get(label, 0) + 1
                label = f"{label} ({seen[label]})"
        out.append((label, res))
    return out


def forest_plot(
    results: Any,
    *,
    alpha: float = 0.05,
    reference: float | Mapping[str, float] | None = None,
    ax: Any = None,
    title: str | None = None,
) -> Any:
    """Forest plot: point estimates and confidence intervals, one row per estimate.

    Use it to compare private fits across keep probabilities or models with the
    non-private answer or a benchmark (vertical reference lines). A fit with several
    parameters gives one row per parameter, labelled ``"label: param"``.

    Parameters
    ----------
    results : results, list, dict, or DataFrame
        One fitted results object (``res``); a list of them (``[r1, r2]``, labelled by
        their model name) or of ``(label, results)`` pairs; a dict ``{label: results}``;
        or a frame with columns ``label``, ``estimate``, ``lower`` and ``upper``
        (``param`` optional), e.g. from :func:`results_frame`.
    alpha : float, default=0.05
        Significance level of the intervals when ``results`` are fitted objects. For a
        frame it only labels the axis, unless the frame records its own level in
        ``attrs["alpha"]`` (as :func:`results_frame` does), which then wins.
    reference : float or mapping of str to float, optional
        Vertical reference lines, e.g. ``{"experimental benchmark": 1.79}``.
    ax : matplotlib Axes, optional
        Axes to draw on. When None, a new figure sized to the number of rows, with a
        constrained layout so that long labels are never clipped.
    title : str, optional

    Returns
    -------
    matplotlib Axes

    Raises
    ------
    DataMismatchError
        A frame without the required columns, an input of another type, nothing to
        plot, or a reference value that is not a number.

    See Also
    --------
    results_frame : the table this plot draws.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"label": ["alpha=1", "alpha=0.5"], "estimate": [1.0, 1.2],
    ...                       "lower": [0.8, 0.7], "upper": [1.2, 1.7]})
    >>> ax = forest_plot(frame, reference={"truth": 1.0})
    >>> len(ax.get_yticks())
    2

    Fitted results go in directly: ``forest_plot(res)``, ``forest_plot([r1, r2])`` or
    ``forest_plot({"alpha = 1": r1, "alpha = 0.5": r2})``.
    """
    owner = "forest_plot"
    alpha = check_level(alpha, owner)
    if isinstance(results, pd.DataFrame):
        frame = results.copy()
        # a frame from results_frame(alpha=...) knows the level of its intervals
        alpha = frame.attrs.get("alpha", alpha)
        missing = [c for c in _FRAME_COLUMNS if c not in frame.columns]
        if missing:
            raise DataMismatchError(
                f"{owner}: the frame lacks column(s) {missing!r}; it needs "
                f"{list(_FRAME_COLUMNS)!r} (and optionally 'param')."
            )
    else:
        frame = results_frame(_labelled_fits(results, owner), alpha=alpha)
    if frame.empty:
        raise DataMismatchError(f"{owner}: there is nothing to plot (no estimates).")
    refs = {} if reference is None else (
        dict(reference) if isinstance(reference, Mapping) else {"reference": reference}
    )
    for name, value in refs.items():
        try:
            refs[name] = None if isinstance(value, (bool, str)) else float(value)
        except (TypeError, ValueError):
            refs[name] = None
        if refs[name] is None:
            raise DataMismatchError(
                f"{owner}: reference values must be numbers (a float, or a mapping of "
                f"label -> float); got {value!r} for {name!r}."
            )
    if "param" in frame.columns and (
        frame["param"].nunique() > 1 or frame["label"].nunique() < len(frame)
    ):
        labels = [  # the parameter is named unless the label already says it
            str(a) if str(b) in str(a) else f"{a}: {b}"
            for a, b in zip(frame["label"], frame["param"], strict=True)
        ]
    else:
        labels = [str(a) for a in frame["label"]]
    if ax is None:
        plt = _import_pyplot()
        height = min(2.0 + 0.4 * len(frame), 30.0)
        _, ax = plt.subplots(figsize=(6.4, max(height, 2.5)), layout="constrained")
    pos = np.arange(len(frame))[::-1]
    est = frame["estimate"].to_numpy(dtype=float)
    lo = frame["lower"].to_numpy(dtype=float)
    hi = frame["upper"].to_numpy(dtype=float)
    ax.errorbar(est, pos, xerr=np.vstack([est - lo, hi - est]), fmt="o", color="k",
                ecolor="0.3", capsize=3)
    if refs:
        colors = ("tab:red", "tab:blue", "tab:green", "tab:orange", "tab:purple")
        for i, (name, value) in enumerate(refs.items()):
            ax.axvline(float(value), color=colors[i % len(colors)], linestyle="--",
                       linewidth=1, label=str(name))
        ax.legend(loc="best", fontsize="small")
    ax.set_yticks(pos)
    ax.set_yticklabels(labels)
    ax.set_ylim(-0.5, len(frame) - 0.5)
    ax.set_xlabel(f"estimate with {100 * (1 - alpha):g}% CI")
    if title is not None:
        ax.set_title(title)
    return ax


def overlap_plot(
    released: pd.DataFrame,
    treatment: str,
    column: str,
    *,
    mechanism: AlphaIdentity | None = None,
    bins: int | Sequence[float] = 20,
    reference_size: int = 8192,
    random_state: RandomStateLike = None,
    show_released: bool = False,
    ax: Any = None,
) -> Any:
    r"""Overlap check: the deconvolved distribution of a private covariate in each arm.

    Draws :func:`private_histogram` of ``column`` by the (public) ``treatment``, as
    densities for continuous columns and probabilities for categorical ones. Arms whose
    estimated distributions barely overlap signal weak overlap, which shows up as large
    Riesz representer moments in ``res.diagnostics.riesz_second_moment``. Only released
    values are used.

    Parameters
    ----------
    released : DataFrame
        Released data.
    treatment : str
        Public treatment column.
    column : str
        Private covariate.
    mechanism : AlphaIdentity, optional
        Defaults to the description carried by ``released.attrs``.
    bins : int or sequence of float, default=20
    reference_size : int, default=8192
    random_state : int, SeedSequence, Generator or None, default=None
        Seeds the reference sample.
    show_released : bool, default=False
        Also draw the raw released shares (dashed), which mix in :math:`\bar Q`.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib Axes

    See Also
    --------
    private_histogram : the estimates drawn.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np, pandas as pd, privinfer as pi
    >>> rng = np.random.default_rng(0)
    >>> raw = pd.DataFrame({"x": rng.uniform(0, 1, 2000), "d": rng.integers(0, 2, 2000)})
    >>> mech = pi.AlphaIdentity(0.6, {"x": pi.reference.Uniform(0, 1)})
    >>> ax = overlap_plot(mech.privatize(raw, public=["d"], random_state=1), "d", "x",
    ...                   mechanism=mech,
    ...                   bins=5, random_state=0)
    >>> ax.get_xlabel()
    'x'
    """
    hist = private_histogram(
        released, column, mechanism=mechanism, by=treatment, bins=bins,
        reference_size=reference_size, random_state=random_state,
    )
    ax = _axes(ax)
    categorical = hist["right"].isna().all()
    groups = list(pd.unique(hist["group"]))
    for j, g in enumerate(groups):
        part = hist[hist["group"] == g]
        color = f"C{j}"
        if categorical:
            x = np.arange(len(part)) + (j - (len(groups) - 1) / 2) * 0.8 / len(groups)
            ax.bar(x, part["mass"], width=0.8 / len(groups), color=color, alpha=0.7,
                   label=f"{treatment} = {g}")
            if show_released:
                ax.plot(x, part["released"], "o", color=color, mfc="none")
        else:
            left = part["bin"].to_numpy(dtype=float)
            width = part["right"].to_numpy(dtype=float) - left
            dens = part["mass"].to_numpy() / width
            edges = np.append(left, left[-1] + width[-1])
            ax.stairs(dens, edges, color=color, linewidth=1.5, label=f"{treatment} = {g}")
            if show_released:
                ax.stairs(part["released"].to_numpy() / width, edges, color=color,
                          linestyle="--", linewidth=1)
    if categorical:
        levels = list(hist[hist["group"] == groups[0]]["bin"])
        ax.set_xticks(np.arange(len(levels)))
        ax.set_xticklabels([str(v) for v in levels])
        ax.set_ylabel("private estimate of P(level | arm)")
    else:
        ax.set_ylabel("private density estimate by arm")
    ax.axhline(0.0, color="0.6", linewidth=0.5)
    ax.set_xlabel(column)
    ax.legend(loc="best", fontsize="small")
    return ax


def trimming_plot(rule: Any, data: pd.DataFrame, *, bins: int = 40, ax: Any = None) -> Any:
    r"""The public propensity by treatment arm, with a trimming rule's bounds.

    Histograms of :math:`p(w)` (:class:`~privinfer.trimming.TrimmingRule`) among treated
    and control rows of ``data``; the shaded regions are dropped by the rule. With three
    or more treatment levels: histograms of the smallest level probability
    :math:`\min_k p_k(w)` by level, the region below :math:`\gamma` shaded. Public
    columns only: nothing private is drawn.

    Parameters
    ----------
    rule : TrimmingRule
        A fitted rule (:meth:`PublicTrimming.fit <privinfer.PublicTrimming.fit>`).
    data : DataFrame
        Rows with the treatment and the rule's public columns (e.g. the release).
    bins : int, default=40
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np, pandas as pd, privinfer as pi
    >>> rng = np.random.default_rng(0)
    >>> w = rng.normal(size=800)
    >>> df = pd.DataFrame({"d": (rng.random(800) < 1 / (1 + np.exp(-3 * w))).astype(int),
    ...                    "w": w})
    >>> rule = pi.PublicTrimming.from_formula("d ~ w", df).fit()
    >>> trimming_plot(rule, df).get_xlabel()
    'public propensity p(w)'
    """
    bins = check_int(bins, "bins", "trimming_plot", 2)
    frame = data if isinstance(data, pd.DataFrame) else pd.DataFrame(data)
    treatment = rule.formula.split("~", 1)[0].strip()
    if treatment not in frame.columns:
        raise DataMismatchError(f"trimming_plot: treatment column {treatment!r} is not in data.")
    p = rule.propensity(frame)
    if getattr(rule, "levels", ()):  # three or more levels: the smallest level probability
        x, top = p.min(axis=1), 1.0 / len(rule.levels)
        d = frame[treatment].to_numpy()
        groups = [(d == v, f"{treatment} = {v}") for v in rule.levels]
        spans = [(0.0, rule.threshold)] if rule.threshold > 0 else []
        xlabel = "smallest level probability min_k p_k(w)"
    else:
        x, top = p, 1.0
        d = frame[treatment].to_numpy()
        arms = getattr(rule, "arms", ()) or (0, 1)  # control first, as the rule coded them
        groups = [
            (d == value, f"{treatment} = {value} ({label})")
            for value, label in zip(arms, ("control", "treated"), strict=True)
        ]
        lo, hi = rule.bounds
        spans = [sp for sp, keep in (((0.0, lo), lo > 0), ((hi, 1.0), hi < 1)) if keep]
        xlabel = "public propensity p(w)"
    ax = _axes(ax)
    edges = np.linspace(0.0, top, bins + 1)
    for j, (mask, label) in enumerate(groups):
        ax.hist(x[mask], bins=edges, color=f"C{j}", alpha=0.5, label=label)
    for i, (a, b) in enumerate(spans):
        # a leading underscore keeps the second span out of the legend
        ax.axvspan(a, b, color="0.85", zorder=0, label="dropped" if i == 0 else "_dropped")
    ax.set_xlim(0.0, top)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("rows")
    ax.set_title(f"gamma = {rule.threshold:.3f}: {rule.n_kept} of {rule.n_rows} rows kept",
                 fontsize="medium")
    ax.legend(loc="best", fontsize="small")
    return ax


def privacy_tradeoff_plot(
    results_by_alpha: Mapping[float, Any],
    *,
    param: str | None = None,
    guide: bool = True,
    ax: Any = None,
) -> Any:
    r"""Standard error against the keep probability alpha (the TV privacy level).

    Smaller alpha is more private and noisier. With ``guide=True`` the curve
    :math:`\mathrm{SE}(1)/\alpha` is drawn for comparison: the worst-case growth of the
    standard error under the alpha-identity, whose inversion divides by alpha.

    Parameters
    ----------
    results_by_alpha : mapping of float to results
        Fits of the same model on data released at each alpha.
    param : str, optional
        Parameter to show (default: the first).
    guide : bool, default=True
        Draw :math:`\mathrm{SE}(\alpha_{\max})\,\alpha_{\max}/\alpha`.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib Axes

    Raises
    ------
    DataMismatchError
        Empty input, an alpha outside (0, 1], or a ``param`` that some fit lacks (the
        message lists the parameters it has).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import pandas as pd
    >>> class Fit:
    ...     def __init__(self, se):
    ...         self.params, self.bse = pd.Series({"ATE": 1.0}), pd.Series({"ATE": se})
    >>> ax = privacy_tradeoff_plot({1.0: Fit(0.1), 0.5: Fit(0.25)})
    >>> ax.get_xlabel()
    'keep probability alpha (= TV privacy level)'
    """
    if not results_by_alpha:
        raise DataMismatchError("privacy_tradeoff_plot: no results given.")
    alphas = np.array(
        [check_in_interval(a, "alpha", "privacy_tradeoff_plot", 0.0, 1.0, low_open=True)
         for a in results_by_alpha]
    )
    fits = list(results_by_alpha.values())
    name = param if param is not None else str(fits[0].params.index[0])
    for a, fit in results_by_alpha.items():
        if name not in fit.bse.index:
            raise DataMismatchError(
                f"privacy_tradeoff_plot: param={name!r} is not a parameter of the fit at "
                f"alpha={a!r}; its parameters are {[str(k) for k in fit.params.index]}. Pass "
                "one of them, present in every fit."
            )
    se = np.array([float(f.bse[name]) for f in fits])
    order = np.argsort(alphas)
    alphas, se = alphas[order], se[order]
    ax = _axes(ax)
    ax.plot(alphas, se, "o-", color="k", label=f"SE of {name}")
    if guide:
        grid = np.linspace(alphas.min(), alphas.max(), 100)
        ax.plot(grid, se[-1] * alphas[-1] / grid, "--", color="tab:red",
                label=r"SE($\alpha_{max}$) $\alpha_{max}/\alpha$")
    ax.set_xlabel("keep probability alpha (= TV privacy level)")
    ax.set_ylabel("standard error")
    ax.legend(loc="best", fontsize="small")
    return ax


def privtree_plot(
    measure: Any,
    data: Any = None,
    *,
    ax: Any = None,
    cmap: str = "viridis",
    max_points: int = 2000,
) -> Any:
    """Draw a synthetic measure's cells (d = 1 or 2), optionally over the data.

    Shades each leaf cell by mass density (:meth:`SyntheticMeasure.plot
    <privinfer.transport.SyntheticMeasure.plot>`) and, for d = 2, scatters up to
    ``max_points`` rows of ``data`` on top. Only the data holder can draw the data.

    Parameters
    ----------
    measure : SyntheticMeasure
        E.g. ``PrivTreeSynthesizer(...).fit(X).measure_``.
    data : array-like of shape (n_obs, d), optional
    ax : matplotlib Axes, optional
    cmap : str, default="viridis"
    max_points : int, default=2000
        Largest number of data rows drawn (a deterministic thinning).

    Returns
    -------
    matplotlib Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from privinfer.transport import PrivTreeSynthesizer
    >>> x = np.random.default_rng(0).uniform(size=(500, 2))
    >>> nu = PrivTreeSynthesizer(1.0, [(0, 1), (0, 1)], random_state=0).fit(x).measure_
    >>> ax = privtree_plot(nu, x)
    >>> ax.get_xlabel()
    'x0'
    """
    ax = measure.plot(ax=_axes(ax), cmap=cmap)
    if data is not None and measure.dim == 2:
        pts = np.asarray(data, dtype=float)
        step = max(1, int(np.ceil(pts.shape[0] / check_int(max_points, "max_points",
                                                            "privtree_plot", 1))))
        pts = pts[::step]
        ax.scatter(pts[:, 0], pts[:, 1], s=2, c="w", alpha=0.6, linewidths=0)
    return ax


def err_vs_noise_plot(
    frame: pd.DataFrame,
    *,
    x: str,
    y: str,
    group: str | None = None,
    band: str | None = None,
    logx: bool = False,
    logy: bool = False,
    ax: Any = None,
) -> Any:
    """Error (or any statistic) against a noise or privacy level, one line per group.

    For Monte Carlo summaries such as the W1 error of PrivTree against eps, or the error
    of the DPOT cost against sigma. ``band`` names a column with a half-width (e.g. a
    Monte Carlo standard error) drawn as a shaded band.

    Parameters
    ----------
    frame : DataFrame
    x, y : str
        Columns for the horizontal and vertical axes.
    group : str, optional
        Column whose values give separate lines.
    band : str, optional
        Column with the half-width of a band around ``y``.
    logx, logy : bool, default=False
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib Axes

    Raises
    ------
    DataMismatchError
        A named column is missing.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import pandas as pd
    >>> f = pd.DataFrame({"eps": [0.5, 1, 2], "W1": [0.2, 0.1, 0.05], "se": [0.02] * 3})
    >>> ax = err_vs_noise_plot(f, x="eps", y="W1", band="se", logx=True)
    >>> ax.get_ylabel()
    'W1'
    """
    needed = [c for c in (x, y, group, band) if c is not None]
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise DataMismatchError(
            f"err_vs_noise_plot: column(s) {missing!r} not in the frame "
            f"(columns: {list(frame.columns)!r})."
        )
    ax = _axes(ax)
    parts = [(None, frame)] if group is None else list(frame.groupby(group, sort=True))
    for j, (g, part) in enumerate(parts):
        part = part.sort_values(x)
        xv = part[x].to_numpy(dtype=float)
        yv = part[y].to_numpy(dtype=float)
        label = None if g is None else f"{group} = {g}"
        ax.plot(xv, yv, "o-", color=f"C{j}", label=label)
        if band is not None:
            h = part[band].to_numpy(dtype=float)
            ax.fill_between(xv, yv - h, yv + h, color=f"C{j}", alpha=0.2)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    if group is not None:
        ax.legend(loc="best", fontsize="small")
    return ax

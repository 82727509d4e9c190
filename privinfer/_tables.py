r"""Several results side by side, as statsmodels' ``summary_col`` does.

:func:`summary_col` puts privinfer results (and statsmodels or linearmodels results) in
one table, in the order given, with parameters in order of first appearance. It returns
a statsmodels :class:`~statsmodels.iolib.summary2.Summary`, so ``as_text``,
``as_latex`` and ``as_html`` work. :class:`ModelLabel` is the estimator name that
privinfer results report as ``results.model``: a ``str`` that also carries the
``endog_names`` / ``exog_names`` that statsmodels' own table code reads, so that
``statsmodels.iolib.summary2.summary_col`` accepts privinfer results directly.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from statsmodels.iolib.summary2 import Summary
from statsmodels.iolib.summary2 import summary_col as _sm_summary_col

from privinfer.exceptions import DataMismatchError

__all__ = ["ModelLabel", "summary_col"]


class ModelLabel(str):
    """An estimator name that also answers statsmodels' ``model.endog_names`` / ``exog_names``.

    It compares, hashes and prints as the plain name.

    Parameters
    ----------
    name : str
        Estimator name, e.g. ``"PrivateATE"``.
    endog_names : str
        Outcome name.
    exog_names : sequence of str
        Parameter names.

    Examples
    --------
    >>> label = ModelLabel("PrivateATE", "y", ["ATE"])
    >>> label == "PrivateATE", label.endog_names, label.exog_names
    (True, 'y', ['ATE'])
    """

    endog_names: str
    exog_names: list[str]

    def __new__(cls, name: str, endog_names: str, exog_names: Sequence[str]) -> ModelLabel:
        obj = super().__new__(cls, name)
        obj.endog_names = str(endog_names)
        obj.exog_names = [str(v) for v in exog_names]
        return obj

    def __reduce__(self) -> tuple[Any, ...]:
        return (ModelLabel, (str(self), self.endog_names, self.exog_names))


def _estimator(res: Any) -> str:
    model = getattr(res, "model", None)
    if isinstance(model, str):
        return str(model)
    return type(model).__name__ if model is not None else type(res).__name__


def n_rows(res: Any) -> int:
    """Released rows behind a results object (for private means, behind all parameters).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> n_rows(SimpleNamespace(nobs=pd.Series({"a": 10, "b": 30})))
    30
    """
    rows = getattr(res, "n_rows", None)  # private means: the rows behind all parameters
    if rows is not None:
        return int(rows)
    n = res.nobs
    if isinstance(n, pd.Series):  # per-parameter counts without a total
        return int(n.max())
    return int(n)


def _nobs(res: Any) -> str:
    return str(n_rows(res))


def _keep_prob(res: Any) -> str:
    mech = getattr(res, "mechanism", None)  # PML results have none (eps, not alpha)
    alpha = mech.get("alpha") if isinstance(mech, Mapping) else None
    return "" if alpha is None else f"{float(alpha):.3g}"


#: The fit rows of statsmodels' ``summary_col`` (``include_r2=True``) and the attribute
#: each one reads.
FIT_ROWS: dict[str, str] = {"R-squared": "rsquared", "R-squared Adj.": "rsquared_adj"}


def _reports(res: Any, attr: str) -> bool:
    """Whether ``res`` has a finite ``attr`` (a missing one raises ``AttributeError``)."""
    try:
        value = float(getattr(res, attr))
    except (AttributeError, TypeError, ValueError):
        return False
    return bool(np.isfinite(value))


def _blank_missing_fit_rows(table: pd.DataFrame, items: Sequence[Any]) -> pd.DataFrame:
    """``table`` with the R-squared cells of models that do not report them left blank.

    statsmodels fills a model's missing statistic with ``nan`` (shown as ``"nan"``) as
    soon as it reports the other one, e.g. a linear :class:`~privinfer.PrivateGMM` fit,
    which has ``rsquared`` but no ``rsquared_adj``. Such cells are blanked, as for
    models with neither, and a row left blank in every column is dropped.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> table = pd.DataFrame({"m": ["1.0", "0.5000", "nan"]},
    ...                      index=["a", "R-squared", "R-squared Adj."])
    >>> _blank_missing_fit_rows(table, [SimpleNamespace(rsquared=0.5)]).index.tolist()
    ['a', 'R-squared']
    """
    out = table.copy()
    for label, attr in FIT_ROWS.items():
        if label not in out.index:
            continue
        row = out.index.get_loc(label)
        for col, res in enumerate(items):
            if not _reports(res, attr):
                out.iloc[row, col] = ""
        if (out.iloc[row] == "").all():
            out = out.drop(index=label)
    return out


#: Rows under the estimates: the estimator, the sample size and the keep probability.
DEFAULT_INFO: dict[str, Callable[[Any], str]] = {
    "Estimator": _estimator,
    "No. Observations": _nobs,
    "Keep prob. (alpha)": _keep_prob,
}


def summary_col(
    results: Mapping[str, Any] | Sequence[Any],
    *,
    model_names: Sequence[str] | None = None,
    stars: bool = False,
    float_format: str = "%.4f",
    info_dict: Mapping[str, Callable[[Any], Any]] | None = None,
    regressor_order: Sequence[str] | None = None,
    drop_omitted: bool = False,
    title: str | None = None,
) -> Summary:
    r"""Estimates of several models side by side, standard errors below in parentheses.

    Columns follow the order given and rows the order in which parameters first appear
    (statsmodels' ``summary_col`` with that ``regressor_order``). privinfer results,
    statsmodels results and linearmodels results can be mixed. The statistics are those
    each results object reports (the private covariance for privinfer results). A row
    that does not apply to a model is blank in its column: ``R-squared`` and
    ``R-squared Adj.`` for models without them (a linear ``PrivateGMM`` fit has the
    private R-squared only), and the rows are left out when no model has them.

    Parameters
    ----------
    results : mapping of str to results, or a sequence of results
        The models; a mapping's keys label the columns.
    model_names : sequence of str, optional
        Column labels for a sequence (default: the estimator names, numbered when
        repeated).
    stars : bool, default=False
        Significance stars (``*`` p < .1, ``**`` p < .05, ``***`` p < .01) from each
        model's ``pvalues``; for privinfer results with a bias bound these are the
        bias-aware p-values, and a note says which columns have them.
    float_format : str, default="%.4f"
        Format of estimates and standard errors.
    info_dict : mapping of str to callable, optional
        Rows under the estimates, ``label -> f(results)``; the default shows the
        estimator, the number of observations (for private means, the released rows
        behind all their parameters) and the keep probability.
    regressor_order : sequence of str, optional
        Parameters to put first; the others follow in order of appearance.
    drop_omitted : bool, default=False
        Show only the parameters in ``regressor_order``.
    title : str, optional
        A title above the table.

    Returns
    -------
    statsmodels.iolib.summary2.Summary
        With ``as_text()``, ``as_latex()`` and ``as_html()``; ``tables[0]`` is the
        table as a DataFrame of strings.

    Raises
    ------
    DataMismatchError
        No results, a label count that does not match, or an entry without
        ``params`` / ``bse``.

    See Also
    --------
    privinfer.compare : The same comparison as DataFrames.

    Examples
    --------
    >>> import numpy as np, pandas as pd, privinfer as pi
    >>> def demo(name, params):
    ...     phi = np.vstack([np.ones(len(params)), -np.ones(len(params))])
    ...     rec = pi.results.ResultsRecord(name, "y", pd.Series(params), phi, {"alpha": 0.5},
    ...                                    None, (), pi.results.Diagnostics(), pd.DataFrame())
    ...     return pi.PrivateResults(rec)
    >>> table = pi.summary_col([demo("B", {"z": 1.0, "a": 2.0}), demo("A", {"a": 3.0})])
    >>> table.tables[0].columns.tolist()
    ['B', 'A']
    >>> table.tables[0].index.tolist()[:4]  # order of appearance, not alphabetical
    ['z', '', 'a', '']
    >>> "\\begin{table}" in table.as_latex()
    True
    """
    if isinstance(results, Mapping):
        labels = [str(k) for k in results]
        items = list(results.values())
        if model_names is not None:
            raise DataMismatchError(
                "summary_col: give column labels either as the keys of a mapping or as "
                "model_names, not both."
            )
    else:
        items = list(results)
        labels = [] if model_names is None else [str(v) for v in model_names]
    if not items:
        raise DataMismatchError("summary_col: no results given.")
    bad = [i for i, r in enumerate(items) if not (hasattr(r, "params") and hasattr(r, "bse"))]
    if bad:
        raise DataMismatchError(
            f"summary_col: entries at positions {bad} have no 'params' and 'bse'; pass "
            "fitted results objects."
        )
    if not labels:
        labels = [_estimator(r) for r in items]
    if len(labels) != len(items):
        raise DataMismatchError(
            f"summary_col: {len(labels)} model names for {len(items)} results."
        )
    seen: dict[str, int] = {}
    unique = []
    for name in labels:
        seen[name] = seen.get(name, 0) + 1
        unique.append(name if seen[name] == 1 else f"{name} ({seen[name]})")
    order: list[str] = list(regressor_order or [])
    for r in items:
        for p in getattr(r.params, "index", []):
            if str(p) not in order:
                order.append(str(p))
    smry = _sm_summary_col(
        items,
        float_format=float_format,
        model_names=unique,
        stars=stars,
        info_dict=dict(DEFAULT_INFO if info_dict is None else info_dict),
        regressor_order=list(regressor_order or []) if drop_omitted else order,
        drop_omitted=drop_omitted,
        include_r2=True,
    )
    smry.tables[0] = _blank_missing_fit_rows(smry.tables[0], items)
    widened = [n for n, r in zip(unique, items, strict=True) if getattr(r, "_bias_widened", False)]
    if stars and widened:  # the stars follow the bias-aware p-values: say so
        smry.add_text(
            f"Stars of {', '.join(widened)} use bias-aware p-values (a regularisation bias "
            "bound; see their summary())."
        )
    if title is not None:
        smry.add_title(title)
    return smry

"""Several results side by side (linearmodels' ``compare``).

:func:`compare` builds a :class:`ComparisonResults`; both are importable from
:mod:`privinfer.results` and :mod:`privinfer`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd
from statsmodels.iolib.summary import Summary
from statsmodels.iolib.table import SimpleTable

from privinfer._hypotheses import PersistMixin, PostEstimationMixin
from privinfer._tables import DEFAULT_INFO, n_rows
from privinfer.exceptions import DataMismatchError

__all__ = ["ComparisonResults", "compare"]


class ComparisonResults(PersistMixin):
    """Several results side by side (linearmodels' ``compare``); build with :func:`compare`.

    Attributes are DataFrames with one column per model and one row per parameter
    (missing where a model has no such parameter). The models are privinfer results:
    :class:`~privinfer.PrivateResults` of the formula models, and the results of
    :class:`~privinfer.PrivateMean`, :class:`~privinfer.PrivateVectorMean` and
    :class:`~privinfer.PMLTest`, e.g. one estimate at several privacy levels.

    Examples
    --------
    The ATE and the ATT fitted on the same released data:

    >>> import numpy as np, pandas as pd, privinfer as pi
    >>> rng = np.random.default_rng(0)
    >>> x = rng.uniform(-1, 1, 1000)
    >>> d = (rng.random(1000) < 1 / (1 + np.exp(-x))).astype(int)
    >>> raw = pd.DataFrame({"x": x, "d": d, "y": d + x + rng.normal(size=1000)})
    >>> mech = pi.AlphaIdentity(0.7, {"x": pi.reference.Uniform(-1, 1)})
    >>> released = mech.privatize(raw, public=["d", "y"], random_state=1)
    >>> fits = {name: model.from_formula("y ~ d | x", released, mechanism=mech).fit(random_state=2)
    ...         for name, model in [("ATE model", pi.PrivateATE), ("ATT model", pi.PrivateATT)]}
    >>> table = pi.compare(fits)
    >>> table.params.shape, table.nobs.tolist()
    ((2, 2), [1000, 1000])
    >>> bool(pd.isna(table.params.loc["ATE", "ATT model"]))  # the ATT model has no ATE
    True
    >>> [round(float(table.params.loc[k, f"{k} model"]), 1) for k in ("ATE", "ATT")]  # truth 1
    [1.0, 1.0]
    >>> "Model Comparison" in str(table.summary())
    True
    """

    def __init__(self, results: Mapping[str, PostEstimationMixin]) -> None:
        self._results = dict(results)

    def _frame(self, attr: str) -> pd.DataFrame:
        # rows in order of first appearance (a dict of Series would sort them)
        order: list[Any] = []
        for r in self._results.values():
            order.extend(p for p in r.params.index if p not in order)
        return pd.DataFrame(
            {k: getattr(r, attr).reindex(order) for k, r in self._results.items()}, index=order
        )

    @property
    def params(self) -> pd.DataFrame:
        """Estimates."""
        return self._frame("params")

    @property
    def std_errors(self) -> pd.DataFrame:
        """Standard errors."""
        return self._frame("bse")

    @property
    def tstats(self) -> pd.DataFrame:
        """Z statistics."""
        return self._frame("tvalues")

    @property
    def pvalues(self) -> pd.DataFrame:
        """Each model's p-values.

        Two-sided (bias-aware where a fit reports a bias bound); for
        :class:`~privinfer.PMLTest` the exact one-sided p-value of its test.
        """
        return self._frame("pvalues")

    @property
    def nobs(self) -> pd.Series:
        """Number of observations per model (private means: the rows behind all parameters)."""
        return pd.Series({k: n_rows(r) for k, r in self._results.items()})

    def summary(self) -> Summary:
        """A statsmodels Summary: estimates with standard errors in parentheses.

        A model whose fit reported a regularisation bias bound gets the note of its own
        :meth:`~privinfer.PrivateResults.summary`, prefixed by its label: which
        parameters have bias-aware intervals and p-values (:attr:`pvalues`), and their
        bounds.
        """
        smry = Summary()
        params, se = self.params, self.std_errors
        names = [str(k) for k in self._results]  # keys may be alphas or other numbers
        # the rows under summary_col's estimates: estimator, sample size, keep probability
        head = [[label, *[f(r) for r in self._results.values()]]
                for label, f in DEFAULT_INFO.items()]  # fmt: skip
        rows = []
        for p in params.index:
            rows.append([str(p), *["" if pd.isna(v) else f"{v:.4f}" for v in params.loc[p]]])
            rows.append(["", *["" if pd.isna(v) else f"({v:.4f})" for v in se.loc[p]]])
        table = SimpleTable(head + rows, headers=["", *names], title="Model Comparison")
        smry.tables.append(table)
        notes = ["Standard errors in parentheses."]
        # a fit whose intervals are widened for a bias bound: its own summary's note (the
        # PML results compared here carry no bias bound)
        notes.extend(
            f"{label}: {r._bias_note()}"
            for label, r in zip(names, self._results.values(), strict=True)
            if getattr(r, "_bias_widened", False)
        )
        smry.add_extra_txt(notes)
        return smry

    def __str__(self) -> str:
        return str(self.summary())

    def __repr__(self) -> str:
        return f"<ComparisonResults of {list(self._results)}>"

    def _repr_html_(self) -> str:
        return self.summary().as_html()


def compare(
    results: Mapping[str, PostEstimationMixin] | Sequence[PostEstimationMixin],
) -> ComparisonResults:
    """Compare several results side by side (linearmodels' ``compare``).

    Parameters
    ----------
    results : mapping of str to results, or a sequence of them
        privinfer results to compare (:class:`~privinfer.PrivateResults`, and those of
        :class:`~privinfer.PrivateMean`, :class:`~privinfer.PrivateVectorMean` and
        :class:`~privinfer.PMLTest`); a sequence is labelled by estimator name (numbered
        when repeated). :func:`~privinfer.summary_col` also takes statsmodels and
        linearmodels results.

    Returns
    -------
    ComparisonResults
        ``params``, ``std_errors``, ``tstats``, ``pvalues``, ``nobs`` and ``summary()``.

    Raises
    ------
    DataMismatchError
        Nothing to compare, a single result or other object instead of a mapping or a
        list, or an entry that is not a results object.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from privinfer.results import (Diagnostics, PrivateResults,
    ...                                ResultsRecord)
    >>> def demo(name, value):
    ...     rec = ResultsRecord(name, "y", pd.Series({"ATE": value}), np.array([[1.0], [-1.0]]),
    ...                         {"alpha": 1.0}, None, (), Diagnostics(), pd.DataFrame())
    ...     return PrivateResults(rec)
    >>> table = compare({"first": demo("A", 1.0), "second": demo("B", 2.0)})
    >>> table.params.loc["ATE"].tolist()
    [1.0, 2.0]
    """
    if isinstance(results, Mapping):
        items = dict(results)
    elif isinstance(results, PostEstimationMixin | str) or not isinstance(results, Iterable):
        raise DataMismatchError(
            "compare: results must be a mapping of labels to results or a list of them; "
            f"got {type(results).__name__} (wrap a single result in a list)."
        )
    else:
        items = {}
        for r in results:
            name = getattr(r, "model", type(r).__name__)
            label, k = name, 1
            while label in items:
                k += 1
                label = f"{name} ({k})"
            items[label] = r
    if not items:
        raise DataMismatchError("compare: no results given.")
    bad = [k for k, r in items.items() if not isinstance(r, PostEstimationMixin)]
    if bad:
        raise DataMismatchError(
            f"compare: entries {bad!r} are not privinfer results (PrivateResults, or those of "
            "PrivateMean, PrivateVectorMean and PMLTest); summary_col also takes statsmodels "
            "and linearmodels results."
        )
    return ComparisonResults(items)

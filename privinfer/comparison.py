"""Several results side by side (linearmodels' ``compare``).

:func:`compare` builds a :class:`ComparisonResults`; both are importable from
:mod:`privinfer.results` and :mod:`privinfer`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd
from statsmodels.iolib.summary import Summary
from statsmodels.iolib.table import SimpleTable

from privinfer._hypotheses import PersistMixin
from privinfer.exceptions import DataMismatchError

if TYPE_CHECKING:
    from privinfer.results import PrivateResults

__all__ = ["ComparisonResults", "compare"]


class ComparisonResults(PersistMixin):
    """Several results side by side (linearmodels' ``compare``); build with :func:`compare`.

    Attributes are DataFrames with one column per model and one row per parameter
    (missing where a model has no such parameter).

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

    def __init__(self, results: Mapping[str, PrivateResults]) -> None:
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
        """Two-sided p-values (bias-aware where a fit reports a bias bound)."""
        return self._frame("pvalues")

    @property
    def nobs(self) -> pd.Series:
        """Number of observations per model."""
        return pd.Series({k: r.nobs for k, r in self._results.items()})

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
        head = [
            ["Estimator", *[r.model for r in self._results.values()]],
            ["No. Observations", *[str(r.nobs) for r in self._results.values()]],
            [
                "Keep prob. (alpha)",
                *[f"{r.mechanism.get('alpha', float('nan')):.3g}" for r in self._results.values()],
            ],
        ]
        rows = []
        for p in params.index:
            rows.append([str(p), *["" if pd.isna(v) else f"{v:.4f}" for v in params.loc[p]]])
            rows.append(["", *["" if pd.isna(v) else f"({v:.4f})" for v in se.loc[p]]])
        table = SimpleTable(head + rows, headers=["", *names], title="Model Comparison")
        smry.tables.append(table)
        notes = ["Standard errors in parentheses."]
        # a fit whose intervals are widened for a bias bound: its own summary's note
        notes.extend(
            f"{label}: {r._bias_note()}"
            for label, r in zip(names, self._results.values(), strict=True)
            if r._bias_widened
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
    results: Mapping[str, PrivateResults] | Sequence[PrivateResults],
) -> ComparisonResults:
    """Compare several results side by side (linearmodels' ``compare``).

    Parameters
    ----------
    results : mapping of str to PrivateResults, or a sequence of them
        Models to compare; a sequence is labelled by estimator name (numbered when
        repeated).

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
    # imported here: privinfer.results re-exports this module
    from privinfer.results import PrivateResults

    if isinstance(results, Mapping):
        items = dict(results)
    elif isinstance(results, PrivateResults | str) or not isinstance(results, Iterable):
        raise DataMismatchError(
            "compare: results must be a mapping of labels to PrivateResults or a list of "
            f"them; got {type(results).__name__} (wrap a single result in a list)."
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
    bad = [k for k, r in items.items() if not isinstance(r, PrivateResults)]
    if bad:
        raise DataMismatchError(f"compare: entries {bad!r} are not PrivateResults.")
    return ComparisonResults(items)

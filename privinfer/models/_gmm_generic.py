r"""Private moment rows for a generic user moment function (the fallback engine).

A user writes ``moments(params, frame) -> ndarray (n, k_moms)`` for the *true* data. Its
private version is

.. math::

    (Q_X^{-1}\phi_\theta)(v_i, z_i)
      = \frac{\phi_\theta(v_i, z_i) - (1-\alpha)\,E_{\bar Q}\phi_\theta(v_i, X)}{\alpha},

and nothing is known about how :math:`\phi_\theta` depends on ``x``, so
:math:`E_{\bar Q}\phi_\theta(v, X)` is evaluated by brute force over a reference sample
of size ``M`` (exact enumeration for a small finite support, else scrambled Sobol points),
once for every *distinct* public part ``v`` of the data. The user function is called on
"cross" frames pairing each distinct public row with every reference point, ``rows_per_call``
rows at a time.

Cost: O(T M) evaluations of the user function per evaluation of the moments, with ``T``
the number of distinct public rows. With a continuous public column (``T = n``) this is
O(n M): use it for moderate ``n``, a moderate ``M`` (``reference_size``), or write the
model through the separable front-ends (:meth:`PrivateGMM.ols`, :meth:`PrivateGMM.iv`,
:meth:`PrivateGMM.logit`), which are O(n + M).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from privinfer._typing import FloatArray, IntArray
from privinfer.exceptions import DataMismatchError

__all__ = ["GenericMoments"]

MomentFunction = Callable[[FloatArray, pd.DataFrame], Any]


class GenericMoments:
    """Evaluate private moment rows of a user moment function on released data.

    Parameters
    ----------
    moments : callable
        ``moments(params, frame) -> (len(frame), k_moms)`` for the true data.
    frame : DataFrame
        Released data (private categoricals cast to their public levels).
    private_columns : tuple of str
        Columns covered by the mechanism.
    alpha : float
        Keep probability.
    ref_frame : DataFrame or None
        Reference points of the private columns (``None`` when ``alpha = 1``).
    ref_weights, replicate : ndarray or None
        Reference weights and Sobol replicate labels.
    k_moms : int
        Expected number of moment columns.
    owner : str
        For error messages.
    rows_per_call : int, default=1_000_000
        Largest cross frame handed to the user function at once.
    """

    def __init__(
        self,
        moments: MomentFunction,
        frame: pd.DataFrame,
        private_columns: tuple[str, ...],
        alpha: float,
        ref_frame: pd.DataFrame | None,
        ref_weights: FloatArray | None,
        replicate: IntArray | None,
        k_moms: int,
        owner: str,
        rows_per_call: int = 1_000_000,
    ) -> None:
        self.moments = moments
        self.frame = frame
        self.alpha = alpha
        self.k_moms = k_moms
        self.owner = owner
        self.rows_per_call = rows_per_call
        self.ref_frame = ref_frame
        self.ref_weights = ref_weights
        self.replicate = replicate
        public = [c for c in frame.columns if c not in set(private_columns)]
        self.private_columns = [c for c in frame.columns if c in set(private_columns)]
        if public:
            codes, _ = pd.MultiIndex.from_frame(frame[public]).factorize()
            self.codes = np.asarray(codes, dtype=np.int64)
            first = np.unique(self.codes, return_index=True)[1]
            self.distinct = frame[public].iloc[first].reset_index(drop=True)
        else:
            self.codes = np.zeros(len(frame), dtype=np.int64)
            self.distinct = pd.DataFrame(index=pd.RangeIndex(1))
        self.public_columns = public

    @property
    def n_distinct(self) -> int:
        """Number of distinct public rows ``T``."""
        return len(self.distinct)

    def evaluate(self, params: FloatArray, frame: pd.DataFrame) -> FloatArray:
        """Call the user function and check its output."""
        out = np.asarray(self.moments(np.asarray(params, dtype=float), frame), dtype=float)
        if out.ndim == 1 and self.k_moms == 1:
            out = out[:, None]
        if out.shape != (len(frame), self.k_moms):
            raise DataMismatchError(
                f"{self.owner}: moments(params, frame) must return an array of shape "
                f"(len(frame), k_moms) = ({len(frame)}, {self.k_moms}); got {out.shape}."
            )
        if not np.all(np.isfinite(out)):
            raise DataMismatchError(
                f"{self.owner}: moments(params, frame) returned NaN or infinite values at "
                f"params={np.asarray(params).tolist()!r}."
            )
        return out

    def qbar(self, params: FloatArray, by_replicate: bool = False) -> FloatArray:
        r""":math:`E_{\bar Q}\phi_\theta(v_t, X)` for each distinct public row (T, k).

        With ``by_replicate`` the expectation is returned per Sobol replicate,
        shape (R, T, k).
        """
        if self.ref_frame is None or self.ref_weights is None:
            raise RuntimeError("GenericMoments.qbar needs a reference sample (alpha < 1).")
        M = len(self.ref_frame)
        T = self.n_distinct
        per = max(1, self.rows_per_call // M)
        labels = np.unique(self.replicate) if by_replicate and self.replicate is not None else None
        out = (
            np.empty((T, self.k_moms))
            if labels is None
            else np.empty((labels.size, T, self.k_moms))
        )
        ref_priv = self.ref_frame[self.private_columns].reset_index(drop=True)
        for s in range(0, T, per):
            t = np.arange(s, min(s + per, T))
            cross = ref_priv.iloc[np.tile(np.arange(M), t.size)].reset_index(drop=True)
            if self.public_columns:
                pub = self.distinct.iloc[np.repeat(t, M)].reset_index(drop=True)
                cross = pd.concat([pub, cross], axis=1)
            cross = cross[list(self.frame.columns)]
            vals = self.evaluate(params, cross).reshape(t.size, M, self.k_moms)
            if labels is None:
                out[t] = np.einsum("tmk,m->tk", vals, self.ref_weights)
            else:
                for r_i, lab in enumerate(labels):
                    sel = self.replicate == lab
                    w = self.ref_weights[sel] / self.ref_weights[sel].sum()
                    out[r_i, t] = np.einsum("tmk,m->tk", vals[:, sel], w)
        return out

    def rows(self, params: FloatArray) -> FloatArray:
        r"""Private moment rows :math:`\bar\phi_i` (n, k_moms)."""
        phi = self.evaluate(params, self.frame)
        if self.alpha == 1.0:
            return phi
        return (phi - (1.0 - self.alpha) * self.qbar(params)[self.codes]) / self.alpha

    def mean(self, params: FloatArray) -> FloatArray:
        r"""Mean private moment :math:`\bar g(\theta)`."""
        return self.rows(params).mean(axis=0)

    def reference_error(self, params: FloatArray) -> FloatArray:
        """Quasi-Monte Carlo standard error of the mean moment's reference term (k,)."""
        if self.alpha == 1.0 or self.replicate is None:
            return np.zeros(self.k_moms)
        per_rep = self.qbar(params, by_replicate=True)  # (R, T, k)
        counts = np.bincount(self.codes, minlength=self.n_distinct) / self.codes.size
        term = -(1.0 - self.alpha) / self.alpha * np.einsum("rtk,t->rk", per_rep, counts)
        return term.std(axis=0, ddof=1) / np.sqrt(term.shape[0])

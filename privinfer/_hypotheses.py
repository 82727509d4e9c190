r"""Post-estimation shared by every privinfer results object (statsmodels' conventions).

Linear restrictions :math:`H_0: R\theta = q` are tested through the covariance that the
results report (for the private models: the covariance of the :math:`Q_X^{-1}`-transformed
influence values). Restrictions are given as statsmodels and linearmodels accept them: a
string such as ``"educ = exper, expersq = 0"`` (parsed by formulaic's
``LinearConstraints``), a matrix :math:`R` (then :math:`q = 0`) or a tuple ``(R, q)``.
The tests return statsmodels' :class:`~statsmodels.stats.contrast.ContrastResults`, so
``.statistic``, ``.pvalue``, ``.conf_int()`` and ``.summary()`` work as for statsmodels
results. ``save`` / ``load`` pickle a results object (statsmodels' ``save``).
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Hashable, Sequence
from typing import IO, Any, TypeVar

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.iolib.summary import Summary
from statsmodels.stats.contrast import ContrastResults

from privinfer._critical import (
    MAX_SIGN_ENUMERATION,
    bias_aware_critical_value,
    bias_aware_pvalue,
    sign_patterns,
    zero_se_half_width,
)
from privinfer._typing import FloatArray
from privinfer._validation import check_level, plain_text
from privinfer.exceptions import ConstraintError, DataMismatchError

__all__ = [
    "BiasAwareContrastResults",
    "PersistMixin",
    "PostEstimationMixin",
    "RestrictionLike",
    "describe_bounds",
    "linear_restrictions",
]

#: A restriction: a string, a matrix R (q = 0), or a tuple (R, q).
RestrictionLike = str | Sequence[str] | np.ndarray | tuple[Any, Any] | pd.DataFrame

_T = TypeVar("_T", bound="PersistMixin")


def linear_restrictions(
    spec: Any, names: Sequence[str], owner: str
) -> tuple[FloatArray, FloatArray]:
    r"""Restriction matrix :math:`R` (J x k) and values :math:`q` (J) from a user spec.

    Parameters
    ----------
    spec : str, sequence of str, array-like or tuple (R, q)
        ``"a = b, c = 1"`` (a name alone means ``name = 0``), a list of such strings, a
        matrix :math:`R` with one column per parameter (``q = 0``), a vector (one
        restriction), or ``(R, q)``.
    names : sequence of str
        Parameter names, in order.
    owner : str
        The calling method, for messages.

    Returns
    -------
    R : ndarray of shape (J, k)
    q : ndarray of shape (J,)

    Raises
    ------
    ConstraintError
        Unknown names, a malformed string, a matrix of the wrong width, or linearly
        dependent restrictions.

    Examples
    --------
    >>> R, q = linear_restrictions("b = 2 * a, c = 1", ["a", "b", "c"], "demo")
    >>> R.tolist(), q.tolist()
    ([[-2.0, 1.0, 0.0], [0.0, 0.0, 1.0]], [0.0, 1.0])
    """
    from formulaic.utils.constraints import LinearConstraints

    names = [str(n) for n in names]
    k = len(names)
    if isinstance(spec, pd.DataFrame):
        spec = spec.reindex(columns=names, fill_value=0.0).to_numpy(dtype=float)
    if isinstance(spec, (list, tuple)) and spec and all(isinstance(s, str) for s in spec):
        spec = ", ".join(spec)
    if isinstance(spec, str):
        try:
            lc = LinearConstraints.from_spec(spec, variable_names=names)
        except Exception as err:  # formulaic raises several types for bad strings
            raise ConstraintError(
                f"{owner}: cannot read the restrictions {spec!r} ({_parse_problem(err)}). "
                f"Write them in terms of the parameter names {names!r}, e.g. "
                f"'{names[0]} = 0'."
            ) from None
        R = np.asarray(lc.constraint_matrix, dtype=float)
        q = np.asarray(lc.constraint_values, dtype=float).ravel()
    else:
        if isinstance(spec, tuple) and len(spec) == 2:
            R_raw, q_raw = spec
        else:
            R_raw, q_raw = spec, None
        try:
            R = np.atleast_2d(np.asarray(R_raw, dtype=float))
            q = (
                np.zeros(R.shape[0])
                if q_raw is None
                else np.atleast_1d(np.asarray(q_raw, dtype=float)).ravel()
            )
        except (TypeError, ValueError) as err:
            raise ConstraintError(
                f"{owner}: restrictions must be a string, a matrix R or a tuple (R, q); got "
                f"{type(spec).__name__} ({err})."
            ) from None
        if R.ndim != 2 or R.shape[1] != k:
            raise ConstraintError(
                f"{owner}: the restriction matrix R must have {k} columns (one per parameter "
                f"{names!r}); got shape {R.shape}."
            )
        if q.shape[0] != R.shape[0]:
            raise ConstraintError(
                f"{owner}: R has {R.shape[0]} rows but q has {q.shape[0]} values."
            )
    if R.shape[0] == 0 or not (np.all(np.isfinite(R)) and np.all(np.isfinite(q))):
        raise ConstraintError(f"{owner}: restrictions must be non-empty and finite.")
    rank = int(np.linalg.matrix_rank(R))
    if rank < R.shape[0]:
        raise ConstraintError(
            f"{owner}: the {R.shape[0]} restrictions are linearly dependent (rank {rank}); "
            "drop the redundant ones."
        )
    return R, q


def _parse_problem(err: Exception) -> str:
    """What formulaic found wrong in a restriction string, as plain text.

    Its syntax errors mark the offending part with terminal colour codes, which are
    removed; an unknown name (a ``KeyError``) is said in words.

    Examples
    --------
    >>> _parse_problem(KeyError("zz"))
    "unknown name 'zz'"
    """
    if isinstance(err, KeyError) and len(err.args) == 1:
        return f"unknown name {err.args[0]!r}"
    return plain_text(err)


def _label(row: FloatArray, value: float, names: Sequence[str]) -> str:
    """A readable name for one restriction, e.g. ``"educ - exper = 0"``."""
    parts = []
    for coef, name in zip(row, names, strict=True):
        if coef == 0:
            continue
        sign = "-" if coef < 0 else "+"
        mag = abs(coef)
        term = name if mag == 1 else f"{mag:g}*{name}"
        parts.append((sign, term))
    text = " ".join(f"{s} {t}" for s, t in parts).lstrip("+ ")
    if parts and parts[0][0] == "-":
        text = "-" + text[2:]
    return f"{text} = {value:g}"


def describe_bounds(names: Sequence[str], bounds: FloatArray, se: FloatArray) -> str:
    """``"name (B = 0.05, 1.20 SE)"`` for each positive bound, comma-separated.

    The words of the summary notes on bias-aware intervals; a standard error of zero
    reads ``"SE = 0: +/- B"`` (the interval is the estimate plus or minus the bound).

    Examples
    --------
    >>> describe_bounds(["a", "b", "c"], [0.05, 0.0, 0.1], [0.04, 0.1, 0.0])
    'a (B = 0.05, 1.25 SE), c (B = 0.1, SE = 0: +/- B)'
    """
    return ", ".join(
        f"{nm} (B = {b:.3g}, {f'{b / s:.2f} SE' if s != 0 else 'SE = 0: +/- B'})"
        for nm, b, s in zip(names, bounds, se, strict=True)
        if b > 0
    )


class BiasAwareContrastResults(ContrastResults):
    r"""statsmodels' ContrastResults whose p-values (and intervals) allow for a bias bound.

    Returned by :meth:`~privinfer.PrivateResults.t_test`, ``wald_test`` and ``f_test`` of
    a fit that reports regularisation bias bounds :math:`B` (see
    :meth:`~privinfer.PrivateResults.conf_int`) when a restriction involves a bounded
    parameter; everything else is statsmodels' :class:`ContrastResults`. Importable from
    :mod:`privinfer.results`, e.g. to tell the two apart with ``isinstance``.

    For the single restrictions of ``t_test``, restriction :math:`j` has the bias bound
    :math:`\bar B_j = |r_j|'B` (``bias_bound``), and with :math:`t_j = \bar B_j/\mathrm{sd}_j`
    the interval is :math:`r_j'\hat\theta \pm c_j\,\mathrm{sd}_j`, :math:`c_j` solving
    :math:`F(c - t_j) - F(-c - t_j) = 1 - a`, and the p-value is
    :math:`F(t_j - |z_j|) + F(-|z_j| - t_j)`, :math:`F` the reference distribution
    (normal, or Student t with ``use_t``): the interval at level ``a`` excludes
    :math:`q_j` exactly when the p-value is below ``a``. A restriction with
    :math:`\mathrm{sd}_j = 0` and :math:`\bar B_j > 0` (no noise, only the bias) has the
    limits of these as :math:`\mathrm{sd}_j \to 0`: the interval
    :math:`r_j'\hat\theta \pm \bar B_j` at every level, and the p-value 0 when
    :math:`|r_j'\hat\theta - q_j| > \bar B_j`, 1 otherwise. For the joint tests the
    p-value is the worst case of the noncentral reference over the biases
    (``noncentrality``). ``bias_note`` says what was done; :meth:`summary` prints it.

    Parameters
    ----------
    bias_bound : ndarray of shape (J,), optional
        :math:`\bar B_j` of the single restrictions (``t_test``).
    noncentrality : float, optional
        Worst-case noncentrality of a joint test (``wald_test``, ``f_test``).
    bias_note : str, default=""
        A note for :meth:`summary`.
    q : ndarray of shape (J,), optional
        The restrictions' values :math:`q_j` (default 0); they give the p-value of a
        restriction with :math:`\mathrm{sd}_j = 0`, whose statistic is not finite.
    **kwds
        Passed to statsmodels' :class:`ContrastResults`.

    Examples
    --------
    >>> import numpy as np, pandas as pd, privinfer as pi
    >>> rec = pi.results.ResultsRecord(
    ...     "Demo", "y", pd.Series({"a": 0.3}), np.array([[1.0], [-1.0]]), {"alpha": 1.0},
    ...     None, (), pi.results.Diagnostics(), pd.DataFrame(), bias_bound=pd.Series({"a": 0.1}))
    >>> tt = pi.PrivateResults(rec).t_test("a = 0")
    >>> isinstance(tt, pi.results.BiasAwareContrastResults), tt.bias_bound.tolist()
    (True, [0.1])
    >>> bool(np.diff(tt.conf_int()[0])[0] > 2 * 1.96 * tt.sd[0])  # wider than the plain one
    True
    """

    def __init__(
        self,
        *,
        bias_bound: FloatArray | None = None,
        noncentrality: float | None = None,
        bias_note: str = "",
        q: FloatArray | None = None,
        **kwds: Any,
    ) -> None:
        super().__init__(**kwds)
        self.bias_note = bias_note
        self.bias_bound = bias_bound
        self.noncentrality = noncentrality
        if bias_bound is not None:  # single restrictions: shift the reference by t_j
            bound = np.atleast_1d(np.asarray(bias_bound, dtype=float))
            effect = np.atleast_1d(np.asarray(self.effect, dtype=float))
            aware = bias_aware_pvalue(
                effect - (0.0 if q is None else np.asarray(q, dtype=float)),
                bound,
                np.atleast_1d(np.asarray(self.sd, dtype=float)),
                dist=self.dist,
                dist_args=self.dist_args,
            )
            plain = np.atleast_1d(np.asarray(self.pvalue, dtype=float))
            self.pvalue = np.squeeze(np.where(bound > 0, aware, plain))

    def _bias_over_sd(self) -> FloatArray:
        r""":math:`t_j = \bar B_j/\mathrm{sd}_j`; 0 where not finite (no bound, sd 0 or NaN)."""
        bound = np.atleast_1d(np.asarray(self.bias_bound, dtype=float))
        sd = np.atleast_1d(np.asarray(self.sd, dtype=float))
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(bound > 0, bound / sd, 0.0)
        return np.where(np.isfinite(t), t, 0.0)

    def conf_int(self, alpha: float = 0.05) -> FloatArray:
        r"""Intervals of the restricted combinations, bias-aware where they have a bound.

        Parameters
        ----------
        alpha : float, default=0.05
            Significance level (1 - coverage).

        Returns
        -------
        ndarray of shape (J, 2)
            Lower and upper limits; :math:`\pm \bar B_j` where :math:`\mathrm{sd}_j = 0`.
        """
        alpha = check_level(alpha, f"{type(self).__name__}.conf_int")
        if self.bias_bound is None or self.effect is None:
            return super().conf_int(alpha)
        t = self._bias_over_sd()
        plain = float(self.dist.ppf(1 - alpha / 2.0, *self.dist_args))
        aware = bias_aware_critical_value(t, alpha, dist=self.dist, dist_args=self.dist_args)
        q = np.where(t > 0, aware, plain)
        half = zero_se_half_width(q * self.sd, np.asarray(self.bias_bound, dtype=float), self.sd)
        return np.column_stack((self.effect - half, self.effect + half))

    def summary(self, xname: Any = None, alpha: float = 0.05, title: Any = None) -> Any:
        """The summary of ContrastResults, with a note on the bias bound."""
        alpha = check_level(alpha, f"{type(self).__name__}.summary")
        base = super().summary(xname=xname, alpha=alpha, title=title)
        if not self.bias_note:
            return base
        if isinstance(base, str):
            return f"{base}\n{self.bias_note}"
        smry = Summary()
        smry.tables.append(base)
        smry.add_extra_txt([self.bias_note])
        return smry


def _worst_noncentrality(R: FloatArray, V: FloatArray, bound: FloatArray) -> float:
    r"""Largest :math:`b'R'(RVR')^{-1}Rb` over biases :math:`|b_k| \le B_k`.

    A convex quadratic is largest at a vertex of the box: the sign patterns of the
    bounded parameters are enumerated (a pattern and its negative give the same value);
    with more than ``MAX_SIGN_ENUMERATION`` of them the bound
    :math:`\lambda_{\max}(M)\,\|B\|^2` is used instead.
    """
    idx = np.flatnonzero(bound > 0)
    Rb = R[:, idx]
    M = Rb.T @ np.linalg.solve(V, Rb)
    B = bound[idx]
    k = idx.size
    if k > MAX_SIGN_ENUMERATION:
        return float(np.linalg.eigvalsh(M).max() * (B @ B))
    corners = sign_patterns(k) * B
    return float(np.max(np.einsum("ij,jk,ik->i", corners, M, corners)))


def _f_result(
    fvalue: Any, df_num: float, df_denom: float, noncentrality: float = 0.0, bias_note: str = ""
) -> ContrastResults:
    """An F-test ContrastResults; an infinite ``df_denom`` gives the chi2(J)/J p-value.

    With a positive ``noncentrality`` (a bias bound) the p-value is the worst case, from
    the noncentral F (or chi2) with that noncentrality.
    """
    if noncentrality > 0:
        res: ContrastResults = BiasAwareContrastResults(
            F=fvalue, df_denom=df_denom, df_num=df_num, noncentrality=noncentrality,
            bias_note=bias_note,
        )  # fmt: skip
        if np.isfinite(df_denom):
            res.pvalue = np.squeeze(stats.ncf.sf(fvalue, df_num, df_denom, noncentrality))
        else:
            res.pvalue = np.squeeze(
                stats.ncx2.sf(np.asarray(fvalue) * df_num, df_num, noncentrality)
            )
        return res
    res = ContrastResults(F=fvalue, df_denom=df_denom, df_num=df_num)
    if not np.isfinite(df_denom):
        res.pvalue = np.squeeze(stats.chi2.sf(np.asarray(fvalue) * df_num, df_num))
    return res


class PersistMixin:
    """``save`` and ``load`` through :mod:`pickle` (statsmodels' ``save`` / ``load_pickle``)."""

    # -- persistence -------------------------------------------------------------------
    def save(self, fname: str | os.PathLike[str] | IO[bytes]) -> None:
        """Save the results with :mod:`pickle` (statsmodels' ``save``).

        The file holds what the object holds: estimates, covariances, influence values
        and counts, never raw private values or the input frame. A fit on Dask input
        computes its influence values (and cluster codes) from the released frame on
        request; the file keeps only their shape, so after :meth:`load` the influence
        values, the bootstrap and ``a - b`` raise ``UnsupportedBackendError``.

        Parameters
        ----------
        fname : str, path or binary file object
            Where to write.

        See Also
        --------
        load : Read them back.

        Examples
        --------
        >>> import io, numpy as np, pandas as pd, privinfer as pi
        >>> rec = pi.results.ResultsRecord(
        ...     "Demo", "y", pd.Series({"a": 1.0}), np.array([[1.0], [-1.0]]),
        ...     {"alpha": 1.0}, None, (), pi.results.Diagnostics(), pd.DataFrame())
        >>> buf = io.BytesIO()
        >>> pi.PrivateResults(rec).save(buf)
        >>> _ = buf.seek(0)
        >>> pi.PrivateResults.load(buf).params.to_dict()
        {'a': 1.0}
        """
        if hasattr(fname, "write"):
            pickle.dump(self, fname, protocol=pickle.HIGHEST_PROTOCOL)  # type: ignore[arg-type]
            return
        with open(os.fspath(fname), "wb") as fh:  # type: ignore[arg-type]
            pickle.dump(self, fh, protocol=pickle.HIGHEST_PROTOCOL)

    @classmethod
    def load(cls: type[_T], fname: str | os.PathLike[str] | IO[bytes]) -> _T:
        """Load results written by :meth:`save`.

        Unpickling runs code from the file: load only files you trust (as with
        statsmodels' ``load_pickle``).

        Parameters
        ----------
        fname : str, path or binary file object
            Where to read.

        Returns
        -------
        The results object, of this class.

        Raises
        ------
        DataMismatchError
            The file holds another kind of object.
        """
        if hasattr(fname, "read"):
            obj = pickle.load(fname)  # type: ignore[arg-type]
        else:
            with open(os.fspath(fname), "rb") as fh:  # type: ignore[arg-type]
                obj = pickle.load(fh)
        if not isinstance(obj, cls):
            raise DataMismatchError(
                f"{cls.__name__}.load: the file holds a {type(obj).__name__}, not a "
                f"{cls.__name__}."
            )
        return obj


class PostEstimationMixin(PersistMixin):
    """``cov_params``, ``t_test``, ``wald_test``, ``f_test``, ``save`` and ``load``.

    A results class provides ``params`` (a labelled Series), ``cov`` (a labelled
    DataFrame) and ``_df_resid`` (the residual degrees of freedom used by ``f_test``).
    """

    params: pd.Series
    cov: pd.DataFrame
    #: Student t / F references by default (statsmodels' ``use_t``); the private
    #: covariances are asymptotic, so normal / chi-square unless a results class says so.
    use_t: bool = False

    @property
    def _df_resid(self) -> float:
        return float("inf")

    def _restrictions(self, spec: Any, owner: str) -> tuple[FloatArray, FloatArray]:
        return linear_restrictions(spec, list(self.params.index), owner)

    def _bias_bounds(self) -> FloatArray | None:
        """Bias bound per parameter (None: none reported); results with bounds override."""
        return None

    def cov_params(
        self, r_matrix: RestrictionLike | None = None, column: Any = None
    ) -> pd.DataFrame | FloatArray:
        r"""Covariance of the estimates, of a subset, or of linear combinations :math:`R\theta`.

        The same matrix as :attr:`cov` (statsmodels' name).

        Parameters
        ----------
        r_matrix : str, array-like or tuple, optional
            Restrictions (see :meth:`t_test`); returns :math:`RVR'`.
        column : str, int or sequence of them, optional
            Parameters (names or positions) whose covariance block is returned.

        Returns
        -------
        DataFrame or ndarray
            The labelled covariance (or a block of it); an ndarray :math:`RVR'` for
            ``r_matrix``.

        Raises
        ------
        ConstraintError
            Bad restrictions.
        KeyError
            An unknown parameter in ``column``.

        Examples
        --------
        >>> import numpy as np, pandas as pd, privinfer as pi
        >>> rec = pi.results.ResultsRecord(
        ...     "Demo", "y", pd.Series({"a": 1.0, "b": 2.0}), np.array([[1.0, 0.0], [-1.0, 0.0],
        ...     [0.0, 2.0], [0.0, -2.0]]), {"alpha": 1.0}, None, (), pi.results.Diagnostics(),
        ...     pd.DataFrame())
        >>> res = pi.PrivateResults(rec)
        >>> res.cov_params().to_numpy().tolist()
        [[0.125, 0.0], [0.0, 0.5]]
        >>> res.cov_params("a - b").tolist()  # Var(a - b)
        [[0.625]]
        """
        cov = self.cov
        if r_matrix is not None:
            R, _ = self._restrictions(r_matrix, "cov_params")
            return R @ cov.to_numpy() @ R.T
        if column is None:
            return cov.copy()
        cols = list(column) if np.iterable(column) and not isinstance(column, str) else [column]
        index = cov.index
        k = len(index)

        def label(c: Any) -> Any:
            # a position (not a bool) within range names a parameter; anything else is a name
            if isinstance(c, (int, np.integer)) and not isinstance(c, (bool, np.bool_)):
                return index[c] if -k <= c < k else c
            return c

        labels = [label(c) for c in cols]
        missing = [c for c in labels if not isinstance(c, Hashable) or c not in index]
        if missing:
            raise KeyError(
                f"cov_params: {missing!r} not among the parameters {list(index)!r} (give "
                f"names, or positions from {-k} to {k - 1})."
            )
        return cov.loc[labels, labels].copy()

    def t_test(self, r_matrix: RestrictionLike, *, use_t: bool | None = None) -> ContrastResults:
        r"""Z tests of each linear restriction :math:`r_j'\theta = q_j` separately.

        Parameters
        ----------
        r_matrix : str, sequence of str, array-like or tuple (R, q)
            ``"educ = 0, exper = expersq"`` (formulaic's constraint syntax; a name alone
            means ``name = 0``), a matrix :math:`R` with one column per parameter
            (:math:`q = 0`), or ``(R, q)``.
        use_t : bool, optional
            Student t with the residual degrees of freedom instead of the normal
            (default: the results' ``use_t``, False for the private covariances).

        Returns
        -------
        statsmodels.stats.contrast.ContrastResults
            ``effect`` (:math:`R\hat\theta`), ``sd``, ``statistic`` (z), ``pvalue``,
            ``conf_int()``, ``summary()`` and ``summary_frame()``.

        Raises
        ------
        ConstraintError
            Bad restrictions.

        Notes
        -----
        .. math:: z_j = \frac{r_j'\hat\theta - q_j}{\sqrt{r_j'\hat V r_j}}
                  \sim N(0, 1)

        with :math:`\hat V` the reported covariance (statsmodels' ``t_test`` with
        ``use_t=False``, as for its robust covariances).

        Where the fit reports regularisation bias bounds :math:`B` (see
        :meth:`~privinfer.PrivateResults.conf_int`), the bias of :math:`r_j'\hat\theta - q_j`
        is :math:`r_j'b` with :math:`|b_k| \le B_k`, so at worst (the biases may take
        either sign)

        .. math:: |r_j'b| \le |r_j|'B = \bar B_j .

        A restriction with :math:`\bar B_j > 0` then gets the bias-aware interval
        :math:`r_j'\hat\theta \pm c_j\,\mathrm{sd}_j` and the p-value
        :math:`\Phi(t_j - |z_j|) + \Phi(-|z_j| - t_j)`, :math:`t_j = \bar B_j/\mathrm{sd}_j`
        (Armstrong and Kolesar, 2020; as :meth:`~privinfer.PrivateResults.conf_int` and
        :attr:`~privinfer.PrivateResults.pvalues`; with ``use_t`` the Student t replaces
        :math:`\Phi`), and :math:`z_j` is still the ratio above. The results are then a
        :class:`BiasAwareContrastResults` (its ``bias_bound`` holds the :math:`\bar B_j`),
        and their ``summary()`` says so in a note. A restriction with
        :math:`\mathrm{sd}_j = 0 < \bar B_j` gets the limit as :math:`\mathrm{sd}_j \to 0`:
        the interval :math:`r_j'\hat\theta \pm \bar B_j` and the p-value 0 when
        :math:`|r_j'\hat\theta - q_j| > \bar B_j`, 1 otherwise. A restriction that involves
        only unbounded parameters, and every restriction of a fit without bounds, gets the
        usual test.

        Examples
        --------
        >>> import numpy as np, pandas as pd, privinfer as pi
        >>> rec = pi.results.ResultsRecord(
        ...     "Demo", "y", pd.Series({"a": 1.0, "b": 2.0}), np.array([[1.0, 0.0], [-1.0, 0.0],
        ...     [0.0, 2.0], [0.0, -2.0]]), {"alpha": 1.0}, None, (), pi.results.Diagnostics(),
        ...     pd.DataFrame())
        >>> tt = pi.PrivateResults(rec).t_test("b = 2 * a, a = 1")  # Var(b - 2a) = 1
        >>> tt.effect.tolist(), np.round(tt.sd, 4).tolist(), tt.statistic.tolist()
        ([0.0, 1.0], [1.0, 0.3536], [0.0, 0.0])
        """
        R, q = self._restrictions(r_matrix, "t_test")
        theta = self.params.to_numpy(dtype=float)
        effect = R @ theta
        sd = np.sqrt(np.diag(R @ self.cov.to_numpy() @ R.T))
        with np.errstate(divide="ignore", invalid="ignore"):
            z = (effect - q) / sd
        if self.use_t if use_t is None else use_t:
            kwds: dict[str, Any] = {"effect": effect, "t": z, "sd": sd, "df_denom": self._df_resid}
        else:
            kwds = {"effect": effect, "statistic": z, "sd": sd, "df_denom": self._df_resid,
                    "distribution": "norm"}  # fmt: skip
        names = [_label(r, v, list(self.params.index)) for r, v in zip(R, q, strict=True)]
        bound = self._bias_bounds()
        rows = None if bound is None else np.abs(R) @ bound
        if rows is None or not np.any(rows > 0):
            out = ContrastResults(**kwds)
        else:
            wide = describe_bounds(names, rows, sd)
            note = (
                "Intervals and p-values are bias-aware (Armstrong and Kolesar, 2020): the fit "
                "reports regularisation bias bounds B, and a restriction r'theta = q has the "
                f"bound |r|'B: {wide}; the statistic is (r'theta - q) / std err."
            )
            out = BiasAwareContrastResults(bias_bound=rows, bias_note=note, q=q, **kwds)
        out.c_names = names
        return out

    def wald_test(
        self, r_matrix: RestrictionLike, *, use_f: bool | None = None, scalar: bool = True
    ) -> ContrastResults:
        r"""Joint Wald test of :math:`H_0: R\theta = q` through the reported covariance.

        Parameters
        ----------
        r_matrix : str, sequence of str, array-like or tuple (R, q)
            Restrictions, as in :meth:`t_test`.
        use_f : bool, optional
            Report :math:`W/J` against :math:`F(J, \text{df\_resid})` (as :meth:`f_test`)
            instead of :math:`W` against :math:`\chi^2_J` (default: the results'
            ``use_t``, False for the private covariances; statsmodels' rule).
        scalar : bool, default=True
            Return the statistic as a float (statsmodels' ``scalar=True``).

        Returns
        -------
        statsmodels.stats.contrast.ContrastResults
            ``statistic``, ``pvalue``, ``df_denom`` (J for the chi-square version),
            ``distribution``.

        Raises
        ------
        ConstraintError
            Bad restrictions, or a covariance that is singular along them.

        Notes
        -----
        .. math:: W = (R\hat\theta - q)'(R\hat VR')^{-1}(R\hat\theta - q) \sim \chi^2_J.

        At keep probability 1 the private models' covariances are the usual
        heteroskedasticity-robust ones, and ``W`` equals statsmodels' ``wald_test``
        (``cov_type="HC0"``) and linearmodels' ``wald_test``.

        Where the fit reports regularisation bias bounds :math:`B` and a restriction
        involves a bounded parameter, the statistic is unchanged but the p-value is
        bias-aware: with a bias :math:`b` (:math:`|b_k| \le B_k`), :math:`W` is
        asymptotically noncentral :math:`\chi^2_J(\lambda)`,
        :math:`\lambda = b'R'(R\hat VR')^{-1}Rb`, whose tail grows with :math:`\lambda`, so
        the p-value is that of :math:`\chi^2_J(\lambda_{\max})` (noncentral F for
        ``use_f``), :math:`\lambda_{\max}` the largest :math:`\lambda` over the box (a
        convex quadratic: the largest value at a corner; beyond 12 bounded parameters the
        larger :math:`\lambda_{\max}(M)\|B\|^2`). With one restriction this is the
        p-value of :meth:`t_test`. The result is a :class:`BiasAwareContrastResults` whose
        ``noncentrality`` and ``bias_note`` say so. A test of unbounded parameters only is
        unchanged.

        Examples
        --------
        >>> import numpy as np, pandas as pd, privinfer as pi
        >>> rec = pi.results.ResultsRecord(
        ...     "Demo", "y", pd.Series({"a": 1.0, "b": 2.0}), np.array([[1.0, 0.0], [-1.0, 0.0],
        ...     [0.0, 2.0], [0.0, -2.0]]), {"alpha": 1.0}, None, (), pi.results.Diagnostics(),
        ...     pd.DataFrame())
        >>> w = pi.PrivateResults(rec).wald_test("a = 0, b = 0")
        >>> w.statistic, w.df_denom  # 1 / 0.125 + 4 / 0.5
        (16.0, 2.0)
        """
        return self._wald(r_matrix, "wald_test", use_f, scalar, self._df_resid)

    def _wald(
        self, r_matrix: RestrictionLike, owner: str, use_f: bool | None, scalar: bool,
        df_denom: float,
    ) -> ContrastResults:
        """The Wald / F test of ``wald_test`` and ``f_test``, with ``df_denom`` for F."""
        R, q = self._restrictions(r_matrix, owner)
        J = R.shape[0]
        diff = R @ self.params.to_numpy(dtype=float) - q
        V = R @ self.cov.to_numpy() @ R.T
        if not np.all(np.isfinite(V)) or np.linalg.matrix_rank(V) < J:
            raise ConstraintError(
                f"wald_test: the covariance of the {J} restricted combinations is singular "
                f"(rank {np.linalg.matrix_rank(V) if np.all(np.isfinite(V)) else 'nan'}); "
                "the restrictions cannot be tested jointly. Drop the ones along which the "
                "estimate has no variance."
            )
        stat: Any = diff @ np.linalg.solve(V, diff)
        stat = float(stat) if scalar else np.atleast_2d(stat)
        bound = self._bias_bounds()
        lam, note = 0.0, ""
        if bound is not None and np.any(np.abs(R) @ bound > 0):
            lam = _worst_noncentrality(R, V, bound)
            rows = ", ".join(f"{b:.3g}" for b in np.abs(R) @ bound)
            note = (
                "Bias-aware p-value: the fit reports regularisation bias bounds B, which bound "
                f"the bias of R theta - q by |R|B = [{rows}]; the p-value is the worst case "
                f"over them, from the noncentral reference with noncentrality {lam:.3g}."
            )
        if self.use_t if use_f is None else use_f:
            return _f_result(stat / J, float(J), df_denom, lam, note)
        if lam > 0:
            res: ContrastResults = BiasAwareContrastResults(
                chi2=stat, df_denom=float(J), statistic=stat, distribution="chi2",
                distargs=(float(J),), noncentrality=lam, bias_note=note,
            )  # fmt: skip
            res.pvalue = np.squeeze(stats.ncx2.sf(stat, float(J), lam))
            return res
        return ContrastResults(
            chi2=stat, df_denom=float(J), statistic=stat, distribution="chi2",
            distargs=(float(J),),
        )

    def f_test(
        self, r_matrix: RestrictionLike, *, df_denom: float | None = None
    ) -> ContrastResults:
        r"""Joint F test of :math:`H_0: R\theta = q`: the Wald statistic over J.

        Parameters
        ----------
        r_matrix : str, sequence of str, array-like or tuple (R, q)
            Restrictions, as in :meth:`t_test`.
        df_denom : float, optional
            Denominator degrees of freedom. The default is statsmodels' residual degrees
            of freedom, the number of observations minus the number of parameters; pass
            ``numpy.inf`` for the asymptotic :math:`\chi^2_J/J` reference.

        Returns
        -------
        statsmodels.stats.contrast.ContrastResults
            ``fvalue`` (= ``statistic``), ``pvalue``, ``df_num`` (J), ``df_denom``.

        Raises
        ------
        ConstraintError
            Bad restrictions, or a covariance that is singular along them.
        ValueError
            ``df_denom`` not positive.

        Notes
        -----
        .. math:: F = W/J \sim F(J, \text{df\_denom}).

        With bias bounds the p-value is the worst case from the noncentral F (noncentral
        :math:`\chi^2_J/J` for an infinite ``df_denom``), as in :meth:`wald_test`.

        Examples
        --------
        >>> import numpy as np, pandas as pd, privinfer as pi
        >>> rec = pi.results.ResultsRecord(
        ...     "Demo", "y", pd.Series({"a": 1.0, "b": 2.0}), np.array([[1.0, 0.0], [-1.0, 0.0],
        ...     [0.0, 2.0], [0.0, -2.0]]), {"alpha": 1.0}, None, (), pi.results.Diagnostics(),
        ...     pd.DataFrame())
        >>> f = pi.PrivateResults(rec).f_test("a = 0, b = 0", df_denom=np.inf)
        >>> f.fvalue, f.df_num, round(float(f.pvalue), 6)  # = exp(-16 / 2)
        (8.0, 2.0, 0.000335)
        """
        if df_denom is not None:
            try:
                df = None if isinstance(df_denom, (bool, str)) else float(df_denom)
            except (TypeError, ValueError):
                df = None
            if df is None or not df > 0:
                raise ValueError(
                    "The 'df_denom' parameter of f_test must be a positive number (numpy.inf "
                    f"for the chi2(J)/J reference); got {df_denom!r}."
                )
        return self._wald(  # "wald_test" in messages, as before
            r_matrix, "wald_test", True, True, self._df_resid if df_denom is None else df
        )

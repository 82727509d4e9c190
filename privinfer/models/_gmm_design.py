r"""Released designs of the formula routes of private GMM (OLS, IV and logit).

Linear moments :math:`\phi_\theta(v, x) = z\,(y - x'\theta)` are sums of products of two
design columns. Every column is a function of public variables only (``y``, the
intercept, public regressors or instruments) or of private variables only
(:mod:`privinfer.formula` enforces it), so with public factors :math:`a_k(v)` and private
factors :math:`p_k(x)` (one of them is 1)

.. math::

    \bar Q[c_j c_k](v) = a_j(v)a_k(v)\,E_{\bar Q}[p_j p_k],

and the private second moments :math:`S = \frac1n\sum_i Q_X^{-1}[c\,c'](V_i, Z_i)` need
the raw cross-products, the public column means and the reference moments
:math:`E_{\bar Q}p`, :math:`E_{\bar Q}pp'` only. Estimates are closed forms in ``S``:
:math:`\hat\theta = (S_{xz}AS_{zx})^{-1}S_{xz}AS_{zy}`. Rows are visited in chunks, so the
memory beyond the data is O(chunk x K); the cost is O(n K^2 + M K^2), never O(n M).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import formulaic
import numpy as np
import pandas as pd

from privinfer._chunking import row_chunks
from privinfer._typing import FloatArray, IntArray
from privinfer._validation import plain_text
from privinfer.covariance import OuterAccumulator
from privinfer.exceptions import (
    DataMismatchError,
    MechanismMismatchError,
    SingularDesignError,
    WeightsError,
)
from privinfer.formula import (
    CovariateSpec,
    build_covariate_spec,
    cast_private_categoricals,
    check_public_columns,
    term_text,
)
from privinfer.inversion import invert
from privinfer.mechanisms.alpha_identity import AlphaIdentity
from privinfer.models._inputs import kish_n_eff, weight_values

__all__ = [
    "LinearDesign",
    "LinearFormula",
    "LinearSpecs",
    "build_linear_design",
    "linear_specs",
    "new_regressors",
    "parse_linear_formula",
]

_BRACKET = re.compile(r"\[([^\[\]]*)\]")


@dataclass(frozen=True)
class LinearFormula:
    """Parsed ``"y ~ w + [x ~ z1 + z2]"`` (linearmodels' bracket syntax).

    Attributes
    ----------
    formula : str
        As written.
    dependent : str
        Left-hand side (a column or a formulaic expression of public columns).
    exog, endog, instruments : tuple of str
        Formulaic terms of the exogenous regressors, the endogenous regressors and the
        excluded instruments (no intercept term).
    intercept : bool
        Whether the exogenous part keeps formulaic's intercept.
    """

    formula: str
    dependent: str
    exog: tuple[str, ...]
    endog: tuple[str, ...]
    instruments: tuple[str, ...]
    intercept: bool

    def __post_init__(self) -> None:
        if len(self.instruments) < len(self.endog):
            raise SingularDesignError(
                f"The model {self.formula!r} is under-identified: {len(self.endog)} endogenous "
                f"regressor(s) {list(self.endog)!r} but only {len(self.instruments)} excluded "
                f"instrument(s) {list(self.instruments)!r}. Add instruments."
            )
        overlap = set(self.endog) & (set(self.exog) | set(self.instruments))
        if overlap:
            raise DataMismatchError(
                f"In {self.formula!r} the term(s) {sorted(overlap)!r} are both endogenous and "
                "exogenous/instruments."
            )

    @property
    def rhs(self) -> str:
        """All right-hand terms, for one ModelSpec."""
        return " + ".join(self.exog + self.endog + self.instruments) or "1"


def _terms(expr: str, formula: str, owner: str) -> tuple[list[str], bool]:
    try:
        parsed = formulaic.Formula(expr)
    except Exception as err:  # formulaic raises several types
        raise DataMismatchError(
            f"{owner}: cannot parse {expr!r} in {formula!r}: {plain_text(err)}"
        ) from err
    if getattr(parsed, "lhs", None) is not None and hasattr(parsed, "rhs"):
        raise DataMismatchError(f"{owner}: unexpected '~' in {expr!r} of {formula!r}.")
    names = [term_text(t) for t in parsed]
    return [t for t in names if t != "1"], "1" in names


def parse_linear_formula(formula: str, owner: str, *, iv: bool) -> LinearFormula:
    """Parse an OLS formula or an IV formula with one ``[endog ~ instruments]`` block.

    The bracket is cut out as linearmodels does; every part is then parsed by formulaic.

    Raises
    ------
    DataMismatchError
        Malformed formula, several brackets, or a bracket in an OLS formula.
    SingularDesignError
        Fewer excluded instruments than endogenous regressors.
    """
    if not isinstance(formula, str) or "~" not in formula:
        raise DataMismatchError(f"{owner}: formula must be a string 'y ~ ...'; got {formula!r}.")
    blocks = _BRACKET.findall(formula)
    endog: list[str] = []
    instr: list[str] = []
    outer = formula
    if blocks:
        if not iv:
            raise DataMismatchError(
                f"{owner}: {formula!r} has an instrument block; use PrivateGMM.iv for IV models."
            )
        if len(blocks) > 1 or blocks[0].count("~") != 1:
            raise DataMismatchError(
                f"{owner}: {formula!r} must hold one block '[endog ~ instruments]'."
            )
        left, right = blocks[0].split("~")
        endog, _ = _terms("0 + " + left, formula, owner)
        instr, _ = _terms("0 + " + right, formula, owner)
        if not endog:
            raise DataMismatchError(f"{owner}: no endogenous regressor in {formula!r}.")
        outer = _BRACKET.sub(" ", formula)
        outer = re.sub(r"\+\s*\+", "+", outer)
        outer = re.sub(r"~\s*\+", "~", outer).strip()
        outer = re.sub(r"\+\s*$", "", outer).strip()
        if outer.endswith("~"):
            outer += " 1"
    elif iv:
        raise DataMismatchError(
            f"{owner}: IV formula {formula!r} needs a block '[endog ~ instruments]', e.g. "
            "'y ~ w + [x ~ z1 + z2]'."
        )
    lhs, rhs = outer.split("~", 1)
    lhs = lhs.strip()
    if not lhs:
        raise DataMismatchError(f"{owner}: formula {formula!r} has no dependent variable.")
    exog, intercept = _terms(rhs, formula, owner)
    return LinearFormula(formula, lhs, tuple(exog), tuple(endog), tuple(instr), intercept)


@dataclass(frozen=True)
class LinearDesign:
    r"""Released design of a linear moment model, split by privacy role.

    Columns are ``[dependent, Intercept?, public..., private...]``; the first
    ``n_public`` are public. ``X`` and ``Z`` index regressors and instruments.

    Attributes
    ----------
    names : tuple of str
        Column names.
    public : ndarray of shape (n, n_public)
        Public columns (dependent variable first).
    private : ndarray of shape (n, n_private)
        Private design columns at the released data.
    x_idx, z_idx : ndarray of int
        Columns of the regressors and of the instruments (exogenous regressors included).
    endog_idx, instr_idx : ndarray of int
        Endogenous regressors and excluded instruments (IV only).
    spec : CovariateSpec
        Materialises the private columns of the reference sample.
    w : ndarray of shape (n,) or None
        Public sampling weights normalised to mean one: every sum over rows (second
        moments, moment rows) is weighted.
    """

    names: tuple[str, ...]
    public: FloatArray
    private: FloatArray
    x_idx: IntArray
    z_idx: IntArray
    endog_idx: IntArray
    instr_idx: IntArray
    spec: CovariateSpec
    w: FloatArray | None = None

    @property
    def n_obs(self) -> int:
        """Number of released rows."""
        return int(self.public.shape[0])

    @property
    def weights_n_eff(self) -> float | None:
        """Kish's effective sample size of the sampling weights (None without weights)."""
        return None if self.w is None else kish_n_eff(self.w)

    @property
    def n_public(self) -> int:
        """Number of public columns (dependent variable included)."""
        return int(self.public.shape[1])

    @property
    def n_private(self) -> int:
        """Number of private design columns."""
        return int(self.private.shape[1])

    def chunks(self) -> list[slice]:
        """Row slices bounding the temporaries of one pass (:mod:`privinfer._chunking`)."""
        return row_chunks(self.n_obs, len(self.names))  # type: ignore[return-value]

    def raw_sums(self) -> tuple[FloatArray, FloatArray]:
        """Raw cross-products :math:`C'C` and public column sums, in one chunked pass."""
        q, K = self.n_public, len(self.names)
        raw = np.zeros((K, K))
        for rows in self.chunks():
            pub, priv = self.public[rows], self.private[rows]
            pub_w = pub if self.w is None else pub * self.w[rows, None]
            raw[:q, :q] += pub_w.T @ pub
            raw[:q, q:] += pub_w.T @ priv
            raw[q:, q:] += (priv if self.w is None else priv * self.w[rows, None]).T @ priv
        raw[q:, :q] = raw[:q, q:].T
        pub_sum = self.public.sum(axis=0) if self.w is None else self.w @ self.public
        return raw, pub_sum

    def raw_moments(self) -> tuple[FloatArray, FloatArray]:
        """Raw cross-products :math:`C'C/n` and public column means."""
        raw, pub_sum = self.raw_sums()
        return raw / self.n_obs, pub_sum / self.n_obs

    def reference_table(self, mean: FloatArray, outer: FloatArray) -> FloatArray:
        r"""``T[j, k] = E_Qbar[p_j p_k]`` over all columns (``p = 1`` for public ones)."""
        q = self.n_public
        ext = np.block([[np.ones((1, 1)), mean[None, :]], [mean[:, None], outer]])
        idx = np.concatenate([np.zeros(q, dtype=np.int64), 1 + np.arange(mean.size)])
        return ext[np.ix_(idx, idx)]

    def private_second_moments(
        self,
        raw: FloatArray,
        pub_mean: FloatArray,
        mean: FloatArray,
        outer: FloatArray,
        alpha: float,
    ) -> FloatArray:
        r"""Private second moments :math:`S = \frac1n\sum_i Q_X^{-1}[c c']` of all columns.

        Public-public entries need no inversion; entries with a private factor subtract
        :math:`(1-\alpha)\,\bar a_j E_{\bar Q}p_k` or :math:`(1-\alpha)E_{\bar Q}p_jp_k`.
        """
        if alpha == 1.0:
            return raw.copy()
        q = self.n_public
        S = raw.copy()
        S[:q, q:] = invert(raw[:q, q:], np.outer(pub_mean, mean), alpha)
        S[q:, :q] = S[:q, q:].T
        S[q:, q:] = invert(raw[q:, q:], outer, alpha)
        return S

    def moment_rows(
        self, w: FloatArray, cols: IntArray, table: FloatArray, alpha: float, rows: slice
    ) -> FloatArray:
        r"""Private moment rows :math:`Q_X^{-1}[c_j\,(c'w)]` for ``j`` in ``cols`` (weighted).

        With :math:`t(v) = \sum_{k\,\mathrm{public}} w_k c_k(v)`,

        .. math:: \bar Q[c_j\,c'w](v) = a_j(v)\big(t(v)E_{\bar Q}p_j
                  + \textstyle\sum_{k\,\mathrm{private}} w_k E_{\bar Q}[p_jp_k]\big),

        with :math:`a_j = 1` for a private column and :math:`p_j = 1` for a public one:
        a few O(rows x K) array operations per chunk.
        """
        q = self.n_public
        pub, priv = self.public[rows], self.private[rows]
        t = pub @ w[:q]
        e = t + priv @ w[q:] if priv.shape[1] else t
        is_pub = cols < q
        pos_pub, pos_priv = np.flatnonzero(is_pub), np.flatnonzero(~is_pub)
        Cz = np.concatenate([_gather(pub, cols[is_pub]), _gather(priv, cols[~is_pub] - q)], axis=1)
        order = np.concatenate([pos_pub, pos_priv])
        if np.any(order != np.arange(cols.size)):
            Cz = Cz[:, np.argsort(order)]
        phi = Cz * e[:, None]
        if alpha < 1.0:
            mz = table[0, cols]
            b = w[q:] @ table[q:, cols]
            qbar = np.outer(t, mz)
            qbar += b
            qbar[:, pos_pub] *= Cz[:, pos_pub]
            phi = invert(phi, qbar, alpha)
        if self.w is not None:  # public weights commute with the inversion
            phi *= self.w[rows, None]
        return phi

    def moment_outer(
        self,
        W: FloatArray,
        cols: IntArray,
        table: FloatArray,
        alpha: float,
        codes: IntArray | None,
        small_g: bool,
        mu: FloatArray | None = None,
        bread: FloatArray | None = None,
    ) -> tuple[FloatArray, FloatArray | None]:
        r"""Covariance of stacked private moment rows, and influence values, in one pass.

        The rows are :math:`r_i = (R_{1i}, \dots, R_{ai})`,
        :math:`R_{bi} = Q_X^{-1}[c_{\mathrm{cols}}\,(c'W_{:,b})](V_i, Z_i)`
        (:meth:`moment_rows`), less ``mu`` when given; the result is
        :math:`\frac1n\sum_u s_us_u'` over rows or clusters
        (:class:`~privinfer.covariance.OuterAccumulator`). With ``bread`` (one column in
        ``W``) the influence values :math:`r_iB'` are returned too, else ``None``.
        """
        acc = OuterAccumulator(cols.size * W.shape[1], codes, small_g=small_g)
        infl = None if bread is None else np.empty((self.n_obs, bread.shape[0]))
        bread_t = None if bread is None else np.ascontiguousarray(bread.T)
        for rows in self.chunks():
            r = np.concatenate(
                [self.moment_rows(W[:, b], cols, table, alpha, rows) for b in range(W.shape[1])],
                axis=1,
            ) if W.shape[1] > 1 else self.moment_rows(W[:, 0], cols, table, alpha, rows)
            if infl is not None:
                np.dot(r, bread_t, out=infl[rows])
            if mu is not None:
                r -= mu
            acc.add(r, rows)
        return acc.result(self.n_obs), infl


def _gather(a: FloatArray, idx: IntArray) -> FloatArray:
    """Columns ``idx`` of ``a``: a view for a contiguous range, else ``np.take``."""
    if idx.size and np.all(np.diff(idx) == 1):
        return a[:, idx[0] : idx[-1] + 1]
    return np.take(a, idx, axis=1)


@dataclass(frozen=True)
class LinearSpecs:
    """What turns a frame into a :class:`LinearDesign`: formulaic specs and column roles.

    Built once (:func:`linear_specs`) on the whole frame (pandas) or on a frame that
    holds every level (Dask), then applied to any frame with :meth:`design`, so the
    partitions of a Dask frame give the columns of the whole frame, in the same order.
    """

    parsed: LinearFormula
    dep_spec: Any
    spec: CovariateSpec
    mechanism: AlphaIdentity
    owner: str
    weights: str | None = None
    weight_mean: float = 1.0

    @property
    def public_used(self) -> list[str]:
        """Public data columns the formula uses (dependent variable included)."""
        dep = [str(v) for v in self.dep_spec.variables]
        return sorted(set(dep) | set(self.spec.public_variables))

    def sampling_weights(self, data: pd.DataFrame) -> FloatArray | None:
        """The weights of the rows of ``data``, normalised by the whole frame's mean."""
        if self.weights is None:
            return None
        return data[self.weights].to_numpy(dtype=float) / self.weight_mean

    def design(self, data: pd.DataFrame) -> LinearDesign:
        """The released design of ``data`` (rows as given; an empty frame gives no rows)."""
        mechanism, parsed, spec, owner = self.mechanism, self.parsed, self.spec, self.owner
        n = len(data)
        if n == 0:
            q = 1 + int(parsed.intercept) + len(spec.public_names)
            w0 = None if self.weights is None else np.zeros(0)
            return self._assemble(np.zeros((0, q)), np.zeros((0, len(spec.private_names))), w0)
        y = np.asarray(self.dep_spec.get_model_matrix(data), dtype=float)[:, 0]
        # the cast copies the frame: only needed when a private column is categorical
        released = (
            cast_private_categoricals(data, mechanism)
            if mechanism.reference.categorical_levels()
            else data
        )
        U_priv = spec.private_design(released)
        U_pub = spec.public_design(released)
        if U_priv.shape[0] != n or U_pub.shape[0] != n or y.shape[0] != n:
            raise DataMismatchError(f"{owner}: formulaic dropped rows; check for missing values.")
        public = np.column_stack([y, *([np.ones(n)] if parsed.intercept else []), U_pub])
        return self._assemble(np.ascontiguousarray(public), U_priv, self.sampling_weights(data))

    def _assemble(
        self, public: FloatArray, private: FloatArray, w: FloatArray | None
    ) -> LinearDesign:
        parsed, spec = self.parsed, self.spec
        lead = ["Intercept"] if parsed.intercept else []
        names = (parsed.dependent, *lead, *spec.public_names, *spec.private_names)
        column_term = _column_terms(spec)

        def cols(terms: tuple[str, ...]) -> list[int]:
            out: list[int] = []
            for term in terms:
                hits = [j for j, nm in enumerate(names) if column_term.get(nm) == term]
                out += hits
            return out

        first = [1] if parsed.intercept else []
        exog = first + cols(parsed.exog)
        endog = cols(parsed.endog)
        instr = cols(parsed.instruments)
        x_idx = np.array(exog + endog, dtype=np.int64)
        z_idx = np.array(exog + instr, dtype=np.int64)
        if x_idx.size == 0:
            raise DataMismatchError(f"{self.owner}: {parsed.formula!r} has no regressor.")
        return LinearDesign(
            names=names,
            public=public,
            private=private,
            x_idx=x_idx,
            z_idx=z_idx,
            endog_idx=np.array(endog, dtype=np.int64),
            instr_idx=np.array(instr, dtype=np.int64),
            spec=spec,
            w=w,
        )


def linear_specs(
    parsed: LinearFormula,
    data: pd.DataFrame,
    mechanism: AlphaIdentity,
    owner: str,
    weights: str | None = None,
    weight_mean: float = 1.0,
) -> LinearSpecs:
    """Formulaic specs of a parsed OLS / IV / logit formula, learned on ``data``.

    ``data`` must already have passed ``mechanism.check_data``. Its public columns are
    checked for missing values here (the whole frame with pandas; with Dask each
    partition is checked again by the caller).

    Raises
    ------
    MechanismMismatchError
        The dependent variable uses a private column.
    DataMismatchError, MissingValueError, NonSeparableTermError
        Columns missing, NaN in public columns, or a term mixing private and public.
    """
    private = set(mechanism.private_columns)
    try:
        dep_mm = formulaic.model_matrix("0 + " + parsed.dependent, data, na_action="ignore")
    except Exception as err:
        raise DataMismatchError(
            f"{owner}: cannot evaluate the dependent variable {parsed.dependent!r}: "
            f"{plain_text(err)}"
        ) from err
    dep_vars = {str(v) for v in dep_mm.model_spec.variables} & {str(c) for c in data.columns}
    if dep_vars & private:
        raise MechanismMismatchError(
            f"{owner}: the dependent variable {parsed.dependent!r} uses the private column(s) "
            f"{sorted(dep_vars & private)!r}. PrivateGMM's linear and logit front-ends need a "
            "public dependent variable (V in Kormos and van der Vaart 2026): Q_X^{-1} is "
            "applied to functions of the private covariates only. Write the moments yourself "
            "with PrivateGMM(moments, ...) if the outcome itself was privatised."
        )
    check_public_columns(data, sorted(dep_vars), mechanism, {}, owner)
    if dep_mm.shape[1] != 1:
        raise DataMismatchError(
            f"{owner}: the dependent variable {parsed.dependent!r} must be one numeric column."
        )
    rhs_vars = {str(v) for v in formulaic.Formula(parsed.rhs).required_variables}
    public_used = sorted((rhs_vars & {str(c) for c in data.columns}) - private)
    check_public_columns(data, public_used, mechanism, {}, owner)
    # the cast copies the frame: only needed when a private column is categorical
    released = (
        cast_private_categoricals(data, mechanism)
        if mechanism.reference.categorical_levels()
        else data
    )
    spec = build_covariate_spec(parsed.rhs, released, mechanism, owner)
    check_public_columns(data, list(spec.public_variables), mechanism, {}, owner)
    return LinearSpecs(parsed, dep_mm.model_spec, spec, mechanism, owner, weights, weight_mean)


def build_linear_design(
    parsed: LinearFormula,
    data: pd.DataFrame,
    mechanism: AlphaIdentity,
    owner: str,
    weights: str | None = None,
) -> LinearDesign:
    """Materialise the released design of a parsed OLS / IV formula.

    ``weights`` names a public column of sampling weights (normalised to mean one).

    Raises
    ------
    WeightsError, MissingValueError
        Bad weights column.
    MechanismMismatchError
        The dependent variable uses a private column.
    DataMismatchError, MissingValueError, NonSeparableTermError
        Columns missing, NaN in public columns, or a term mixing private and public.
    """
    mechanism.check_data(data, owner)
    mean = 1.0
    if weights is not None:
        mean = float(weight_values(data, weights, mechanism, owner).mean())
        if not mean > 0:
            raise WeightsError(f"{owner}: weights column {weights!r} is zero everywhere.")
    return linear_specs(parsed, data, mechanism, owner, weights, mean).design(data)


def _column_terms(spec: CovariateSpec) -> dict[str, str]:
    """Map every design column to the formulaic term that made it."""
    out: dict[str, str] = {}
    for sub in (spec.private_spec, spec.public_spec):
        if sub is None:
            continue
        for term, sl in sub.term_slices.items():
            for name in sub.column_names[sl]:
                out[name] = term_text(term)
    return out


def new_regressors(
    d: LinearDesign, intercept: bool, mechanism: AlphaIdentity, data: Any
) -> FloatArray:
    """Design columns ``x_idx`` built from a new frame with the formula's variables.

    Raises
    ------
    DataMismatchError
        ``data`` lacks a variable of the formula's right-hand side.
    """
    missing = [v for v in d.spec.variables if v not in data.columns]
    if missing:
        raise DataMismatchError(
            f"PrivateGMMResults.predict: exog lacks the column(s) {missing}; it needs every "
            f"variable on the formula's right-hand side, {sorted(d.spec.variables)}."
        )
    frame = (
        cast_private_categoricals(data, mechanism)
        if mechanism.reference.categorical_levels()
        else data
    )
    n = len(frame)
    pub = d.spec.public_design(frame)
    priv = d.spec.private_design(frame)
    full = np.column_stack([np.zeros(n), *([np.ones(n)] if intercept else []), pub, priv])
    return full[:, d.x_idx]

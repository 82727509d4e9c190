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

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from privinfer._typing import FloatArray, IntArray
from privinfer._validation import check_int
from privinfer.covariance import moment_covariance, sandwich
from privinfer.exceptions import DataMismatchError, PrivinferWarning, SingularDesignError
from privinfer.formula import cast_private_categoricals
from privinfer.inversion import invert, reference_design
from privinfer.mechanisms.alpha_identity import AlphaIdentity
from privinfer.models._gmm_common import (
    FitOptions,
    GMMEngine,
    GMMFit,
    check_inputs,
    check_nonsingular,
    check_start,
    inv_cov,
    j_statistic,
)

__all__ = ["GenericEngine", "GenericMoments", "build_generic_engine", "check_names", "check_start"]

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
        return invert(phi, self.qbar(params)[self.codes], self.alpha)

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


class GenericEngine(GMMEngine):
    """Private GMM for a user moment function: Gauss-Newton on the private mean moment.

    Parameters
    ----------
    moments : callable
        ``moments(params, frame) -> (len(frame), k_moms)`` for the true data.
    jacobian : callable or None
        ``jacobian(params, frame) -> (len(frame), k_moms, k_params)``; ``None`` uses
        central differences of the mean private moment.
    frame : DataFrame
        Released columns the moment function uses (private categoricals cast).
    mechanism : AlphaIdentity
    k_params, k_moms : int
    param_names : tuple of str
    start_params : ndarray of shape (k_params,)
    reference_size : int
    """

    def __init__(
        self,
        moments: MomentFunction,
        jacobian: MomentFunction | None,
        frame: pd.DataFrame,
        mechanism: AlphaIdentity,
        k_params: int,
        k_moms: int,
        param_names: tuple[str, ...],
        start_params: FloatArray,
        reference_size: int,
    ) -> None:
        self.moments = moments
        self.jacobian = jacobian
        self.frame = frame
        self.mechanism = mechanism
        self.kind = "generic"
        self.formula = None
        self.dep_variable = "moments"
        self.k_params = k_params
        self.k_moms = k_moms
        self.param_names = param_names
        self.start_params = start_params
        self.reference_size = reference_size
        self.n_obs = len(frame)

    def _engines(
        self, o: FitOptions, rng: np.random.Generator
    ) -> tuple[GenericMoments, GenericMoments | None, int, bool]:
        alpha = self.mechanism.alpha
        frame = self.frame
        private = tuple(c for c in self.mechanism.private_columns if c in frame.columns)
        if alpha < 1.0 and private:
            design = reference_design(self.mechanism, None, self.reference_size, rng)
            ref, ref_w, rep = design.frame, design.weights, design.replicate
            exact, n_ref, eff = design.exact, design.n_points, alpha
        else:
            ref, ref_w, rep, exact, n_ref, eff = None, None, None, True, 0, 1.0
        eng = GenericMoments(
            self.moments, frame, private, eff, ref, ref_w, rep, self.k_moms, o.owner
        )
        if self.jacobian is None:
            return eng, None, n_ref, exact
        kk, shape = self.k_moms * self.k_params, (self.k_moms, self.k_params)
        jac_fn = self.jacobian

        def flat(p: FloatArray, f: pd.DataFrame) -> FloatArray:
            arr = np.asarray(jac_fn(p, f), dtype=float)
            if arr.shape != (len(f), *shape):
                raise DataMismatchError(
                    f"{o.owner}: jacobian(params, frame) must return shape (len(frame), "
                    f"{self.k_moms}, {self.k_params}); got {arr.shape}."
                )
            return arr.reshape(len(f), kk)

        jac_eng = GenericMoments(flat, frame, private, eff, ref, ref_w, rep, kk, o.owner)
        return eng, jac_eng, n_ref, exact

    def fit(self, options: FitOptions, rng: np.random.Generator) -> GMMFit:
        """Gauss-Newton with step halving, then efficient re-weighting when asked."""
        o = options
        eng, jac_eng, n_ref, exact = self._engines(o, rng)

        def jacobian(th: FloatArray) -> FloatArray:
            if jac_eng is not None:
                return jac_eng.mean(th).reshape(self.k_moms, self.k_params)
            D = np.empty((self.k_moms, self.k_params))
            for j in range(self.k_params):  # k_params central differences of the mean
                h = 6e-6 * max(1.0, abs(th[j]))
                e = np.zeros(self.k_params)
                e[j] = h
                D[:, j] = (eng.mean(th + e) - eng.mean(th - e)) / (2 * h)
            return D

        A = np.eye(self.k_moms) if o.initial_weight is None else o.initial_weight
        notes: list[str] = []
        start = self.start_params if o.start is None else o.start
        theta = _gauss_newton(eng, jacobian, A, start, o, self.param_names, notes)
        n_steps = 1
        if o.weighting != "one-step" and self.k_moms != self.k_params:
            labels = [f"moment {j}" for j in range(self.k_moms)]
            for _ in range(1 if o.weighting == "two-step" else o.max_iter):
                Phi = moment_covariance(
                    eng.rows(theta), o.codes, center=o.center, small_g=o.small_g
                )
                A = inv_cov(Phi, labels, o.owner)
                new = _gauss_newton(eng, jacobian, A, theta, o, self.param_names, notes)
                n_steps += 1
                done = np.max(np.abs(new - theta)) <= max(o.tol, 1e-8) * (1 + np.max(np.abs(theta)))
                theta = new
                if done:
                    break
        rows = eng.rows(theta)
        Phi = moment_covariance(rows, o.codes, center=o.center, small_g=o.small_g)
        cov, bread = sandwich(jacobian(theta), A, Phi, self.n_obs)
        efficient = o.weighting != "one-step"
        j = j_statistic(rows.mean(axis=0), A, self.n_obs, self.k_params, efficient=efficient)
        ref_err: dict[str, float] = {}
        if eng.replicate is not None and eng.ref_frame is not None:
            # delta method: theta moves by bread @ (error of the mean moment)
            se = np.sqrt((bread**2) @ (eng.reference_error(theta) ** 2))
            ref_err = dict(zip(self.param_names, se.tolist(), strict=True))
        facts = (
            ("Model:", "GMM (user moments)"),
            ("Weighting:", o.weighting),
            ("Covariance:", o.label),
            ("Moments / params:", f"{self.k_moms} / {self.k_params}"),
            ("Distinct public rows:", str(eng.n_distinct)),
        )
        return GMMFit(
            params=theta,
            cov=cov,
            influence=rows @ bread.T,
            tests={"j_test": j},
            facts=facts,
            notes=tuple(notes),
            reference_error=ref_err,
            reference_points=n_ref,
            reference_exact=exact,
            n_steps=n_steps,
        )


def _gauss_newton(
    eng: GenericMoments,
    jacobian: Callable[[FloatArray], FloatArray],
    A: FloatArray,
    start: FloatArray,
    o: FitOptions,
    names: Sequence[str],
    notes: list[str],
) -> FloatArray:
    """Minimise ``g' A g`` by Gauss-Newton steps with step halving."""
    theta = start.copy()
    g = eng.mean(theta)
    obj = float(g @ A @ g)
    for _ in range(o.max_iter):
        D = jacobian(theta)
        H = D.T @ A @ D
        check_nonsingular(H, names, "moment Jacobian D'AD", o.owner)
        step = -np.linalg.solve(H, D.T @ A @ g)
        lam = 1.0
        while True:
            cand = theta + lam * step
            g_new = eng.mean(cand)
            obj_new = float(g_new @ A @ g_new)
            if obj_new <= obj or lam < 1e-8:
                break
            lam *= 0.5
        theta, g, obj = cand, g_new, obj_new
        if np.max(np.abs(lam * step)) <= o.tol * (1 + np.max(np.abs(theta))):
            return theta
    msg = f"Gauss-Newton stopped after max_iter={o.max_iter} steps (objective {obj:.3g})."
    notes.append(msg)
    warnings.warn(f"{o.owner}: {msg}", PrivinferWarning, stacklevel=5)
    return theta


_OWNER = "PrivateGMM"


def build_generic_engine(
    moments: Any,
    data: Any,
    mechanism: AlphaIdentity | None,
    k_params: int,
    param_names: Sequence[str] | None,
    start_params: Any,
    jacobian: Any,
    columns: Sequence[str] | None,
    reference_size: int,
) -> GenericEngine:
    """Validate ``PrivateGMM``'s constructor arguments and build the user-moment engine.

    Raises
    ------
    DataMismatchError
        Not callable, wrong output shape, unknown columns, bad start values or names.
    SingularDesignError
        Fewer moment conditions than parameters.
    """
    if not callable(moments):
        raise DataMismatchError(
            f"{_OWNER}: moments must be callable; got {type(moments).__name__}."
        )
    if jacobian is not None and not callable(jacobian):
        raise DataMismatchError(f"{_OWNER}: jacobian must be callable or None.")
    mech = check_inputs(data, mechanism, _OWNER)
    k = check_int(k_params, "k_params", _OWNER, 1)
    size = check_int(reference_size, "reference_size", _OWNER, 2)
    cols = list(data.columns) if columns is None else list(columns)
    missing = [c for c in cols if c not in data.columns]
    if missing:
        raise DataMismatchError(f"{_OWNER}: columns {missing!r} are not in the data.")
    mech.check_data(data, _OWNER)
    frame = cast_private_categoricals(data[cols], mech)
    start = check_start(start_params, k)
    names = check_names(param_names, k)
    out = np.asarray(moments(start, frame), dtype=float)
    if out.ndim != 2 or out.shape[0] != len(data):
        raise DataMismatchError(
            f"{_OWNER}: moments(params, frame) must return an array of shape "
            f"(len(frame), k_moms) = ({len(data)}, k_moms); got {out.shape}."
        )
    k_moms = int(out.shape[1])
    if k_moms < k:
        raise SingularDesignError(
            f"{_OWNER}: the model is under-identified: {k_moms} moment condition(s) for "
            f"{k} parameter(s). Add moment conditions (instruments)."
        )
    return GenericEngine(moments, jacobian, frame, mech, k, k_moms, names, start, size)


def check_names(names: Sequence[str] | None, k_params: int) -> tuple[str, ...]:
    if names is None:
        return tuple(f"theta_{j}" for j in range(k_params))
    out = tuple(str(s) for s in names)
    if len(out) != k_params or len(set(out)) != len(out):
        raise DataMismatchError(
            f"{_OWNER}: param_names must be {k_params} distinct labels; got {names!r}."
        )
    return out

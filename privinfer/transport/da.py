r"""Differentially private domain adaptation (DPDA; Le Tien, Habrard and Sebban, 2019, Algorithm 2).

The source party sorts its rows by class, publishes the DPOT release of the sorted rows
(:class:`~privinfer.transport.dpot.DPOTSource`) and a class histogram with integer
(discrete Laplace) noise. The target party computes a class-regularised coupling on the
debiased cost with POT, maps the source to the target domain by the barycentric map
:math:`\hat X_s = n_s\tilde\gamma X_t`, and trains any scikit-learn classifier on the
mapped rows with the labels read off the noisy histogram.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from privinfer._typing import FloatArray, IntArray, RandomStateLike
from privinfer._validation import (
    check_in_interval,
    check_int,
    check_random_state,
    spawn_generators,
)
from privinfer.exceptions import (
    DataMismatchError,
    MissingValueError,
    NotFittedError,
    TransportConvergenceError,
    TransportConvergenceWarning,
    UnknownCategoryError,
)
from privinfer.transport._pot import import_ot
from privinfer.transport._release import warn_if_seeded
from privinfer.transport.accounting import NeighbourRelation, PrivacyStatement
from privinfer.transport.dpot import (
    DPOTSource,
    PublishedSource,
    _as_matrix,
    _check_marginals,
    debiased_cost,
)

__all__ = [
    "DPDA",
    "DPDASource",
    "PublishedLabelledSource",
    "discrete_laplace",
    "labels_from_counts",
]

GroupNorm = Literal["l1l2", "lpl1"]
CostNormalization = Literal["none", "max", "median"]

_LABEL_CAVEAT = (
    "Algorithm 2 of Le Tien, Habrard and Sebban (2019) publishes the rows sorted by "
    "class; when a neighbouring data set changes a label, rows shift position, and that "
    "order is not protected by the "
    "histogram noise. Under neighbour='entry' labels never change, so the statement is "
    "exact; under 'record' it covers features and counts but not the class order."
)


def discrete_laplace(
    scale: float, size: int | tuple[int, ...], random_state: RandomStateLike = None
) -> IntArray:
    r"""Integer noise with :math:`P(K=k) \propto e^{-|k|/\text{scale}}` (two-sided geometric).

    Drawn as the difference of two i.i.d. geometric variables, so it is exact (no
    floating-point rounding of a continuous Laplace). Cost O(size).

    Parameters
    ----------
    scale : float
        Scale :math:`b > 0`; the mechanism adding it to an integer query of
        :math:`\ell_1` sensitivity :math:`\Delta` is :math:`\Delta/b`-DP.
    size : int or tuple of int
        Output shape.
    random_state : int, SeedSequence, Generator or None, default=None
        Source of randomness; None draws fresh OS entropy.

    Returns
    -------
    ndarray of int64
        The noise.

    Raises
    ------
    ValueError
        If ``scale`` is not positive.

    Examples
    --------
    >>> discrete_laplace(2.0, 4, random_state=0).dtype
    dtype('int64')
    """
    b = check_in_interval(scale, "scale", "discrete_laplace", 0.0, np.inf, low_open=True,
                          high_open=True)
    rng = check_random_state(random_state)
    p = -np.expm1(-1.0 / b)  # success probability 1 - e^{-1/b}
    return (rng.geometric(p, size=size) - rng.geometric(p, size=size)).astype(np.int64)


def _sorted_labels(labels: set[Any]) -> list[Any]:
    """Labels in sorted order for a message; mixed types fall back to (type, repr) order."""
    try:
        return sorted(labels)
    except TypeError:
        return sorted(labels, key=lambda v: (type(v).__name__, repr(v)))


def labels_from_counts(noisy_counts: IntArray, n_rows: int) -> IntArray:
    r"""Class codes of class-sorted rows read off a noisy histogram.

    Negative counts are set to zero and the counts are rescaled to sum to ``n_rows``
    (largest-remainder rounding of the cumulative boundaries), so that every published
    row gets one class code. Cost O(n).

    Parameters
    ----------
    noisy_counts : ndarray of int of shape (n_classes,)
        The published histogram :math:`v(Y_s) + \text{noise}`.
    n_rows : int
        Number of published rows.

    Returns
    -------
    ndarray of int64 of shape (n_rows,)
        Class codes ``0 .. n_classes - 1`` in row order.

    Raises
    ------
    DataMismatchError
        If ``noisy_counts`` is not 1-D or every noisy count is non-positive.
    MissingValueError
        If ``noisy_counts`` holds NaN or infinite values.

    Examples
    --------
    >>> labels_from_counts(np.array([2, -1, 3]), 5)
    array([0, 0, 2, 2, 2])
    """
    owner = "labels_from_counts"
    c = np.asarray(noisy_counts, dtype=float)
    if c.ndim != 1:
        raise DataMismatchError(
            f"{owner}: noisy_counts must be 1-D, one count per class. Got shape {c.shape}."
        )
    if not np.all(np.isfinite(c)):
        raise MissingValueError(
            f"{owner}: noisy_counts holds {int(np.sum(~np.isfinite(c)))} NaN or infinite "
            "value(s); a published histogram has finite counts."
        )
    c = np.maximum(c, 0.0)
    n = check_int(n_rows, "n_rows", owner, 1)
    if c.sum() <= 0:
        raise DataMismatchError(
            "labels_from_counts: every noisy class count is <= 0; no row can be labelled. "
            "Increase eps_labels."
        )
    bounds = np.rint(np.cumsum(c) / c.sum() * n).astype(np.int64)
    return np.searchsorted(bounds, np.arange(n), side="right").astype(np.int64)


@dataclass(frozen=True, eq=False, repr=False)
class PublishedLabelledSource:
    r"""What the DPDA source publishes: a DPOT release of class-sorted rows and a histogram.

    Attributes
    ----------
    source : PublishedSource
        :math:`(M, X_sM+\Delta)` of the class-sorted rows.
    classes : ndarray of shape (n_classes,)
        The public label set, in histogram order.
    noisy_counts : ndarray of int64 of shape (n_classes,)
        :math:`v(Y_s) + \text{DLap}(2/\varepsilon')^{q}`.
    eps_labels : float
        :math:`\varepsilon'` of the histogram.
    privacy : PrivacyStatement
        Basic composition of both releases, with its caveat in ``note``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> Xs, ys = rng.normal(size=(60, 4)), rng.choice(["a", "b", "c"], 60)
    >>> pub = DPDASource(3.0, 1e-4, 8, 1.0, classes=["a", "b", "c"],
    ...                  random_state=0).publish(Xs, ys)
    >>> pub.classes.tolist(), pub.noisy_counts.shape, pub.source.rows.shape
    (['a', 'b', 'c'], (3,), (60, 8))
    >>> pub.eps_labels, pub.privacy.eps, pub.privacy.delta  # eps + eps' by composition
    (1.0, 4.0, 0.0001)
    >>> len(repr(pub).splitlines()) <= 15
    True
    """

    source: PublishedSource
    classes: np.ndarray
    noisy_counts: IntArray
    eps_labels: float
    privacy: PrivacyStatement

    def __repr__(self) -> str:
        src, p = self.source, self.privacy
        classes = self.classes.tolist()
        shown = classes if len(classes) <= 10 else [*classes[:10], "..."]
        return (
            f"PublishedLabelledSource(n_source={src.n_samples}, n_features={src.n_features}, "
            f"ell={src.ell}, n_classes={len(classes)},\n"
            f"                        classes={shown!r},\n"
            f"                        eps={p.eps:.4g} (labels {self.eps_labels:.4g}), "
            f"delta={p.delta:.3g}, sigma={src.sigma:.4g})"
        )


class DPDASource:
    r"""Source party of DPDA: publishes sorted, projected, noisy rows and a noisy histogram.

    Parameters
    ----------
    eps : float
        :math:`\varepsilon > 0` of the feature release.
    delta : float
        :math:`\delta \in (0, 1/2)` of the feature release (Theorem 2 needs
        :math:`\delta < 1/2`, as in :class:`DPOTSource`).
    ell : int
        Projection dimension :math:`\ell \ge 1`.
    eps_labels : float
        :math:`\varepsilon' > 0` of the class histogram.
    classes : array-like of shape (n_classes,)
        The **public** label set (taken from the data it would leak which classes occur):
        distinct labels of one kind, all numbers or all strings, so that they can be
        ordered. A class equal to ``-1`` (or ``"-1"``) clashes with the unknown-label
        marker of :meth:`DPDA.fit`.
    neighbour : {"entry", "record"}, default="entry"
        Neighbour relation of the feature release (see :class:`DPOTSource`).
    clip_norm : float or None, default=None
        Public row-norm bound, required for ``neighbour="record"``.
    random_state : int, SeedSequence, Generator or None, default=None
        Source of all randomness; None draws fresh OS entropy. An int or a
        ``SeedSequence`` issues :class:`SeedReleaseWarning` (a guessed seed regenerates
        the published ``M`` and then the noise). A pickled source object drops the seed.

    See Also
    --------
    DPDA : the target party.

    Notes
    -----
    The histogram noise is discrete Laplace with scale :math:`2/\varepsilon'`: replacing
    one label moves one unit between two bins (:math:`\ell_1` sensitivity 2), so the
    release is :math:`\varepsilon'`-DP for that relation (Le Tien, Habrard and Sebban (2019) use
    :math:`\text{Lap}(1/\varepsilon')`, which is the add/remove calibration). The total is
    :math:`(\varepsilon+\varepsilon', \delta)` by basic composition.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> Xs, ys = rng.normal(size=(60, 4)), rng.integers(0, 3, 60)
    >>> pub = DPDASource(3.0, 1e-4, 8, 1.0, classes=[0, 1, 2],
    ...                  random_state=0).publish(Xs, ys)
    >>> pub.noisy_counts.shape
    (3,)
    """

    def __init__(
        self,
        eps: float,
        delta: float,
        ell: int,
        eps_labels: float,
        classes: Any,
        *,
        neighbour: NeighbourRelation = "entry",
        clip_norm: float | None = None,
        random_state: RandomStateLike = None,
    ) -> None:
        self.eps = eps
        self.delta = delta
        self.ell = ell
        self.eps_labels = eps_labels
        self.classes = classes
        self.neighbour = neighbour
        self.clip_norm = clip_norm
        self.random_state = random_state

    def __getstate__(self) -> dict[str, object]:
        # a seed must not travel with a shared object: it regenerates M and the noise
        state = self.__dict__.copy()
        state["random_state"] = None
        return state

    def publish(self, Xs: FloatArray, ys: Any) -> PublishedLabelledSource:
        """Publish the class-sorted DPOT release and the noisy histogram.

        Parameters
        ----------
        Xs : ndarray of shape (n_source, n_features)
            Private source rows (not kept).
        ys : array-like of shape (n_source,)
            Private source labels (not kept), all in ``classes``.

        Returns
        -------
        PublishedLabelledSource
            The publication.

        Raises
        ------
        UnknownCategoryError
            If ``ys`` holds a label outside ``classes``.
        DataMismatchError
            If ``Xs`` and ``ys`` have different lengths, or ``classes`` mixes label types
            that cannot be ordered (numbers and strings).
        ValueError
            If a hyperparameter is out of range (``delta`` must lie in (0, 1/2)).

        Warns
        -----
        SeedReleaseWarning
            If ``random_state`` is an int or a ``SeedSequence``.
        """
        owner = f"{type(self).__name__}.publish"
        warn_if_seeded(self.random_state, owner)
        eps_l = check_in_interval(self.eps_labels, "eps_labels", type(self).__name__, 0.0,
                                  np.inf, low_open=True, high_open=True)
        classes = np.asarray(self.classes)
        try:
            n_distinct = np.unique(classes).size
        except TypeError:
            kinds = sorted({type(v).__name__ for v in classes.ravel().tolist()})
            raise DataMismatchError(
                f"The 'classes' parameter of {type(self).__name__} must hold labels of one "
                f"kind (all numbers or all strings) so that they can be ordered. Got the "
                f"types {kinds!r} in {self.classes!r}."
            ) from None
        if classes.ndim != 1 or classes.size < 1 or n_distinct != classes.size:
            raise ValueError(
                f"The 'classes' parameter of {type(self).__name__} must be a 1-D array of "
                f"distinct labels. Got {self.classes!r}."
            )
        X = _as_matrix(Xs, "Xs", owner)
        y = np.asarray(ys)
        if y.ndim != 1 or y.shape[0] != X.shape[0]:
            raise DataMismatchError(
                f"{owner}: ys must be 1-D with one label per row of Xs ({X.shape[0]}). "
                f"Got shape {y.shape}."
            )
        unknown = _sorted_labels(set(y.tolist()) - set(classes.tolist()))
        if unknown:
            raise UnknownCategoryError(
                f"{owner}: ys holds labels {unknown!r} outside the public classes "
                f"{classes.tolist()!r}; the histogram has no bin for them."
            )
        rng_sort, rng_hist, rng_pub = spawn_generators(self.random_state, 3)
        try:
            codes = np.searchsorted(np.sort(classes), y)
        except TypeError:
            raise DataMismatchError(
                f"{owner}: the labels in ys cannot be ordered together with the classes "
                f"{classes.tolist()!r}; pass labels of one kind (all numbers or all "
                f"strings)."
            ) from None
        codes = np.argsort(classes)[codes]  # code = position in `classes`
        # sort by class, random order within a class
        order = np.lexsort((rng_sort.random(y.shape[0]), codes))
        counts = np.bincount(codes, minlength=classes.size).astype(np.int64)
        noisy = counts + discrete_laplace(2.0 / eps_l, classes.size, random_state=rng_hist)
        src = DPOTSource(self.eps, self.delta, self.ell, neighbour=self.neighbour,
                         clip_norm=self.clip_norm, random_state=rng_pub)._publish(X[order], owner)
        p = src.privacy
        stmt = PrivacyStatement(
            eps=p.eps + eps_l, delta=p.delta, neighbour=p.neighbour,
            mechanism=(f"{p.mechanism}; class histogram with discrete Laplace noise "
                       f"(eps'={eps_l:.4g}, l1 sensitivity 2); basic composition"),
            sigma=p.sigma, sensitivity=p.sensitivity, note=_LABEL_CAVEAT,
        )
        return PublishedLabelledSource(source=src, classes=classes, noisy_counts=noisy,
                                       eps_labels=eps_l, privacy=stmt)


class DPDA:
    r"""Target party of DPDA: private class-regularised OT, barycentric map, classifier.

    ``fit(published, Xt, yt=None)`` computes the debiased cost, solves entropic OT with a
    class-based group-lasso penalty (POT ``ot.da.sinkhorn_l1l2_gl`` or
    ``ot.da.sinkhorn_lpl1_mm`` on *our* cost; POT's ``ot.da`` classes would recompute the
    cost from raw source rows), maps the published rows to the target domain and trains
    ``classifier`` on them. Semi-supervised: target labels in ``yt`` (``-1`` = unknown)
    forbid mass between rows of different classes. Cost: a few Sinkhorn solves, O(n m)
    memory.

    Parameters
    ----------
    classifier : scikit-learn classifier or None, default=None
        Cloned and fitted on the mapped rows; None means 1-nearest-neighbour.
    reg_e : float, default=0.1
        Entropic regularisation :math:`\lambda_s`, relative to the normalised cost.
    reg_cl : float, default=1.0
        Group-lasso weight :math:`\lambda_c`.
    group_norm : {"l1l2", "lpl1"}, default="l1l2"
        ``"l1l2"``: :math:`\sum_j\sum_c\lVert\gamma(I_c, j)\rVert_2` as in Le Tien,
        Habrard and Sebban (2019) (``ot.da.sinkhorn_l1l2_gl``); ``"lpl1"``: the
        :math:`\ell_{1/2}`-:math:`\ell_1`
        penalty of Courty et al. (``ot.da.sinkhorn_lpl1_mm``, faster).
    cost_normalization : {"max", "median", "none"}, default="max"
        Division of the (min-shifted) debiased cost before the solve, as POT's ``norm``.
    max_iter : int, default=10
        Outer iterations of the group-lasso solver.

    Attributes
    ----------
    plan_ : ndarray of shape (n_source, n_target)
        The regularised coupling :math:`\tilde\gamma`.
    cost_ : ndarray of shape (n_source, n_target)
        The debiased cost :math:`\tilde C` (not normalised).
    w_tilde_ : float
        :math:`\langle\tilde\gamma,\tilde C\rangle`.
    xs_hat_ : ndarray of shape (n_source, n_features)
        Barycentric images :math:`\hat X_s = n_s\tilde\gamma X_t` (rows normalised by the
        row mass of the plan, which equals :math:`n_s` for exact marginals).
    ys_tilde_ : ndarray of shape (n_source,)
        Labels of the published rows read off the noisy histogram.
    classes_ : ndarray of shape (n_classes,)
        The public label set.
    classifier_ : estimator
        The fitted classifier.
    privacy_ : PrivacyStatement
        The guarantee of the source's publication.

    See Also
    --------
    DPDASource : the source party.
    DPOT : the transport step alone.

    Notes
    -----
    Le Tien, Habrard and Sebban (2019), Algorithm 2 / eq. (3):

    .. math:: \tilde\gamma = \arg\min_{\gamma\in\Pi(a,b)} \langle\gamma,\tilde C\rangle
              + \lambda_s\sum_{ij}\gamma_{ij}\log\gamma_{ij}
              + \lambda_c\sum_j\sum_c \lVert\gamma(I_c, j)\rVert_2,

    then :math:`\hat X_s = n_s\tilde\gamma X_t`, and a classifier on
    :math:`(\hat X_s, \tilde Y_s)` plus labelled target rows.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> Xs = np.r_[rng.normal(0, 1, (30, 3)), rng.normal(4, 1, (30, 3))]
    >>> ys = np.r_[np.zeros(30, int), np.ones(30, int)]
    >>> Xt, yt = Xs + 1.0, ys
    >>> pub = DPDASource(8.0, 1e-3, 20, 2.0, classes=[0, 1], random_state=0).publish(Xs, ys)
    >>> da = DPDA().fit(pub, Xt)
    >>> da.score(Xt, yt) > 0.8
    True
    """

    def __init__(
        self,
        classifier: Any = None,
        *,
        reg_e: float = 0.1,
        reg_cl: float = 1.0,
        group_norm: GroupNorm = "l1l2",
        cost_normalization: CostNormalization = "max",
        max_iter: int = 10,
    ) -> None:
        self.classifier = classifier
        self.reg_e = reg_e
        self.reg_cl = reg_cl
        self.group_norm = group_norm
        self.cost_normalization = cost_normalization
        self.max_iter = max_iter

    def fit(
        self,
        published: PublishedLabelledSource,
        Xt: FloatArray,
        yt: Any = None,
        *,
        a: FloatArray | None = None,
        b: FloatArray | None = None,
    ) -> DPDA:
        """Fit coupling, barycentric map and classifier; returns ``self``.

        Parameters
        ----------
        published : PublishedLabelledSource
            The source party's publication.
        Xt : ndarray of shape (n_target, n_features)
            Target rows.
        yt : array-like of shape (n_target,) or None, default=None
            Known target labels, ``-1`` where unknown (semi-supervised mode). numpy turns
            a list such as ``["a", -1]`` into strings, so in an array of strings the
            entry ``"-1"`` marks an unknown label too; an object array may hold the
            integer ``-1`` beside string labels. A published class equal to the marker
            (``-1``, or ``"-1"`` in an array of strings) would make it ambiguous, so such
            a ``yt`` is refused, never read either way; for a class named ``"-1"``, pass
            an object array with the integer ``-1`` for the unknown labels.
        a, b : ndarray of shape (n_source,) / (n_target,), default=None
            Marginal weights with equal sums, as POT's ``a`` and ``b``; None means
            uniform. ``a`` weighs the published rows in their published (class-sorted)
            order and must be public. A row of weight zero gets no mass; its image in
            ``xs_hat_`` is that of the nearest published row with mass, and it does not
            train the classifier.

        Returns
        -------
        DPDA
            The fitted estimator.

        Raises
        ------
        UnknownCategoryError
            If ``yt`` holds a label that is not a class of the published histogram.
        DataMismatchError
            If the dimensions do not match, or ``yt`` marks unknown labels with a value
            that is also a published class.
        WeightsError
            If ``a`` or ``b`` is malformed or their sums differ.
        ValueError
            If a hyperparameter is out of range.
        """
        owner = f"{type(self).__name__}.fit"
        name = type(self).__name__
        if not isinstance(published, PublishedLabelledSource):
            raise TypeError(
                f"{owner}: 'published' must be a PublishedLabelledSource (from "
                f"DPDASource.publish). Got {type(published).__name__}."
            )
        reg_e = check_in_interval(self.reg_e, "reg_e", name, 0.0, np.inf, low_open=True,
                                  high_open=True)
        reg_cl = check_in_interval(self.reg_cl, "reg_cl", name, 0.0, np.inf, high_open=True)
        n_iter = check_int(self.max_iter, "max_iter", name, 1)
        if self.group_norm not in ("l1l2", "lpl1"):
            raise ValueError(f"The 'group_norm' parameter of {name} must be 'l1l2' or "
                             f"'lpl1'. Got {self.group_norm!r} instead.")
        if self.cost_normalization not in ("max", "median", "none"):
            raise ValueError(f"The 'cost_normalization' parameter of {name} must be 'max', "
                             f"'median' or 'none'. Got {self.cost_normalization!r} instead.")
        T = _as_matrix(Xt, "Xt", owner)
        src = published.source
        classes = published.classes
        codes_t = self._target_codes(yt, classes, T.shape[0], owner)

        C = debiased_cost(src.rows, T, src.projection, src.sigma)
        ys_codes = labels_from_counts(published.noisy_counts, src.n_samples)
        Cn = C - C.min()
        if self.cost_normalization == "max":
            Cn /= max(Cn.max(), np.finfo(float).tiny)
        elif self.cost_normalization == "median":
            Cn /= max(float(np.median(Cn)), np.finfo(float).tiny)
        if codes_t is not None:
            known = codes_t >= 0
            mismatch = (ys_codes[:, None] != codes_t[None, :]) & known[None, :]
            Cn[mismatch] = 10.0 * Cn.max()  # as POT's limit_max: no cross-class mass
        ot = import_ot()
        n, m = Cn.shape
        a, b = _check_marginals(a, b, n, m, owner)
        solver = ot.da.sinkhorn_l1l2_gl if self.group_norm == "l1l2" else ot.da.sinkhorn_lpl1_mm
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            plan = solver(a, ys_codes, b, Cn, reg_e, reg_cl, numItermax=n_iter)
        if any("converge" in str(w.message) for w in caught):
            warnings.warn(
                f"{owner}: POT's inner Sinkhorn did not converge; increase reg_e "
                f"(got {reg_e}).",
                TransportConvergenceWarning,
                stacklevel=2,
            )
        row_mass = plan.sum(axis=1, keepdims=True)
        used = a > 0  # rows of zero weight (POT allows them) carry no mass
        if not np.all(np.isfinite(plan)) or np.any(row_mass[used] <= 0):
            raise TransportConvergenceError(
                f"{owner}: the regularised coupling has non-finite entries or empty rows; "
                f"increase reg_e (got {reg_e})."
            )
        xs_hat = np.empty((n, T.shape[1]))
        xs_hat[used] = (plan[used] / row_mass[used]) @ T
        if not used.all():
            # no barycentric image without mass: such a row takes the image of the nearest
            # published row that has one (the out-of-sample rule of transform) and is left
            # out of the classifier's training rows
            nearest = np.argmin(ot.dist(src.rows[~used], src.rows[used]), axis=1)
            xs_hat[~used] = xs_hat[used][nearest]

        clf = self._make_classifier()
        X_train, y_train = xs_hat[used], classes[ys_codes[used]]
        if codes_t is not None and np.any(codes_t >= 0):
            X_train = np.vstack([xs_hat, T[codes_t >= 0]])
            y_train = np.concatenate([y_train, classes[codes_t[codes_t >= 0]]])
        clf.fit(X_train, y_train)

        self.plan_ = plan
        self.cost_ = C
        self.w_tilde_ = float(np.sum(plan * C))
        self.xs_hat_ = xs_hat
        self.ys_tilde_ = classes[ys_codes]
        self.classes_ = classes
        self.classifier_ = clf
        self.privacy_ = published.privacy
        self.published_rows_ = src.rows
        return self

    @staticmethod
    def _target_codes(yt: Any, classes: np.ndarray, n_t: int, owner: str) -> IntArray | None:
        if yt is None:
            return None
        y = np.asarray(yt)
        if y.ndim != 1 or y.shape[0] != n_t:
            raise DataMismatchError(
                f"{owner}: yt must be 1-D with one entry per target row ({n_t}); use -1 for "
                f"unknown labels. Got shape {y.shape}."
            )
        # the marker of an unknown label: -1, which numpy has made "-1" in a string array
        marker: object = {"U": "-1", "S": b"-1"}.get(y.dtype.kind, -1)
        known = ~np.asarray(y == marker, dtype=bool).reshape(y.shape)
        clash = [c for c in classes.tolist() if c == marker]
        if clash and not known.all():
            hint = (
                "pass an object array with the integer -1 for the unknown labels"
                if isinstance(marker, str | bytes)
                else "the unknown-label marker -1 cannot be told apart from that class; "
                "publish the classes under other labels"
            )
            raise DataMismatchError(
                f"{owner}: yt marks unknown labels with {marker!r}, but {clash[0]!r} is also "
                f"a class of the published histogram, so {marker!r} is ambiguous; {hint}."
            )
        unknown = _sorted_labels(set(y[known].tolist()) - set(classes.tolist()))
        if unknown:
            raise UnknownCategoryError(
                f"{owner}: yt holds labels {unknown!r} that are not classes of the published "
                f"histogram {classes.tolist()!r}."
            )
        lookup = {c: i for i, c in enumerate(classes.tolist())}
        return np.array([lookup[v] if k else -1 for v, k in zip(y.tolist(), known, strict=True)],
                        dtype=np.int64)

    def _make_classifier(self) -> Any:
        from sklearn.base import clone
        from sklearn.neighbors import KNeighborsClassifier

        if self.classifier is None:
            return KNeighborsClassifier(n_neighbors=1)
        return clone(self.classifier)

    def _check_fitted(self) -> None:
        if not hasattr(self, "classifier_"):
            raise NotFittedError(
                f"This {type(self).__name__} instance is not fitted yet; call fit first."
            )

    def transform(self, Zs: FloatArray | None = None) -> FloatArray:
        """Barycentric images of published source rows in the target domain.

        Parameters
        ----------
        Zs : ndarray of shape (n_rows, ell) or None, default=None
            Published (projected, noisy) rows; None returns the images of the fitted
            publication. Rows not seen in ``fit`` take the image of their nearest fitted
            published row (POT's out-of-sample rule, in the projected space).

        Returns
        -------
        ndarray of shape (n_rows, n_features)
            The images.

        Raises
        ------
        NotFittedError
            If called before ``fit``.
        """
        self._check_fitted()
        if Zs is None:
            return self.xs_hat_.copy()
        Z = _as_matrix(Zs, "Zs", f"{type(self).__name__}.transform")
        if Z.shape[1] != self.published_rows_.shape[1]:
            raise DataMismatchError(
                f"{type(self).__name__}.transform: Zs has {Z.shape[1]} columns; the fitted "
                f"publication has ell={self.published_rows_.shape[1]}."
            )
        ot = import_ot()
        nearest = np.argmin(ot.dist(Z, self.published_rows_), axis=1)
        return self.xs_hat_[nearest]

    def predict(self, X: FloatArray) -> np.ndarray:
        """Predict target labels with the fitted classifier.

        Parameters
        ----------
        X : ndarray of shape (n_rows, n_features)
            Target-domain rows.

        Returns
        -------
        ndarray of shape (n_rows,)
            Predicted labels.
        """
        self._check_fitted()
        return self.classifier_.predict(_as_matrix(X, "X", f"{type(self).__name__}.predict"))

    def score(self, X: FloatArray, y: Any) -> float:
        """Accuracy of :meth:`predict` on ``(X, y)``.

        Parameters
        ----------
        X : ndarray of shape (n_rows, n_features)
            Target-domain rows.
        y : array-like of shape (n_rows,)
            True labels.

        Returns
        -------
        float
            Fraction of correct predictions.
        """
        return float(np.mean(self.predict(X) == np.asarray(y)))

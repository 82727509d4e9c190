r"""Private kernel regression: Nadaraya–Watson and local linear.

Kormos and van der Vaart (2026), "Private rate-double-robust inference", Example 11.

The ordinary Nadaraya–Watson fit is a ratio of two kernel sums,
:math:`\hat\mu(x) = \sum_i K_h(x - X_i) Y_i / \sum_i K_h(x - X_i)`. Each sum is the mean
of a function of the private covariates, so each is estimated without bias from released
rows by the inversion identity:

.. math::

    \hat N(x) = \frac1n\sum_i Q_X^{-1}[K_h(x - \cdot)\,y](V_i, Z_i)
              = \frac{1}{\alpha}\Big(\frac1n\sum_i K_h(x - Z_i) Y_i
                - (1-\alpha)\,\bar Y\,(K_h * \bar Q)(x)\Big),

and the same with :math:`Y \equiv 1` for the density term :math:`\hat D(x)`, which
deconvolves the released density with the public :math:`(K_h * \bar Q)(x)`
(:math:`\check p_{X} = \check p_Z/\alpha - (1-\alpha)\bar q_h/\alpha` of Kormos and
van der Vaart, 2026). The local-linear fit solves the weighted least-squares system whose entries
:math:`\frac1n\sum_i Q_X^{-1}[K_h(x-\cdot)(\cdot - x)^{e} y^{w}]` are deconvolved the same way.

**Whole functions.** :math:`Q_X^{-1}` acts on the whole product kernel of the private
coordinates (one coin replaces the whole private vector), and a public kernel factor
:math:`K(v - V_i)` multiplies its result: the reference term of a product kernel is the
public kernel sum times the reference kernel sum, which is what makes it separable.

**Speed.** ``method="binned"`` (default) bins the rows linearly onto a grid and convolves
with the kernel by FFT (:func:`scipy.signal.fftconvolve`): O(n 2^d + G log G) for ``G``
grid nodes, whatever the number of evaluation points (n = 1e5, d = 2: well under a
second). ``method="exact"`` sums over all pairs, O(n n_eval); it is the reference
implementation for tests.

**Non-positive denominators.** :math:`\hat D(x)` can be non-positive where the
covariates are rare. A denominator below :math:`\text{floor\_sd}\,(1-\alpha)\,
\widehat{se}(\hat D(x))` is floored (``on_floor="clip"``, the deficit is filled with the
private mean response), trimmed (``"trim"``: NaN) or raises; at ``alpha = 1`` the floor is
zero and the fit is the ordinary one wherever some row is in the kernel's reach.
"""

from __future__ import annotations

import itertools
import warnings
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from scipy.signal import fftconvolve

from privinfer._repr import short_repr
from privinfer._typing import FloatArray, IntArray, RandomStateLike
from privinfer._validation import check_alpha, check_in_interval, check_int
from privinfer.exceptions import DataMismatchError, DensityFloorWarning, SingularDesignError
from privinfer.inversion import invert, reference_design

__all__ = [
    "KernelDiagnostics",
    "KernelReference",
    "KernelRegressionResult",
    "categorical_codes",
    "private_kernel_regression",
    "scott_bandwidth",
]

KernelName = Literal["gaussian", "epanechnikov"]
KernelKind = Literal["nw", "local_linear"]
KernelMethod = Literal["binned", "exact"]
FloorAction = Literal["clip", "trim", "raise"]

#: Default grid nodes per continuous dimension, by the number of continuous dimensions:
#: the grid stays near 2**18 nodes so that one FFT convolution takes milliseconds.
_GRID_BY_DIM = {1: 2048, 2: 256, 3: 64, 4: 24}
#: Gaussian kernels are truncated at this many bandwidths on the grid (mass lost < 1e-6).
_GAUSS_CUT = 5.0
#: Deconvolved denominators below this fraction of the largest are floored whatever
#: alpha: the binned sums' round-off (about 1e-16 of the largest, times the FFT's growth)
#: and the truncated Gaussian tails leave such a denominator, and its numerator, without
#: a correct digit (a point more than ``_GAUSS_CUT`` bandwidths from every row).
_NUMERIC_FLOOR = 1e-10
#: Local-linear fits fall back to Nadaraya–Watson where the local (kernel-weighted)
#: variance of some coordinate is below this fraction of its squared bandwidth.
_LL_VAR_FLOOR = 1e-2
#: Pairs of (evaluation, data) points per block of the exact method (memory bound).
_EXACT_BLOCK = 4_000_000


def _kernel(name: KernelName, u: FloatArray) -> FloatArray:
    if name == "gaussian":
        return np.exp(-0.5 * u * u) / np.sqrt(2.0 * np.pi)
    return np.where(np.abs(u) < 1.0, 0.75 * (1.0 - u * u), 0.0)


def _kernel_reach(name: KernelName) -> float:
    return _GAUSS_CUT if name == "gaussian" else 1.0


@dataclass(frozen=True)
class KernelReference:
    r"""A sample of the public reference :math:`\bar Q` coded like the kernel inputs.

    Attributes
    ----------
    x : ndarray of shape (M, d_private)
        Continuous private coordinates of the reference points.
    cat : ndarray of shape (M, k_private) or None
        Integer codes of the categorical private columns (same coding as the data).
    weights : ndarray of shape (M,)
        Probability weights summing to one.
    replicate : ndarray of shape (M,) or None
        Sobol scramble labels (their spread is the numerical error); ``None`` if exact.

    Examples
    --------
    >>> import numpy as np
    >>> ref = KernelReference.uniform_grid([(0.0, 1.0)], m=4)
    >>> ref.x.ravel().tolist(), ref.weights.tolist()
    ([0.125, 0.375, 0.625, 0.875], [0.25, 0.25, 0.25, 0.25])
    """

    x: FloatArray
    cat: IntArray | None
    weights: FloatArray
    replicate: IntArray | None = None
    __repr__ = short_repr  # one line: arrays and tables by their shape

    @classmethod
    def uniform_grid(cls, bounds: list[tuple[float, float]], m: int = 64) -> KernelReference:
        """Midpoint grid of a product of uniforms (``m`` points per dimension; exact rule).

        Examples
        --------
        >>> KernelReference.uniform_grid([(0, 1), (0, 2)], m=8).x.shape
        (64, 2)
        """
        m = check_int(m, "m", "KernelReference.uniform_grid", 1)
        axes = [lo + (np.arange(m) + 0.5) * (hi - lo) / m for lo, hi in bounds]
        pts = np.stack([g.ravel() for g in np.meshgrid(*axes, indexing="ij")], axis=1)
        return cls(pts, None, np.full(pts.shape[0], 1.0 / pts.shape[0]), None)

    @classmethod
    def from_mechanism(
        cls,
        mechanism: object,
        continuous: list[str],
        categorical: list[str] | None = None,
        *,
        m: int = 16384,
        random_state: RandomStateLike = 0,
    ) -> KernelReference:
        """Draw the reference of an :class:`~privinfer.AlphaIdentity` (QMC or exact).

        Categorical columns are coded by the order of their public levels, as
        :func:`categorical_codes` codes released data.

        Examples
        --------
        >>> import privinfer as pi
        >>> mech = pi.AlphaIdentity(0.5, {"x": pi.reference.Uniform(0, 1)})
        >>> KernelReference.from_mechanism(mech, ["x"], m=256).x.shape
        (256, 1)
        """
        draw = reference_design(mechanism, None, m, random_state)
        frame = draw.frame
        x = (
            frame[list(continuous)].to_numpy(dtype=float)
            if continuous
            else np.zeros((len(frame), 0))
        )
        cat = None
        if categorical:
            levels = mechanism.reference.categorical_levels()  # type: ignore[attr-defined]
            cat = categorical_codes(frame, categorical, levels)
        rep = None if draw.replicate is None else np.asarray(draw.replicate, dtype=np.int64)
        return cls(x, cat, np.asarray(draw.weights, dtype=float), rep)


def categorical_codes(
    frame: pd.DataFrame, columns: list[str], levels: dict[str, list[object]]
) -> IntArray:
    """Integer codes of categorical columns by their public levels.

    Raises
    ------
    DataMismatchError
        If a value is not among the public levels.

    Examples
    --------
    >>> import pandas as pd
    >>> codes = categorical_codes(pd.DataFrame({"g": ["b", "a"]}), ["g"], {"g": ["a", "b"]})
    >>> codes.ravel().tolist()
    [1, 0]
    """
    out = np.empty((len(frame), len(columns)), dtype=np.int64)
    for j, col in enumerate(columns):
        lv = list(levels[col])
        codes = pd.Categorical(frame[col].astype(object), categories=lv).codes
        if np.any(codes < 0):
            raise DataMismatchError(
                f"categorical_codes: column {col!r} has values outside its public levels {lv!r}."
            )
        out[:, j] = codes
    return out


@dataclass(frozen=True)
class KernelDiagnostics:
    """What happened in one private kernel fit.

    Attributes
    ----------
    kind, kernel, method : str
        Estimator (``"nw"`` / ``"local_linear"``), kernel and evaluation method.
    bandwidth : tuple of float
        Bandwidth of each continuous dimension (public ones first).
    grid_shape : tuple of int
        Grid nodes per continuous dimension (binned method; empty otherwise).
    n_floored : int
        Evaluation points whose deconvolved denominator fell below its floor.
    share_floored : float
        Their share of the evaluation points.
    min_density : float
        Smallest deconvolved denominator at the evaluation points.
    n_fallback : int
        Local-linear points that fell back to Nadaraya–Watson (degenerate local design).
    reference_error : float
        Quasi-Monte Carlo standard error of the reference term relative to the largest
        denominator (0 for an exact reference).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = rng.uniform(0, 1, size=(2000, 1)); y = x[:, 0] + 0.1 * rng.normal(size=2000)
    >>> ref = KernelReference.uniform_grid([(0.0, 1.0)], m=256)
    >>> diag = private_kernel_regression(y, x, alpha=0.8, reference=ref, bandwidth=0.1,
    ...                                  x_eval=np.array([[0.5]]), kind="local_linear",
    ...                                  method="exact").diagnostics
    >>> diag.kind, diag.method, diag.bandwidth, diag.grid_shape, diag.n_floored
    ('local_linear', 'exact', (0.1,), (), 0)
    """

    kind: str
    kernel: str
    method: str
    bandwidth: tuple[float, ...]
    grid_shape: tuple[int, ...]
    n_floored: int
    share_floored: float
    min_density: float
    n_fallback: int
    reference_error: float


@dataclass(frozen=True)
class KernelRegressionResult:
    r"""Predictions of a private kernel fit at the evaluation points.

    Attributes
    ----------
    predictions : ndarray of shape (n_eval,)
        :math:`\hat\mu` at the evaluation points (NaN where trimmed).
    density : ndarray of shape (n_eval,)
        Deconvolved denominator :math:`\\hat D` (a density of the continuous
        coordinates times the cell probability).
    floored : ndarray of shape (n_eval,)
        Whether the denominator was floored or trimmed there.
    diagnostics : KernelDiagnostics
        Bandwidths, floor counts and numerical errors.

    Examples
    --------
    Covariates kept with probability 0.7, else replaced by uniform reference draws:

    >>> rng = np.random.default_rng(0)
    >>> x = rng.uniform(0, 1, size=(2000, 1))
    >>> y = np.sin(3 * x[:, 0]) + 0.1 * rng.normal(size=2000)
    >>> z = np.where(rng.random((2000, 1)) < 0.7, x, rng.uniform(0, 1, size=(2000, 1)))
    >>> ref = KernelReference.uniform_grid([(0.0, 1.0)], m=256)
    >>> res = private_kernel_regression(y, z, alpha=0.7, reference=ref, bandwidth=0.1,
    ...                                 x_eval=np.array([[0.25], [0.5], [0.75]]))
    >>> res.predictions.shape, res.floored.tolist()
    ((3,), [False, False, False])
    >>> bool(np.all(np.abs(res.predictions - np.sin([0.75, 1.5, 2.25])) < 0.1))
    True
    >>> bool(np.all(np.abs(res.density - 1.0) < 0.15))  # deconvolved density of U(0, 1)
    True
    """

    predictions: FloatArray
    density: FloatArray
    floored: np.ndarray
    diagnostics: KernelDiagnostics


def scott_bandwidth(
    x: FloatArray,
    *,
    alpha: float = 1.0,
    reference: KernelReference | None = None,
    public: FloatArray | None = None,
) -> FloatArray:
    r"""Scott's rule :math:`h_j = \hat\sigma_j\, n^{-1/(d+4)}`, with private variances.

    The standard deviation of a private coordinate is estimated through
    :math:`Q_X^{-1}` (:math:`\widehat{E X^k} = (\overline{Z^k} - (1-\alpha)E_{\bar Q}X^k)/\alpha`);
    that of a public coordinate is the sample one. Public columns come first.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.random.default_rng(0).normal(size=(1000, 1))
    >>> round(float(scott_bandwidth(x)[0]), 2)
    0.25
    """
    x = np.asarray(x, dtype=float)
    n = x.shape[0]
    sds = []
    if public is not None:
        pub = np.asarray(public, dtype=float).reshape(n, -1)
        sds += list(pub.std(axis=0))
    for j in range(x.shape[1]):
        z = x[:, j]
        if alpha < 1.0 and reference is not None:
            w = reference.weights
            m1 = float(invert(z.mean(), w @ reference.x[:, j], alpha))
            m2 = float(invert((z**2).mean(), w @ reference.x[:, j] ** 2, alpha))
            var = m2 - m1**2
            sds.append(np.sqrt(var) if var > 0 else z.std())
        else:
            sds.append(z.std())
    sd = np.asarray(sds, dtype=float)
    sd = np.where(sd > 0, sd, 1.0)
    d = max(sd.size, 1)
    return sd * n ** (-1.0 / (d + 4))


# ----------------------------------------------------------------------------------------
# input handling
# ----------------------------------------------------------------------------------------
def _as2d(a: object, n: int, name: str, dtype: type = float) -> np.ndarray:
    if a is None:
        return np.zeros((n, 0), dtype=dtype)
    arr = np.asarray(a, dtype=dtype)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[0] != n:
        raise DataMismatchError(
            f"private_kernel_regression: {name} must have {n} rows; got shape {arr.shape}."
        )
    if dtype is float and not np.all(np.isfinite(arr)):
        raise DataMismatchError(f"private_kernel_regression: {name} holds NaN or inf values.")
    return arr


def _cells(codes: list[IntArray]) -> tuple[list[IntArray], int]:
    """Combine categorical codes (data, eval, ...) into one cell index each."""
    k = codes[0].shape[1]
    if k == 0:
        return [np.zeros(c.shape[0], dtype=np.int64) for c in codes], 1
    for c in codes:
        if c.size and c.min() < 0:
            raise DataMismatchError("private_kernel_regression: categorical codes must be >= 0.")
    sizes = tuple(
        int(max(int(c[:, j].max()) if c.shape[0] else 0 for c in codes)) + 1 for j in range(k)
    )
    return [np.ravel_multi_index(tuple(c.T), sizes).astype(np.int64) for c in codes], int(
        np.prod(sizes)
    )


def _monomials(D: int, kind: KernelKind) -> list[tuple[int, ...]]:
    if kind == "nw" or D == 0:
        return [(0,) * D]
    out = [(0,) * D]
    for j in range(D):
        out.append(tuple(int(i == j) for i in range(D)))
    for a, b in itertools.combinations_with_replacement(range(D), 2):
        e = [0] * D
        e[a] += 1
        e[b] += 1
        out.append(tuple(e))
    return out


# ----------------------------------------------------------------------------------------
# the two evaluation engines: both return deconvolution ingredients at the eval points
# ----------------------------------------------------------------------------------------
@dataclass
class _Design:
    y: FloatArray
    coords: FloatArray  # (n, D) public continuous first, then private continuous
    pub_cell: IntArray
    priv_cell: IntArray
    n_pub_cells: int
    n_priv_cells: int
    e_coords: FloatArray
    e_pub_cell: IntArray
    e_priv_cell: IntArray
    ref_x: FloatArray
    ref_cell: IntArray
    ref_w: FloatArray
    ref_rep: IntArray | None
    dv: int  # number of public continuous dims
    h: FloatArray
    kernel: KernelName


def _exact_terms(
    des: _Design, monos: list[tuple[int, ...]], need_t: int
) -> tuple[dict[str, FloatArray], float]:
    """Data, public and reference sums at the evaluation points by direct summation."""
    n, D, dv = des.y.size, des.coords.shape[1], des.dv
    ne = des.e_coords.shape[0]
    Q = len(monos)
    data1 = np.zeros((ne, Q))
    datay = np.zeros((ne, need_t))
    sq = np.zeros(ne)
    pub1 = np.zeros((ne, Q))
    puby = np.zeros((ne, need_t))
    ref = np.zeros((ne, Q))
    R = 0 if des.ref_rep is None else int(des.ref_rep.max()) + 1
    ref_reps = np.zeros((ne, R))
    M = des.ref_x.shape[0]
    step = max(1, _EXACT_BLOCK // max(n, M, 1))
    for s in range(0, ne, step):
        sl = slice(s, s + step)
        ec = des.e_coords[sl]
        # offsets (data - eval) / h per dimension, kernels per dimension
        off = des.coords[None, :, :] - ec[:, None, :]
        kd = _kernel(des.kernel, off / des.h) / des.h
        kpub = np.prod(kd[:, :, :dv], axis=2) * (des.pub_cell[None, :] == des.e_pub_cell[sl, None])
        kpriv = np.prod(kd[:, :, dv:], axis=2) * (
            des.priv_cell[None, :] == des.e_priv_cell[sl, None]
        )
        kall = kpub * kpriv
        sq[sl] = (kall**2).sum(axis=1) / n
        roff = des.ref_x[None, :, :] - ec[:, None, dv:]
        kr = np.prod(_kernel(des.kernel, roff / des.h[dv:]) / des.h[dv:], axis=2) * (
            des.ref_cell[None, :] == des.e_priv_cell[sl, None]
        )
        for q, e in enumerate(monos):
            pe = np.prod(off ** np.asarray(e), axis=2) if any(e) else 1.0
            w = kall * pe
            data1[sl, q] = w.sum(axis=1) / n
            pv = np.prod(off[:, :, :dv] ** np.asarray(e[:dv]), axis=2) if any(e[:dv]) else 1.0
            pub1[sl, q] = (kpub * pv).sum(axis=1) / n
            rv = np.prod(roff ** np.asarray(e[dv:]), axis=2) if any(e[dv:]) else 1.0
            ref[sl, q] = (kr * rv) @ des.ref_w
            if q < need_t:
                datay[sl, q] = w @ des.y / n
                puby[sl, q] = (kpub * pv) @ des.y / n
        if R:
            onehot = np.zeros((M, R))
            onehot[np.arange(M), des.ref_rep] = des.ref_w
            onehot /= onehot.sum(axis=0, keepdims=True)
            ref_reps[sl] = kr @ onehot
    del D
    terms = {"data1": data1, "datay": datay, "sq": sq, "pub1": pub1, "puby": puby, "ref": ref}
    return terms, _rep_error(ref_reps, pub1[:, 0]) if R else 0.0


def _rep_error(ref_reps: FloatArray, pub0: FloatArray) -> float:
    """QMC standard error of the reference part of the density term (absolute, max)."""
    se = ref_reps.std(axis=1, ddof=1) / np.sqrt(ref_reps.shape[1])
    return float(np.max(se * pub0)) if se.size else 0.0


def _grid_axes(des: _Design, grid_size: int | None) -> tuple[list[FloatArray], tuple[int, ...]]:
    D = des.coords.shape[1]
    G = grid_size if grid_size is not None else _GRID_BY_DIM.get(D, 16)
    axes = []
    for j in range(D):
        vals = [des.coords[:, j]]
        if j >= des.dv and des.ref_x.shape[0]:
            vals.append(des.ref_x[:, j - des.dv])
        lo = min(float(v.min()) for v in vals if v.size)
        hi = max(float(v.max()) for v in vals if v.size)
        if hi <= lo:
            hi = lo + des.h[j]
        axes.append(np.linspace(lo, hi, G))
    return axes, (G,) * D


def _bin_index(
    coords: FloatArray, axes: list[FloatArray]
) -> tuple[list[IntArray], list[FloatArray]]:
    """Lower grid index and fractional position of each point per dimension (clamped)."""
    lows, fracs = [], []
    for j, ax in enumerate(axes):
        G = ax.size
        t = (np.clip(coords[:, j], ax[0], ax[-1]) - ax[0]) / (ax[1] - ax[0])
        i0 = np.minimum(np.floor(t).astype(np.int64), G - 2)
        lows.append(i0)
        fracs.append(t - i0)
    return lows, fracs


def _corners(
    lows: list[IntArray], fracs: list[FloatArray], shape: tuple[int, ...], cell: IntArray
) -> tuple[IntArray, FloatArray]:
    """Flat indices and multilinear weights of the 2^d surrounding nodes, shape (2^d, n)."""
    D = len(lows)
    nodes = int(np.prod(shape)) if D else 1
    idx, wts = [], []
    for corner in itertools.product((0, 1), repeat=D):
        flat = cell * nodes
        w = np.ones(cell.size)
        stride = nodes
        for j, c in enumerate(corner):
            stride //= shape[j]
            flat = flat + (lows[j] + c) * stride
            w = w * (fracs[j] if c else 1.0 - fracs[j])
        idx.append(flat)
        wts.append(w)
    return np.array(idx), np.array(wts)


def _bin(
    idx: IntArray, wts: FloatArray, values: FloatArray, size: int, shape: tuple[int, ...]
) -> FloatArray:
    total = np.bincount(idx.ravel(), weights=(wts * values[None, :]).ravel(), minlength=size)
    return total.reshape((-1, *shape))


def _kernel_arrays(
    axes: list[FloatArray], h: FloatArray, kernel: KernelName, powers: int
) -> list[list[FloatArray]]:
    """Per dimension, kernel weights ``K_h(o) o^k`` on grid offsets, k = 0..powers (and K^2).

    Index ``idx`` holds the offset ``o = -(idx - L) delta`` so that a ``"same"``
    convolution sums ``w_j K_h(g_j - g_k)(g_j - g_k)^k`` at node ``k``.
    """
    out = []
    reach = _kernel_reach(kernel)
    for j, ax in enumerate(axes):
        delta = ax[1] - ax[0]
        L = min(int(np.ceil(reach * h[j] / delta)), ax.size - 1)
        o = -(np.arange(2 * L + 1) - L) * delta
        k = _kernel(kernel, o / h[j]) / h[j]
        out.append([k * o**p for p in range(powers + 1)] + [k * k])
    return out


def _conv(grid: FloatArray, kernels: list[FloatArray]) -> FloatArray:
    """Separable product-kernel convolution over the trailing axes (leading axis: cells)."""
    out = grid
    lead = grid.ndim - len(kernels)
    for j, k in enumerate(kernels):
        shape = [1] * grid.ndim
        shape[lead + j] = k.size
        out = fftconvolve(out, k.reshape(shape), mode="same", axes=lead + j)
    return out


def _binned_terms(
    des: _Design, monos: list[tuple[int, ...]], need_t: int, grid_size: int | None
) -> tuple[dict[str, FloatArray], float, tuple[int, ...]]:
    """The same sums as :func:`_exact_terms`, on a grid by linear binning + FFT."""
    n, D, dv = des.y.size, des.coords.shape[1], des.dv
    axes, shape = _grid_axes(des, grid_size)
    kern = _kernel_arrays(axes, des.h, des.kernel, 2 if any(any(e) for e in monos) else 0)
    P, C = des.n_pub_cells, des.n_priv_cells
    nodes = int(np.prod(shape)) if D else 1
    # data grids over (pub cell x priv cell, all dims)
    lo, fr = _bin_index(des.coords, axes)
    idx, wts = _corners(lo, fr, shape, des.pub_cell * C + des.priv_cell)
    g1 = _bin(idx, wts, np.full(n, 1.0 / n), P * C * nodes, shape)
    gy = _bin(idx, wts, des.y / n, P * C * nodes, shape)
    # public grids over (pub cell, public dims) and reference grids over (priv cell, priv dims)
    vshape, xshape = shape[:dv], shape[dv:]
    lo_v, fr_v = _bin_index(des.coords[:, :dv], axes[:dv])
    idx_v, w_v = _corners(lo_v, fr_v, vshape, des.pub_cell)
    nv = int(np.prod(vshape)) if dv else 1
    p1 = _bin(idx_v, w_v, np.full(n, 1.0 / n), P * nv, vshape)
    py = _bin(idx_v, w_v, des.y / n, P * nv, vshape)
    lo_x, fr_x = _bin_index(des.ref_x, axes[dv:])
    idx_x, w_x = _corners(lo_x, fr_x, xshape, des.ref_cell)
    nx = int(np.prod(xshape)) if D - dv else 1
    rg = _bin(idx_x, w_x, des.ref_w, C * nx, xshape)
    # evaluation corners
    elo, efr = _bin_index(des.e_coords, axes)
    e_idx, e_w = _corners(elo, efr, shape, des.e_pub_cell * C + des.e_priv_cell)
    elo_v, efr_v = _bin_index(des.e_coords[:, :dv], axes[:dv])
    ev_idx, ev_w = _corners(elo_v, efr_v, vshape, des.e_pub_cell)
    elo_x, efr_x = _bin_index(des.e_coords[:, dv:], axes[dv:])
    ex_idx, ex_w = _corners(elo_x, efr_x, xshape, des.e_priv_cell)

    def at(grid: FloatArray, ix: IntArray, w: FloatArray) -> FloatArray:
        return (grid.ravel()[ix] * w).sum(axis=0)

    ne = des.e_coords.shape[0]
    Q = len(monos)
    terms = {k: np.zeros((ne, Q)) for k in ("data1", "pub1", "ref")}
    terms["datay"] = np.zeros((ne, need_t))
    terms["puby"] = np.zeros((ne, need_t))
    for q, e in enumerate(monos):
        ks = [kern[j][e[j]] for j in range(D)]
        terms["data1"][:, q] = at(_conv(g1, ks), e_idx, e_w)
        terms["pub1"][:, q] = at(_conv(p1, ks[:dv]), ev_idx, ev_w)
        terms["ref"][:, q] = at(_conv(rg, ks[dv:]), ex_idx, ex_w)
        if q < need_t:
            terms["datay"][:, q] = at(_conv(gy, ks), e_idx, e_w)
            terms["puby"][:, q] = at(_conv(py, ks[:dv]), ev_idx, ev_w)
    terms["sq"] = at(_conv(g1, [kern[j][-1] for j in range(D)]), e_idx, e_w)
    err = 0.0
    if des.ref_rep is not None:
        R = int(des.ref_rep.max()) + 1
        reps = np.zeros((ne, R))
        k0 = [kern[j][0] for j in range(dv, D)]
        for r in range(R):
            sel = des.ref_rep == r
            wr = np.where(sel, des.ref_w, 0.0)
            wr = wr / wr.sum()
            reps[:, r] = at(_conv(_bin(idx_x, w_x, wr, C * nx, xshape), k0), ex_idx, ex_w)
        err = _rep_error(reps, terms["pub1"][:, 0])
    return terms, err, shape


# ----------------------------------------------------------------------------------------
# public function
# ----------------------------------------------------------------------------------------
def private_kernel_regression(
    y: FloatArray,
    x: FloatArray | None,
    *,
    alpha: float,
    reference: KernelReference,
    x_eval: FloatArray | None = None,
    x_cat: IntArray | None = None,
    x_cat_eval: IntArray | None = None,
    public: FloatArray | None = None,
    public_eval: FloatArray | None = None,
    public_cat: IntArray | None = None,
    public_cat_eval: IntArray | None = None,
    bandwidth: float | FloatArray | Literal["scott"] = "scott",
    kind: KernelKind = "nw",
    kernel: KernelName = "gaussian",
    method: KernelMethod = "binned",
    grid_size: int | None = None,
    floor_sd: float = 2.0,
    on_floor: FloorAction = "clip",
    warn: bool = True,
) -> KernelRegressionResult:
    r"""Private Nadaraya–Watson or local-linear regression of ``y`` on released covariates.

    The numerator and the denominator (and, for local linear, every entry of the local
    weighted least-squares system) are means of :math:`Q_X^{-1}` applied to whole
    kernel functions of the private coordinates, so each is unbiased for its true-data
    counterpart; the density term uses the reference-smoothed :math:`(K_h * \bar Q)(x)`
    (Kormos and van der Vaart, 2026, Example 11). Product kernels cover several continuous
    coordinates; categorical coordinates (private or public) enter by exact matching, as
    cells.

    Use it for a smooth regression of a public response on a few (d <= 3) continuous
    private covariates. Cost with ``method="binned"``: O(n 2^d + G log G) for ``G`` grid
    nodes, independent of the number of evaluation points (O(2^d) each).

    Parameters
    ----------
    y : ndarray of shape (n,)
        Public response.
    x : ndarray of shape (n, d_private) or None
        Released continuous private covariates :math:`Z`.
    alpha : float
        Keep probability of the mechanism, in (0, 1].
    reference : KernelReference
        Sample of :math:`\bar Q` over the same private coordinates (continuous and
        categorical codes).
    x_eval : ndarray of shape (n_eval, d_private), optional
        Where to predict; defaults to the released rows (then every ``*_eval`` argument
        defaults to its data counterpart).
    x_cat, x_cat_eval : ndarray of int, optional
        Codes of categorical private covariates (exact matching).
    public, public_eval : ndarray, optional
        Continuous public covariates (kernel-smoothed, not inverted).
    public_cat, public_cat_eval : ndarray of int, optional
        Codes of categorical public covariates, e.g. a treatment arm (exact matching).
    bandwidth : float, array of shape (d,) or "scott", default="scott"
        Bandwidth per continuous dimension (public ones first); a float applies to all.
        ``"scott"`` uses :func:`scott_bandwidth` with private variances; choose it by
        private cross-validation with :func:`privinfer.nuisance.private_cv_kernel`.
    kind : {"nw", "local_linear"}, default="nw"
        Local-constant or local-linear fit.
    kernel : {"gaussian", "epanechnikov"}, default="gaussian"
        Kernel of each continuous dimension.
    method : {"binned", "exact"}, default="binned"
        Linear binning + FFT, or direct O(n n_eval) summation.
    grid_size : int, optional
        Grid nodes per continuous dimension (default 2048, 256, 64, 24 for d = 1..4).
    floor_sd : float, default=2.0
        Denominators below ``floor_sd * (1 - alpha) * se(D)`` count as floored, and at
        any ``alpha`` those below ``1e-10`` of the largest (round-off level: a point more
        than five bandwidths from every row, where the ratio has no correct digit).
    on_floor : {"clip", "trim", "raise"}, default="clip"
        ``"clip"`` fills the missing mass with the private mean response,
        :math:`(\hat N + (f - \hat D)\hat{\bar y})/f`; ``"trim"`` returns NaN there;
        ``"raise"`` raises :class:`~privinfer.exceptions.SingularDesignError`.
    warn : bool, default=True
        Issue :class:`~privinfer.exceptions.DensityFloorWarning` when points were floored.

    Returns
    -------
    KernelRegressionResult
        Predictions, deconvolved denominators, floored mask and diagnostics.

    Raises
    ------
    ValueError
        If a bandwidth is not positive, ``alpha`` is outside (0, 1] or an option is
        unknown.
    DataMismatchError
        If array shapes disagree or values are not finite.
    SingularDesignError
        With ``on_floor="raise"`` when a denominator is floored, or when no denominator
        is positive at all.

    See Also
    --------
    private_cv_kernel : choose the bandwidth by private cross-validation.
    privinfer.inversion.invert : the operator :math:`Q_X^{-1}`.

    Notes
    -----
    With :math:`\kappa_h(v, x; V, X) = K_h(v - V) K_h(x - X)` and monomials
    :math:`(\cdot - x)^e`,

    .. math::

        \hat S_e(v, x) = \frac{1}{\alpha}\Big(\frac1n\sum_i \kappa_h (U_i - u)^e
            - (1-\alpha)\Big[\frac1n\sum_i K_h(v - V_i)(V_i - v)^{e_V}\Big]
              \int K_h(x - t)(t - x)^{e_X}\bar Q(dt)\Big),

    with :math:`U = (V, Z)`; :math:`\hat\mu_{NW} = \hat T_0/\hat S_0` and the local-linear
    fit is the intercept of :math:`\hat S\beta = \hat T`. Its error is
    :math:`O_P(\alpha^{-2}(nh^d)^{-1} + h^{2\beta})` (Kormos and van der Vaart, 2026, Example 11).
    The denominator's standard error is
    :math:`\widehat{se} = \alpha^{-1}\{(\overline{\kappa_h^2} - \overline{\kappa_h}^2)/n\}^{1/2}`.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> n = 4000
    >>> x = rng.uniform(0, 1, size=(n, 1))
    >>> y = np.sin(3 * x[:, 0]) + 0.1 * rng.normal(size=n)
    >>> keep = rng.random(n) < 0.7
    >>> z = np.where(keep[:, None], x, rng.uniform(0, 1, size=(n, 1)))
    >>> ref = KernelReference.uniform_grid([(0.0, 1.0)], m=512)
    >>> res = private_kernel_regression(y, z, alpha=0.7, reference=ref, bandwidth=0.08,
    ...                                 x_eval=np.array([[0.5]]))
    >>> bool(abs(res.predictions[0] - np.sin(1.5)) < 0.1)
    True
    """
    owner = "private_kernel_regression"
    alpha = check_alpha(alpha, owner)
    floor_sd, grid_size = _check_kernel_options(
        kind, kernel, method, on_floor, floor_sd, grid_size, owner
    )
    y = np.asarray(y, dtype=float).ravel()
    n = y.size
    if n == 0 or not np.all(np.isfinite(y)):
        raise DataMismatchError(f"{owner}: y must be a non-empty finite array.")
    (xx, pub, xc, pc), (ex, epub, exc, epc) = _covariate_arrays(
        n,
        (x, public, x_cat, public_cat),
        x_eval,
        (public_eval, x_cat_eval, public_cat_eval),
        owner,
    )
    ref_x = np.asarray(reference.x, dtype=float).reshape(len(reference.weights), -1)
    if ref_x.shape[1] != xx.shape[1]:
        raise DataMismatchError(
            f"{owner}: the reference has {ref_x.shape[1]} continuous column(s), x has "
            f"{xx.shape[1]}."
        )
    ref_c = _as2d(reference.cat, ref_x.shape[0], "reference.cat", np.int64)
    if ref_c.shape[1] != xc.shape[1]:
        raise DataMismatchError(f"{owner}: reference.cat and x_cat have different widths.")
    (pcell, epcell), P = _cells([pc, epc])
    (xcell, excell, rcell), C = _cells([xc, exc, ref_c])
    coords = np.hstack([pub, xx])
    e_coords = np.hstack([epub, ex])
    D, dv = coords.shape[1], pub.shape[1]
    h = _kernel_bandwidth(bandwidth, xx, pub if dv else None, alpha, reference, D, owner)
    des = _Design(
        y, coords, pcell, xcell, P, C, e_coords, epcell, excell, ref_x, rcell,
        np.asarray(reference.weights, dtype=float), reference.replicate, dv, h, kernel,
    )  # fmt: skip
    monos = _monomials(D, kind)
    need_t = 1 + (D if kind == "local_linear" else 0)
    if method == "exact":
        terms, ref_err = _exact_terms(des, monos, need_t)
        grid_shape: tuple[int, ...] = ()
    else:
        terms, ref_err, grid_shape = _binned_terms(des, monos, need_t, grid_size)
    pred, dens, floored, n_fallback = _deconvolved_predictions(
        terms, y, alpha, floor_sd, on_floor, kind, monos, D, h, need_t, owner
    )
    n_floored = int(floored.sum())
    if n_floored and warn:
        warnings.warn(
            f"{owner}: {n_floored} of {dens.size} evaluation point(s) "
            f"({n_floored / dens.size:.1%}) had a deconvolved denominator below its floor "
            f"(smallest {dens.min():.3g}); predictions there were "
            f"{'trimmed (NaN)' if on_floor == 'trim' else 'floored'}. Recorded in diagnostics.",
            DensityFloorWarning,
            stacklevel=2,
        )
    peak = float(np.max(dens))
    diag = KernelDiagnostics(
        kind=kind,
        kernel=kernel,
        method=method,
        bandwidth=tuple(float(v) for v in h),
        grid_shape=grid_shape,
        n_floored=n_floored,
        share_floored=n_floored / dens.size if dens.size else 0.0,
        min_density=float(dens.min()) if dens.size else float("nan"),
        n_fallback=n_fallback,
        reference_error=(1.0 - alpha) / alpha * ref_err / peak if peak > 0 else 0.0,
    )
    return KernelRegressionResult(pred, dens, floored, diag)


def _check_kernel_options(
    kind: str,
    kernel: str,
    method: str,
    on_floor: str,
    floor_sd: float,
    grid_size: int | None,
    owner: str,
) -> tuple[float, int | None]:
    """Validate the string options, the floor and the grid size of the kernel regression."""
    if kind not in ("nw", "local_linear"):
        raise ValueError(f"{owner}: kind must be 'nw' or 'local_linear'; got {kind!r}.")
    if kernel not in ("gaussian", "epanechnikov"):
        raise ValueError(f"{owner}: kernel must be 'gaussian' or 'epanechnikov'; got {kernel!r}.")
    if method not in ("binned", "exact"):
        raise ValueError(f"{owner}: method must be 'binned' or 'exact'; got {method!r}.")
    if on_floor not in ("clip", "trim", "raise"):
        raise ValueError(f"{owner}: on_floor must be 'clip', 'trim' or 'raise'; got {on_floor!r}.")
    floor_sd = check_in_interval(floor_sd, "floor_sd", owner, 0.0, np.inf)
    if grid_size is not None:
        grid_size = check_int(grid_size, "grid_size", owner, 8)
    return floor_sd, grid_size


def _covariate_arrays(
    n: int,
    data: tuple[object, object, object, object],
    x_eval: object,
    evals: tuple[object, object, object],
    owner: str,
) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
    """Covariate arrays ``(x, public, x_cat, public_cat)`` of the data and evaluation points.

    The evaluation points are the data themselves when ``x_eval`` is None; widths must match.
    """
    x, public, x_cat, public_cat = data
    public_eval, x_cat_eval, public_cat_eval = evals
    xx = _as2d(x, n, "x")
    pub = _as2d(public, n, "public")
    xc = _as2d(x_cat, n, "x_cat", np.int64)
    pc = _as2d(public_cat, n, "public_cat", np.int64)
    if x_eval is None:
        ex, epub, exc, epc = xx, pub, xc, pc
    else:
        ex = np.asarray(x_eval, dtype=float)
        ex = ex[:, None] if ex.ndim == 1 else ex
        ne = ex.shape[0]
        ex = _as2d(ex, ne, "x_eval")
        epub = _as2d(public_eval if public_eval is not None else None, ne, "public_eval")
        exc = _as2d(x_cat_eval, ne, "x_cat_eval", np.int64)
        epc = _as2d(public_cat_eval, ne, "public_cat_eval", np.int64)
    for a, b, name in (
        (xx, ex, "x"),
        (pub, epub, "public"),
        (xc, exc, "x_cat"),
        (pc, epc, "public_cat"),
    ):
        if a.shape[1] != b.shape[1]:
            raise DataMismatchError(
                f"{owner}: {name} has {a.shape[1]} column(s) but its evaluation counterpart "
                f"{b.shape[1]}."
            )
    return (xx, pub, xc, pc), (ex, epub, exc, epc)


def _kernel_bandwidth(
    bandwidth: object,
    xx: FloatArray,
    pub: FloatArray | None,
    alpha: float,
    reference: KernelReference,
    D: int,
    owner: str,
) -> FloatArray:
    """One bandwidth per continuous dimension (public first): given, or Scott's rule."""
    if isinstance(bandwidth, str):
        if bandwidth != "scott":
            raise ValueError(f"{owner}: bandwidth must be positive or 'scott'; got {bandwidth!r}.")
        return scott_bandwidth(xx, alpha=alpha, reference=reference, public=pub)
    if isinstance(bandwidth, bool) or (np.ndim(bandwidth) > 0 and np.size(bandwidth) != D):
        raise ValueError(
            f"{owner}: bandwidth must be a float or have {D} entries (one per continuous "
            f"dimension, public first); got {bandwidth!r}."
        )
    h = np.broadcast_to(np.asarray(bandwidth, dtype=float), (D,)).copy()
    if np.any(~np.isfinite(h)) or np.any(h <= 0) or isinstance(bandwidth, bool):
        raise ValueError(
            f"The 'bandwidth' parameter of {owner} must be positive and finite. "
            f"Got {bandwidth!r} instead."
        )
    return h


def _deconvolved_predictions(
    terms: dict[str, FloatArray],
    y: FloatArray,
    alpha: float,
    floor_sd: float,
    on_floor: str,
    kind: str,
    monos: list[tuple[int, ...]],
    D: int,
    h: FloatArray,
    need_t: int,
    owner: str,
) -> tuple[FloatArray, FloatArray, np.ndarray, int]:
    """Deconvolve the kernel sums, floor small denominators, and predict.

    Returns predictions, deconvolved denominators, the floored mask and the number of
    local-linear fallbacks to Nadaraya-Watson.
    """
    n = y.size
    # deconvolve: (data - (1 - alpha) * public * reference) / alpha
    S = invert(terms["data1"], terms["pub1"] * terms["ref"], alpha)
    T = invert(terms["datay"], terms["puby"] * terms["ref"][:, :need_t], alpha)
    dens = S[:, 0]
    if np.all(dens <= 0):
        raise SingularDesignError(
            f"{owner}: no deconvolved kernel denominator is positive; increase the bandwidth "
            "(or check that the reference matches the mechanism)."
        )
    raw0 = terms["data1"][:, 0]
    se = np.sqrt(np.maximum(terms["sq"] - raw0**2, 0.0) / n) / alpha
    # the statistical floor (none at alpha = 1), and a numerical one: a denominator below
    # _NUMERIC_FLOOR of the largest is at the round-off level of the binned sums (a point
    # many bandwidths from every row), where the ratio T / S would be noise
    floor = np.maximum(floor_sd * (1.0 - alpha) * se, _NUMERIC_FLOOR * float(np.max(dens)))
    floored = dens <= floor
    n_floored = int(floored.sum())
    if n_floored and on_floor == "raise":
        raise SingularDesignError(
            f"{owner}: {n_floored} of {dens.size} deconvolved denominators are below their floor "
            f"(smallest {dens.min():.3g}); increase the bandwidth or use on_floor='clip'."
        )
    # fill value of floored points: the public kernel mean of y in the same public cell
    # (a regression on the public covariates alone; never inverted)
    p0 = terms["pub1"][:, 0]
    ybar = np.where(p0 > 0, terms["puby"][:, 0] / np.where(p0 > 0, p0, 1.0), float(y.mean()))
    nw = np.where(
        floored, (T[:, 0] + (floor - dens) * ybar) / floor, T[:, 0] / np.where(floored, 1.0, dens)
    )
    pred = nw
    n_fallback = 0
    if kind == "local_linear" and D:
        pred, n_fallback = _local_linear(S, T, monos, D, h, nw, floored)
    if on_floor == "trim":
        pred = np.where(floored, np.nan, pred)
    return pred, dens, floored, n_fallback


def _local_linear(
    S: FloatArray,
    T: FloatArray,
    monos: list[tuple[int, ...]],
    D: int,
    h: FloatArray,
    nw: FloatArray,
    floored: np.ndarray,
) -> tuple[FloatArray, int]:
    r"""Intercept of the local weighted least squares, from deconvolved moments.

    Centred form: with weights normalised by :math:`S_0`, slope
    :math:`b = C^{-1}(T_1/S_0 - \bar u\,\hat\mu_{NW})`, :math:`C = S_2/S_0 - \bar u\bar u'`,
    :math:`\bar u = S_1/S_0`; intercept :math:`\hat\mu_{NW} - \bar u' b`.
    """
    pos = {e: q for q, e in enumerate(monos)}
    ne = S.shape[0]
    s0 = np.where(floored | (S[:, 0] <= 0), 1.0, S[:, 0])
    ubar = (
        np.stack([S[:, pos[tuple(int(i == j) for i in range(D))]] for j in range(D)], axis=1)
        / s0[:, None]
    )
    Cm = np.empty((ne, D, D))
    for a in range(D):
        for b in range(D):
            e = [0] * D
            e[a] += 1
            e[b] += 1
            Cm[:, a, b] = S[:, pos[tuple(e)]] / s0 - ubar[:, a] * ubar[:, b]
    rhs = T[:, 1 : 1 + D] / s0[:, None] - ubar * nw[:, None]
    scale = h * h
    lam_min = np.linalg.eigvalsh(Cm / np.sqrt(np.outer(scale, scale))[None]).min(axis=1)
    ok = (~floored) & (lam_min > _LL_VAR_FLOOR)
    out = nw.copy()
    if np.any(ok):
        b = np.linalg.solve(Cm[ok], rhs[ok][:, :, None])[:, :, 0]
        out[ok] = nw[ok] - np.einsum("ij,ij->i", ubar[ok], b)
    return out, int(np.sum(~ok & ~floored))

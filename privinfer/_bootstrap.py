r"""Multiplier bootstrap of t statistics and the Romano-Wolf step-down, on influence values.

The arithmetic behind :meth:`privinfer.results.PrivateResults.bootstrap` and
:meth:`~privinfer.results.PrivateResults.p_adjust`: no re-estimation, only the transformed
influence values :math:`\varphi_i` reweighted by mean-zero, unit-variance multipliers
(DoubleML's ``bootstrap`` and ``p_adjust``).
"""

from __future__ import annotations

import math
import warnings
from typing import Literal

import numpy as np
from tqdm.auto import tqdm

from privinfer._typing import FloatArray, IntArray
from privinfer.covariance import cluster_sums
from privinfer.exceptions import FewBootstrapDrawsWarning

__all__ = [
    "BOOT_METHODS",
    "MIN_TAIL_DRAWS",
    "BootstrapMethod",
    "multiplier_t_stats",
    "romano_wolf",
    "warn_few_draws",
]

BootstrapMethod = Literal["normal", "bayes", "wild"]
BOOT_METHODS = ("normal", "bayes", "wild")
#: Bootstrap draws generated per block (memory: block x units multipliers).
_BOOT_BLOCK = 100
#: Fewest draws beyond the 1 - level quantile of a bootstrap quantity (sup-t critical
#: value, Romano-Wolf p-value) before :class:`FewBootstrapDrawsWarning` fires.
MIN_TAIL_DRAWS = 10


def warn_few_draws(n_boot: int, level: float, what: str, detail: str, *, stacklevel: int) -> None:
    """Warn when fewer than :data:`MIN_TAIL_DRAWS` of ``n_boot`` draws lie beyond ``1 - level``.

    Parameters
    ----------
    n_boot : int
        Number of bootstrap draws.
    level : float
        Tail probability the quantity resolves (``alpha`` of a joint interval).
    what : str
        The caller, named in the message.
    detail : str
        What the few draws do to the caller's result (a clause of the message).
    stacklevel : int
        Passed to :func:`warnings.warn` (point it at the user's line).

    Warns
    -----
    FewBootstrapDrawsWarning
        ``n_boot * level < MIN_TAIL_DRAWS``; the message names the ``n_boot`` needed.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as rec:
    ...     warnings.simplefilter("always")
    ...     warn_few_draws(1000, 0.05, "demo", "its quantile is noisy", stacklevel=2)
    ...     warn_few_draws(100, 0.05, "demo", "its quantile is noisy", stacklevel=2)
    >>> [str(w.message).split(",")[0] for w in rec]
    ['demo: 100 bootstrap draws put n_boot x 0.05 = 5 draws beyond the 95% quantile']
    """
    tail = n_boot * level
    if tail >= MIN_TAIL_DRAWS - 1e-9:
        return
    needed = math.ceil(MIN_TAIL_DRAWS / level - 1e-9)
    warnings.warn(
        f"{what}: {n_boot} bootstrap draws put n_boot x {level:g} = {tail:g} draws beyond the "
        f"{100 * (1 - level):g}% quantile, fewer than {MIN_TAIL_DRAWS}: {detail}. Rerun "
        f"results.bootstrap(n_boot=...) with n_boot >= {needed}.",
        FewBootstrapDrawsWarning,
        stacklevel=stacklevel + 1,
    )


def _multipliers(method: str, size: tuple[int, int], rng: np.random.Generator) -> FloatArray:
    """Mean-zero, unit-variance bootstrap multipliers (DoubleML's three choices)."""
    if method == "normal":
        return rng.standard_normal(size)
    if method == "bayes":
        return rng.exponential(1.0, size) - 1.0
    u = rng.standard_normal(size)
    v = rng.standard_normal(size)
    return u / np.sqrt(2.0) + (v**2 - 1.0) / 2.0


def multiplier_t_stats(
    phi: FloatArray,
    clusters: IntArray | None,
    se: FloatArray,
    method: str,
    n_boot: int,
    rng: np.random.Generator,
    *,
    progress: bool = False,
) -> tuple[FloatArray, str]:
    r"""Draws :math:`t^*_{bj} = \sum_u \xi_{bu} S_{uj} / (n\,\widehat{se}_j)` and their units.

    The units :math:`u` are the rows (:math:`S_u = \varphi_u`), the clusters
    (:math:`S_u` the within-cluster sums) or, for two cluster columns, both dimensions
    with one set of multipliers each, added. Draws are made in blocks of 100 (memory
    O(block x units)); a zero standard error gives t statistics of zero.

    Returns
    -------
    t_stats : ndarray of shape (n_boot, p)
    units : str
        ``"rows"``, ``"clusters"`` or ``"two-way clusters"``.

    Examples
    --------
    >>> import numpy as np
    >>> phi = np.array([[1.0], [-1.0], [1.0], [-1.0]])
    >>> t, units = multiplier_t_stats(phi, None, np.array([0.5]), "normal", 3,
    ...                               np.random.default_rng(0))
    >>> t.shape, units
    ((3, 1), 'rows')
    """
    n, p = phi.shape
    if clusters is None:
        blocks, units = [phi], "rows"
    elif clusters.ndim == 1:
        blocks, units = [cluster_sums(phi, clusters)], "clusters"
    else:
        blocks = [cluster_sums(phi, clusters[:, 0]), cluster_sums(phi, clusters[:, 1])]
        units = "two-way clusters"
    denom = n * np.where(se > 0, se, np.inf)
    t_stats = np.empty((n_boot, p))
    starts = range(0, n_boot, _BOOT_BLOCK)
    for start in tqdm(starts, disable=not progress, desc="bootstrap"):
        size = min(_BOOT_BLOCK, n_boot - start)
        acc = np.zeros((size, p))
        for S in blocks:
            acc += _multipliers(method, (size, S.shape[0]), rng) @ S
        t_stats[start : start + size] = acc / denom
    return t_stats, units


def romano_wolf(t_abs: FloatArray, boot_abs: FloatArray) -> FloatArray:
    r"""Romano and Wolf (2005) step-down p-values from bootstrap draws of :math:`|t|`.

    With the statistics sorted so that :math:`|t_{(1)}| \ge |t_{(2)}| \ge \dots`, the
    :math:`k`-th p-value is the share of draws with :math:`\max_{j \ge k}|t^*_{(j)}| \ge
    |t_{(k)}|`, made monotone by a running maximum.

    Parameters
    ----------
    t_abs : ndarray of shape (p,)
        Absolute t statistics.
    boot_abs : ndarray of shape (n_boot, p)
        Absolute bootstrap draws of the t statistics.

    Returns
    -------
    ndarray of shape (p,)
        Adjusted p-values, in the order of ``t_abs``.

    Examples
    --------
    >>> import numpy as np
    >>> boot = np.abs(np.random.default_rng(0).standard_normal((1000, 2)))
    >>> adj = romano_wolf(np.array([3.0, 0.1]), boot)
    >>> bool(adj[0] < 0.05), bool(adj[1] > 0.5)
    (True, True)
    """
    order = np.argsort(-t_abs)
    p_step = np.empty(t_abs.size)
    for i in range(t_abs.size):
        rest = boot_abs[:, order[i:]]
        p_step[i] = min(1.0, float(np.mean(rest.max(axis=1) >= t_abs[order[i]])))
    p_step = np.maximum.accumulate(p_step)
    adj = np.empty_like(p_step)
    adj[order] = p_step
    return adj

"""How many threads the BLAS library may use inside a fit.

The treatment models spend their time in many small dense products: row blocks of a
few thousand rows times a basis of at most a few hundred functions, and thousands of
LAPACK calls (private CV over sieves and ridges, the fold-block bootstrap) on matrices of
at most a few hundred rows. A multithreaded BLAS gains little on such sizes and loses a
great deal when its threads compete with other work for the cores: on a shared two-core
machine, a ``231 x 231`` symmetric eigendecomposition took 4 times as long, the nuisance
stage of one fit 1.6 s against 0.09 s, and whole fits 5 to 20 times as long, with two
BLAS threads as with one. Parallel work belongs one level up (Dask partitions, one task
per core), so a fit caps the BLAS at :data:`FIT_BLAS_THREADS` threads while it runs
(:func:`blas_threads`) and restores the previous setting afterwards;
:func:`small_matrix_blas` caps a block of small-matrix work at one thread.

The caps use ``threadpoolctl`` when it is installed (it comes with scikit-learn);
without it the BLAS keeps its own setting.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextlib import AbstractContextManager, nullcontext
from typing import Any

__all__ = ["FIT_BLAS_THREADS", "blas_threads", "small_matrix_blas"]

#: BLAS threads during a fit of the treatment models.
FIT_BLAS_THREADS = 1


@contextlib.contextmanager
def blas_threads(limit: int | None = FIT_BLAS_THREADS) -> Iterator[None]:
    """Cap the BLAS library's threads at ``limit`` inside the block (``None``: no cap).

    The limit is process-wide (BLAS libraries have one thread pool), so it also holds in
    the worker threads of Dask's threaded scheduler, where every task then uses one core.

    Examples
    --------
    >>> import numpy as np
    >>> with blas_threads(1):
    ...     float((np.eye(3) @ np.ones(3)).sum())
    3.0
    """
    if limit is None:
        yield
        return
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl ships with scikit-learn
        yield
        return
    with threadpool_limits(limits=limit, user_api="blas"):
        yield


def small_matrix_blas() -> AbstractContextManager[Any]:
    """A context in which BLAS uses one thread (a no-op without ``threadpoolctl``).

    Examples
    --------
    >>> import numpy as np
    >>> with small_matrix_blas():
    ...     float(np.linalg.eigvalsh(np.eye(2))[0])
    1.0
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl is a dependency
        return nullcontext()
    return threadpool_limits(limits=1, user_api="blas")

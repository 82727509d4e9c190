"""How many threads the BLAS library may use inside a fit.

The treatment models spend their time in many small dense products: row blocks of a
few thousand rows times a basis of at most a few hundred functions, and
eigendecompositions of ``J x J`` matrices with ``J`` in the hundreds. A multithreaded
BLAS gains little on such sizes and loses a great deal when its threads compete with
other work for the cores: on a shared two-core machine, a ``231 x 231`` symmetric
eigendecomposition took 4 times as long, and a loaded machine made whole fits 20 times
slower, with two BLAS threads as with one. Parallel work belongs one level up (Dask
partitions, one task per core), so a fit caps the BLAS at :data:`FIT_BLAS_THREADS`
threads while it runs and restores the previous setting afterwards.

The cap uses ``threadpoolctl`` when it is installed (it comes with scikit-learn);
without it the BLAS keeps its own setting.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

__all__ = ["FIT_BLAS_THREADS", "blas_threads"]

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

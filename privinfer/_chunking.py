"""Row chunks: the one place that bounds the temporaries of a pass over the data.

Estimators visit rows in chunks so that memory beyond the data stays O(chunk x columns)
whatever ``n``. A chunk holds about :data:`CHUNK_CELLS` cells (rows x columns): small
temporaries stay in the allocator's reuse pool and in cache (chunks of 80 MB were five
times slower, from page faults), and at least 1024 rows keep BLAS calls efficient.
"""

from __future__ import annotations

import numpy as np

from privinfer._typing import IntArray

__all__ = ["CHUNK_CELLS", "chunk_size", "row_chunks"]

#: Cells (rows x columns) of one chunk: about 4 MB of float64.
CHUNK_CELLS = 1 << 19
#: Fewest rows of a chunk.
MIN_CHUNK_ROWS = 1024


def chunk_size(n_cols: int) -> int:
    """Rows per chunk for ``n_cols`` columns.

    Examples
    --------
    >>> chunk_size(1 << 10)
    1024
    """
    return max(MIN_CHUNK_ROWS, CHUNK_CELLS // max(n_cols, 1))


def row_chunks(rows: IntArray | int, n_cols: int) -> list[IntArray] | list[slice]:
    """Split row indices (an index array) or ``range(n)`` (an int) into chunks.

    Returns index arrays for an index array and slices for an int.

    Examples
    --------
    >>> import numpy as np
    >>> [c.size for c in row_chunks(np.arange(2500), 1 << 10)]
    [1024, 1024, 452]
    >>> row_chunks(3, 1)
    [slice(0, 3, None)]
    """
    size = chunk_size(n_cols)
    if isinstance(rows, (int, np.integer)):
        n = int(rows)
        return [slice(s, min(s + size, n)) for s in range(0, n, size)]
    return [rows[s : s + size] for s in range(0, rows.size, size)]

"""Cost of accepting polars / PyArrow input: one conversion to pandas at the entry point.

n = 1e6 rows, 5 float columns and one categorical. The figure to compare with is the
time of a model fit on the same rows (seconds, see ``speed_ate.py``): the conversion is
a fraction of it. Usage: ``python benchmarks/speed_frames.py [--quick]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa

# this checkout's privinfer ahead of any installed copy
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from privinfer._frames import as_pandas


def best_of(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    n = 100_000 if args.quick else 1_000_000
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({f"x{j}": rng.normal(size=n) for j in range(5)})
    frame["g"] = pd.Categorical(rng.choice(["a", "b", "c"], size=n))
    polars_frame = pl.from_pandas(frame)
    arrow_table = pa.Table.from_pandas(frame, preserve_index=False)
    t_pandas = best_of(lambda: as_pandas(frame, "bench"), 5)
    t_polars = best_of(lambda: as_pandas(polars_frame, "bench"), 3)
    t_lazy = best_of(lambda: as_pandas(polars_frame.lazy(), "bench"), 3)
    t_arrow = best_of(lambda: as_pandas(arrow_table, "bench"), 3)
    t_copy = best_of(lambda: frame.copy(), 3)
    print(f"n = {n:,} rows, 5 float + 1 categorical columns")
    print(f"pandas (pass-through) : {t_pandas * 1e6:8.1f} us")
    print(f"polars DataFrame      : {t_polars:8.3f} s  ({t_polars / t_copy:.1f} x a pandas copy)")
    print(f"polars LazyFrame      : {t_lazy:8.3f} s")
    print(f"pyarrow Table         : {t_arrow:8.3f} s")
    print(f"pandas .copy() (ref.) : {t_copy:8.3f} s")


if __name__ == "__main__":
    main()

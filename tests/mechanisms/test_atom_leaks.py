"""Private data with atoms (a grid, a spike) under a continuous reference: the kept rows
show, and privatize says so (AtomLeakWarning)."""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import privinfer as pi
from privinfer.exceptions import AtomLeakWarning
from privinfer.mechanisms._atoms import (
    atom_stats,
    describe_atoms,
    grid_step,
    merge_stats,
    tied_share,
)


def _raw(n=400, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "age": rng.integers(18, 66, n).astype(float),
        "earn": np.where(rng.random(n) < 0.4, 0.0, rng.exponential(2.0, n)),
        "u": rng.uniform(18, 65, n),
        "y": rng.normal(size=n),
    })


def test_whole_numbers_under_a_uniform_reference_warn_and_really_show_the_kept_rows():
    raw = _raw()
    mech = pi.AlphaIdentity(0.5, {"age": pi.reference.Uniform(18, 65)})
    with pytest.warns(AtomLeakWarning, match=r"'age' \(multiples of 1\)"):
        released = mech.privatize(raw, public=["y"], random_state=None, shuffle=False)
    # the attack the warning describes: whole released values are exactly the kept ones
    on_grid = (released["age"] == np.round(released["age"])).to_numpy()
    kept = released["age"].to_numpy() == raw["age"].to_numpy()
    assert np.array_equal(on_grid, kept)
    assert 0.3 < on_grid.mean() < 0.7


def test_a_spike_under_a_continuous_reference_warns_with_its_share():
    raw = _raw()
    mech = pi.AlphaIdentity(0.5, {"earn": pi.reference.Frozen(stats.expon(scale=2.0))})
    spike = r"'earn' \(3\d% of rows on repeated values such as 0\)"
    with pytest.warns(AtomLeakWarning, match=spike):
        mech.privatize(raw, public=["y"], random_state=None)


@pytest.mark.parametrize(
    "reference, column, alpha",
    [
        (pi.reference.Uniform(18, 65), "u", 0.5),  # continuous data: no atoms
        (pi.reference.Frozen(stats.randint(18, 66)), "age", 0.5),  # the same grid
        (pi.reference.Uniform(18, 65), "age", 1.0),  # nothing is replaced
    ],
)
def test_no_warning_where_the_reference_has_the_data_atoms_or_nothing_is_replaced(
    reference, column, alpha
):
    raw = _raw()
    mech = pi.AlphaIdentity(alpha, {column: reference})
    with warnings.catch_warnings():
        warnings.simplefilter("error", AtomLeakWarning)
        mech.privatize(raw, public=["y"], random_state=None)


def test_grid_and_ties_are_measured():
    assert grid_step(np.array([1.5, 2.0, 3.25])) == 0.01
    assert grid_step(np.array([1.0, 2.0, np.pi])) is None
    share, top = tied_share(np.array([0.0, 0.0, 1.0, 2.0]))
    assert (share, top) == (0.5, 0.0)


def test_single_precision_values_warn_unless_the_column_is_float32():
    """Values read from 32-bit floats and stored as doubles survive a float32 round trip;
    double-precision draws do not, so the kept rows show. A float32 column is released as
    float32 (its draws rounded alike): no leak, no warning."""
    rng = np.random.default_rng(3)
    x = rng.uniform(0.0, 50.0, 300).astype(np.float32)
    raw = pd.DataFrame({"earn": x.astype(float), "y": rng.normal(size=300)})
    mech = pi.AlphaIdentity(0.5, {"earn": pi.reference.Uniform(0, 50)})
    with pytest.warns(AtomLeakWarning, match=r"'earn' \(single-precision floats\)"):
        released = mech.privatize(raw, public=["y"], random_state=None, shuffle=False)
    v = released["earn"].to_numpy()
    kept = v == raw["earn"].to_numpy()
    assert np.array_equal(v.astype(np.float32).astype(float) == v, kept)
    with warnings.catch_warnings():
        warnings.simplefilter("error", AtomLeakWarning)
        out = mech.privatize(raw.astype({"earn": "float32"}), public=["y"], random_state=None)
    assert out["earn"].dtype == np.float32


# -- Dask: the same rule, in the eager validation pass ---------------------------------
def _dask_raw(zeros=(8, 3, 3), rows=400, seed=1):
    """Three partitions of ``rows`` rows; partition i holds ``zeros[i]`` zero earnings."""
    rng = np.random.default_rng(seed)
    n = 3 * rows
    earn = rng.exponential(2.0, n)
    for i, k in enumerate(zeros):
        earn[i * rows : i * rows + k] = 0.0
    return pd.DataFrame({
        "age": rng.integers(18, 66, n).astype(float),
        "earn": earn,
        "u": rng.uniform(18, 65, n),
        "f32": rng.uniform(0.0, 50.0, n).astype(np.float32).astype(float),
        "y": rng.normal(size=n),
    })


def _atom_warnings(mech, data):
    """The AtomLeakWarnings of privatising ``data`` (kept in full), and the release."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = mech.privatize(data, public=["y"], random_state=None)
    return [w for w in caught if issubclass(w.category, AtomLeakWarning)], out


def _dask(raw):
    dd = pytest.importorskip("dask.dataframe")
    ddf = dd.from_pandas(raw, npartitions=3)
    assert ddf.map_partitions(len).compute().tolist() == [len(raw) // 3] * 3
    return ddf


def test_dask_whole_numbers_warn_once_at_the_users_line_and_not_again_at_compute():
    raw = _dask_raw()
    mech = pi.AlphaIdentity(0.5, {"age": pi.reference.Uniform(18, 65)})
    caught, out = _atom_warnings(mech, _dask(raw))
    assert len(caught) == 1 and "'age' (multiples of 1)" in str(caught[0].message)
    assert caught[0].filename == __file__  # the user's line, not privinfer's
    with warnings.catch_warnings():
        warnings.simplefilter("error", AtomLeakWarning)  # no warning per partition
        released = out.compute()
    assert len(released) == len(raw)


@pytest.mark.parametrize(
    "column, reference, dtype, alpha, zeros, named",
    [
        ("age", pi.reference.Uniform(18, 65), None, 0.5, (8, 3, 3), "'age' (multiples of 1)"),
        # 14 zeros in 1200 rows (2%, 0.75%, 0.75% of the partitions): 1.2% over all of them
        ("earn", pi.reference.Frozen(stats.expon(scale=2.0)), None, 0.5, (8, 3, 3),
         "'earn' (1% of rows on repeated values such as 0)"),
        ("f32", pi.reference.Uniform(0, 50), None, 0.5, (8, 3, 3),
         "'f32' (single-precision floats)"),
        # 0.5% zeros in every partition are 0.5% of all rows: below the 1% of the rule
        ("earn", pi.reference.Frozen(stats.expon(scale=2.0)), None, 0.5, (2, 2, 2), None),
        ("u", pi.reference.Uniform(18, 65), None, 0.5, (8, 3, 3), None),
        ("f32", pi.reference.Uniform(0, 50), "float32", 0.5, (8, 3, 3), None),
        ("age", pi.reference.Uniform(18, 65), None, 1.0, (8, 3, 3), None),
    ],
)  # fmt: skip
def test_dask_names_the_columns_that_pandas_names_on_the_whole_frame(
    column, reference, dtype, alpha, zeros, named
):
    raw = _dask_raw(zeros)
    if dtype is not None:
        raw = raw.astype({column: dtype})
    mech = pi.AlphaIdentity(alpha, {column: reference})
    on_dask, _ = _atom_warnings(mech, _dask(raw))
    on_pandas, _ = _atom_warnings(mech, raw)
    assert [str(w.message) for w in on_dask] == [str(w.message) for w in on_pandas]
    if named is None:
        assert on_dask == []
    else:
        assert len(on_dask) == 1 and named in str(on_dask[0].message)
        assert on_dask[0].filename == __file__


def test_partition_summaries_merge_into_the_whole_column():
    """Grids and single precision combine exactly: a partition of one value does not
    hide a grid, and the finest partition's grid is the column's."""
    parts = [np.array([18.0]), np.array([25.0, 40.5]), np.array([0.0, 0.0, 3.0])]
    whole = atom_stats(np.concatenate(parts))
    merged = merge_stats(atom_stats(p) for p in parts)
    assert merged == whole
    assert describe_atoms("x", merged, np.float64) == "'x' (multiples of 0.1)"
    assert merge_stats([atom_stats(np.array([18.0])), atom_stats(np.array([1 / 3]))]).grids == (
        (False,) * 7
    )


def test_a_nullable_float32_column_is_released_as_float32_and_does_not_warn():
    rng = np.random.default_rng(4)
    x = rng.uniform(0.0, 50.0, 300).astype(np.float32)
    raw = pd.DataFrame({"earn": pd.array(x, dtype="Float32"), "y": rng.normal(size=300)})
    mech = pi.AlphaIdentity(0.5, {"earn": pi.reference.Uniform(0, 50)})
    with warnings.catch_warnings():
        warnings.simplefilter("error", AtomLeakWarning)
        mech.privatize(raw, public=["y"], random_state=None)

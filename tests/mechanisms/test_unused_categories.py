"""A category of a public column that no released row takes does not reach a release.

A data holder who filters rows (drops a site) keeps the site in a pandas categorical's
category list; published as it was, the list told readers about the removed rows. Public
columns declare no levels, so a release keeps the categories its rows take; a private
categorical column keeps its reference's levels, which are part of the mechanism.
"""

import warnings

import numpy as np
import pandas as pd
import pytest

import privinfer as pi
from privinfer.exceptions import SeedReleaseWarning

pytestmark = pytest.mark.filterwarnings("ignore::privinfer.exceptions.SeedReleaseWarning")

REMOVED = "removed_site"


def _raw(n=400, seed=0):
    """Sites a and b kept, site ``REMOVED`` filtered out; an unused private level too."""
    rng = np.random.default_rng(seed)
    site = np.where(np.arange(n) < n // 2, "a", "b")
    return pd.DataFrame({
        "x": rng.uniform(0, 1, n),
        "g": pd.Categorical(rng.choice(["hs", "college"], n),
                            categories=["hs", "college", "phd"]),
        "site": pd.Categorical(site, categories=["a", REMOVED, "b"], ordered=True),
        "y": rng.normal(size=n),
    })


def _mechanism():
    return pi.AlphaIdentity(0.5, {
        "x": pi.reference.Uniform(0, 1),
        "g": pi.reference.Categorical(["hs", "college", "phd"]),
    })


def test_privatize_drops_unused_public_categories_and_keeps_reference_levels():
    released = _mechanism().privatize(_raw(), public=["site", "y"], random_state=0)
    site = released["site"]
    assert site.cat.categories.tolist() == ["a", "b"]  # order kept
    assert site.cat.ordered
    # the private column's levels are the reference's, declared by the mechanism
    assert released["g"].cat.categories.tolist() == ["hs", "college", "phd"]


def test_a_release_file_does_not_name_the_removed_category(tmp_path):
    pytest.importorskip("pyarrow")
    released = _mechanism().privatize(_raw(), public=["site", "y"], random_state=0)
    path = tmp_path / "release.parquet"
    fingerprint = pi.write_release(released, path)
    assert REMOVED.encode() not in path.read_bytes()
    assert pi.read_release(path)["site"].cat.categories.tolist() == ["a", "b"]
    # a frame whose categories were put back after privatize is written by the same rule,
    # under the same fingerprint (which covers the values, not the category lists)
    edited = released.copy()
    edited["site"] = edited["site"].cat.add_categories([REMOVED])
    edited.attrs = released.attrs
    assert pi.write_release(edited, tmp_path / "edited.parquet") == fingerprint
    assert REMOVED.encode() not in (tmp_path / "edited.parquet").read_bytes()


def test_a_dask_release_keeps_the_categories_of_the_whole_release(tmp_path):
    dd = pytest.importorskip("dask.dataframe")
    pytest.importorskip("pyarrow")
    raw = _raw(600)
    ddf = dd.from_pandas(raw, npartitions=3, sort=False)  # part 0: site a only
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SeedReleaseWarning)
        released = _mechanism().privatize(ddf, public=["site", "y"], random_state=0)
    assert released._meta["site"].cat.categories.tolist() == ["a", "b"]
    for i in range(released.npartitions):  # one dtype in every partition
        assert released.partitions[i].compute()["site"].cat.categories.tolist() == ["a", "b"]
    assert released.compute()["site"].value_counts().to_dict() == {"a": 300, "b": 300}
    pi.write_release(released, tmp_path / "parts")
    for f in (tmp_path / "parts").glob("*.parquet"):
        assert REMOVED.encode() not in f.read_bytes()


def test_a_one_bit_release_drops_unused_public_categories():
    raw = _raw()
    pm = pi.PrivateMean(bounds=(0.0, 1.0), eps=1.0, c=0.5)
    released = pm.release(raw[["x", "site"]], "x", public=["site"], random_state=1)
    assert released["site"].cat.categories.tolist() == ["a", "b"]
    assert released["site"].cat.ordered

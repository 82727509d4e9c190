"""Unit tests of the modules behind the treatment models (scores, nuisances, options, splits).

The score elements are checked against a brute-force oracle: the reference expectation
:math:`\\bar Q s(v) = \\sum_m w_m s(v, x_m)` summed explicitly over a small reference sample,
instead of through the reference moments the package uses.
"""

import dataclasses
import inspect

import numpy as np
import pandas as pd
import pytest

import privinfer as pi
from privinfer._chunking import row_chunks
from privinfer.inversion import ReferenceMoments, invert, reference_design
from privinfer.models import scores
from privinfer.models._crossfit import draw_split, training_folds
from privinfer.models._inputs import TreatmentOptions
from privinfer.models._nuisances import SeriesOutcome, SeriesRiesz

ALPHA = 0.6


def _problem(seed=0, n=7, J=3, M=5):
    """Rows with public factors A, released covariates z, and a weighted reference sample."""
    rng = np.random.default_rng(seed)
    x_ref = rng.uniform(-1, 1, M)
    w_ref = rng.dirichlet(np.ones(M))
    z = rng.uniform(-1, 1, n)
    A = rng.uniform(0.5, 2.0, (n, J))

    def P(x):
        return np.column_stack([np.ones_like(x), x, x**2])

    return {
        "A": A,
        "z": z,
        "P": P,
        "x_ref": x_ref,
        "w_ref": w_ref,
        "y": rng.normal(size=n),
        "d": rng.integers(0, 2, n),
        "betas": (rng.normal(size=J), rng.normal(size=J)),
        "theta": rng.normal(size=J),
        "ref": ReferenceMoments.from_features(P(x_ref), w_ref),
    }


def _qbar(fn, pr):
    """Brute force: the reference expectation of fn(i, x) for every row i."""
    points = list(zip(pr["x_ref"], pr["w_ref"], strict=True))
    return np.array(
        [sum(w * fn(i, np.array([x]))[0] for x, w in points) for i in range(pr["z"].size)]
    )


def _series(pr, coef):
    """Row i's series function x -> (a_i * P(x)) @ coef."""
    return lambda i, x: (pr["A"][i] * pr["P"](x)) @ coef


def _elements(pr):
    ref = pr["ref"]
    mu = SeriesOutcome(pr["betas"], ref.mean, ref.outer)
    rz = SeriesRiesz((pr["theta"], pr["theta"]), pr["theta"], ref.mean, ref.outer)
    Phi = pr["A"] * pr["P"](pr["z"])
    sl = slice(0, pr["z"].size)
    out = mu.at(pr["A"], Phi, sl)
    return mu, rz, Phi, sl, out


@pytest.mark.parametrize("k", [0, 1])
def test_pom_score_matches_brute_force_inversion(k):
    pr = _problem(seed=k)
    mu, rz, Phi, sl, out = _elements(pr)
    y, ind = pr["y"], (pr["d"] == k).astype(float)
    c = np.linspace(0.5, 1.5, y.size)
    mu_k, r = _series(pr, pr["betas"][k]), _series(pr, pr["theta"])

    def s(i, x):
        return c[i] * mu_k(i, x) + ind[i] * r(i, x) * (y[i] - mu_k(i, x))

    at_z = np.array([s(i, pr["z"][i : i + 1])[0] for i in range(y.size)])
    want = (at_z - (1 - ALPHA) * _qbar(s, pr)) / ALPHA
    got = scores.pom_score(c, k, out, ind, rz.arm(k, pr["A"], Phi, sl, mu), y, ALPHA)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_att_score_and_riesz_moment_match_brute_force():
    pr = _problem(seed=3)
    mu, rz, Phi, sl, out = _elements(pr)
    y, d1 = pr["y"], (pr["d"] == 1).astype(float)
    mu0, w = _series(pr, pr["betas"][0]), _series(pr, pr["theta"])

    def s(i, x):
        return d1[i] * (y[i] - mu0(i, x)) - (1 - d1[i]) * w(i, x) * (y[i] - mu0(i, x))

    at_z = np.array([s(i, pr["z"][i : i + 1])[0] for i in range(y.size)])
    odds = rz.odds(pr["A"], Phi, sl, mu)
    np.testing.assert_allclose(
        scores.att_score(d1, out, odds, y, ALPHA),
        (at_z - (1 - ALPHA) * _qbar(s, pr)) / ALPHA,
        rtol=1e-12,
        atol=1e-12,
    )

    def sq(i, x):
        return (1 - d1[i]) * w(i, x) ** 2

    at_z2 = np.array([sq(i, pr["z"][i : i + 1])[0] for i in range(y.size)])
    np.testing.assert_allclose(
        scores.riesz_second_moment(1 - d1, odds, ALPHA),
        (at_z2 - (1 - ALPHA) * _qbar(sq, pr)) / ALPHA,
        rtol=1e-12,
        atol=1e-12,
    )


def test_outcome_risk_matches_brute_force():
    pr = _problem(seed=4)
    _, _, _, _, out = _elements(pr)
    y, d = pr["y"], pr["d"]

    def loss(i, x):
        return (y[i] - _series(pr, pr["betas"][d[i]])(i, x)) ** 2

    at_z = np.array([loss(i, pr["z"][i : i + 1])[0] for i in range(y.size)])
    np.testing.assert_allclose(
        scores.outcome_risk(out, d, y, ALPHA),
        (at_z - (1 - ALPHA) * _qbar(loss, pr)) / ALPHA,
        rtol=1e-12,
    )


def test_reference_terms_equal_the_summed_reference_part_of_the_score():
    """sum_i Qbar s_i of the arm score is linear in (mean, outer), as ReferenceTerms says."""
    pr = _problem(seed=5)
    k, A, y = 1, pr["A"], pr["y"]
    ind = (pr["d"] == k).astype(float)
    c = np.linspace(0.5, 1.5, y.size)
    beta, theta = pr["betas"][k], pr["theta"]
    terms = scores.pom_reference_terms(
        beta, theta, (c[:, None] * A).sum(0), ((ind * y)[:, None] * A).sum(0),
        (A * ind[:, None]).T @ A,
    )  # fmt: skip
    mu_k, r = _series(pr, beta), _series(pr, theta)

    def s(i, x):
        return c[i] * mu_k(i, x) + ind[i] * r(i, x) * (y[i] - mu_k(i, x))

    got = terms.value(pr["ref"].mean, pr["ref"].outer)
    np.testing.assert_allclose(got, _qbar(s, pr).sum(), rtol=1e-12)
    both = terms + terms
    assert both.value(pr["ref"].mean, pr["ref"].outer) == pytest.approx(2 * got, rel=1e-14)


def test_estimand_algebra():
    rng = np.random.default_rng(0)
    pom_phi, wt = rng.normal(size=(50, 3)), rng.uniform(0.5, 1.5, 50)
    wt = wt / wt.mean()
    est, phi = scores.mean_estimate(pom_phi, wt, scores.ate_contrast(3))
    means = (wt[:, None] * pom_phi).mean(axis=0)
    np.testing.assert_allclose(est, [means[1] - means[0], means[2] - means[0]])
    np.testing.assert_allclose(phi.mean(axis=0), 0.0, atol=1e-12)
    est, _ = scores.mean_estimate(pom_phi, wt, None)
    np.testing.assert_allclose(est, means)
    c0 = rng.normal(size=50)
    est, phi = scores.functional_estimate(pom_phi, c0, wt)
    assert est[0] == pytest.approx(np.mean(wt * (c0 + pom_phi.sum(axis=1))))
    d = rng.integers(0, 2, 50)
    est, phi = scores.att_estimate(pom_phi[:, 0], d, wt)
    assert est[0] == pytest.approx(np.sum(wt * pom_phi[:, 0]) / np.sum(wt * d))
    assert np.mean(phi) == pytest.approx(0.0, abs=1e-12)


def test_invert_drops_the_reference_exactly_at_alpha_one():
    h = np.array([1.0, 2.0])
    assert invert(h, np.array([np.inf, np.nan]), 1.0).tolist() == [1.0, 2.0]
    assert invert(h, 1.0, 0.5).tolist() == [1.0, 3.0]


def test_options_are_defined_once_and_checked():
    fields = [f.name for f in dataclasses.fields(TreatmentOptions)]
    for ctor in (pi.PrivateATE, pi.PrivateATT.from_formula, pi.PrivatePOM.from_formula):
        assert set(fields) <= set(inspect.signature(ctor).parameters)
    assert {"functional", "outcome"} <= set(inspect.signature(pi.PrivateFunctional).parameters)
    with pytest.raises(TypeError, match="unexpected option"):
        TreatmentOptions.from_keywords("PrivateATE", {"n_fold": 3})
    opts = TreatmentOptions().validated("PrivateATE", 0.5)
    assert opts.split_nuisances is False  # off by default (measured, issue 14)
    assert opts.ridge == "cv"
    assert TreatmentOptions(degree=1).validated("PrivateATE", 1.0).ridge == 0.0
    assert TreatmentOptions(split_nuisances=True).validated("X", 0.5).split_nuisances is True
    assert TreatmentOptions(n_folds=2).validated("PrivateATE", 0.5).split_nuisances is False
    assert TreatmentOptions().validated("PrivateATE", 1.0).split_nuisances is False
    with pytest.raises(dataclasses.FrozenInstanceError):
        opts.n_folds = 3  # type: ignore[misc]


def test_unknown_option_is_a_clear_type_error():
    rng = np.random.default_rng(0)
    raw = pd.DataFrame({"y": rng.normal(size=50), "d": rng.integers(0, 2, 50),
                        "x": rng.uniform(size=50)})  # fmt: skip
    mech = pi.AlphaIdentity(1.0, {"x": pi.reference.Uniform(0, 1)})
    with pytest.raises(TypeError, match="n_fold"):
        pi.PrivateATE.from_formula("y ~ d | x", raw, mechanism=mech, n_fold=3)


@pytest.mark.parametrize("split", [False, True])
def test_training_folds_partition_the_other_folds(split):
    for f in range(5):
        mu, rho = training_folds(f, 5, split)
        assert not mu[f] and not rho[f]
        if split:
            assert not np.any(mu & rho)
            assert np.all(mu | rho | (np.arange(5) == f))
        else:
            assert np.array_equal(mu, rho) and mu.sum() == 4


def test_draw_split_keeps_clusters_whole():
    rng = np.random.default_rng(0)
    d = rng.integers(0, 2, 400)
    clusters = rng.integers(0, 40, 400)
    folds = draw_split(d, clusters, 4, np.random.default_rng(1))
    assert pd.Series(folds).groupby(clusters).nunique().max() == 1
    assert set(np.unique(draw_split(d, None, 4, np.random.default_rng(1)))) == {0, 1, 2, 3}


def test_row_chunks_cover_rows_in_order(monkeypatch):
    import privinfer._chunking as chunking

    monkeypatch.setattr(chunking, "CHUNK_CELLS", 10)
    idx = np.arange(3000)[::-1]
    parts = row_chunks(idx, 5)
    assert len(parts) == 3 and np.array_equal(np.concatenate(parts), idx)
    slices = row_chunks(2500, 1)
    assert [s.stop - s.start for s in slices] == [1024, 1024, 452]


def test_reference_design_matches_the_spec_and_moments():
    mech = pi.AlphaIdentity(
        0.5, {"x": pi.reference.Uniform(0, 1), "g": pi.reference.Categorical(["a", "b"])}
    )
    raw = pd.DataFrame({"y": np.zeros(20), "d": np.arange(20) % 2,
                        "x": np.linspace(0, 1, 20), "g": ["a", "b"] * 10})  # fmt: skip
    model = pi.PrivateATE.from_formula("y ~ d | x + C(g)", raw, mechanism=mech)
    design = reference_design(mech, model.spec, 256, 0)
    assert design.U.shape == (256, model.U_priv.shape[1]) and not design.exact
    assert np.isclose(design.weights.sum(), 1.0)
    ref = design.moments()
    np.testing.assert_allclose(ref.mean, design.weights @ design.U)
    # a finite reference is enumerated exactly, with its pmf
    exact = reference_design(pi.AlphaIdentity(0.5, {"g": pi.reference.Categorical(["a", "b"])}))
    assert exact.exact and exact.weights.tolist() == [0.5, 0.5]

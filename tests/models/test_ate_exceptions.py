import numpy as np
import pandas as pd
import pytest

import privinfer as pi
from privinfer import exceptions as ex


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    n = 400
    return pd.DataFrame(
        {
            "y": rng.normal(size=n),
            "d": rng.integers(0, 2, n),
            "x": rng.uniform(0, 1, n),
            "w": rng.normal(size=n),
        }
    )


@pytest.fixture
def mech():
    return pi.AlphaIdentity(0.5, {"x": pi.reference.Uniform(0, 1)})


def test_nan_in_covariate(data, mech):
    data.loc[3, "w"] = np.nan
    with pytest.raises(ex.MissingValueError, match="'w' holds 1 missing"):
        pi.PrivateATE.from_formula("y ~ d | x + w", data, mechanism=mech)


def test_nan_in_private_covariate(data, mech):
    data.loc[3, "x"] = np.nan
    with pytest.raises(ex.MissingValueError, match="'x'"):
        pi.PrivateATE.from_formula("y ~ d | x + w", data, mechanism=mech)


def test_private_outcome_or_treatment(data):
    m = pi.AlphaIdentity(0.5, {"y": pi.reference.Uniform(-10, 10)})
    data["y"] = data["y"].clip(-10, 10)
    with pytest.raises(ex.MechanismMismatchError, match="outcome 'y' is covered by the mechanism"):
        pi.PrivateATE.from_formula("y ~ d | x + w", data, mechanism=m)


def test_treatment_not_binary_for_att_and_continuous(data, mech):
    data["d"] = np.arange(len(data)) % 3
    with pytest.raises(ex.DataMismatchError, match="ATT needs a binary treatment"):
        pi.PrivateATT.from_formula("y ~ d | x + w", data, mechanism=mech)
    data["d"] = np.random.default_rng(1).normal(size=len(data))
    with pytest.raises(ex.DataMismatchError, match="looks continuous"):
        pi.PrivateATE.from_formula("y ~ d | x + w", data, mechanism=mech)


def test_fold_without_treated_units(data, mech):
    data["d"] = 0
    data.loc[:2, "d"] = 1
    with pytest.raises(ex.FoldError, match="fewer than n_folds=5"):
        pi.PrivateATE.from_formula("y ~ d | x + w", data, mechanism=mech, degree=1).fit(
            random_state=0
        )


def test_mismatched_mechanism(data):
    m = pi.AlphaIdentity(0.5, {"age": pi.reference.Uniform(0, 1)})
    with pytest.raises(ex.MechanismMismatchError, match=r"\['age'\].*missing"):
        pi.PrivateATE.from_formula("y ~ d | x + w", data, mechanism=m)


def test_values_outside_reference_support(data):
    m = pi.AlphaIdentity(0.5, {"x": pi.reference.Uniform(0, 0.5)})
    with pytest.raises(ex.OutOfSupportError, match="outside the support"):
        pi.PrivateATE.from_formula("y ~ d | x + w", data, mechanism=m)


def test_non_separable_term(data, mech):
    with pytest.raises(ex.NonSeparableTermError, match="mixes private variables"):
        pi.PrivateATE.from_formula("y ~ d | I(x * w)", data, mechanism=mech)


def test_bad_formula_and_options(data, mech):
    with pytest.raises(ex.DataMismatchError, match=r"outcome ~ treatment \| covariates"):
        pi.PrivateATE.from_formula("y ~ d + x", data, mechanism=mech)
    with pytest.raises(ValueError, match="riesz must be"):
        pi.PrivateATE.from_formula("y ~ d | x", data, mechanism=mech, riesz="magic")
    with pytest.raises(ValueError, match="'n_folds' parameter"):
        pi.PrivateATE.from_formula("y ~ d | x", data, mechanism=mech, n_folds=1)
    with pytest.raises(ValueError, match="'clip' parameter"):
        pi.PrivateATE.from_formula("y ~ d | x", data, mechanism=mech, clip=0.7)
    with pytest.raises(ValueError, match="'degree' parameter"):
        pi.PrivateATE.from_formula("y ~ d | x", data, mechanism=mech, degree=True)
    with pytest.raises(ValueError, match="None or 'cv'"):
        pi.PrivateATE.from_formula("y ~ d | x", data, mechanism=mech, degree="auto")


def test_no_overlap_warns(mech):
    rng = np.random.default_rng(2)
    n = 3000
    x = rng.uniform(0, 1, n)
    d = (x > 0.5).astype(int)
    d[rng.choice(n, 20, replace=False)] ^= 1
    data = pd.DataFrame({"y": d + x + rng.normal(size=n), "d": d, "x": x})
    with pytest.warns(pi.exceptions.OverlapWarning):
        pi.PrivateATE.from_formula(
            "y ~ d | x",
            data,
            mechanism=pi.AlphaIdentity(1.0, {"x": pi.reference.Uniform(0, 1)}),
            riesz="propensity",
        ).fit(random_state=0)


def test_missing_mechanism_description(data):
    with pytest.raises(ex.MechanismMismatchError, match="carries no mechanism description"):
        pi.PrivateATE.from_formula("y ~ d | x", data)


def test_basis_larger_than_sample(mech):
    rng = np.random.default_rng(0)
    n = 60
    data = pd.DataFrame({f"x{j}": rng.uniform(0, 1, n) for j in range(6)})
    data["y"], data["d"] = rng.normal(size=n), np.arange(n) % 2
    with pytest.raises(ex.DataMismatchError, match="series basis has"):
        pi.PrivateATE(
            data,
            outcome="y",
            treatment="d",
            covariates=[f"x{j}" for j in range(6)],
            mechanism=pi.AlphaIdentity(0.5, {"x0": pi.reference.Uniform(0, 1)}),
            degree=3,
        ).fit()


def test_level_with_no_released_row_warns():
    rng = np.random.default_rng(0)
    n = 2000
    data = pd.DataFrame(
        {"x": rng.uniform(0, 1, n), "g": rng.choice(["a", "b"], n), "d": rng.integers(0, 2, n)}
    )
    data["y"] = data["d"] + data["x"] + rng.normal(size=n)
    mech = pi.AlphaIdentity(
        1.0, {"x": pi.reference.Uniform(0, 1), "g": pi.reference.Categorical(["a", "b", "c"])}
    )
    with pytest.warns(ex.EmptyLevelWarning, match=r"C\(g\)\[T.c\]"):
        res = pi.PrivateATE.from_formula("y ~ d | x + C(g)", data, mechanism=mech).fit(
            random_state=0
        )
    assert np.isfinite(res.params["ATE"])
    assert np.isfinite(res.bse["ATE"])  # the empty direction is regularised, not inverted


def test_kernel_outcome_route_restrictions(data, mech):
    with pytest.raises(ValueError, match="outcome_model must be"):
        pi.PrivateATE.from_formula("y ~ d | x", data, mechanism=mech, outcome_model="forest")
    with pytest.raises(ValueError, match="continuous private covariates only"):
        pi.PrivateATE.from_formula("y ~ d | x + w", data, mechanism=mech, outcome_model="kernel")
    with pytest.raises(ValueError, match="riesz='auto'"):
        pi.PrivateATE.from_formula(
            "y ~ d | x", data, mechanism=mech, outcome_model="kernel", riesz="propensity"
        )


def test_kernel_bandwidth_validation_and_cv_option():
    rng = np.random.default_rng(1)
    n = 1500
    x = rng.uniform(0, 1, n)
    d = rng.integers(0, 2, n)
    data = pd.DataFrame({"y": d + np.sin(3 * x) + rng.normal(size=n), "d": d, "x": x})
    mech = pi.AlphaIdentity(0.8, {"x": pi.reference.Uniform(0, 1)})
    with pytest.raises(ValueError, match="kernel_bandwidth"):
        pi.PrivateATE.from_formula(
            "y ~ d | x", data, mechanism=mech, outcome_model="kernel", kernel_bandwidth=-1.0
        )
    with pytest.raises(ValueError, match="kernel_bandwidth must be"):
        pi.PrivateATE.from_formula(
            "y ~ d | x", data, mechanism=mech, outcome_model="kernel", kernel_bandwidth="silverman"
        )
    released = mech.privatize(data, public=["y", "d"], random_state=2)
    res = pi.PrivateATE.from_formula(
        "y ~ d | x", released, mechanism=mech, outcome_model="kernel", kernel_bandwidth="cv"
    ).fit(random_state=3)
    assert abs(res.params["ATE"] - 1.0) < 5 * res.bse["ATE"]


def test_fixed_ridge_below_the_privatisation_noise_is_refused():
    """A user-fixed ridge that leaves deconvolved directions below their noise refuses.

    Rare levels of a private factor have deconvolved frequencies below the privatisation
    noise: ``ridge=0`` would divide noise by noise there (estimates of order 1e15 before
    this check). The message names the ridge that clears the noise, and that ridge fits.
    """
    rng = np.random.default_rng(2)
    n = 3000
    levels = [f"g{k}" for k in range(8)]
    g = rng.choice(levels, n, p=[0.5, 0.3, 0.1, 0.05, 0.02, 0.015, 0.01, 0.005])
    x = rng.uniform(-1, 1, n)
    d = (rng.random(n) < 0.5).astype(int)
    y = d + x + (g == "g1") + rng.normal(size=n)
    data = pd.DataFrame({"y": y, "d": d, "x": x, "g": g})
    mech = pi.AlphaIdentity(
        0.5, {"x": pi.reference.Uniform(-1, 1), "g": pi.reference.Categorical(levels)}
    )
    rel = mech.privatize(data, public=["y", "d"], random_state=3)
    with pytest.raises(ex.SingularDesignError, match=r"ridge='cv'") as info:
        pi.PrivateATE.from_formula(
            "y ~ d | x + C(g)", rel, mechanism=mech, degree=2, ridge=0.0
        ).fit(random_state=0)
    need = float(str(info.value).rsplit("at least ", 1)[1].rstrip("."))
    assert need > 0
    res = pi.PrivateATE.from_formula(
        "y ~ d | x + C(g)", rel, mechanism=mech, degree=2, ridge=need
    ).fit(random_state=0)
    assert res.bse["ATE"] < 0.5  # a usable interval, not one widened by inverted noise
    assert abs(res.params["ATE"] - 1.0) < 5 * res.bse["ATE"]
    # at alpha = 1 nothing is deconvolved: ordinary least squares stays available
    exact = pi.AlphaIdentity(1.0, mech.reference)
    ols = pi.PrivateATE.from_formula(
        "y ~ d | x + C(g)", data, mechanism=exact, degree=2, ridge=0.0
    ).fit(random_state=0)
    assert abs(ols.params["ATE"] - 1.0) < 5 * ols.bse["ATE"]


def test_no_overlap_on_the_automatic_route_warns_with_readable_moments_and_a_remedy():
    rng = np.random.default_rng(2)
    n = 2000
    x = rng.uniform(-1, 1, n)
    d = (x > 0).astype(int)
    data = pd.DataFrame({"y": d + x + rng.normal(size=n), "d": d, "x": x})
    mech = pi.AlphaIdentity(1.0, {"x": pi.reference.Uniform(-1, 1)})
    # 3 digits, not 17, in either overlap message: the moments above 100, or (since the
    # support rule keeps the Riesz fit off the empty side: E[rho^2] of 98 instead of
    # 1,800) the Kish effective rows
    readable = (
        r"(?:'rho\[0\]': |rho\[0\] has E\[rho\^2\] = )\d[.\de+]{0,7}, .*public columns"
    )
    with pytest.warns(pi.exceptions.OverlapWarning, match=readable):
        pi.PrivateATE.from_formula("y ~ d | x", data, mechanism=mech).fit(random_state=0)


def test_treatment_mixing_value_types_is_a_clear_error(data, mech):
    # an object column with ints and strings (a merge of two files): 1 and "1" would be
    # two levels; sorting them crashed with a bare TypeError
    data["d"] = data["d"].astype(object)
    data.loc[:9, "d"] = "1"
    for model in (pi.PrivateATE, pi.PrivatePOM, pi.PrivateATT):
        with pytest.raises(ex.DataMismatchError, match=r"treatment 'd' mixes value types"):
            model.from_formula("y ~ d | x + w", data, mechanism=mech)


@pytest.mark.parametrize("alpha", [1e-155, 1e-200])
def test_a_tiny_alpha_warns_instead_of_dividing_by_zero(data, alpha):
    # alpha**2 underflows to 0 (or n / alpha**2 overflows): the warning names no row count
    mech = pi.AlphaIdentity(alpha, {"x": pi.reference.Uniform(0, 1)})
    released = mech.privatize(data, public=["y", "d", "w"], random_state=None)
    with pytest.warns(ex.NuisanceNoiseWarning, match="about n >= inf rows"):
        pi.PrivateATE.from_formula("y ~ d | x", released).fit(random_state=0)

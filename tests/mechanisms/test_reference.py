from decimal import Decimal

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import privinfer as pi
from privinfer.exceptions import PrivateDtypeError
from privinfer.mechanisms.reference import component_from_dict


def test_qmc_sample_moments_match_exact_moments_within_reported_error():
    ref = pi.reference.ProductReference({"x": pi.reference.Uniform(2, 5), "z": stats.norm(1, 2)})
    draw = ref.qmc_sample(4096, n_replicates=8, random_state=0)
    assert draw.n_replicates == 8
    x = draw.frame["x"].to_numpy()
    assert x.min() >= 2 and x.max() <= 5
    est = draw.weights @ x**2
    exact = pi.reference.Uniform(2, 5).moment(2)
    reps = [x[draw.replicate == r].mean() for r in range(8)]
    reps2 = [(x[draw.replicate == r] ** 2).mean() for r in range(8)]
    se = np.std(reps2, ddof=1) / np.sqrt(8)
    assert abs(est - exact) < 6 * se + 1e-12
    assert abs(np.mean(reps) - 3.5) < 1e-3
    z = draw.frame["z"].to_numpy()
    assert abs(draw.weights @ z - 1.0) < 0.01


def test_enumeration_is_exact_for_finite_references():
    ref = pi.reference.ProductReference(
        {
            "g": pi.reference.Categorical(["a", "b"], probs=[0.25, 0.75]),
            "k": stats.binom(3, 0.5),
        }
    )
    draw = ref.draw_for_moments()
    assert draw.exact
    assert len(draw.frame) == 8
    assert draw.weights.sum() == pytest.approx(1.0)
    assert draw.weights[(draw.frame["g"] == "a").to_numpy()].sum() == pytest.approx(0.25)
    assert draw.weights @ draw.frame["k"].to_numpy(dtype=float) == pytest.approx(1.5)


def test_empirical_reference_samples_public_rows():
    public = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": ["x", "y", "z"]})
    ref = pi.reference.as_reference(pi.reference.Empirical(public))
    s = ref.sample(500, random_state=0)
    pairs = set(zip(s["a"], s["b"], strict=True))
    assert pairs <= {(1.0, "x"), (2.0, "y"), (3.0, "z")}


def test_support_checks_flag_values_outside():
    ref = pi.reference.ProductReference(
        {"x": pi.reference.Uniform(0, 1), "g": pi.reference.Categorical(["a"])}
    )
    with pytest.raises(pi.exceptions.OutOfSupportError, match="outside the support"):
        ref.check_values(pd.DataFrame({"x": [0.5, 1.5], "g": ["a", "a"]}), "test")
    with pytest.raises(pi.exceptions.UnknownCategoryError, match="outside the public levels"):
        ref.check_values(pd.DataFrame({"x": [0.5], "g": ["b"]}), "test")


@pytest.mark.parametrize("k", [65, 80, 90, 99, 100, 1000])
def test_categorical_uniform_probs_are_identical_on_both_paths_and_round_trip(k):
    levels = list(range(k))
    implicit = pi.reference.Categorical(levels)
    explicit = pi.reference.Categorical(levels, probs=[1.0 / k] * k)
    assert np.array_equal(implicit.probs, explicit.probs)
    assert implicit == explicit
    rebuilt = component_from_dict(implicit.to_dict())
    assert rebuilt == implicit and hash(rebuilt) == hash(implicit)


@pytest.mark.parametrize("k", [65, 80, 90, 99, 100, 1000])
def test_mechanism_with_many_levels_accepts_its_own_release(k):
    rng = np.random.default_rng(0)
    raw = pd.DataFrame(
        {"y": rng.normal(size=200), "d": rng.integers(0, 2, 200), "x": rng.integers(0, k, 200)}
    )
    mech = pi.AlphaIdentity(0.7, {"x": pi.reference.Categorical(list(range(k)))})
    rel = mech.privatize(raw, public=["y", "d"], random_state=1)
    assert pi.AlphaIdentity.from_released(rel) == mech
    pi.PrivateATE.from_formula("y ~ d | C(x)", rel, mechanism=mech)  # no MechanismMismatchError


def test_categorical_equality_still_rejects_different_probabilities():
    p = np.full(100, 0.01)
    q = p.copy()
    q[0] += 1e-11
    q[1] -= 1e-11
    levels = list(range(100))
    assert pi.reference.Categorical(levels, p) != pi.reference.Categorical(levels, q)


@pytest.mark.parametrize(
    "missing",
    [pd.NA, pd.NaT, np.float32("nan"), np.nan, None],
    ids=["NA", "NaT", "float32-nan", "nan", "None"],
)
def test_categorical_refuses_every_kind_of_missing_level(missing):
    with pytest.raises(ValueError, match="must not be missing"):
        pi.reference.Categorical(["a", missing])


def test_categorical_levels_from_a_public_string_column_with_missing_values():
    public = pd.Series(["a", "b", None, "a"], dtype="string")
    with pytest.raises(ValueError, match="must not be missing"):
        pi.reference.Categorical(public.unique())
    assert pi.reference.Categorical(public.dropna().unique()).levels == ["a", "b"]


@pytest.mark.parametrize("bad", [np.inf, -np.inf])
def test_references_refuse_infinite_values_a_release_could_not_carry(bad):
    # the replacements would be infinite: a release that every analysis refuses
    with pytest.raises(ValueError, match="infinite"):
        pi.reference.Empirical(pd.Series([1.0, 2.0, bad], name="x"))
    with pytest.raises(ValueError, match="infinite"):
        pi.reference.Empirical(pd.DataFrame({"g": ["a", "b", "c"], "x": [1.0, bad, 2.0]}))
    with pytest.raises(ValueError, match="finite"):
        pi.reference.Categorical([1.0, bad])


def test_references_keep_finite_numbers_and_labels():
    assert pi.reference.Empirical(pd.Series([1.0, 2.0], name="x")).n_support() == 2
    assert pi.reference.Empirical(pd.Series([True, False], name="b")).n_support() == 2
    assert pi.reference.Categorical(["inf", 1.5]).levels == ["inf", 1.5]


@pytest.mark.parametrize(
    "dist",
    [stats.norm(0, -1), stats.norm(np.nan, 1), stats.binom(3, 1.5), stats.poisson(-1),
     stats.uniform(0, 0), stats.norm(0, np.inf), stats.pareto(0.001)],
    ids=["negative-scale", "nan-loc", "binom-p>1", "poisson-mu<0", "zero-width",
         "infinite-scale", "draws-overflow"],
)
def test_frozen_refuses_invalid_parameters_and_infinite_draws(dist):
    # scipy accepts these and answers NaN (or inf): privatize then called every data
    # value "outside the support", and guarantees() reported a guarantee for no law
    with pytest.raises(ValueError, match="invalid parameters or draws infinite values"):
        pi.reference.Frozen(dist)
    with pytest.raises(ValueError, match="invalid parameters or draws infinite values"):
        pi.AlphaIdentity(0.5, {"x": dist})


def test_frozen_refuses_vector_parameters():
    with pytest.raises(ValueError, match="scalar parameters"):
        pi.reference.Frozen(stats.norm([0, 1], 1))


@pytest.mark.parametrize(
    "dist", [stats.cauchy(), stats.pareto(0.2), stats.poisson(3), stats.binom(3, 0.5),
             stats.norm(loc=1, scale=2), stats.t(0.5)],
)
def test_frozen_keeps_valid_heavy_tailed_and_discrete_laws(dist):
    comp = pi.reference.Frozen(dist)
    assert np.all(np.isfinite(comp.from_unit(np.array([0.0, 0.5, 1.0 - 1e-17]))))


_NOT_JSON = {
    "timestamp": list(pd.date_range("2020-01-01", periods=3)),
    "timedelta": list(pd.to_timedelta([1, 2, 3], unit="D")),
    "decimal": [Decimal(1), Decimal(2), Decimal(3)],
    "tuple": [(1, 2), (3, 4), (5, 6)],
}


@pytest.mark.parametrize("kind", sorted(_NOT_JSON))
def test_reference_values_must_survive_the_release_file(kind):
    # these were accepted, released, written, and then read_release failed (a 'modified
    # file' fingerprint error or a support error): JSON brought them back as strings
    values = _NOT_JSON[kind]
    with pytest.raises(PrivateDtypeError, match="JSON"):
        pi.reference.Categorical(values)
    sample = pd.Series(values, name="v")
    with pytest.raises(PrivateDtypeError, match="JSON"):
        pi.reference.Empirical(sample)
    with pytest.raises(PrivateDtypeError, match="JSON"):
        pi.reference.Empirical(pd.DataFrame({"w": [1.0, 2.0, 3.0], "v": sample}))


def test_reference_of_strings_and_numbers_round_trips_through_a_file(tmp_path):
    rng = np.random.default_rng(0)
    ref = {
        "g": pi.reference.Categorical(["a", "b", "c"]),
        "e": pi.reference.Empirical(pd.Series([1, 5, 7], name="e")),
    }
    mech = pi.AlphaIdentity(0.5, ref)
    raw = pd.DataFrame({
        "g": ["a", "b", "c", "a"] * 10,
        "e": [1, 5, 7, 1] * 10,
        "y": rng.normal(size=40),
    })
    with pytest.warns(pi.exceptions.SeedReleaseWarning):
        released = mech.privatize(raw, public=["y"], random_state=0)
    path = tmp_path / "r.parquet"
    pi.write_release(released, path)
    assert pi.AlphaIdentity.from_released(pi.read_release(path)) == mech


def _equal_pairs():
    cat = pi.reference.Categorical
    emp = pi.reference.Empirical
    return [
        (cat([1, 2]), cat([1.0, 2.0])),
        (cat([True, False]), cat([1, 0])),
        (emp(pd.Series([1, 2], name="x")), emp(pd.Series([1.0, 2.0], name="x"))),
        (pi.mechanisms.reference.ProductReference({"g": cat([1, 2])}),
         pi.mechanisms.reference.ProductReference({"g": cat([1.0, 2.0])})),
        (pi.AlphaIdentity(0.5, {"g": cat([1, 2])}), pi.AlphaIdentity(0.5, {"g": cat([1.0, 2.0])})),
    ]


@pytest.mark.parametrize("pair", range(5))
def test_equal_references_and_mechanisms_hash_equal(pair):
    a, b = _equal_pairs()[pair]
    assert a == b
    assert hash(a) == hash(b)
    assert len({a, b}) == 1


def test_different_references_still_differ():
    cat = pi.reference.Categorical
    assert cat(["a", "b"]) != cat(["a", "b"], probs=[0.3, 0.7])
    assert pi.AlphaIdentity(0.5, {"g": cat("ab")}) != pi.AlphaIdentity(0.4, {"g": cat("ab")})
    assert len({cat(["a", "b"]), cat(["b", "a"])}) == 2


def test_reprs_of_large_references_stay_short():
    cat = pi.reference.Categorical(range(10_000))
    assert repr(cat) == "Categorical([0, 1, 2, 3, 4, ..., 9998, 9999] (10000 levels))"
    wide = pi.AlphaIdentity(0.5, {f"c{i}": pi.reference.Uniform(0, 1) for i in range(200)})
    text = repr(wide)
    assert len(text) < 400 and len(text.splitlines()) <= 15
    assert "'c199': Uniform(0, 1)} (200 components)" in text
    emp = pi.reference.Empirical(pd.DataFrame(np.zeros((2, 300))))
    assert len(repr(emp)) < 100
    # short references keep their full repr
    assert repr(pi.reference.Categorical(np.arange(3))) == "Categorical([0, 1, 2])"


def test_messages_quoting_a_large_reference_stay_short():
    mech = pi.AlphaIdentity(0.5, {"g": pi.reference.Categorical(range(10_000))})
    with pytest.raises(pi.exceptions.UnknownCategoryError) as info:
        mech.check_data(pd.DataFrame({"g": [-1]}), "demo", verify=False)
    assert len(str(info.value)) < 400
    with pytest.warns(pi.exceptions.UnverifiedReleaseWarning) as record:
        mech.check_data(pd.DataFrame({"g": np.arange(10_000)}), "demo")
    assert all(len(str(w.message)) < 600 for w in record)


@pytest.mark.parametrize(
    ("dist", "text"),
    [(stats.poisson(3), "Frozen(poisson(3))"), (stats.norm(1, 2), "Frozen(norm(1, 2))"),
     (stats.norm(loc=1, scale=2), "Frozen(norm(loc=1, scale=2))"),
     (stats.gamma(2.0, scale=np.float64(3)), "Frozen(gamma(2.0, scale=3.0))")],
)
def test_frozen_repr_reads_like_the_scipy_call(dist, text):
    assert repr(pi.reference.Frozen(dist)) == text

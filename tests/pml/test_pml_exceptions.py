import numpy as np
import pytest
from scipy import stats

from privinfer.exceptions import MassConditionError, NotInInteriorError, OutOfSupportError
from privinfer.pml import (
    PMLTest,
    PrivateMean,
    PrivateVectorMean,
    dobrushin,
    eta_tv,
    optimal_binary_mechanism,
    pml_epsilon,
)


def test_c_outside_its_range_is_rejected():
    with pytest.raises(ValueError, match=r"'c' parameter of eta_tv must lie in"):
        eta_tv(1.0, 0.3, 10)
    with pytest.raises(ValueError, match=r"'c' parameter"):
        eta_tv(1.0, -0.01, 10)
    with pytest.raises(ValueError, match=r"'c' parameter of PrivateMean"):
        PrivateMean(bounds=(-1, 1), eps=1.0, c=0.6)
    with pytest.raises(ValueError, match=r"'c' parameter"):
        PMLTest([0.5, 0.5], [0.4, 0.6], eps=1.0, c=0.7)


def test_negative_eps_is_rejected():
    with pytest.raises(ValueError, match=r"'eps' parameter of eta_tv"):
        eta_tv(-0.1, 0.0, 2)
    with pytest.raises(ValueError, match=r"'eps' parameter of optimal_binary_mechanism"):
        optimal_binary_mechanism(-1.0, 0.0, [0], 2)
    with pytest.raises(ValueError, match=r"'eps' parameter of PMLTest"):
        PMLTest([0.5, 0.5], [0.4, 0.6], eps=-1.0, c=0.1)


def test_distributions_outside_the_c_interior_name_the_points():
    with pytest.raises(NotInInteriorError, match=r"Q is not in the c-interior.*atoms x = \[2\]"):
        PMLTest([0.3, 0.3, 0.4], [0.45, 0.5, 0.05], eps=1.0, c=0.1)
    with pytest.raises(ValueError, match=r"P is not in the c-interior.*density is below"):
        PMLTest(stats.truncnorm(-3, 3, scale=1 / 3), stats.uniform(-1, 2), eps=1.0, c=0.2,
                bounds=(-1, 1))


def test_data_outside_bounds_is_rejected():
    pm = PrivateMean(bounds=(-1, 1), eps=1.0, c=0.1)
    with pytest.raises(ValueError, match=r"outside the public bounds \[-1.0, 1.0\] at rows \[1\]"):
        pm.privatize(np.array([0.0, 1.5, -0.2]), random_state=0)
    with pytest.raises(OutOfSupportError, match="outside the public box"):
        PrivateVectorMean(bounds=[(0, 1), (0, 1)], eps=1.0, c=0.1).privatize([[0.5, 2.0]])
    mech = optimal_binary_mechanism(1.0, 0.0, [0], 3)
    with pytest.raises(ValueError, match="atoms outside"):
        mech.privatize([0, 3])


def test_kernel_rows_must_sum_to_one():
    with pytest.raises(ValueError, match=r"every row of K must sum to 1"):
        pml_epsilon([[0.5, 0.6], [0.5, 0.5]], 0.1)
    with pytest.raises(ValueError, match=r"every row of K must sum to 1"):
        dobrushin([[0.5, 0.4], [0.5, 0.5]])


def test_mass_conditions_are_enforced():
    with pytest.raises(MassConditionError, match=r"mass conditions .* fail.*admits eps <="):
        optimal_binary_mechanism(2.0, 0.1, [0], 6)
    mech = optimal_binary_mechanism(2.0, 0.1, [0], 6, reduce_eps=True)
    assert mech.eps == pytest.approx(-np.log(0.1 * 5))


def test_bad_released_bits_and_missing_values():
    t = PMLTest([0.3, 0.3, 0.4], [0.4, 0.3, 0.3], eps=1.0, c=0.1)
    with pytest.raises(ValueError, match=r"bits in \{0, 1\}"):
        t.test([0, 1, 2])
    with pytest.raises(ValueError, match="NaN"):
        PrivateMean(bounds=(0, 1), eps=1.0, c=0.1).privatize(np.array([0.2, np.nan]))
    with pytest.raises(ValueError, match="coincide"):
        PMLTest([0.5, 0.5], [0.5, 0.5], eps=1.0, c=0.1)


def test_pmltest_refuses_a_frozen_discrete_distribution_with_a_clear_type_error():
    with pytest.raises(TypeError, match=r"p must be a pmf on atoms 0..N-1.*poisson.*p.pmf"):
        PMLTest(stats.poisson(3), stats.poisson(4), eps=1.0, c=0.0)
    with pytest.raises(TypeError, match=r"q must be a pmf on atoms 0..N-1.*got str"):
        PMLTest([0.5, 0.5], "abc", eps=1.0, c=0.0)


@pytest.mark.parametrize("n", [100.5, 0, -3, [100, 2.5], np.nan, True, "100"])
def test_pmltest_power_refuses_a_non_integer_sample_size(n):
    t = PMLTest([0.3, 0.3, 0.2, 0.2], [0.2, 0.2, 0.3, 0.3], eps=1.0, c=0.15)
    with pytest.raises(ValueError, match=r"'n' parameter of PMLTest.power.*whole number >= 1"):
        t.power(n)
    with pytest.raises(ValueError, match=r"'n' parameter of BitTestPlan.size"):
        t.plans[0].size(n)


def test_pmltest_power_accepts_whole_numbers_in_any_dtype():
    t = PMLTest([0.3, 0.3, 0.2, 0.2], [0.2, 0.2, 0.3, 0.3], eps=1.0, c=0.15)
    expected = t.plans[0].power(np.array([100, 1000]), 0.05)
    np.testing.assert_array_equal(t.power([100.0, 1000.0]), expected)
    assert float(t.power(np.int64(100))) == expected[0]


def test_pmltest_privatize_and_release_errors_name_the_method_called():
    import pandas as pd

    from privinfer.exceptions import DataMismatchError, RowOrderError

    t = PMLTest([0.4, 0.3, 0.2, 0.1], [0.1, 0.2, 0.3, 0.4], eps=1.0, c=0.05)
    x = np.random.default_rng(0).integers(0, 4, 200)
    calls = [
        (RowOrderError, lambda: t.privatize(np.sort(x)), "PMLTest.privatize"),
        (OutOfSupportError, lambda: t.privatize(np.r_[x, 7]), "PMLTest.privatize"),
        (OutOfSupportError, lambda: t.release(pd.DataFrame({"g": np.r_[x, 7]}), "g"),
         "PMLTest.release"),
        (DataMismatchError, lambda: t.release(pd.DataFrame({"g": x}), "h"), "PMLTest.release"),
        (OutOfSupportError, lambda: t.mechanism.privatize(np.r_[x, 7]),
         "BinaryMechanism.privatize"),
    ]
    for error, call, owner in calls:
        with pytest.raises(error, match=rf"^{owner}\b") as info:
            call()
        if owner.startswith("PMLTest"):
            assert "BinaryMechanism" not in str(info.value)

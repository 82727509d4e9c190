"""Shared pytest configuration.

The suite runs on every core (``-n auto`` from pytest-xdist, set in ``pyproject.toml``);
each worker process then keeps its numerical libraries to one thread, so that the workers
do not oversubscribe the cores.

Two tiers. The default run (README's ``python -m pytest``) keeps small seeded Monte Carlo
checks that can fail (limited overlap at alpha = 1, a skewed top-coded covariate below
it, the small-n warning rule, the fold-block bootstrap, the kernel route, GMM, PML,
functionals, DPOT's cost) next to the exact and agreement tests, and stays under ten
minutes on two cores. Tests marked ``extended`` (more validation cells of
the same kind, longer Monte Carlo studies, the two longest vignettes, the Sphinx build
of the docs) are skipped there,
with a reason that says how to run them: ``python -m pytest --extended`` (or
``PRIVINFER_EXTENDED=1``) runs both tiers, ``python -m pytest --extended -m extended``
the extended tier alone.
"""

import os

import pytest


def pytest_addoption(parser):
    parser.addoption(
        "--fuzz-summary",
        action="store_true",
        default=False,
        dest="fuzz_summary",
        help="after the run, print how many fuzz inputs each privinfer entry point saw and "
        "how many it rejected as designed (tests/hardening); the counts live in the "
        "process that ran the tests, so add -n 0",
    )
    parser.addoption(
        "--extended",
        action="store_true",
        default=False,
        dest="extended",
        help="also run the tests marked 'extended' (longer seeded Monte Carlo checks, the two "
        "longest vignettes; about eight more minutes on two cores); PRIVINFER_EXTENDED=1 "
        "does the same",
    )


def _extended_on(config) -> bool:
    return bool(config.getoption("extended")) or os.environ.get("PRIVINFER_EXTENDED", "") not in (
        "",
        "0",
    )


def pytest_configure(config):
    if os.environ.get("PYTEST_XDIST_WORKER"):
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=1)
    config.addinivalue_line(
        "markers", "slow: runs a subprocess (Sphinx build, doctests, vignettes); not skipped"
    )
    config.addinivalue_line(
        "markers",
        "extended: a longer check (seeded Monte Carlo study, long vignette), skipped unless "
        "--extended (or PRIVINFER_EXTENDED=1)",
    )


#: Tests that take ten seconds or more (seeded Monte Carlo studies, subprocess builds), by
#: node-id prefix, roughly longest first (those of the extended tier first, for a run with
#: ``--extended``; skipped, they cost nothing). Only their scheduling depends on this list.
HEAVY = (
    "tests/models/test_validation_small.py::test_validation_cell_within_bands",
    "tests/models/test_ate.py::test_small_seeded_monte_carlo_covers_and_is_unbiased",
    "tests/models/test_inference_extras.py::test_cluster_robust_se_tracks",
    "tests/models/test_inference_extras.py::test_weighted_estimates_are_unbiased",
    "tests/test_trimming.py::test_trimmed_fits_cover_the_trimmed",
    "tests/test_vignettes.py::test_vignette_runs",
    "tests/test_docs.py::test_sphinx_build_is_warning_free",
    "tests/models/test_foldboot.py::test_bootstrap_se_tracks_the_monte_carlo_spread",
    "tests/test_docs.py::test_docstring_examples_run",
    "tests/hardening/test_privacy_audits.py::test_privtree_split_decision",
    "tests/test_readme.py::test_readme_example_runs_as_printed",
    "tests/models/test_snapshot_treatment.py::test_treatment_snapshot[att_cluster_weights]",
    "tests/models/test_snapshot_treatment.py::test_last_bit_stability[att_cluster_weights]",
    "tests/models/test_foldboot.py::test_a_widening_for_bias_is_checked",
    "tests/models/test_inference_extras.py::test_weights_are_scale_free",
    "tests/models/test_support_rule.py::test_four_schooling_levels_on_card",
    "tests/models/test_gmm_mc.py",
    "tests/models/test_cap_sensitivity.py::test_a_wiggly_design_moves",
    "tests/models/test_ate.py::test_kernel_outcome_route_small_seeded_monte_carlo",
    "tests/test_planner.py::test_nsw_plan_states_the_noise_behind_its_wiggles",
    "tests/models/test_dask_gmm.py::test_distributed_cluster_gives_the_same_numbers",
    "tests/transport/test_dpot_estimate.py::test_removing_row_noise_keeps_the_mean",
)


def _heavy_rank(item) -> int | None:
    return next((r for r, prefix in enumerate(HEAVY) if item.nodeid.startswith(prefix)), None)


def pytest_collection_modifyitems(session, config, items):
    """Put the heavy tests at the head of every worker's share of the run.

    pytest-xdist's work-stealing scheduler hands each of the ``w`` workers a contiguous
    ``1/w`` of the collection and lets an idle worker steal from the *end* of a busy
    worker's queue. With the heavy tests dealt round-robin to the heads of the ``w``
    shares (the short ones filling the rest, in collection order), every worker starts on
    long tests and the run ends on short ones, instead of one worker finishing a
    minute-long Monte Carlo test while the other idles. Only the order changes: every test
    is independent of the others (each seeds its own generators).

    Tests marked ``extended`` are skipped unless the extended tier is asked for.
    """
    if not _extended_on(config):
        skip = pytest.mark.skip(
            reason="extended tier: run with python -m pytest --extended (or PRIVINFER_EXTENDED=1)"
        )
        for it in items:
            if it.get_closest_marker("extended") is not None:
                it.add_marker(skip)
    ranked = [(r, i, it) for i, it in enumerate(items) if (r := _heavy_rank(it)) is not None]
    if not ranked:
        return
    heavy_ids = {id(it) for _, _, it in ranked}
    light = [it for it in items if id(it) not in heavy_ids]
    workers = max(1, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))
    groups = [[] for _ in range(workers)]
    for k, (_, _, it) in enumerate(sorted(ranked, key=lambda t: (t[0], t[1]))):
        groups[k % workers].append(it)
    # the share sizes of xdist's first even split: len(pending) // nodes_remaining
    order, remaining, start = [], len(items), 0
    for g, group in enumerate(groups):
        share = remaining // (workers - g)
        take = max(0, share - len(group))
        order += group + light[start : start + take]
        start += take
        remaining -= share
    order += light[start:]
    items[:] = order

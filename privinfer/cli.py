"""The ``privinfer`` console script.

``privinfer demo`` runs the main job end to end on simulated data; ``privinfer --version``
prints the version; ``python -m privinfer`` runs the same script. Argument errors are
usage errors: one line on standard error and exit status 2, never a traceback. Warnings
about unreliable settings go to standard error.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
import warnings
from typing import NoReturn

import numpy as np
import pandas as pd

__all__ = ["main", "simulate_demo_data"]

#: Below this effective sample size ``n * alpha**2`` the demo warns that the deconvolved
#: nuisance fits are dominated by privacy noise (every Gram matrix then tends to come out
#: indefinite). The variance of a deconvolved moment grows like ``1 / (n alpha^2)``.
MIN_EFFECTIVE_N = 500.0

#: Fewest records the demo accepts: the smallest treatment arm must hold more rows than
#: the series basis has functions.
MIN_N = 50

_DESCRIPTION = """\
Statistical inference on data released through a local privacy mechanism.

privinfer demo simulates a job-training dataset, releases its private covariates
(age, income, education) through the alpha-identity mechanism, and estimates the
average treatment effect (ATE) and the effect on the treated (ATT) from the released
data, next to the non-private answer on the same records."""

_DEMO_EPILOG = """\
alpha is the keep probability: each record's private covariates are published
unchanged with probability alpha and otherwise redrawn from a public reference
distribution. A share alpha of the rows therefore goes out verbatim; smaller alpha
means more privacy and wider intervals. Results are reliable when n * alpha^2 is at
least 500; below that the demo warns.

examples:
  privinfer demo
  privinfer demo --n 20000 --alpha 0.3"""


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line on stderr and exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def _keep_probability(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1], got {text!r}") from None
    if not (math.isfinite(value) and 0.0 < value <= 1.0):
        raise argparse.ArgumentTypeError(
            f"the keep probability must lie in (0, 1], got {text}"
        )
    return value


def _n_records(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < MIN_N:
        raise argparse.ArgumentTypeError(f"the demo needs at least {MIN_N} records, got {value}")
    return value


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"the seed must be non-negative, got {value}")
    return value


def _warn(message: str) -> None:
    print(f"privinfer demo: warning: {message}", file=sys.stderr)


def _error(message: str) -> None:
    print(f"privinfer demo: error: {message}", file=sys.stderr)


def simulate_demo_data(n: int, random_state: int | None = None) -> pd.DataFrame:
    """A job-training style dataset with a known ATE (1.0) and a nonlinear outcome.

    Private covariates: ``age`` (18-65), ``income`` (0-100, thousands), ``educ``
    (hs/college/grad); public covariate: ``urban``; public treatment ``d`` and outcome
    ``y``. The propensity depends on the private covariates.

    Parameters
    ----------
    n : int
        Number of records.
    random_state : int or None, default=None
        Seed; ``None`` draws fresh OS entropy.

    Returns
    -------
    DataFrame
        Columns ``y``, ``d``, ``age``, ``income``, ``educ``, ``urban``.

    Examples
    --------
    >>> from privinfer.cli import simulate_demo_data
    >>> df = simulate_demo_data(100, random_state=0)
    >>> df.columns.tolist(), len(df)
    (['y', 'd', 'age', 'income', 'educ', 'urban'], 100)
    """
    rng = np.random.default_rng(random_state)
    age = rng.uniform(18, 65, n)
    income = np.clip(rng.gamma(3.0, 12.0, n), 0, 100)
    educ = rng.choice(["hs", "college", "grad"], n, p=[0.5, 0.35, 0.15])
    urban = rng.integers(0, 2, n)
    a, inc = (age - 41.5) / 15, (income - 36) / 20
    score = -0.3 + 0.6 * a - 0.5 * inc + 0.4 * (educ == "grad") + 0.3 * urban
    d = (rng.random(n) < 1 / (1 + np.exp(-score))).astype(int)
    tau = 1.0 + 0.5 * a  # heterogeneous effect with mean 1 (E a = 0)
    y = tau * d + 0.8 * a**2 + inc + 0.5 * (educ == "college") + 0.3 * urban + rng.normal(size=n)
    return pd.DataFrame(
        {"y": y, "d": d, "age": age, "income": income, "educ": educ, "urban": urban}
    )


def _demo(args: argparse.Namespace) -> int:
    import privinfer as pi

    t0 = time.perf_counter()
    effective_n = args.n * args.alpha**2
    if effective_n < MIN_EFFECTIVE_N:
        # alpha**2 underflows to 0 (or the quotient overflows) for a tiny alpha
        needed = MIN_EFFECTIVE_N / args.alpha**2 if args.alpha**2 > 0 else math.inf
        advice = (
            f"use --n {math.ceil(needed)} or more at this alpha"
            if math.isfinite(needed)
            else "no feasible --n reaches it at this alpha; raise --alpha"
        )
        _warn(
            f"n * alpha^2 = {effective_n:.4g} is below {MIN_EFFECTIVE_N:g}: the privacy noise "
            f"swamps the deconvolved nuisance fits and the estimates below are unreliable; "
            f"{advice}."
        )
    raw = simulate_demo_data(args.n, random_state=args.seed)
    reference = {
        "age": pi.reference.Uniform(18, 65),
        "income": pi.reference.Uniform(0, 100),
        "educ": pi.reference.Categorical(["hs", "college", "grad"]),
    }
    mech = pi.AlphaIdentity(args.alpha, reference)
    with warnings.catch_warnings():
        # A simulated demo release: the fixed seed makes it reproducible on purpose.
        warnings.simplefilter("ignore", pi.exceptions.SeedReleaseWarning)
        released = mech.privatize(raw, public=["y", "d", "urban"], random_state=args.seed + 1)
    # rows go out in a fresh order: a kept age is one of the raw ages (a replacement a.s. not)
    kept = float(np.isin(released["age"].to_numpy(), raw["age"].to_numpy()).mean())
    print(f"privinfer {pi.__version__} demo: n = {args.n}, simulated job-training data")
    att = np.mean(1 + 0.5 * (raw.age[raw.d == 1] - 41.5) / 15)
    print(f"(population ATE = 1.0; sample ATT = {att:.3f})\n")
    print(mech.guarantees())
    print(f"  share of rows released unchanged: {kept:.3f} (expected {args.alpha:g})\n")
    formula = "y ~ d | age + income + C(educ) + urban"
    exact = pi.AlphaIdentity(1.0, reference)
    rows = []
    for model in (pi.PrivateATE, pi.PrivateATT):
        try:
            with warnings.catch_warnings():
                # repairs and overlap notes are recorded in the results and shown in summary()
                warnings.simplefilter("ignore", pi.exceptions.PrivinferWarning)
                res = model.from_formula(formula, released, mechanism=mech).fit(
                    random_state=args.seed
                )
                base = model.from_formula(formula, raw, mechanism=exact).fit(
                    random_state=args.seed
                )
        except pi.exceptions.PrivinferError as exc:
            _error(str(exc))
            return 1
        repairs = res.diagnostics.gram_repairs
        n_indefinite = sum(g.min_eigenvalue < 0 for g in repairs)
        if repairs and n_indefinite == len(repairs) and effective_n >= MIN_EFFECTIVE_N:
            _warn(
                f"all {n_indefinite} deconvolved Gram matrices of {model.__name__} were "
                "indefinite: the privacy noise dominates; treat the estimate with caution "
                "and raise --n or --alpha."
            )
        print(res.summary())
        print()
        for label, r in (("private", res), ("non-private", base)):
            ci = r.conf_int().iloc[0]
            rows.append(
                (
                    r.params.index[0],
                    label,
                    r.params.iloc[0],
                    r.bse.iloc[0],
                    ci["lower"],
                    ci["upper"],
                )
            )
    table = pd.DataFrame(
        rows, columns=["estimand", "data", "estimate", "std err", "ci lower", "ci upper"]
    )
    print(f"Private (alpha = {args.alpha:g}) vs non-private estimates on the same records:")
    print(table.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    print(f"\nDone in {time.perf_counter() - t0:.1f} s.")
    return 0


def _parser() -> argparse.ArgumentParser:
    from privinfer import __version__

    parser = _Parser(
        prog="privinfer",
        description=_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"privinfer {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="command", parser_class=_Parser)
    demo = sub.add_parser(
        "demo",
        help="privatise a simulated dataset and estimate the ATE and ATT",
        description="Privatise a simulated job-training dataset and estimate the ATE and\n"
        "ATT from the released data, next to the non-private answer.",
        epilog=_DEMO_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    demo.add_argument("--n", type=_n_records, default=5000,
                      help=f"number of records, at least {MIN_N} (default 5000)")
    demo.add_argument("--alpha", type=_keep_probability, default=0.5,
                      help="keep probability in (0, 1]; smaller is more private (default 0.5)")
    demo.add_argument("--seed", type=_seed, default=2026,
                      help="seed of the simulation and the release (default 2026)")
    demo.set_defaults(command_parser=demo)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``privinfer`` console script.

    Parameters
    ----------
    argv : list of str, optional
        Arguments without the program name (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        Exit status: 0 on success, 1 when the demo fails, 2 on a usage error (argument
        errors raise ``SystemExit(2)`` after one line on standard error).

    Examples
    --------
    >>> from privinfer.cli import main
    >>> main(["--version"])
    Traceback (most recent call last):
    ...
    SystemExit: 0
    """
    parser = _parser()
    args, extras = parser.parse_known_args(argv)
    if extras:
        # reported by the subcommand, whose --help lists the options it does take
        getattr(args, "command_parser", parser).error(
            f"unrecognized arguments: {' '.join(extras)}"
        )
    if args.command == "demo":
        return _run_demo(args)
    parser.print_help(sys.stderr)
    return 2


def _run_demo(args: argparse.Namespace) -> int:
    """The demo, with running out of memory (an --n too large) as a one-line error.

    A reader that stops early (``privinfer demo | head``) closes the pipe: the demo then
    stops quietly with status 1 instead of a ``BrokenPipeError`` traceback.
    """
    try:
        code = _demo(args)
        sys.stdout.flush()  # a closed pipe raises here, not at interpreter exit
    except MemoryError:
        _error(f"not enough memory for --n {args.n}; use a smaller --n")
        return 1
    except BrokenPipeError:
        # Python's recipe: point stdout at devnull so the final flush cannot fail again
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

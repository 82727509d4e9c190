"""Where does the regularisation bias of a potential-outcome mean come from? (issue 14)

For a design of ``validate_designs.py`` (or ``holdout_designs.py``) with known propensity
``e_k(x)`` and outcome mean ``mu_k(x)`` of arm ``k``, the one-step estimate of
``E[Y(k)]`` with fitted outcome ``mu^`` and Riesz representer ``rho^`` has the exact
first-order bias (the remainder of the doubly robust expansion)

    E[(mu^(X) - mu_k(X)) (1 - e_k(X) rho^(X))] = E[e_k (mu^ - mu_k)(1/e_k - rho^)],

a product of the two fits' errors. This script refits ``PrivatePOM`` on replications of
a design (the same releases as ``validate.py``: same seeds), reads each cross-fitted
fold's outcome and Riesz coefficients of arm ``k`` (the chosen fits and the looser
comparison fits behind the bias bound), evaluates them on a large population draw, and
splits that bias by bins of one covariate. Next to it: the population share of each bin,
the reference's share (where the replaced records fall), the root-mean-square error of
the outcome fit and the mean error of the Riesz fit in the bin.

It reads private internals of the models (the fitted coefficients and the sieve), so it
is a research tool, not an example of the public API.

Usage::

    python benchmarks/bias_by_region.py --design lognormal_clip --alpha 0.5 --n 4000 \
        --reps 8 --column x --bins 0,1,2,3,4.6,7,10.01
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import itertools

import validate as V

import privinfer as pi
from privinfer.models import _onestep

POPULATION = 400_000


class Capture:
    """Keeps the sieve and the nuisance fits of the first split of the next fit."""

    def __init__(self) -> None:
        self.basis: Any = None
        self.fits: Any = None
        self._split = _onestep.TreatmentModel._fit_split
        self._nuis = _onestep.TreatmentModel._fold_nuisances

    def __enter__(self) -> Capture:
        cap, split, nuis = self, self._split, self._nuis

        def fit_split(model: Any, folds: Any, basis: Any, *a: Any, **k: Any) -> Any:
            if cap.basis is None:
                cap.basis = basis
            return split(model, folds, basis, *a, **k)

        def fold_nuisances(model: Any, f: int, folds: Any, fits: Any, *a: Any, **k: Any) -> Any:
            if cap.fits is None:
                cap.fits = fits
            return nuis(model, f, folds, fits, *a, **k)

        _onestep.TreatmentModel._fit_split = fit_split  # type: ignore[method-assign]
        _onestep.TreatmentModel._fold_nuisances = fold_nuisances  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: Any) -> None:
        _onestep.TreatmentModel._fit_split = self._split  # type: ignore[method-assign]
        _onestep.TreatmentModel._fold_nuisances = self._nuis  # type: ignore[method-assign]


def design_values(basis: Any, model: Any) -> np.ndarray:
    """Basis functions at the rows of ``model``'s (raw) data: public times private factor."""
    A, P = basis.split(model.U_priv, model.U_pub if basis.has_public else None)
    return P if A is None else A * P


def one_replication(
    name: str, alpha: float, n: int, rep: int, seed: int, arm: int, pop: pd.DataFrame,
    column: str, bins: np.ndarray,
) -> dict[str, Any]:  # fmt: skip
    """Bias by bin of the chosen and the comparison fits of one replication."""
    design = V.DESIGNS[name]
    mech, released, s_fit, truths = V.replication(seed, name, alpha, n, rep)
    with Capture() as cap, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = pi.PrivatePOM.from_formula(design.formula, released, mechanism=mech).fit(
            random_state=np.random.default_rng(s_fit)
        )
    param = f"E[Y({arm})]"
    # the population's design columns (a mechanism with alpha = 1: raw data)
    raw_mech = pi.AlphaIdentity(1.0, design.reference())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        popm = pi.PrivatePOM.from_formula(design.formula, pop, mechanism=raw_mech)
    Phi = design_values(cap.basis, popm)
    e = design.propensity(pop)
    e_k = e if arm == 1 else 1.0 - e
    mu = design.mean(pop, arm)
    where = np.clip(np.digitize(pop[column].to_numpy(), bins) - 1, 0, bins.size - 2)
    nb = bins.size - 1
    count = np.bincount(where, minlength=nb).astype(float)
    out: dict[str, Any] = {
        "err": float(res.params[param]) - truths[param],
        "se": float(res.bse[param]),
        "bound": float(res._record.bias_bound[param]),
    }
    for kind in ("coefs", "loose"):
        B = getattr(cap.fits.outcome[arm], kind)
        T = getattr(cap.fits.riesz[arm], kind)
        bias, rmse, rerr = np.zeros(nb), np.zeros(nb), np.zeros(nb)
        for f in range(B.shape[0]):
            mh, rh = Phi @ B[f], Phi @ T[f]
            bias += np.bincount(where, e_k * (mh - mu) * (1 / e_k - rh), nb) / len(pop)
            rmse += np.sqrt(np.bincount(where, (mh - mu) ** 2, nb) / np.maximum(count, 1))
            rerr += np.bincount(where, rh - 1 / e_k, nb) / np.maximum(count, 1)
        F = B.shape[0]
        out[kind] = (bias / F, rmse / F, rerr / F)
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--design", default="lognormal_clip")
    ap.add_argument("--alpha", type=float, default=0.5)
    ap.add_argument("--n", type=int, default=4000)
    ap.add_argument("--reps", type=int, default=8)
    ap.add_argument("--first-rep", type=int, default=0)
    ap.add_argument("--seed", type=int, default=91)
    ap.add_argument("--arm", type=int, default=1, choices=(0, 1))
    ap.add_argument("--column", default="x")
    ap.add_argument("--bins", default="0,1,2,3,4.6,7,10.01")
    ap.add_argument("--quick", action="store_true", help="2 replications")
    a = ap.parse_args(argv)
    reps = 2 if a.quick else a.reps
    bins = np.array([float(b) for b in a.bins.split(",")])
    design = V.DESIGNS[a.design]
    pop = design.simulate(POPULATION, np.random.default_rng(12345))
    ref = design.reference().get(a.column, None)
    rows = []
    for rep in range(a.first_rep, a.first_rep + reps):
        r = one_replication(a.design, a.alpha, a.n, rep, a.seed, a.arm, pop, a.column, bins)
        rows.append(r)
        print(
            f"rep {rep}: error {r['err']:+.4f} = {r['err'] / r['se']:+.2f} SE; first-order "
            f"bias {r['coefs'][0].sum() / r['se']:+.2f} SE (comparison fit "
            f"{r['loose'][0].sum() / r['se']:+.2f}); bias bound {r['bound'] / r['se']:.2f} SE",
            flush=True,
        )
    se = np.mean([r["se"] for r in rows])
    where = np.clip(np.digitize(pop[a.column].to_numpy(), bins) - 1, 0, bins.size - 2)
    table = pd.DataFrame(
        {
            "bin": [f"[{lo:g}, {hi:g})" for lo, hi in itertools.pairwise(bins)],
            "data share": np.bincount(where, minlength=bins.size - 1) / len(pop),
        }
    )
    if ref is not None:  # the reference's quantiles on a fine grid
        draws = np.asarray(ref.from_unit((np.arange(100_000) + 0.5) / 100_000), dtype=float)
        at = np.clip(np.digitize(draws.ravel(), bins) - 1, 0, bins.size - 2)
        table["reference share"] = np.bincount(at, minlength=bins.size - 1) / draws.size
    for kind, label in (("coefs", "chosen"), ("loose", "comparison")):
        b = np.mean([r[kind][0] for r in rows], axis=0)
        table[f"bias/SE {label}"] = b / se
        table[f"rmse mu {label}"] = np.mean([r[kind][1] for r in rows], axis=0)
        table[f"rho err {label}"] = np.mean([r[kind][2] for r in rows], axis=0)
    pd.set_option("display.width", 200)
    print(
        f"\n{a.design}, E[Y({a.arm})], alpha = {a.alpha:g}, n = {a.n}, {reps} replications "
        f"(mean SE {se:.4f}; mean error {np.mean([r['err'] for r in rows]) / se:+.2f} SE)"
    )
    print(table.round(3).to_string(index=False))


if __name__ == "__main__":
    main()

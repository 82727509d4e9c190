r"""Where does the deconvolution estimate's bias come from? A parametric-bootstrap check.

The deconvolution estimate of ``estimate_transport_cost`` (a Gaussian-mixture prior fitted
to the release, posterior draws of the source points, the cost averaged over the draws)
is biased upward when the noise is comparable to the spread of the source. Two sources
are possible:

* **estimation error of a prior of the right family** (noisy component means and
  variances put the drawn clusters in slightly wrong places, and every such error costs
  transport), which a parametric bootstrap can measure: draw a source from the fitted
  prior, release it with the same noise, refit the prior (same family and number of
  components), and compare that world's estimate with its known cost;
* **misspecification** (the release cannot show the source's structure, so the fitted
  prior is too smooth), which a bootstrap from that smooth prior cannot see.

For each release the script prints the plain deconvolution estimate and the estimate
less the mean bootstrap bias (``--boot`` worlds, 10 posterior draws each), as relative
bias over the releases with its Monte Carlo standard error, and the paper's
Err = mean |. - W| / W. Designs and true costs as in ``benchmarks/dpot_err.py``.

``--simex`` adds a third check that needs no model of the source: simulation-extrapolation
(Cook and Stefanski, 1994) of the deconvolution estimate itself. Extra Gaussian noise
:math:`N(0, (\tau - 1)\Sigma)` added to the release's points gives a release of the *true*
source at noise :math:`\tau\Sigma`; the deconvolution estimate at
:math:`\tau = 1, 1.5, 2` (``SIMEX_DRAWS`` noise draws averaged at each :math:`\tau > 1`),
extrapolated linearly to :math:`\tau = 0`, removes the bias wherever it grows linearly
in the noise, misspecification included. It prints the mean estimate at each
:math:`\tau` (relative bias) and the extrapolated estimate.

Usage:  python benchmarks/dpot_pboot.py [--cells blobs5:2,clust2:2,...] [--reps R]
                                        [--boot B] [--jobs J] [--simex]
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import ot

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from dpot_err import DELTA, design, true_cost

from privinfer.exceptions import SeedReleaseWarning
from privinfer.transport import DPOTSource
from privinfer.transport._deconvolution import (
    MAX_COMPONENTS,
    _psd_floor,
    fit_mixture,
    select_mixture,
)
from privinfer.transport.dpot import (
    _deconvolution_estimate,
    _deconvolution_space,
    _DeconvolutionSpace,
    _source_spread,
)

# research runs: every release below is seeded on purpose, for reproducibility
warnings.simplefilter("ignore", SeedReleaseWarning)
CELLS = "blobs5:1,blobs5:2,blobs5:5,clust2:2,clust2:5,ring2:2,ring2:5,gauss2:1,gauss2:2"
N_DRAWS = 10
#: noise levels (multiples of the release's noise covariance) of the SIMEX check
SIMEX_TAUS = (1.0, 1.5, 2.0)
#: extra noise draws averaged at each level above 1
SIMEX_DRAWS = 4


def simex_curve(space: _DeconvolutionSpace, Xt: np.ndarray, a: np.ndarray, b: np.ndarray,
                rng: np.random.Generator) -> np.ndarray:
    """Mean deconvolution estimate at the noise levels ``SIMEX_TAUS`` (the first is 1)."""
    chol = np.linalg.cholesky(space.Sigma)
    plan = np.outer(a, b)
    out = []
    for tau in SIMEX_TAUS:
        values = []
        for _ in range(1 if tau == 1.0 else SIMEX_DRAWS):
            extra = rng.standard_normal(space.x_hat.shape) @ chol.T
            x_hat = space.x_hat + np.sqrt(tau - 1.0) * extra
            S = tau * space.Sigma
            world = _DeconvolutionSpace(x_hat, S, _source_spread(x_hat, S, a))
            values.append(_deconvolution_estimate(world, Xt, a, b, plan, N_DRAWS, rng, "emd",
                                                  None, None)[0])
        out.append(float(np.mean(values)))
    return np.asarray(out)


def one_release(args: tuple[str, float, int, int, bool]) -> tuple[float, ...]:
    """(deconvolution estimate, bootstrap-corrected estimate, noise ratio) of a release,
    then with ``simex`` the SIMEX curve and its linear extrapolation to zero noise."""
    name, eps, seed, n_boot, simex = args
    Xs, Xt, ell = design(name, True)
    pub = DPOTSource(eps, DELTA, ell, random_state=seed).publish(Xs)
    n, m = Xs.shape[0], Xt.shape[0]
    a, b = np.full(n, 1.0 / n), np.full(m, 1.0 / m)
    rng = np.random.default_rng(seed)
    space, _ = _deconvolution_space(pub.rows, pub.projection, pub.sigma, a, "dpot_pboot")
    plan = np.outer(a, b)  # only the plan excess uses it, which is not read here
    prior = select_mixture(space.x_hat, a, space.Sigma, MAX_COMPONENTS, rng)
    estimate = _deconvolution_estimate(space, Xt, a, b, plan, N_DRAWS, rng, "emd", None,
                                       None, prior=prior)[0]
    chol_noise = np.linalg.cholesky(space.Sigma)
    chol_comp = np.linalg.cholesky(_psd_floor(prior.covariances, 1e-12))
    k = Xs.shape[1]
    curve: tuple[float, ...] = ()
    if simex:
        values = simex_curve(space, Xt, a, b, rng)
        _, intercept = np.polyfit(np.asarray(SIMEX_TAUS), values, 1)
        curve = (*values.tolist(), float(intercept))
    bias = np.full(max(n_boot, 1), np.nan)
    for j in range(n_boot):
        comp = rng.choice(prior.n_components, size=n, p=prior.weights)
        x_world = prior.means[comp] + np.einsum("nij,nj->ni", chol_comp[comp],
                                                rng.standard_normal((n, k)))
        x_hat = x_world + rng.standard_normal((n, k)) @ chol_noise.T
        world = _DeconvolutionSpace(x_hat, space.Sigma, _source_spread(x_hat, space.Sigma, a))
        refit = fit_mixture(x_hat, a, space.Sigma, prior.n_components, rng, prior.family)
        w_hat = _deconvolution_estimate(world, Xt, a, b, plan, N_DRAWS, rng, "emd", None,
                                        None, prior=refit)[0]
        bias[j] = w_hat - ot.emd2(a, b, ot.dist(x_world, Xt))
    return (estimate, estimate - float(bias.mean()), space.noise_ratio, *curve)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", default=CELLS, help="design:eps pairs")
    parser.add_argument("--reps", type=int, default=20, help="releases per cell")
    parser.add_argument("--boot", type=int, default=10, help="bootstrap worlds a release")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument("--simex", action="store_true",
                        help="also the SIMEX check of the deconvolution estimate")
    args = parser.parse_args()
    start = time.perf_counter()
    print(f"{args.reps} releases a cell, {args.boot} bootstrap worlds each; relative bias "
          "(MC s.e.) and Err")
    print(f"{'design':8}{'eps':>5}{'ratio':>7}{'deconvolution':>24}{'+ bootstrap correction':>28}")
    for cell in args.cells.split(","):
        name, eps = cell.split(":")
        W = true_cost(name, True)
        tasks = [(name, float(eps), 5000 + r, args.boot, args.simex) for r in range(args.reps)]
        if args.jobs > 1:
            with ProcessPoolExecutor(args.jobs) as pool:
                out = np.asarray(list(pool.map(one_release, tasks)))
        else:
            out = np.asarray([one_release(t) for t in tasks])
        parts = []
        for col in (0, 1) if args.boot > 0 else (0,):
            e = out[:, col]
            parts.append(f"{100 * (e.mean() - W) / W:+7.1f}% ({100 * e.std(ddof=1) / np.sqrt(len(e)) / W:4.1f}%)"
                         f" {np.mean(np.abs(e - W)) / W:5.2f}")
        boot = parts[1] if args.boot > 0 else "(--boot 0)"
        print(f"{name:8}{float(eps):>5g}{np.median(out[:, 2]):>7.2f}{parts[0]:>24}{boot:>28}",
              flush=True)
        if args.simex:
            rel = 100 * (out[:, 3:].mean(axis=0) - W) / W
            se = 100 * out[:, -1].std(ddof=1) / np.sqrt(len(out)) / W
            levels = "  ".join(f"tau {t:g}: {r:+6.1f}%" for t, r in zip(SIMEX_TAUS, rel[:-1], strict=True))
            print(f"{'':20}SIMEX  {levels}  ->  tau 0: {rel[-1]:+6.1f}% ({se:4.1f}%) "
                  f"{np.mean(np.abs(out[:, -1] - W)) / W:5.2f}", flush=True)
    print(f"time {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()

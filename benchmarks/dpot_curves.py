"""Where the DPOT cost estimate's bias comes from: the curves, their fit, or the model.

``estimate_transport_cost`` fits the hyperbolic model to the in-sample curve g(tau) and
the held-out curve h(tau) at tau = 1, 4/3, 2, 4 and reads it off at tau = 0. For each
design of ``dpot_err.py`` and each eps this script prints, relative to the true W:

* ``g``, ``h``     oracle curves: the mean over simulated releases with ell/tau
                   projection columns of the in-sample value of the optimal plan and of
                   its true cost (plan-free parts of the in-sample value at their means,
                   which does not change its mean and removes most of its noise);
* ``g^``, ``h^``   the estimator's curves, averaged over releases (unbiased for the
                   oracle curves if the column-subset simulation is right);
* ``fit(oracle)``  the hyperbolic extrapolation of the oracle curves: the bias of the
                   model alone, with no noise in the curves;
* ``estimate``     the mean estimate over releases: model bias plus the bias of fitting
                   a nonlinear model to noisy curves.

Usage:  python benchmarks/dpot_curves.py [--quick] [--designs blobs5,clust2] [--eps 1,2]
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import warnings

import numpy as np
import ot

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from dpot_err import DELTA, EPS, design

from privinfer.exceptions import SeedReleaseWarning
from privinfer.transport import DPOTSource, dpot
from privinfer.transport._extrapolation import fit_hyperbolic

TAUS = np.array([1.0, 4.0 / 3.0, 2.0, 4.0])
warnings.simplefilter("ignore", SeedReleaseWarning)


def oracle_curves(Xs, Xt, s2: float, ell: int, reps: int, rng: np.random.Generator):
    """Mean in-sample value g and true cost h of the plan at each tau (over W)."""
    n, m, k = len(Xs), len(Xt), Xs.shape[1]
    a, b = np.full(n, 1 / n), np.full(m, 1 / m)
    C = ot.dist(Xs, Xt)
    sq_s, sq_t = (Xs**2).sum(1), (Xt**2).sum(1)
    g, h = np.zeros(len(TAUS)), np.zeros(len(TAUS))
    for t, tau in enumerate(TAUS):
        L = round(ell / tau)
        for _ in range(reps):
            V = rng.normal(size=(k, L))  # columns of sqrt(ell) M: N(0, I)
            Zs = Xs @ V + rng.normal(0.0, np.sqrt(s2), size=(n, L))
            YV = Xt @ V
            noisy = ot.dist(Zs, YV) / L - s2
            row = (Zs**2).sum(1) / L - s2
            col = (YV**2).sum(1) / L
            plan = ot.emd(a, b, noisy - noisy.min(), numItermax=10**7)
            g[t] += np.sum(plan * (noisy - row[:, None] - col[None, :]
                                   + sq_s[:, None] + sq_t[None, :]))
            h[t] += np.sum(plan * C)
    return g / reps, h / reps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer releases")
    parser.add_argument("--designs", default="blobs5,gauss2,clust2")
    parser.add_argument("--eps", default="0.5,1,2,5")
    args = parser.parse_args()
    reps = 30 if args.quick else 200
    rng = np.random.default_rng(1)
    print(f"{'design':>8}{'eps':>6}  {'curve':<9}" + "".join(f"{t:>9.3g}" for t in TAUS)
          + f"{'fit(oracle)':>13}{'estimate':>10}")
    for name in args.designs.split(","):
        Xs, Xt, ell = design(name, True)
        n, m = len(Xs), len(Xt)
        W = float(ot.emd2(np.full(n, 1 / n), np.full(m, 1 / m), ot.dist(Xs, Xt),
                          numItermax=10**8))
        for eps in (float(e) for e in args.eps.split(",")):
            i = EPS.index(eps) if eps in EPS else 0
            pubs = [DPOTSource(eps, DELTA, ell, random_state=10_000 * i + r).publish(Xs)
                    for r in range(reps)]
            ests = [dpot(pub, Xt, estimator="extrapolation").estimate for pub in pubs]
            s2 = ell * float(np.mean([pub.sigma**2 for pub in pubs]))  # per-column noise
            g, h = oracle_curves(Xs, Xt, s2, ell, reps, rng)
            h_obs = h.copy()
            h_obs[0] = np.nan  # the estimator has no held-out value at tau = 1
            w_oracle = fit_hyperbolic(TAUS, g, h_obs)[0][0]
            g_hat = np.mean([e_.curve_in for e_ in ests], axis=0)
            h_hat = np.mean([np.where(np.isnan(e_.curve_out), 0.0, e_.curve_out)
                             for e_ in ests], axis=0)
            h_hat[0] = np.nan
            w_hat = np.mean([e_.estimate for e_ in ests])
            rows = (("g", g), ("g^", g_hat), ("h", h), ("h^", h_hat))
            for k, (label, curve) in enumerate(rows):
                tail = (f"{w_oracle / W - 1:>+13.3f}{w_hat / W - 1:>+10.3f}" if k == 0
                        else "")
                print(f"{name:>8}{eps:>6g}  {label:<9}"
                      + "".join(f"{v / W - 1:>+9.3f}" for v in curve) + tail)


if __name__ == "__main__":
    main()

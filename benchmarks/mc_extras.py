"""Monte Carlo study of the inference extras (issue 5).

Usage::

    python benchmarks/mc_extras.py --quick     # fewer replications (a few minutes)
    python benchmarks/mc_extras.py             # more replications

Four studies, each drawing fresh true data, privatising it (alpha-identity, fresh seed)
and fitting:

A. joint bands: PrivatePOM with a three-level treatment; the 95% sup-t band from the
   multiplier bootstrap must cover all three means 94-96% of the time (pointwise 95%
   intervals cover all three less often; printed for contrast);
B. clustered design: 200 clusters, intra-cluster correlation 0.3 of the outcome error,
   cluster-level treatment uptake; cluster-robust 95% CIs must cover 94-96%, naive ones
   under-cover;
C. sampling weights depending on a private covariate: the weighted PrivateATE must be
   unbiased for the weighted population ATE (and its CI cover);
D. planner: ``pi.plan`` on one pilot sample predicts the SE of PrivateATE at the study
   size over an alpha grid; the prediction must be within 10% of the MC sd.

Each line prints the Monte Carlo standard error of the figure next to it.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.dirname(__file__))
from _designs import FORMULAS, mechanism, simulate

import privinfer as pi

Z = 1.959964


def _expit(v):
    return 1.0 / (1.0 + np.exp(-v))


def _fit(model, formula, released, mech, rng, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pi.exceptions.PrivinferWarning)
        return model.from_formula(formula, released, mechanism=mech, **kw).fit(random_state=rng)


def _cov_line(label, hits):
    hits = np.asarray(hits, dtype=float)
    mc = np.sqrt(hits.mean() * (1 - hits.mean()) / hits.size)
    return f"  {label:<46s} {100 * hits.mean():6.1f}%  (MC se {100 * mc:.1f})"


# -- A. joint bands --------------------------------------------------------------------
def sim_three_levels(n, rng):
    """Three treatment levels; E[Y(k)] = 0.5 k - 1/3 + 0.2."""
    x1 = 2 * rng.beta(2, 2, n) - 1
    x2 = 2 * rng.beta(1.5, 3, n) - 1
    eta = np.column_stack([np.zeros(n), 0.5 * x1, -0.5 * x1 + 0.3 * x2])
    p = np.exp(eta) / np.exp(eta).sum(axis=1, keepdims=True)
    d = (rng.random(n)[:, None] > np.cumsum(p, axis=1)).sum(axis=1)
    y = 0.5 * d * (1 + x1) + x1 + x2 + x1**2 + rng.normal(size=n)
    return pd.DataFrame({"y": y, "d": d, "x1": x1, "x2": x2})


def study_joint(reps, rng, n=3000, alpha=0.7, n_boot=1000):
    mech = mechanism("heterogeneous", alpha)
    truth = 0.5 * np.arange(3) - 1 / 3 + 0.2
    joint, pointwise = [], []
    for _ in range(reps):
        rel = mech.privatize(sim_three_levels(n, rng), publish_undeclared=True, random_state=rng)
        res = _fit(pi.PrivatePOM, "y ~ d | x1 + x2", rel, mech, rng)
        ci = res.bootstrap("normal", n_boot=n_boot, random_state=rng).conf_int(joint=True)
        joint.append(bool(np.all((ci["lower"] <= truth) & (truth <= ci["upper"]))))
        ci0 = res.conf_int()
        pointwise.append(bool(np.all((ci0["lower"] <= truth) & (truth <= ci0["upper"]))))
    print(f"A. joint 95% bands, PrivatePOM (3 levels), n={n}, alpha={alpha}, {reps} reps")
    print(_cov_line("sup-t band covers all 3 means (target 94-96)", joint))
    print(_cov_line("pointwise 95% CIs cover all 3 means", pointwise))
    return {"study": "A joint band", "coverage": np.mean(joint)}


# -- B. clustered design ---------------------------------------------------------------
def sim_clustered(n, rng, n_clusters=200, icc=0.3):
    """Cluster-level uptake and outcome error with intra-cluster correlation ``icc``."""
    g = np.repeat(np.arange(n_clusters), n // n_clusters)
    g = np.concatenate([g, rng.integers(0, n_clusters, n - g.size)])
    x = rng.uniform(-1, 1, n)
    v = rng.normal(size=n_clusters)[g]
    d = (rng.random(n) < _expit(x + v)).astype(int)
    e = np.sqrt(icc) * rng.normal(size=n_clusters)[g] + np.sqrt(1 - icc) * rng.normal(size=n)
    y = d * (1 + x) + x + x**2 + 2 * e
    return pd.DataFrame({"y": y, "d": d, "x": x, "school": g})


def study_cluster(reps, rng, n=4000, alpha=0.7):
    mech = pi.AlphaIdentity(alpha, {"x": pi.reference.Uniform(-1, 1)})
    est, se_c, se_n, cov_c, cov_n = [], [], [], [], []
    for _ in range(reps):
        rel = mech.privatize(sim_clustered(n, rng), publish_undeclared=True, random_state=rng)
        rc = _fit(pi.PrivateATE, "y ~ d | x", rel, mech, rng, cluster="school")
        e, s = float(rc.params.iloc[0]), float(rc.bse.iloc[0])
        # naive SE of the same estimate: influence values without the cluster sums
        phi = rc.influence.to_numpy()[:, 0]
        s0 = float(np.sqrt(np.mean(phi**2) / phi.size))
        est.append(e)
        se_c.append(s)
        se_n.append(s0)
        cov_c.append(abs(e - 1.0) <= Z * s)
        cov_n.append(abs(e - 1.0) <= Z * s0)
    sd = np.std(est, ddof=1)
    print(f"B. clustered design, 200 clusters, ICC 0.3, n={n}, alpha={alpha}, {reps} reps")
    print(f"  bias {np.mean(est) - 1:+.4f} (MC se {sd / np.sqrt(reps):.4f}); MC sd {sd:.4f}; "
          f"mean SE cluster {np.mean(se_c):.4f}, naive {np.mean(se_n):.4f}")
    print(_cov_line("cluster-robust 95% CI (target 94-96)", cov_c))
    print(_cov_line("naive 95% CI (under-covers)", cov_n))
    return {"study": "B cluster", "coverage": np.mean(cov_c), "naive": np.mean(cov_n)}


# -- C. sampling weights ---------------------------------------------------------------
def weighted_truth(n_big=2_000_000):
    rng = np.random.default_rng(99)
    x1 = 2 * rng.beta(2, 2, n_big) - 1
    x2 = 2 * rng.beta(1.5, 3, n_big) - 1
    tau = 1.0 + x1 + 0.5 * x2**2
    w = np.exp(x1)
    return float(np.sum(w * tau) / np.sum(w)), float(tau.mean())


def study_weights(reps, rng, n=3000, alpha=0.7):
    mech = mechanism("heterogeneous", alpha)
    target, unweighted = weighted_truth()
    est, cover = [], []
    for _ in range(reps):
        raw = simulate("heterogeneous", n, rng)
        raw["w"] = np.exp(raw["x1"])  # sampling weight from the true (private) covariate
        # the weights column stays public; it is a function of the private x1 on purpose (a
        # simulation of informative weights), so the leak check is overridden
        rel = mech.privatize(raw, publish_undeclared=True, allow_derived=["w"], random_state=rng)
        res = _fit(pi.PrivateATE, FORMULAS["heterogeneous"], rel, mech, rng, weights="w")
        e, s = float(res.params.iloc[0]), float(res.bse.iloc[0])
        est.append(e)
        cover.append(abs(e - target) <= Z * s)
    est = np.array(est)
    mc = est.std(ddof=1) / np.sqrt(reps)
    print(f"C. sampling weights w = exp(x1), n={n}, alpha={alpha}, {reps} reps")
    print(f"  weighted target {target:.4f} (unweighted ATE {unweighted:.4f}); mean estimate "
          f"{est.mean():.4f}; bias {est.mean() - target:+.4f} = "
          f"{(est.mean() - target) / mc:+.2f} MC se")
    print(_cov_line("weighted 95% CI", cover))
    return {"study": "C weights", "coverage": np.mean(cover), "bias_mcse":
            (est.mean() - target) / mc}


# -- D. planner ------------------------------------------------------------------------
def study_planner(reps, rng, n=4000, n_pilot=2000, alphas=(1.0, 0.8, 0.6, 0.5, 0.4)):
    ref_mech = mechanism("heterogeneous", 1.0)
    pilot = simulate("heterogeneous", n_pilot, rng)
    p = pi.plan(pilot, outcome="y", treatment="d", covariates="x1 + x2", mechanism=ref_mech,
                alphas=alphas, n=n, half_width=0.1, n_sim=20, degree=2, random_state=rng)
    rows = []
    for a in alphas:
        mech = mechanism("heterogeneous", a)
        est = [
            float(_fit(pi.PrivateATE, FORMULAS["heterogeneous"],
                       mech.privatize(simulate("heterogeneous", n, rng), publish_undeclared=True,
                                      random_state=rng),
                       mech, rng, degree=2).params.iloc[0])
            for _ in range(reps)
        ]
        sd = np.std(est, ddof=1)
        rows.append({"alpha": a, "TV": p.table.loc[a, "tv"],
                     "predicted SE": p.table.loc[a, "se"], "MC sd": sd,
                     "ratio": p.table.loc[a, "se"] / sd,
                     "ratio MC se": p.table.loc[a, "se"] / sd / np.sqrt(2 * (reps - 1)),
                     "SE inflation": p.table.loc[a, "se_inflation"],
                     "n for +-0.1": p.table.loc[a, "n_required"]})
    out = pd.DataFrame(rows).set_index("alpha")
    print(f"D. planner: pilot n={n_pilot}, study n={n}, {reps} reps per alpha "
          "(target |ratio - 1| < 0.10)")
    print(out.to_string(float_format=lambda v: f"{v:.4g}"))
    return {"study": "D planner", "max_dev": float(np.max(np.abs(out["ratio"] - 1)))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer replications")
    parser.add_argument("--seed", type=int, default=20240505)
    args = parser.parse_args()
    reps = 400 if args.quick else 2000
    rng = np.random.default_rng(args.seed)
    t0 = time.time()
    study_joint(reps, rng)
    study_cluster(reps, rng)
    study_weights(reps, rng)
    study_planner(300 if args.quick else 1000, rng)
    print(f"total {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()

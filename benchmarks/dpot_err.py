"""Err against the noise level for DPOT: the paper's W~ next to the bias-corrected estimate.

Reproduces the Err-vs-noise experiment of Le Tien, Habrard and Sebban (2019, sec. 5.1,
Figure 2 left: Err = |W~ - W| / W against the noise of Theorem 2) for

* ``w_tilde``   the paper's estimate (the in-sample value of the private plan), and
* ``estimate``  the bias-corrected cost of ``privinfer.transport.estimate_transport_cost``
                (in-sample and held-out values at noise variances 1, 4/3, 2, 4 from column
                subsets, extrapolated to zero noise with the hyperbolic model),

with the coverage of its bracket, on four pairs of data sets:

digits    scikit-learn's 8x8 digits (pixel values 0..16; "entry" = one grey level of one
          pixel), source half against the other half shifted one pixel to the right; l = 64
gauss10   N(0, I_10) against N(0.5, 1.2^2 I_10), 100 + 100 points; l = 32
gauss2    N(0, I_2) against N((2, 1.5), diag(1.3, 0.8)^2), 60 + 60 points (the case of the
          issue that motivated the estimate); l = 32
blobs5    three Gaussian clusters in 5-D against the same clusters moved and rescaled,
          150 + 150 points; l = 32

and four "holdout" pairs, a check that the estimate does not only fit the four above
(l = 32 each):

clust2    four tight clusters in 2-D (sd 0.3, corners of a square of side 4) against
          N((1, 1), 1.5^2 I_2), 80 + 80 points
cube3     uniform on [0, 4]^3 against a rotated and shifted copy, 100 + 100 points
small4    N(0, I_4) against N(0.8, I_4), 25 + 25 points (a very small problem)
tdist8    Student t(3) in 8-D with scales 0.5..2 against a Gaussian with the scales
          reversed, 120 + 120 points
ring2     a thin annulus in 2-D (radius 3, radial sd 0.2) against N((0.5, 0), 1.5^2 I_2),
          100 + 100 points (added with the deconvolution estimate, not used to tune it)
heavy3    Student t(2.5) in 3-D against N(0.5, 1.5^2 I_3), 100 + 100 points (likewise)

W is POT's exact squared-Euclidean cost between the two (fixed) point sets; each run
draws a fresh projection and fresh noise (Theorem 2 calibration, "entry" relation,
delta = 1e-5), eps from 0.5 to 50. Columns: relative bias mean(. - W)/W and the paper's
Err = mean|. - W|/W for both estimates, the coverage of the 95% bracket, its mean width
over W, the mean width over W that the same bracket had with the lower end of the
in-sample rule alone (``width_in_end``: before the bounds W >= 0 and W >= the mean part
held it up), and the estimated plan excess over W. ``--eps`` runs a subset of the eps
grid on the same releases as the full run. The last lines check the acceptance rule
"relative bias <= 10% (up to 2 Monte Carlo standard errors) where W~ has >= 50%" and
"coverage >= 90%" separately for the benchmark and the holdout rows, and time one
estimate against the plain DPOT solve.

Optional extras (``--extras``): minibatch Err (Poisson batches of 128, PLD accounting)
and DPDA accuracy on digits, as in the paper's sec. 5.

``--estimator deconvolution`` replaces the extrapolated estimate by the Gaussian-mixture
deconvolution estimate (``estimate_transport_cost(..., estimator="deconvolution")``),
``auto`` by the choice of ``estimator="auto"``, and ``all`` prints the three tables on the
same releases. The deconvolution needs fewer features than ``ell``, so its ``digits``
rows are NaN (``auto`` is the extrapolation there).

Usage:  python benchmarks/dpot_err.py [--quick] [--reps R] [--jobs J] [--extras]
                                      [--estimator extrapolation|deconvolution|auto|all]
                                      [--eps 0.5,1,2] [--designs a,b]
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
import pandas as pd
from scipy import stats
from sklearn.datasets import load_digits

# this checkout's privinfer ahead of any installed copy
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from privinfer.exceptions import SeedReleaseWarning
from privinfer.transport import DPOTSource, dpot, estimate_transport_cost
from privinfer.transport.dpot import _studentized_bound

OUT = pathlib.Path(__file__).parent / "out"
EPS = (0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0)
BENCH = ("digits", "gauss10", "gauss2", "blobs5")
HOLDOUT = ("clust2", "cube3", "small4", "tdist8", "ring2", "heavy3")
DELTA = 1e-5
# research runs: every release below is seeded on purpose, for reproducibility
warnings.simplefilter("ignore", SeedReleaseWarning)


def digits_domains(n_per_domain: int, seed: int = 0):
    """Source digits and the other half shifted one pixel right (labels too)."""
    X, y = load_digits(return_X_y=True)
    perm = np.random.default_rng(seed).permutation(len(y))
    src, tgt = perm[: len(y) // 2][:n_per_domain], perm[len(y) // 2:][:n_per_domain]
    imgs = X[tgt].reshape(-1, 8, 8)
    shifted = np.zeros_like(imgs)
    shifted[:, :, 1:] = imgs[:, :, :-1]
    return X[src], y[src], shifted.reshape(-1, 64), y[tgt]


def design(name: str, quick: bool) -> tuple[np.ndarray, np.ndarray, int]:
    """Source rows, target rows and the projection dimension of a design."""
    rng = np.random.default_rng(99)
    if name == "digits":
        Xs, _, Xt, _ = digits_domains(200 if quick else 400)
        return Xs, Xt, 64
    if name == "gauss10":
        return rng.normal(size=(100, 10)), rng.normal(0.5, 1.2, size=(100, 10)), 32
    if name == "gauss2":
        return (rng.normal(size=(60, 2)),
                rng.normal([2.0, 1.5], [1.3, 0.8], size=(60, 2)), 32)
    if name == "blobs5":
        centres = rng.normal(0, 3, size=(3, 5))
        lab_s, lab_t = rng.integers(0, 3, 150), rng.integers(0, 3, 150)
        Xs = centres[lab_s] + rng.normal(size=(150, 5))
        Xt = 1.3 * centres[lab_t] + 1.0 + 0.7 * rng.normal(size=(150, 5))
        return Xs, Xt, 32
    return holdout_design(name)


def holdout_design(name: str) -> tuple[np.ndarray, np.ndarray, int]:
    """The holdout pairs (see the module docstring); their own seed."""
    rng = np.random.default_rng(7)
    if name == "clust2":
        corners = np.array([[0, 0], [4, 0], [0, 4], [4, 4]], dtype=float)
        Xs = corners[rng.integers(0, 4, 80)] + 0.3 * rng.normal(size=(80, 2))
        return Xs, rng.normal([1.0, 1.0], 1.5, size=(80, 2)), 32
    if name == "cube3":
        Xs = 4 * rng.random((100, 3))
        rot, _ = np.linalg.qr(rng.normal(size=(3, 3)))
        return Xs, (4 * rng.random((100, 3))) @ rot + 1.5, 32
    if name == "small4":
        return rng.normal(size=(25, 4)), rng.normal(0.8, 1.0, size=(25, 4)), 32
    if name == "tdist8":
        scales = np.linspace(0.5, 2.0, 8)
        Xs = rng.standard_t(3, size=(120, 8)) * scales
        return Xs, rng.normal(0.3, 1.0, size=(120, 8)) * scales[::-1], 32
    if name == "ring2":
        angle = rng.uniform(0.0, 2.0 * np.pi, 100)
        radius = 3.0 + 0.2 * rng.normal(size=100)
        Xs = radius[:, None] * np.c_[np.cos(angle), np.sin(angle)]
        return Xs, rng.normal([0.5, 0.0], 1.5, size=(100, 2)), 32
    if name == "heavy3":
        return rng.standard_t(2.5, size=(100, 3)), rng.normal(0.5, 1.5, size=(100, 3)), 32
    raise ValueError(name)


ESTIMATORS = ("extrapolation", "deconvolution", "auto")


def in_sample_end(est) -> float:
    """The bracket's lower end before the mean-part and zero bounds: the smaller of the
    in-sample Student-t bound (one-sided 2.5%) and the t-interval's lower end."""
    noise = est.row_noise_terms if est.row_noise_terms.size else 0.0
    ell = est.in_terms.shape[0]
    q = float(stats.t.ppf(0.975, ell - 1))
    return min(_studentized_bound(est.in_terms - noise, 0.05, upper=False),
               est.estimate - q * est.std_error)


def one_run(args: tuple[str, float, int, bool, str]) -> np.ndarray:
    """(w_tilde, estimate, lower, upper, plan_excess, lower end by the in-sample rule) of
    one release, one row per estimator.

    The deconvolution reuses the release and the private plan of the extrapolation; "auto"
    is whichever of the two ``estimate_transport_cost(..., estimator="auto")`` picks
    (the deconvolution when the release's noise ratio is at most 1).
    """
    name, eps, seed, quick, estimator = args
    Xs, Xt, ell = design(name, quick)
    pub = DPOTSource(eps, DELTA, ell, random_state=seed).publish(Xs)
    res = dpot(pub, Xt, estimator="extrapolation")
    ext = res.estimate
    out = np.full((len(ESTIMATORS), 6), np.nan)
    out[0] = (ext.in_sample, ext.estimate, ext.lower, ext.upper, ext.plan_excess,
              in_sample_end(ext))
    if estimator == "extrapolation" or np.isnan(ext.noise_ratio):
        out[2] = out[0]
        return out
    dec = estimate_transport_cost(pub, Xt, estimator="deconvolution", plan=res.plan,
                                  random_state=seed)
    out[1] = (dec.in_sample, dec.estimate, dec.lower, dec.upper, dec.plan_excess,
              in_sample_end(dec))
    out[2] = out[1] if ext.noise_ratio <= 1.0 else out[0]
    return out


def timing(name: str, quick: bool, estimator: str, runs: int = 5) -> tuple[float, float]:
    """Median seconds of the plain DPOT solve and of the solve with the cost estimate."""
    Xs, Xt, ell = design(name, quick)
    pub = DPOTSource(1.0, DELTA, ell, random_state=1).publish(Xs)
    plain, full = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        res = dpot(pub, Xt, n_folds=None)
        t1 = time.perf_counter()
        if estimator == "extrapolation":
            dpot(pub, Xt, estimator="extrapolation")
        else:
            estimate_transport_cost(pub, Xt, estimator=estimator, plan=res.plan,
                                    random_state=1)
        plain.append(t1 - t0)
        full.append(time.perf_counter() - t1)
    return float(np.median(plain)), float(np.median(full))


def true_cost(name: str, quick: bool) -> float:
    Xs, Xt, _ = design(name, quick)
    a, b = np.full(len(Xs), 1 / len(Xs)), np.full(len(Xt), 1 / len(Xt))
    return float(ot.emd2(a, b, ot.dist(Xs, Xt), numItermax=10**8))


def whole_batch(names, reps: int, jobs: int, quick: bool,
                estimator: str = "extrapolation", eps_set=EPS) -> pd.DataFrame:
    rows = []
    # seeds follow the position in EPS, so a subset of eps gives the same releases
    chosen = [(i, eps) for i, eps in enumerate(EPS) if eps in eps_set]
    wanted = ESTIMATORS if estimator == "all" else (estimator,)
    for name in names:
        W = true_cost(name, quick)
        tasks = [(name, eps, 10_000 * i + r, quick, estimator) for i, eps in chosen
                 for r in range(reps)]
        if jobs > 1:
            with ProcessPoolExecutor(jobs) as pool:
                out = list(pool.map(one_run, tasks, chunksize=4))
        else:
            out = [one_run(t) for t in tasks]
        res = np.asarray(out).reshape(len(chosen), reps, len(ESTIMATORS), 6)
        for i, (_, eps) in enumerate(chosen):
            for e, kind in enumerate(ESTIMATORS):
                if kind not in wanted:
                    continue
                old, new, lo, hi, excess, lo_in = res[i, :, e].T
                rows.append({
                    "design": name, "set": "holdout" if name in HOLDOUT else "bench",
                    "estimator": kind, "eps": eps, "W": W,
                    "bias_w_tilde": (old.mean() - W) / W,
                    "bias_estimate": (new.mean() - W) / W,
                    "mcse_estimate": new.std(ddof=1) / np.sqrt(reps) / W,
                    "err_w_tilde": np.abs(old - W).mean() / W,
                    "err_estimate": np.abs(new - W).mean() / W,
                    "coverage": np.mean((lo <= W) & (hi >= W)),
                    "width": np.mean(hi - lo) / W,
                    # the same bracket with the lower end of the in-sample rule alone
                    "width_in_end": np.mean(hi - lo_in) / W,
                    "plan_excess": excess.mean() / W,
                })
    return pd.DataFrame(rows)


def extras(rng: np.random.Generator, quick: bool) -> None:
    """Minibatch Err (paper's Figure 2 right) and DPDA accuracy, as in the paper."""
    import dp_accounting as dpa
    from sklearn.neighbors import KNeighborsClassifier

    from privinfer.transport import DPDA, DPDASource, PrivacyStatement, PublishedSource
    from privinfer.transport.accounting import minibatch_privacy
    from privinfer.transport.calibration import max_row_norm
    from privinfer.transport.dpot import draw_projection, publish_rows

    Xs, ys, Xt, yt = digits_domains(400 if quick else 898)
    n, ell, n_batches, batch = len(Xs), 64, (20 if quick else 100), 128
    q, delta = batch / n, 1 / (1.2 * n)
    print(f"\nminibatch (digits), q = {q:.3f}, {n_batches} batches, delta = {delta:.3g}")
    print(f"{'sigma/w':>8}{'Err':>9}{'eps (ours, per-row)':>22}{'eps (DP-SGD style)':>21}")
    for r in (0.7, 1.0, 1.3):
        M = draw_projection(Xs.shape[1], ell, rng)
        sigma = r * max_row_norm(M)
        stmt = PrivacyStatement(np.nan, delta, "entry", "bench", sigma, 1.0)
        errs = []
        for _ in range(n_batches):
            keep = np.flatnonzero(rng.random(n) < q)
            if keep.size < 2:
                continue
            tgt = rng.choice(len(Xt), size=keep.size, replace=False)
            u = np.full(keep.size, 1 / keep.size)
            w_b = ot.emd2(u, u, ot.dist(Xs[keep], Xt[tgt]))
            pub = PublishedSource(M, publish_rows(Xs[keep], M, sigma, rng), sigma, stmt)
            errs.append(abs(dpot(pub, Xt[tgt], n_folds=None).w_tilde - w_b) / w_b)
        acc = dpa.pld.PLDAccountant()
        acc.compose(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(r)), n_batches)
        print(f"{r:>8.2f}{np.mean(errs):>9.3f}{minibatch_privacy(r, q, n_batches, delta):>22.2f}"
              f"{acc.get_epsilon(delta):>21.2f}")
    eps, eps_l = 5.0, 1.0
    src_only = KNeighborsClassifier(1).fit(Xs, ys).score(Xt, yt)
    accs = [DPDA(reg_e=0.1, reg_cl=0.5).fit(
        DPDASource(eps, delta, ell, eps_l, classes=np.arange(10),
                   random_state=rng).publish(Xs, ys), Xt).score(Xt, yt) for _ in range(3)]
    print(f"\nDPDA (1-NN) on digits at eps = {eps} + {eps_l}: accuracy {np.mean(accs):.3f} "
          f"(sd {np.std(accs):.3f}); source-only {src_only:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rows and runs")
    parser.add_argument("--reps", type=int, default=None, help="runs per (design, eps)")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument("--designs", default=",".join(BENCH + HOLDOUT))
    parser.add_argument("--eps", default=",".join(map(str, EPS)),
                        help="a subset of the eps grid (same releases as the full run)")
    parser.add_argument("--extras", action="store_true", help="minibatch and DPDA parts")
    parser.add_argument("--estimator", default="extrapolation",
                        choices=(*ESTIMATORS, "all"), help="the cost estimate(s)")
    args = parser.parse_args()
    reps = args.reps or (6 if args.quick else 200)
    names = args.designs.split(",")
    start = time.perf_counter()
    eps_set = tuple(float(e) for e in args.eps.split(","))
    table = whole_batch(names, reps, args.jobs, args.quick, args.estimator, eps_set)
    pd.set_option("display.width", 160)
    for kind, by_kind in table.groupby("estimator", sort=False):
        how = {"extrapolation": "4 column folds, extrapolation to zero noise",
               "deconvolution": "Gaussian-mixture deconvolution, 10 posterior draws",
               "auto": "deconvolution where the noise ratio is <= 1, else extrapolation"}
        print(f"\nDPOT whole batch, {reps} runs per row, delta = {DELTA:g}, {how[kind]}, "
              "95% bracket")
        print(by_kind.drop(columns="estimator").to_string(
            index=False, float_format=lambda v: f"{v:.3f}"))
        for part, sub in by_kind.groupby("set", sort=False):
            hard = sub[sub["bias_w_tilde"].abs() >= 0.5]
            ok_bias = hard["bias_estimate"].abs() <= 0.10
            ok_mc = hard["bias_estimate"].abs() <= 0.10 + 2 * hard["mcse_estimate"]
            print(f"\n[{kind}, {part}] rows where |bias of W~| >= 50%: {len(hard)}; of "
                  f"those, |bias of the estimate| <= 10% in {int(ok_bias.sum())}, <= 10% + "
                  f"2 MC s.e. in {int(ok_mc.sum())}")
            if len(hard):
                print(hard[["design", "eps", "bias_w_tilde", "bias_estimate",
                            "mcse_estimate"]]
                      .to_string(index=False, float_format=lambda v: f"{v:+.3f}"))
            print(f"[{kind}, {part}] bracket coverage: min {sub['coverage'].min():.3f}, "
                  f"rows >= 0.90: {int((sub['coverage'] >= 0.90).sum())} of {len(sub)}")
    timed = ESTIMATORS[:2] if args.estimator in ("all", "auto") else (args.estimator,)
    for name in names:
        for kind in timed:
            if kind != "extrapolation" and design(name, args.quick)[0].shape[1] >= \
                    design(name, args.quick)[2]:
                continue
            plain, full = timing(name, args.quick, kind)
            print(f"time of one fit, {name}: plain DPOT {1e3 * plain:.1f} ms, with the "
                  f"{kind} estimate {1e3 * full:.1f} ms ({full / plain:.1f}x)")
    print(f"time {time.perf_counter() - start:.0f} s")
    OUT.mkdir(exist_ok=True)
    stem = ("dpot_err_quick" if args.quick else "dpot_err") + (
        "" if args.estimator == "extrapolation" else f"_{args.estimator}")
    table.to_csv(OUT / f"{stem}.csv", index=False)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(names), figsize=(3.6 * len(names), 3.3), squeeze=False)
    for ax, name in zip(axes[0], names, strict=True):
        sub = table[table["design"] == name]
        first = sub[sub["estimator"] == sub["estimator"].iloc[0]]
        ax.plot(first["eps"], first["err_w_tilde"], "o--", label="W~ (paper)")
        for kind, by_kind in sub.groupby("estimator", sort=False):
            ax.plot(by_kind["eps"], by_kind["err_estimate"], "s-", label=kind)
        ax.set(xscale="log", yscale="log", xlabel="eps", title=name)
    axes[0][0].set_ylabel("Err = mean |. - W| / W")
    axes[0][0].legend()
    fig.tight_layout()
    fig.savefig(OUT / f"{stem}.png", dpi=120)
    print(f"table: {OUT / (stem + '.csv')}; plot: {OUT / (stem + '.png')}")
    if args.extras:
        extras(np.random.default_rng(2024), args.quick)


if __name__ == "__main__":
    main()

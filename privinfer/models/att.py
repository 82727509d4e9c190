r"""PrivateATT: the average treatment effect on the treated."""

from __future__ import annotations

from privinfer.models._treatment import TreatmentModel

__all__ = ["PrivateATT"]


class PrivateATT(TreatmentModel):
    r"""Average effect on the treated from data with private covariates.

    Only the control regression :math:`\mu_0` and the odds :math:`w = \pi/(1-\pi)` enter
    (DESIGN.md §5). Options as :class:`PrivateATE`; the treatment must be binary (the
    second level is "treated").

    Notes
    -----
    .. math:: \tau = \frac{E[D(Y - \mu_0(X)) - (1-D)w(X)(Y - \mu_0(X))]}{p_1},
       \qquad \varphi_i = \frac{Q_X^{-1}[d(y-\mu_0) - (1-d)w(y-\mu_0)]_i - d_i\tau}{p_1},

    with :math:`p_1 = \frac1n\sum_i D_i` (public). With ``riesz="auto"`` the odds come
    from the automatic Riesz representer :math:`w = \theta_w'\varphi`,
    :math:`\theta_w = G_0^{-1}\frac1n\sum_i Q_X^{-1}[d\varphi]`.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> import privinfer as pi
    >>> rng = np.random.default_rng(0)
    >>> x = rng.uniform(-1, 1, 3000)
    >>> d = (rng.random(3000) < 1 / (1 + np.exp(-x))).astype(int)
    >>> raw = pd.DataFrame({"x": x, "d": d, "y": d * (1 + x) + x + rng.normal(size=3000)})
    >>> mech = pi.AlphaIdentity(0.8, {"x": pi.reference.Uniform(-1, 1)})
    >>> released = mech.privatize(raw, public=["d", "y"], random_state=1)
    >>> res = pi.PrivateATT.from_formula("y ~ d | x", released,
    ...                                  mechanism=mech).fit(random_state=2)
    >>> list(res.params.index)
    ['ATT']
    """

    _estimand = "att"
    _name = "PrivateATT"

r"""Noise calibration for the DPOT publication :math:`(M, X_s M + \Delta)`.

Two neighbour relations are offered; each gives its own sensitivity and calibration.

``"entry"`` (Le Tien, Habrard and Sebban, 2019, Theorem 2; Kenthapadi et al., 2013)
    Two source data sets are neighbours when they differ in **one entry of one row by at
    most 1** in absolute value. Then :math:`X_s M` moves by at most one row of ``M``, so
    the :math:`\ell_2` sensitivity is :math:`w = \max_i \lVert M_{i\cdot}\rVert_2` and
    :func:`theorem2_sigma` gives the paper's :math:`\sigma`.

``"record"`` (replace-one record)
    Each source row is first clipped to the public norm bound ``clip_norm`` (:math:`C`),
    and two data sets are neighbours when **one whole row is replaced** by any other row.
    The sensitivity is :math:`2 C \lVert M\rVert_2` (spectral norm), see
    :func:`record_sensitivity`, and :func:`analytic_gaussian_sigma` calibrates the noise
    exactly (Balle & Wang, 2018).

``M`` is drawn independently of the data and published, so calibrating on the realised
``M`` is legitimate: the guarantee holds conditionally on ``M``.
"""

from __future__ import annotations

import numpy as np

from privinfer._typing import FloatArray
from privinfer._validation import check_in_interval

__all__ = [
    "analytic_gaussian_sigma",
    "max_row_norm",
    "record_sensitivity",
    "theorem2_sigma",
]


def _check_eps_delta(eps: object, delta: object, owner: str) -> tuple[float, float]:
    eps_f = check_in_interval(eps, "eps", owner, 0.0, np.inf, low_open=True, high_open=True)
    delta_f = check_in_interval(delta, "delta", owner, 0.0, 1.0, low_open=True, high_open=True)
    return eps_f, delta_f


def max_row_norm(M: FloatArray) -> float:
    r"""Largest row norm :math:`w = \max_i (\sum_j M_{ij}^2)^{1/2}` of a projection.

    This is the :math:`\ell_2` sensitivity of :math:`X \mapsto XM` when one entry of
    ``X`` changes by at most 1 (the ``"entry"`` relation). For
    :math:`M \sim N(0, 1/\ell)^{k\times\ell}` it concentrates around 1. Cost O(k l).

    Parameters
    ----------
    M : ndarray of shape (n_features, ell)
        The published projection matrix.

    Returns
    -------
    float
        The largest Euclidean norm among the rows of ``M``.

    Examples
    --------
    >>> import numpy as np
    >>> max_row_norm(np.array([[3.0, 4.0], [1.0, 0.0]]))
    5.0
    """
    return float(np.sqrt(np.max(np.sum(np.asarray(M, dtype=float) ** 2, axis=1))))


def record_sensitivity(M: FloatArray, clip_norm: float) -> float:
    r"""Sensitivity :math:`2C\lVert M\rVert_2` of :math:`X\mapsto XM` for replace-one records.

    With every row clipped to :math:`\lVert x\rVert_2 \le C`, replacing one row
    :math:`x` by :math:`x'` moves :math:`XM` by
    :math:`\lVert (x - x')M\rVert_2 \le \lVert x-x'\rVert_2 \lVert M\rVert_2 \le
    2C\lVert M\rVert_2`, and the bound is attained. Cost: one SVD of ``M``.

    Parameters
    ----------
    M : ndarray of shape (n_features, ell)
        The published projection matrix.
    clip_norm : float
        The public bound :math:`C > 0` on the Euclidean norm of a source row.

    Returns
    -------
    float
        :math:`2 C \sigma_{\max}(M)`.

    Raises
    ------
    ValueError
        If ``clip_norm`` is not a positive finite number.

    Examples
    --------
    >>> import numpy as np
    >>> record_sensitivity(np.eye(3), clip_norm=1.5)
    3.0
    """
    c = check_in_interval(
        clip_norm, "clip_norm", "record_sensitivity", 0.0, np.inf, low_open=True, high_open=True
    )
    return float(2.0 * c * np.linalg.norm(np.asarray(M, dtype=float), ord=2))


def theorem2_sigma(eps: float, delta: float, w: float) -> float:
    r"""Noise level of Theorem 2 of Le Tien, Habrard and Sebban (2019).

    The theorem is Kenthapadi et al. (2013), Theorem 1, applied to DPOT.

    Publishing :math:`(M, X_s M + \Delta)` with
    :math:`\Delta \sim N(0, \sigma^2)^{n_s\times \ell}` is :math:`(\varepsilon, \delta)`-DP
    for the ``"entry"`` relation (one entry of one source row changes by at most 1) when
    :math:`\sigma` is at least the value returned. The formula is conservative: the
    analytic Gaussian calibration (:func:`analytic_gaussian_sigma` with sensitivity
    ``w``) is smaller for every :math:`(\varepsilon,\delta)`.

    Parameters
    ----------
    eps : float
        Privacy parameter :math:`\varepsilon > 0`.
    delta : float
        Privacy parameter :math:`\delta \in (0, 1/2)` (the domain of Theorem 2).
    w : float
        Largest row norm of ``M`` (:func:`max_row_norm`), :math:`w > 0`.

    Returns
    -------
    float
        :math:`\sigma = w\sqrt{2(\ln(1/(2\delta)) + \varepsilon)}/\varepsilon`.

    Raises
    ------
    ValueError
        If ``eps <= 0``, ``delta`` is outside (0, 1/2) or ``w <= 0``. Theorem 2 needs
        :math:`\delta < 1/2`; for :math:`\delta \ge e^{\varepsilon}/2` the formula would
        give :math:`\sigma = 0`, i.e. the rows published exactly.

    See Also
    --------
    analytic_gaussian_sigma : exact calibration of the Gaussian mechanism.

    Notes
    -----
    .. math:: \sigma \ge \frac{w\sqrt{2(\ln\frac{1}{2\delta} + \varepsilon)}}{\varepsilon},
              \qquad w = \max_{1\le i\le k}\Big(\sum_{j=1}^{\ell} M_{ij}^2\Big)^{1/2}.

    References
    ----------
    .. [1] Kenthapadi, Korolova, Mironov, Mishra (2013). Privacy via the
       Johnson-Lindenstrauss transform. Journal of Privacy and Confidentiality.

    Examples
    --------
    >>> round(theorem2_sigma(eps=4.0, delta=1 / (1.2 * 4365), w=1.0), 2)
    1.22
    """
    eps_f = check_in_interval(eps, "eps", "theorem2_sigma", 0.0, np.inf, low_open=True,
                              high_open=True)
    delta_f = check_in_interval(delta, "delta", "theorem2_sigma", 0.0, 0.5, low_open=True,
                                high_open=True)
    w_f = check_in_interval(w, "w", "theorem2_sigma", 0.0, np.inf, low_open=True, high_open=True)
    return float(w_f * np.sqrt(2.0 * (np.log(1.0 / (2.0 * delta_f)) + eps_f)) / eps_f)


def analytic_gaussian_sigma(eps: float, delta: float, sensitivity: float) -> float:
    r"""Smallest Gaussian noise that makes an :math:`\ell_2`-sensitivity query DP.

    The analytic Gaussian mechanism of Balle & Wang (2018), computed by
    ``dp_accounting.get_sigma_gaussian`` (which implements that paper) and scaled by the
    sensitivity. Used for the ``"record"`` relation with
    ``sensitivity = record_sensitivity(M, clip_norm)``.

    Parameters
    ----------
    eps : float
        Privacy parameter :math:`\varepsilon > 0`.
    delta : float
        Privacy parameter :math:`\delta \in (0, 1)`.
    sensitivity : float
        :math:`\ell_2` sensitivity :math:`\Delta_2 > 0` of the published query.

    Returns
    -------
    float
        :math:`\sigma` with :math:`\Phi(\frac{\Delta}{2\sigma} - \frac{\varepsilon\sigma}
        {\Delta}) - e^{\varepsilon}\Phi(-\frac{\Delta}{2\sigma} -
        \frac{\varepsilon\sigma}{\Delta}) = \delta`.

    Raises
    ------
    ValueError
        If ``eps <= 0``, ``delta`` is outside (0, 1) or ``sensitivity <= 0``.
    ImportError
        If ``dp-accounting`` is missing (``pip install privinfer[transport]``).

    Notes
    -----
    .. math:: \delta(\varepsilon) = \Phi\Big(\frac{\Delta}{2\sigma} -
              \frac{\varepsilon\sigma}{\Delta}\Big) - e^{\varepsilon}
              \Phi\Big(-\frac{\Delta}{2\sigma} - \frac{\varepsilon\sigma}{\Delta}\Big)

    is the exact privacy profile of :math:`N(0,\sigma^2)` against
    :math:`N(\Delta,\sigma^2)`, so the calibration is tight.

    References
    ----------
    .. [1] Balle, Wang (2018). Improving the Gaussian mechanism for differential privacy:
       analytical calibration and optimal denoising. ICML.

    Examples
    --------
    >>> round(analytic_gaussian_sigma(eps=1.0, delta=1e-5, sensitivity=2.0), 3)
    7.461
    """
    eps_f, delta_f = _check_eps_delta(eps, delta, "analytic_gaussian_sigma")
    sens = check_in_interval(
        sensitivity, "sensitivity", "analytic_gaussian_sigma", 0.0, np.inf,
        low_open=True, high_open=True,
    )
    dpa = _import_dp_accounting()
    return float(sens * dpa.get_sigma_gaussian(eps_f, delta_f))


def _import_dp_accounting():
    try:
        import dp_accounting
    except ImportError as err:  # pragma: no cover - exercised with a monkeypatched import
        raise ImportError(
            "privinfer.transport needs dp-accounting for privacy accounting. Install it with "
            "`pip install privinfer[transport]`."
        ) from err
    return dp_accounting

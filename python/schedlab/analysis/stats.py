"""The statistics of summaries, comparisons and ``bisect``, from ``scipy.stats``:
Student's t quantile of 95 % confidence intervals, and Welch's t-test.

SciPy is imported on first use (``import schedlab`` stays quick)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt


def t975(df: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """The 97.5 % quantile of Student's t with ``df`` degrees of freedom
    (elementwise; NaN where ``df`` is not positive): a 95 % confidence
    interval of a mean of ``n`` values is ± ``t975(n - 1)`` standard errors.
    ``scipy.stats.t.ppf(0.975, df)``."""
    from scipy import stats

    d = np.asarray(df, dtype=np.float64)
    ok = d > 0
    q = stats.t.ppf(0.975, np.where(ok, d, 1.0))
    return np.where(ok, q, np.nan)


def welch_p(
    mean1: npt.ArrayLike,
    std1: npt.ArrayLike,
    n1: npt.ArrayLike,
    mean2: npt.ArrayLike,
    std2: npt.ArrayLike,
    n2: npt.ArrayLike,
) -> npt.NDArray[np.float64]:
    """Two-sided p-value of Welch's t-test of two samples given by their
    means, standard deviations (ddof=1) and counts (elementwise:
    ``scipy.stats.ttest_ind_from_stats(..., equal_var=False)``). NaN where
    a sample has fewer than 2 values or a missing (NaN) count; where both
    standard deviations are 0, 1 if the means are equal, else 0; 0 where the
    t statistic is not finite."""
    from scipy import stats

    m1, s1, c1, m2, s2, c2 = (
        np.asarray(x, dtype=np.float64) for x in (mean1, std1, n1, mean2, std2, n2)
    )
    m1, s1, c1, m2, s2, c2 = np.broadcast_arrays(m1, s1, c1, m2, s2, c2)
    p = np.full(m1.shape, np.nan)
    valid = (c1 >= 2) & (c2 >= 2)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        var = s1 * s1 / np.where(valid, c1, 1.0) + s2 * s2 / np.where(valid, c2, 1.0)
    zero = valid & (var == 0)
    p[zero] = np.where(m1[zero] == m2[zero], 1.0, 0.0)
    rest = valid & ~zero
    if rest.any():
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            res = stats.ttest_ind_from_stats(
                m2[rest], s2[rest], c2[rest], m1[rest], s1[rest], c1[rest], equal_var=False
            )
        t = np.asarray(res.statistic, dtype=np.float64)
        p[rest] = np.where(np.isfinite(t), np.asarray(res.pvalue, dtype=np.float64), 0.0)
    return p

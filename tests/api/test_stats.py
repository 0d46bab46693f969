"""The statistics of summarize, compare and bisect come from scipy.stats:
one t quantile for the 95 % intervals of both (bisect's had a
1.96 cut-off past 30 degrees of freedom), Welch's test for compare."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
import schedlab as sl
from schedlab.analysis.stats import t975, welch_p
from scipy import stats


def test_the_t_quantile_is_scipys_at_every_degree_of_freedom():
    df = np.arange(1, 201)
    assert np.array_equal(t975(df), stats.t.ppf(0.975, df))
    # the quantile itself (scipy releases agree on it to ~1e-11, not to the
    # last bit: scipy 1.15 on CPython 3.10 gives 4.302652729696142)
    assert t975(2) == pytest.approx(4.302652729749464, rel=1e-9)
    # past 30 degrees of freedom it is not the normal's 1.96
    assert t975(40) == pytest.approx(2.021075390306273, rel=1e-9)
    assert np.isnan(t975([0, -1])).all()


def test_welchs_p_value_is_scipys_on_the_samples():
    rng = np.random.default_rng(3)
    a, b = rng.normal(10, 1, 7), rng.normal(11, 3, 12)
    want = stats.ttest_ind(a, b, equal_var=False).pvalue
    got = welch_p(a.mean(), a.std(ddof=1), a.size, b.mean(), b.std(ddof=1), b.size)
    assert got == pytest.approx(want, rel=1e-12)
    # fewer than 2 values: no test; no variance at all: equal means or not
    assert np.isnan(welch_p(1.0, 0.5, 1, 2.0, 0.5, 5))
    assert welch_p([3.0, 3.0], [0.0, 0.0], [4, 4], [3.0, 4.0], [0.0, 0.0], [5, 5]).tolist() == [
        1.0,
        0.0,
    ]


def test_summarize_and_compare_use_them():
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.normal(10, 1, 41), rng.normal(10.5, 2, 9)])
    df = pl.DataFrame({"k": ["a"] * 41 + ["b"] * 9, "status": "ok", "m": x})
    s = sl.summarize(df, "k", ["m"]).sort("k")
    for (n, sd, ci), vals in zip(
        s.select("n", "stddev", "ci95").iter_rows(), (x[:41], x[41:]), strict=True
    ):
        assert ci == pytest.approx(stats.t.ppf(0.975, n - 1) * sd / math.sqrt(n), rel=1e-14)
        assert sd == pytest.approx(vals.std(ddof=1), rel=1e-12)
    c = sl.compare(df, "k", "a", ["m"])
    want = stats.ttest_ind(x[:41], x[41:], equal_var=False).pvalue
    assert c["p_value"][0] == pytest.approx(want, rel=1e-12)

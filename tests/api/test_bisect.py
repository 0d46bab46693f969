"""sl.bisect and Kernel.diff: attributing a change between two kernels to the
fields (kernel changes) that differ between them."""

import polars as pl
import pytest
import schedlab as sl

VOLANO = sl.workloads.volano(rooms=4, users=10, messages=30)


@pytest.fixture(scope="module")
def case1() -> pl.DataFrame:
    good = sl.Kernel("v2.6.36", compat_yield=True)
    bad = sl.Kernel("v2.6.37-rc1", compat_yield=True)
    return sl.bisect("core2-2s", good, bad, VOLANO, "throughput", replicates=3, progress=False)


def test_case1_names_the_rearm_as_culprit(case1):
    # Seed case 1: 2.6.37-rc1 lost VolanoMark throughput through fab476228's
    # avg_idle re-arm, not through the forced newidle balance it came with.
    assert case1["field"].to_list() == ["newidle_rearm", "newidle_force"]
    culprits = case1.filter(pl.col("culprit"))["field"].to_list()
    assert culprits == ["newidle_rearm"]
    row = case1.row(0, named=True)
    assert row["metric_bad"] < row["metric_good"], "rc1 must lose throughput"
    assert row["change_pct_lo"] > 80 and row["culprit_set_pct"] >= 80
    assert row["commit"] == "fab476228ba3"


def test_bisect_frame_is_consistent(case1):
    for r in case1.iter_rows(named=True):
        assert r["change_pct"] == pytest.approx((r["on_pct"] + r["off_pct"]) / 2)
        assert r["change_pct_lo"] <= r["change_pct"] <= r["change_pct_hi"]
        assert r["good"] == "False" and r["bad"] == "True"
    # flipping the culprit alone onto good gives bad's number back (this case
    # has no interaction), and flipping it off bad gives good's
    rearm = case1.row(0, named=True)
    assert rearm["metric_flipped_on_good"] == pytest.approx(rearm["metric_bad"], rel=0.01)
    assert rearm["metric_flipped_off_bad"] == pytest.approx(rearm["metric_good"], rel=0.01)


def test_bisect_is_deterministic_and_thread_independent():
    args = ("vm-2", "v2.6.37", "v3.8", sl.workloads.hackbench(groups=1, loops=10), "elapsed_s")
    a = sl.bisect(*args, replicates=2, seed=5, threads=1, progress=False)
    b = sl.bisect(*args, replicates=2, seed=5, threads=2, progress=False)
    assert a.equals(b)
    assert set(a["field"]) == set(sl.Kernel.preset("v2.6.37").diff("v3.8")["field"])


def test_no_culprit_when_the_change_is_noise():
    # v3.13 vs v3.8 on 2 CPUs with a short pipe hackbench: identical numbers.
    df = sl.bisect(
        "vm-2", "v3.8", "v3.13", sl.workloads.hackbench(groups=1, loops=10), "elapsed_s",
        replicates=2, progress=False,
    )  # fmt: skip
    assert not df["culprit"].any() and df["culprit_set_pct"].is_null().all()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"metric": "thruput"}, r"invalid metric='thruput'.*throughput"),
        ({"bad": "v2.6.36"}, r"equals good"),
        ({"replicates": 1}, r"replicates=1"),
        ({"threshold": 1.5}, r"threshold=1.5"),
        ({"good": "v9"}, r"v9"),
    ],
)
def test_bisect_bad_input(kwargs, match):
    args = {
        "machine": "vm-2",
        "good": "v2.6.36",
        "bad": "v2.6.37-rc1",
        "workload": VOLANO,
        "metric": "throughput",
        "progress": False,
        **kwargs,
    }
    with pytest.raises(ValueError, match=match):
        sl.bisect(**args)


def test_diff_is_a_changelog_frame():
    d = sl.Kernel.preset("v2.6.36").diff("v2.6.37-rc1")
    assert d.columns[:3] == ["field", "this", "other"]
    assert {"kind", "commit", "release", "verified", "doc"} <= set(d.columns)
    assert d["field"].to_list() == ["newidle_rearm", "newidle_force"]
    assert d["commit"].to_list() == ["fab476228ba3", "fab476228ba3"]
    with pytest.raises(TypeError, match="other"):
        sl.Kernel.preset("v3.8").diff(3)  # type: ignore[arg-type]


def test_info_documents_every_field():
    info = sl.Kernel.info()
    assert info["field"].to_list() == sl.Kernel.fields()
    assert info["doc"].str.len_chars().min() > 10
    assert set(info["kind"]) <= {"tunable", "feature", "change", "experiment"}
    changes = info.filter(pl.col("kind") == "change")
    # a change names its release; its commit, when given, is a 12-digit id
    assert changes["release"].str.len_chars().min() > 0
    ids = changes.filter(pl.col("commit") != "")["commit"]
    assert ids.str.contains(r"^[0-9a-f]{12}$").all()


def test_flips_that_cannot_run_are_counted_not_hidden():
    # min_granularity_ns=400 us is valid only with bad's 500 us latency:
    # flipping latency alone onto good (6 ms min gran.) or min_granularity
    # alone off bad makes an invalid kernel whose runs fail.
    good = sl.Kernel.preset("v2.6.36").replace(min_granularity_ns=4_000_000)
    bad = good.replace(latency_ns=500_000, min_granularity_ns=400_000)
    df = sl.bisect(
        "vm-2", good, bad, sl.workloads.hackbench(groups=1, loops=10), "context_switches",
        replicates=3, progress=False,
    )  # fmt: skip
    rows = {r["field"]: r for r in df.iter_rows(named=True)}
    assert rows["latency_ns"]["runs_failed"] == 3 and rows["min_granularity_ns"]["runs_failed"] == 3
    # the side that ran still measures; the failed side is NaN, not 0
    for r in rows.values():
        assert (r["on_pct"] != r["on_pct"]) != (r["off_pct"] != r["off_pct"])
    # only the two together run, so together they are the culprit set
    assert df["culprit"].all() and df["culprit_set_pct"][0] == 100.0


def test_ctrl_c_keeps_the_finished_runs():
    calls = []

    def interrupt(done: int, total: int) -> None:
        calls.append(done)
        if len(calls) == 2:
            raise KeyboardInterrupt

    with pytest.raises(sl.SweepInterrupted) as e:
        sl.bisect(
            "vm-2", "v2.6.37", "v3.8", sl.workloads.hackbench(groups=1, loops=10), "elapsed_s",
            replicates=2, threads=1, progress=interrupt,
        )  # fmt: skip
    partial = e.value.partial
    assert 0 < partial.height < 2 * (2 + 2 * 18)
    assert (partial["status"] == "ok").all()


def test_a_culprit_set_of_several_fields_is_checked_by_a_run():
    # v2.6.37 -> v3.8 on a small hackbench: no single switch carries 80 % of
    # the change, so bisect runs good with growing sets flipped.
    df = sl.bisect(
        "core2-2s", "v2.6.37", "v3.8", sl.workloads.hackbench(groups=4, loops=30), "elapsed_s",
        replicates=4, progress=False,
    )  # fmt: skip
    culprits = df.filter(pl.col("culprit"))
    assert 1 < culprits.height < df.height
    assert df["culprit_set_pct"][0] >= 80
    # the set is a prefix of the ranking
    assert df["culprit"].to_list()[: culprits.height] == [True] * culprits.height


def test_two_fields_give_mirrored_rows_not_a_repeated_one(case1):
    # With two differing fields there are four kernels: good, bad, and the two
    # halfway ones. Flipping newidle_rearm onto good is the kernel of flipping
    # newidle_force off bad, so the second row is the first one mirrored; only
    # metric_good / metric_bad (the endpoints) repeat on every row.
    rearm, force = case1.iter_rows(named=True)
    assert rearm["metric_good"] == force["metric_good"]
    assert rearm["metric_bad"] == force["metric_bad"]
    assert rearm["metric_flipped_on_good"] == force["metric_flipped_off_bad"]
    assert rearm["metric_flipped_off_bad"] == force["metric_flipped_on_good"]
    assert rearm["on_pct"] + force["off_pct"] == pytest.approx(100)
    assert rearm["off_pct"] + force["on_pct"] == pytest.approx(100)
    # and the rows differ: one field carries the change, the other nothing
    assert rearm["change_pct"] > 80 and abs(force["change_pct"]) < 20


def test_a_kernel_reached_twice_is_run_once(monkeypatch):
    from schedlab.analysis import bisection

    sizes: list[int] = []
    real_execute = bisection.execute

    def counting(runs, *args, **kwargs):
        sizes.append(len(runs))
        return real_execute(runs, *args, **kwargs)

    monkeypatch.setattr(bisection, "execute", counting)
    good = sl.Kernel("v2.6.36", compat_yield=True)
    bad = sl.Kernel("v2.6.37-rc1", compat_yield=True)
    w = sl.workloads.hackbench(groups=1, loops=10)
    df = sl.bisect("vm-2", good, bad, w, "elapsed_s", replicates=2, progress=False)
    assert df.height == 2
    # good, bad, good+rearm (= bad-force), good+force (= bad-rearm): 4 kernels
    assert sizes[0] == 4 * 2

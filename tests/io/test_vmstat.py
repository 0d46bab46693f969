import polars as pl
import pytest
import schedlab as sl

W = sl.workloads.volano(rooms=2, users=4, messages=40)


@pytest.fixture(scope="module")
def runs():
    return {
        k: sl.simulate("core2-2s", sl.Kernel(k, compat_yield=True), W, seed=1, interval_s=0.001)
        for k in ("v2.6.36", "v2.6.37-rc1")
    }


def test_table_stacks_the_first_samples_of_each_run(runs):
    t = sl.vmstat_table(runs, samples=2)
    assert t.columns == ["label", "time_s", "r", "in", "cs", "us", "sy", "id"]
    assert t["label"].to_list() == ["v2.6.36"] * 2 + ["v2.6.37-rc1"] * 2
    for k, r in runs.items():
        assert t.filter(pl.col("label") == k)["cs"].to_list() == r.vmstat["cs"].head(2).to_list()


def test_skip_partial_drops_the_wind_down_interval(runs):
    r = runs["v2.6.36"]
    vm = r.vmstat
    assert vm["interval_s"][-1] < vm["interval_s"][0]  # the run ends mid-interval
    every = sl.vmstat_table({"a": r}, samples=10_000, skip_partial=False)
    steady = sl.vmstat_table({"a": r}, samples=10_000)
    assert every.height == vm.height and steady.height == vm.height - 1
    assert steady["time_s"].to_list() == vm["time_s"].head(vm.height - 1).to_list()


def test_format_reads_like_vmstat(runs):
    text = sl.format_vmstat(runs, samples=3)
    lines = text.splitlines()
    assert lines[0].split() == ["r", "in", "cs", "us", "sy", "id"]
    assert len(lines) == 1 + 6
    assert lines[1].startswith("v2.6.36") and lines[4].startswith("v2.6.37-rc1")
    assert lines[2].startswith(" ")  # the label is printed once per block
    first = runs["v2.6.36"].vmstat.row(0, named=True)
    r, inn, cs, us, sy, idle = (int(x) for x in lines[1].split()[1:])
    assert (r, inn, cs) == (first["r"], round(first["in"]), round(first["cs"]))
    assert abs(us + sy + idle - 100) <= 2


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda rs: sl.vmstat_table({}), TypeError, "results"),
        (lambda rs: sl.vmstat_table([1]), TypeError, "results"),
        (lambda rs: sl.vmstat_table({"a": 1}), TypeError, r"results\['a'\]"),
        (lambda rs: sl.vmstat_table({1: rs["v2.6.36"]}), TypeError, "key"),
        (lambda rs: sl.vmstat_table(rs, samples=0), ValueError, "samples"),
        (lambda rs: sl.format_vmstat(rs, skip_partial="yes"), TypeError, "skip_partial"),
    ],
)
def test_bad_input_names_the_parameter(runs, call, exc, match):
    with pytest.raises(exc, match=match):
        call(runs)


def test_a_run_shorter_than_one_interval_keeps_its_one_sample():
    r = sl.simulate("vm-2", "v3.8", sl.workloads.spinners(nice=[0]), duration_s=0.001)
    t = sl.vmstat_table({"short": r})
    assert t.height == 1 and t["time_s"][0] == pytest.approx(0.001)

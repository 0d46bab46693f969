"""The real-kernel harness in scripts/realkernel: its patch of the kernel
source and its reading of the guest's console. (Booting a guest needs QEMU
and a kernel build, so it is not run here; docs/realkernel.md has the runs.)"""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path
from types import ModuleType

import pytest
import schedlab as sl

HERE = Path(__file__).resolve().parents[2] / "scripts" / "realkernel"


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, HERE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def fake_tree(root: Path, *, anchors: bool = True) -> Path:
    sched = root / "kernel" / "sched"
    sched.mkdir(parents=True)
    (sched / "features.h").write_text("SCHED_FEAT(NI_RANDOM, true)\n")
    pm = load("patch_sched")
    body = "int x;\n" + "\n".join(a for a, _ in pm.FAIR_EDITS[: 2 if anchors else 1]) + "\n"
    (sched / "fair.c").write_text(body)
    return root


def test_patch_adds_both_features_once(tmp_path: Path) -> None:
    pm = load("patch_sched")
    src = fake_tree(tmp_path)
    pm.patch(src)
    fair = (src / "kernel/sched/fair.c").read_text()
    feats = (src / "kernel/sched/features.h").read_text()
    assert "!sched_feat(NEWIDLE_BALANCE)" in fair
    assert fair.count("sched_feat(NEWIDLE_THROTTLE_38)") == 2
    assert "avg_idle < sysctl_sched_migration_cost" in fair
    assert "SCHED_FEAT(NEWIDLE_BALANCE, true)" in feats
    assert "SCHED_FEAT(NEWIDLE_THROTTLE_38, false)" in feats
    pm.patch(src)  # a second run changes nothing
    assert (src / "kernel/sched/fair.c").read_text() == fair
    assert (src / "kernel/sched/features.h").read_text() == feats


def test_patch_refuses_a_tree_without_the_anchor(tmp_path: Path) -> None:
    pm = load("patch_sched")
    src = fake_tree(tmp_path, anchors=False)
    before = (src / "kernel/sched/fair.c").read_text()
    with pytest.raises(SystemExit, match="anchor found 0 times"):
        pm.patch(src)
    assert (src / "kernel/sched/fair.c").read_text() == before
    with pytest.raises(SystemExit, match="not found"):
        pm.patch(tmp_path / "nowhere")


def args(**kw: object) -> argparse.Namespace:
    base = dict(groups=20, loops=100, ipc="socket", mode="process", reps=2, throttle="6.1")
    base.update(setsid=False)
    base.update(kw)
    return argparse.Namespace(**base)


def test_guest_script_passes_perfs_flags_and_the_throttle() -> None:
    rm = load("run_messaging")
    s = rm.guest_script(args())
    assert "perf bench sched messaging -g 20 -l 100 >" in s
    assert "NEWIDLE_THROTTLE_38" not in s
    assert "echo 0 > /proc/sys/kernel/sched_autogroup_enabled" in s
    s = rm.guest_script(args(ipc="pipe", mode="thread", throttle="3.8", setsid=True, reps=3))
    assert "messaging -g 20 -l 100 -p -t >" in s
    assert "for f in NO_NI_RANDOM NEWIDLE_THROTTLE_38; do" in s
    assert "seq 1 3" in s and "setsid perf stat" in s
    assert "echo 1 > /proc/sys/kernel/sched_autogroup_enabled" in s


def domain_line(tag: str, counts: dict[tuple[int, int], int]) -> str:
    v = [0] * 36
    for (itype, field), n in counts.items():
        v[8 * itype + field] = n
    return f"SLX {tag} domain0 3 " + " ".join(map(str, v))


def run_lines(rep: int, feat: str, total: float, newidle: tuple[int, int], up: float) -> list[str]:
    count, gained = newidle
    return [
        f"SLX run {rep} {feat}",
        "SLX out # Running 'sched/messaging' benchmark:",
        f"SLX out      Total time: {total} [sec]",
        "SLX ps # started on Mon Nov 30 06:26:29 2026",
        "SLX ps 1283.73,msec,task-clock,1283728277,100.00,1.405,CPUs utilized",
        "SLX ps 2217,,context-switches,1283728277,100.00,1.727,K/sec",
        "SLX ps 178,,cpu-migrations,1283728277,100.00,138.659,/sec",
        f"SLX u0 {up} 0.5",
        f"SLX u1 {up + 2.0} 0.9",
        "SLX p0 cpu  100 0 100 700 100 0 0 0 0 0",
        "SLX p1 cpu  400 0 300 750 150 0 0 0 0 0",
        "SLX s0 version 15",
        "SLX s0 cpu0 0 0 0 0 0 0 1 1 1",
        domain_line("s0", {(2, 0): 10, (2, 4): 1, (1, 4): 5}),
        "SLX s1 cpu0 0 0 0 0 0 0 1 1 1",
        domain_line("s1", {(2, 0): 10 + count, (2, 4): 1 + gained, (1, 4): 9}),
    ]


def test_parse_reads_perf_stat_proc_stat_and_schedstat_deltas(tmp_path: Path) -> None:
    rm = load("run_messaging")
    log = tmp_path / "guest.log"
    lines = ["SeaBIOS noise", "SLX boot 6.1.172 cpus=2"]
    lines += run_lines(1, "NEWIDLE_BALANCE", 5.25, (972, 111), 10.0)
    lines += run_lines(1, "NO_NEWIDLE_BALANCE", 5.0, (0, 0), 20.0)
    log.write_text("\n".join(lines + ["SLX end"]) + "\n")
    rows = rm.parse(rm.console(log))
    assert [r["newidle"] for r in rows] == ["with", "without"]
    w, wo = rows
    assert w["total_s"] == 5.25 and wo["total_s"] == 5.0
    assert w["context_switches"] == 2217 and w["cpu_migrations"] == 178
    assert w["task_clock_ms"] == pytest.approx(1283.73)
    assert w["elapsed_s"] == 2.0
    assert (w["uptime_end_s"], wo["uptime_end_s"]) == (12.0, 22.0)
    # idle + iowait jiffies over all: (50 + 50) / (300 + 200 + 50 + 50)
    assert w["idle_frac"] == pytest.approx(100 / 600, abs=1e-4)
    assert (w["lb_count_newidle"], w["lb_gained_newidle"]) == (972, 111)
    assert (wo["lb_count_newidle"], wo["lb_gained_newidle"]) == (0, 0)
    assert w["lb_gained_busy"] == 4 and w["lb_gained_idle"] == 0


# --- measure_aim7.py and measure_hackbench_rt.py: parsing of real output ---

REAIM_CSV = """Forks,JPM,JPM_C,JPS_C,parent_tm,childU_tm,childS_tm,std_dev,JTI,max_c,min_c
1,13173.91,13173.91,219.57,0.46,0.34,0.08,0.00,100.00,0.46,0.46
"""

PERF_X = """4.93,msec,task-clock,493350000,100.00,0.989,CPUs utilized
293,,context-switches,493350000,100.00,593.898,/sec
62,,cpu-migrations,493350000,100.00,125.672,/sec
48,,sched:sched_process_fork,493350000,100.00,97.294,/sec
13770,,page-faults,493350000,100.00,27.912,K/sec
"""

STRACE_C = """% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
 63.33   13.860604       22106       627       209 wait4
  9.14    2.000415     1000207         2           clock_nanosleep
  0.80    0.176064        1743       101           unlink
------ ----------- ----------- --------- --------- ----------------
100.00   21.884000         123    177000      4000 total
"""


def test_reaim_csv_and_perf_stat_are_read():
    m = load("measure_aim7")
    r = m.parse_reaim_csv(REAIM_CSV)
    assert r["parent_tm"] == 0.46 and r["childU_tm"] == 0.34 and r["JTI"] == 100.0
    assert r["forked"] == 1.0
    p = m.parse_perf_stat(PERF_X)
    assert p == {
        "task_clock_s": pytest.approx(0.00493),
        "context_switches": 293,
        "cpu_migrations": 62,
        "forks": 48,
        "page_faults": 13770,
    }
    with pytest.raises(sl.MeasureError, match="reaim CSV line 1: header 'garbage'"):
        m.parse_reaim_csv("garbage")
    with pytest.raises(ValueError, match="did not count"):
        m.parse_perf_stat(PERF_X.replace("62,,cpu", "<not counted>,,cpu"))
    with pytest.raises(ValueError, match="lacks context-switches.*page-faults"):
        m.parse_perf_stat(PERF_X.splitlines()[0])


def test_strace_summary_config_sizes_and_jobs():
    m = load("measure_aim7")
    rows = m.parse_strace_summary(STRACE_C)
    assert [r["syscall"] for r in rows] == ["wait4", "clock_nanosleep", "unlink"]
    assert rows[0] == {"syscall": "wait4", "calls": 627, "errors": 209, "seconds": 13.860604}
    assert rows[1]["errors"] == 0
    cfg = Path(__file__).parents[1] / "data" / "reaim.config.example"
    assert m.config_sizes(cfg) == (10, 1024)
    # a probe of 100 jobs in 0.05 s: 2 000 jobs for a 1 s run; long runs keep 100
    assert m.jobs_for(0.05, 100, 1.0, 20_000) == 2000
    assert m.jobs_for(0.0, 100, 1.0, 5000) == 5000
    assert m.jobs_for(1.5, 100, 1.0, 20_000) == 100
    cmd = m.reaim_command("reaim", Path("wf"), Path("cfg"), 2, 100, Path("p"), syncs=False)
    assert cmd[:4] == ["reaim", "-y", "-s2", "-e2"]


def test_hackbench_rt_commands_and_parsing():
    m = load("measure_hackbench_rt")
    rt = m.commands("rt-tests", 2, 1000)
    assert rt[-7:] == ["hackbench", "-g", "2", "--threads", "--pipe", "-l", "1000"]
    pb = m.commands("perf-bench", 10, 200)
    assert pb[-10:] == ["perf", "bench", "sched", "messaging", "-g", "10", "-t", "-p", "-l", "200"]
    with pytest.raises(ValueError, match="invalid prog"):
        m.commands("lmbench", 1, 1)
    out = "Running in threaded mode...\nTime: 0.890\n" + PERF_X
    r = m.parse(out)
    assert r["elapsed_s"] == 0.89 and r["context_switches"] == 293
    assert m.parse("     Total time: 0.792 [sec]\n" + PERF_X)["elapsed_s"] == 0.792
    with pytest.raises(ValueError, match="lacks elapsed_s"):
        m.parse(PERF_X)


def test_wake_preemption_script_reads_perf_and_the_pair():
    import schedlab as sl
    from schedlab.host import measurement

    m = load("measure_wake_preemption")
    # perf stat's counters are read by the library's parse_perf
    err = "12.5,msec,task-clock,12500000,100.00,,\n1500,,context-switches,1,100.00,,\n"
    err += "40,,cpu-migrations,1,100.00,,\n"
    assert m.parse_perf is measurement.parse_perf
    got = m.parse_perf("     Total time: 0.115 [sec]\n" + err)
    assert got == {
        "task_clock_s": 0.0125,
        "context_switches": 1500.0,
        "cpu_migrations": 40.0,
        "elapsed_s": 0.115,
    }
    with pytest.raises(sl.MeasureError, match="lacks elapsed_s"):
        m.parse_perf(err)
    # the pair's row: the whole schedule's wake-ups, and the receiver's
    # messages over them
    w = sl.workloads.hackbench(groups=1, fds=1, loops=500, ipc="pipe").with_tasks(cpus=0)
    r = sl.simulate("vm-2", "v6.18", w, seed=1, trace=True)
    row = m.pair_row(r, 500, source="model", rep=1)
    st = sl.schedule_stats(r).filter(role="all").row(0, named=True)
    assert row["wakeups"] == st["wakeups"] > 0
    assert row["messages_per_wakeup"] == pytest.approx(500 / st["wakeups"])
    assert 0 <= row["wakeup_preempt_pct"] <= 100 and row["source"] == "model"


# measure_schedule.py: re-reading kept recordings (--from) and its refusals,
# none of which needs root or perf.

DATA = Path(__file__).resolve().parents[1] / "data" / "schedule"
REPO = Path(__file__).resolve().parents[2]


def kept(tmp_path: Path) -> Path:
    """A --keep directory holding the stored 1-group, 10-loop pipe recording."""
    import gzip

    d = tmp_path / "kept"
    d.mkdir()
    text = gzip.decompress((DATA / "messaging-g1-l10-pipe.txt.gz").read_bytes())
    (d / "messaging-pipe-process-g1-r0.txt").write_bytes(text)
    return d


ONE = ["--ipc", "pipe", "--mode", "process", "--groups", "1", "--loops", "10", "--reps", "1"]


def test_measure_schedule_from_kept_recordings(tmp_path: Path) -> None:
    ms = load("measure_schedule")
    out = tmp_path / "cmp.parquet"
    rc = ms.main(["--from", str(kept(tmp_path)), *ONE, "--seeds", "1", "--out", str(out)])
    assert rc == 0
    import polars as pl

    df = pl.read_parquet(out)
    row = df.filter((pl.col("role") == "all") & (pl.col("statistic") == "switches_in")).row(
        0, named=True
    )
    assert row["real"] > 0 and row["model"] > 0
    assert set(df["ipc"]) == {"pipe"} and set(df["groups"]) == {1}


def test_measure_schedule_refuses_missing_recordings_and_both_dirs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ms = load("measure_schedule")
    d = kept(tmp_path)
    out = str(tmp_path / "x.parquet")
    with pytest.raises(SystemExit) as e:
        ms.main(["--from", str(d), *ONE[:-1], "2", "--out", out])
    assert e.value.code == 2
    assert "messaging-pipe-process-g1-r1.txt" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        ms.main(["--from", str(d), "--keep", str(tmp_path / "k"), *ONE, "--out", out])
    assert e.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err
    assert not (tmp_path / "x.parquet").exists()


def test_measure_schedule_refuses_a_frame_it_cannot_calibrate_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ms = load("measure_schedule")
    frame = REPO / "notebooks" / "data" / "hackbench-counts-measured-vm2.parquet"
    args = ["--from", str(kept(tmp_path)), *ONE, "--out", str(tmp_path / "x.parquet")]
    with pytest.raises(SystemExit) as e:
        ms.main([*args, "--calibrate", str(frame), "--train-groups", "3"])
    assert e.value.code == 2
    assert "--calibrate" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        ms.main([*args, "--calibrate", str(tmp_path / "none.parquet")])
    assert e.value.code == 2

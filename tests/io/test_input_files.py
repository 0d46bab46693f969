"""Every input file is read within a bound and only if it is a regular
file: rt-app descriptions and logs, recorded traces (gzipped ones by what
they inflate to), sweep specs, checkpoints and their digest files. A
FIFO, directory, device or symlink loop is refused without blocking; a
file past its bound is refused while it is read; each refusal is a
``ConfigError`` naming the parameter, the path and the limit. Also: a
trace whose only events are a replayed task's wake-up or fork by the idle
task replays. A property test feeds the readers random bytes, sizes and
file kinds: they only ever return or raise schedlab's own errors."""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import tempfile
import threading
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import schedlab as sl
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from schedlab import inputs
from schedlab.cli import main
from schedlab.run import checkpoint as checkpoint_mod

W = sl.workloads
TINY = W.hackbench(groups=1, fds=2, loops=3)
IDLE_WAKES = "<idle>-0 [000] ..... 0.000001: sched_waking: comm=b pid=11 prio=120 target_cpu=000"
IDLE_FORKS = (
    "<idle>-0 [000] ..... 0.000001: sched_process_fork: comm=swapper/0 pid=0 "
    "child_comm=b child_pid=11"
)
SPEC = '[workload]\nkind = "hackbench"\ngroups = 1\nfds = 2\nloops = 3\n'


@contextlib.contextmanager
def unblocked(*fifos: Path, after_s: float = 5.0) -> Iterator[list[bool]]:
    """Fail rather than hang on a reader that blocks on one of ``fifos``:
    after ``after_s``, each FIFO still waited on is opened for writing and
    closed (its reader then sees the end of the file). Yields a list that
    holds True once that had to be done."""
    blocked: list[bool] = []
    done = threading.Event()

    def release() -> None:
        if done.wait(after_s):
            return
        for f in fifos:
            try:
                fd = os.open(f, os.O_WRONLY | os.O_NONBLOCK)  # ENXIO: nobody reads
            except OSError:
                continue
            blocked.append(True)
            os.close(fd)

    t = threading.Thread(target=release, daemon=True)
    t.start()
    try:
        yield blocked
    finally:
        done.set()
        t.join()


def refused(call: Callable[[], Any], *fifos: Path) -> str:
    """The message of the ``ConfigError`` ``call`` raises, checking that it
    did not block on one of ``fifos``."""
    with unblocked(*fifos) as blocked, pytest.raises(sl.ConfigError) as info:
        call()
    assert not blocked, "the reader blocked on a FIFO"
    return str(info.value)


def refused_peak(call: Callable[[], Any]) -> tuple[str, int]:
    """``refused(call)``'s message and the peak memory (bytes, tracemalloc)
    the call took before it was refused."""
    tracemalloc.start()
    try:
        msg = refused(call)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return msg, peak


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    p = tmp_path / "pipe"
    os.mkfifo(p)
    return p


@pytest.fixture
def loop(tmp_path: Path) -> Path:
    a, b = tmp_path / "loop-a", tmp_path / "loop-b"
    a.symlink_to(b)
    b.symlink_to(a)
    return a


# --- 1. a trace whose replayed task only appears woken or forked by <idle> -----


@pytest.mark.parametrize("line", [IDLE_WAKES, IDLE_FORKS], ids=["waking", "fork"])
def test_a_task_only_woken_or_forked_by_the_idle_task_replays(line):
    w = W.from_trace([line])
    assert w.recorded is not None and w.recorded["tasks"] == 1
    r = sl.simulate("vm-2", "v3.8", w)
    assert r.status == "ok"


def test_the_cli_replays_a_task_only_woken_by_the_idle_task(tmp_path, capsys):
    trace = tmp_path / "t.txt"
    trace.write_text(IDLE_WAKES + "\n")
    assert main(["run", "--workload", "from_trace", "--param", f"path={trace}"]) == 0
    assert "min()" not in capsys.readouterr().err


# --- 2. bounds: devices, large files, compressed bombs ------------------------


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_rt_app_refuses_a_device(device):
    msg = refused(lambda: W.rt_app(device))
    assert f"invalid json={device!r}: a character device" in msg


def test_from_trace_and_load_spec_refuse_a_device():
    assert "invalid path='/dev/zero': a character device" in refused(
        lambda: W.from_trace("/dev/zero")
    )
    assert "invalid spec='/dev/zero': a character device" in refused(
        lambda: sl.load_spec("/dev/zero")
    )


def test_rt_app_refuses_a_file_or_string_past_its_bound(tmp_path, monkeypatch):
    monkeypatch.setattr(inputs, "MAX_RTAPP_BYTES", 1024)
    big = tmp_path / "big.json"
    big.write_text('{"tasks": {"t": {"run": 100}}}' + " " * 1024)
    msg = refused(lambda: W.rt_app(big))
    assert f"invalid json={str(big)!r}: larger than 1 KiB (1,024 bytes)" in msg
    assert "rt-app JSON" in msg
    msg = refused(lambda: W.rt_app('{"tasks": {"t": {"run": 100}}}' + " " * 1024))
    assert "larger than 1 KiB (1,024 bytes)" in msg
    small = tmp_path / "small.json"
    small.write_text('{"tasks": {"t": {"run": 100}}}')
    assert W.rt_app(small).kind == "rt_app"


def test_a_gzipped_trace_is_bounded_by_what_it_inflates_to(tmp_path, monkeypatch):
    monkeypatch.setattr(inputs, "MAX_TRACE_BYTES", 1 << 20)
    bomb = tmp_path / "bomb.txt.gz"
    bomb.write_bytes(gzip.compress(b"# comment\n" * 400_000, 9))  # 4 MB as ~10 KB
    assert bomb.stat().st_size < 50_000
    msg, peak = refused_peak(lambda: W.from_trace(bomb))
    assert f"invalid path={str(bomb)!r}: larger than 1 MiB (1,048,576 bytes)" in msg
    assert "recorded trace" in msg
    assert peak < 1 << 20  # refused at the bound, not after inflating all of it


def test_a_line_without_end_is_refused_at_the_line_bound(tmp_path):
    # the default bounds: 64 MB of zeros without a newline, gzipped to 64 KB
    bomb = tmp_path / "zeros.gz"
    with gzip.open(bomb, "wb", 9) as f:
        for _ in range(64):
            f.write(b"\0" * (1 << 20))
    msg, peak = refused_peak(lambda: W.from_trace(bomb))
    assert "line 1 is longer than 1,048,576 characters" in msg and str(bomb) in msg
    assert peak < 16 << 20


def test_a_plain_trace_past_its_bound_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(inputs, "MAX_TRACE_BYTES", 4096)
    big = tmp_path / "big.txt"
    big.write_text(IDLE_WAKES + "\n" + "# padding\n" * 500)
    assert "larger than 4 KiB (4,096 bytes)" in refused(lambda: W.from_trace(big))
    assert "larger than 4 KiB" in refused(lambda: sl.schedule_stats(big))


def test_the_cli_refuses_a_device_as_rt_app_json_in_one_line(capsys):
    assert main(["run", "--workload", "rt_app", "--param", "json=/dev/zero"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("schedlab: error: invalid json='/dev/zero': a character device")
    assert "\n" not in err and "Traceback" not in err


def test_an_rt_app_log_past_its_bound_is_refused(tmp_path, monkeypatch):
    from schedlab.io import rtapp

    monkeypatch.setattr(inputs, "MAX_RTAPP_LOG_BYTES", 100)
    log = tmp_path / "rt-t-0.log"
    log.write_text("# header\n" * 20)
    assert "larger than 100 bytes" in refused(lambda: rtapp.read_log(log))
    assert "a character device" in refused(lambda: rtapp.read_log("/dev/zero"))


# --- 3. FIFOs, directories and symlink loops never block ----------------------


def test_readers_refuse_a_fifo_without_blocking(fifo):
    for call, param in [
        (lambda: W.rt_app(fifo), "json"),
        (lambda: W.from_trace(fifo), "path"),
        (lambda: sl.load_spec(fifo), "spec"),
        (lambda: sl.schedule_stats(fifo), "path"),
    ]:
        msg = refused(call, fifo)
        assert f"invalid {param}={str(fifo)!r}: a FIFO (named pipe)" in msg


def test_the_cli_sweep_refuses_a_fifo_spec(fifo, tmp_path, capsys):
    with unblocked(fifo) as blocked:
        rc = main(["sweep", str(fifo), "-o", str(tmp_path / "x.parquet"), "--no-progress"])
    assert not blocked and rc == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"schedlab: error: invalid spec={str(fifo)!r}: a FIFO")


def test_readers_refuse_directories_and_symlink_loops(tmp_path, loop):
    for call, param in [
        (lambda p: W.rt_app(p), "json"),
        (lambda p: W.from_trace(p), "path"),
        (lambda p: sl.load_spec(p), "spec"),
    ]:
        assert f"invalid {param}={str(tmp_path)!r}: a directory" in refused(
            lambda c=call: c(tmp_path)
        )
        msg = refused(lambda c=call: c(loop))
        assert (
            f"invalid {param}={str(loop)!r}: cannot read it (Too many levels of symbolic links)"
            in msg
        )


def sweep_with(ck: Path, **kw: Any) -> Any:
    return sl.sweep("vm-2", "v3.8", TINY, checkpoint=ck, progress=False, **kw)


@pytest.fixture
def checkpoint(tmp_path: Path) -> Path:
    ck = tmp_path / "ck.parquet"
    sweep_with(ck)
    return ck


def test_a_checkpoint_digest_that_is_a_fifo_is_refused_without_blocking(checkpoint):
    digest = checkpoint_mod._digest_path(checkpoint)
    digest.unlink()
    os.mkfifo(digest)
    msg = refused(lambda: sweep_with(checkpoint), digest)
    assert f"invalid checkpoint={str(checkpoint)!r}" in msg
    assert f"its digest file {str(digest)!r}" in msg and "a FIFO" in msg


@pytest.mark.parametrize("kind", ["directory", "device", "loop"])
def test_a_checkpoint_digest_of_another_kind_is_refused(checkpoint, kind):
    digest = checkpoint_mod._digest_path(checkpoint)
    digest.unlink()
    if kind == "directory":
        digest.mkdir()
    elif kind == "device":
        digest.symlink_to("/dev/zero")
    else:
        other = digest.with_name("other")
        digest.symlink_to(other)
        other.symlink_to(digest)
    msg = refused(lambda: sweep_with(checkpoint))
    assert f"its digest file {str(digest)!r}" in msg
    assert {"directory": "a directory", "device": "a character device", "loop": "symbolic"}[
        kind
    ] in msg


# --- 4. a digest file nested too deep or too large -----------------------------


@pytest.mark.parametrize("text", ["[" * 100_000, "[" * 3000, '{"accept": ' + "[" * 2000])
def test_a_deeply_nested_digest_file_is_refused(checkpoint, text):
    checkpoint_mod._digest_path(checkpoint).write_text(text)
    msg = refused(lambda: sweep_with(checkpoint))
    assert "digest file" in msg and "remove it or choose another path" in msg


def test_a_large_digest_file_names_its_bound(checkpoint):
    checkpoint_mod._digest_path(checkpoint).write_text(" " * 5000)
    assert "larger than 4 KiB (4,096 bytes)" in refused(lambda: sweep_with(checkpoint))


@pytest.mark.parametrize(
    "doc",
    [{"accept": [1, 2]}, {"accept": "abc"}, {"accept": [[]]}, [], {"other": []}, {"accept": []}],
)
def test_a_digest_file_of_another_shape_is_refused(checkpoint, doc):
    checkpoint_mod._digest_path(checkpoint).write_text(json.dumps(doc))
    msg = refused(lambda: sweep_with(checkpoint))
    assert "digest file" in msg


def test_a_checkpoint_past_its_bound_is_refused(checkpoint, monkeypatch):
    monkeypatch.setattr(inputs, "MAX_CHECKPOINT_BYTES", 100)
    assert "larger than 100 bytes" in refused(lambda: sweep_with(checkpoint))


def test_the_cli_refuses_a_deep_digest_in_one_line(tmp_path, capsys):
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC)
    ck = tmp_path / "ck.parquet"
    argv = ["sweep", str(spec), "-o", str(tmp_path / "o.parquet"), "--checkpoint", str(ck)]
    assert main([*argv, "--no-progress"]) == 0
    checkpoint_mod._digest_path(ck).write_text("[" * 4000)  # within the 4 KiB bound
    assert main([*argv, "--no-progress", "--force"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("schedlab: error: invalid checkpoint=")
    # the parser gives up by recursion (3.10-3.12) or at the text's end
    # (3.13's deeper limit): either way one line, no traceback
    assert "RecursionError" in err[-1] or "JSONDecodeError" in err[-1]
    assert "Traceback" not in "".join(err)


# --- the property: random bytes, sizes and file kinds --------------------------

KINDS = ["regular", "regular", "regular", "fifo", "directory", "device", "loop", "missing"]


def _trace_line(draw: Any) -> str:
    comm = draw(st.sampled_from(["a", "b", "<idle>", "perf", "kworker/0:1", "perf-exec"]))
    pid = draw(st.integers(0, 5))
    ts = f"{draw(st.integers(0, 3))}.{draw(st.integers(0, 999_999)):06d}"
    ev = draw(
        st.sampled_from(
            [
                "sched_switch",
                "sched_waking",
                "sched_wakeup",
                "sched_wakeup_new",
                "sched_process_fork",
                "sched_migrate_task",
                "sched_stat_runtime",
            ]
        )
    )
    other = draw(st.integers(0, 5))
    name = draw(st.sampled_from(["a", "b", "swapper/0", "perf"]))
    prio = draw(st.sampled_from([120, 100, 0, 139, 50]))
    if ev == "sched_switch":
        state = draw(st.sampled_from(["R", "S", "D", "X", "Z", "R+", "I"]))
        fields = (
            f"prev_comm={comm} prev_pid={pid} prev_prio={prio} prev_state={state} ==> "
            f"next_comm={name} next_pid={other} next_prio={prio}"
        )
    elif ev == "sched_process_fork":
        fields = f"comm={comm} pid={pid} child_comm={name} child_pid={other}"
    elif ev == "sched_migrate_task":
        fields = f"comm={name} pid={other} prio={prio} orig_cpu=0 dest_cpu=1"
    else:
        fields = f"comm={name} pid={other} prio={prio} target_cpu=001"
    return f"{comm}-{pid} [00{draw(st.integers(0, 3))}] d..2. {ts}: {ev}: {fields}"


@st.composite
def contents(draw: Any, reader: str) -> bytes:
    """Random bytes, or text shaped like what ``reader`` reads."""
    shaped = {
        "trace": lambda: "\n".join(_trace_line(draw) for _ in range(draw(st.integers(0, 12)))),
        "rt_app": lambda: json.dumps(
            {"tasks": {"t": {"run": draw(st.integers(-5, 2000)), "sleep": 100}}}
        ),
        "spec": lambda: SPEC if draw(st.booleans()) else "x = " + "[" * draw(st.integers(0, 500)),
        "checkpoint": lambda: "PAR1",
    }
    choice = draw(st.integers(0, 2))
    if choice == 0:
        return draw(st.binary(max_size=3000))
    text = shaped[reader]()
    if choice == 2 and text:  # a cut or a flipped byte
        data = bytearray(text.encode())
        i = draw(st.integers(0, len(data) - 1))
        data[i] ^= draw(st.integers(1, 255))
        return bytes(data[: draw(st.integers(i, len(data)))])
    return text.encode()


def _place(kind: str, where: Path, data: bytes, gz: bool) -> Path:
    if kind == "regular":
        where.write_bytes(gzip.compress(data) if gz else data)
    elif kind == "fifo":
        os.mkfifo(where)
    elif kind == "directory":
        where.mkdir()
    elif kind == "device":
        where.symlink_to("/dev/zero")
    elif kind == "loop":
        other = where.with_name(where.name + ".loop")
        where.symlink_to(other)
        other.symlink_to(where)
    return where


def _read(reader: str, path: Path) -> Any:
    if reader == "rt_app":
        return W.rt_app(path)
    if reader == "trace":
        return W.from_trace(path)
    if reader == "spec":
        return sl.load_spec(path)
    return sweep_with(path)


@settings(
    max_examples=600,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    reader=st.sampled_from(["rt_app", "trace", "spec", "checkpoint"]),
    kind=st.sampled_from(KINDS),
    data=st.data(),
    bound=st.sampled_from([None, 64, 1000]),
    gz=st.booleans(),
)
def test_readers_only_return_or_raise_schedlab_errors(reader, kind, data, bound, gz):
    body = data.draw(contents(reader))
    if reader == "checkpoint":  # the checkpoint must be a file: its digest takes the kind
        digest_kind, kind = kind, "regular"
        digest_data = data.draw(
            st.one_of(
                st.binary(max_size=200),
                st.just(b"[" * 3000),
                st.just(json.dumps({"accept": ["0" * 64]}).encode()),
            )
        )
    else:
        digest_kind, digest_data = "regular", b""
    names = {
        "rt_app": "MAX_RTAPP_BYTES",
        "trace": "MAX_TRACE_BYTES",
        "spec": "MAX_SPEC_BYTES",
        "checkpoint": "MAX_CHECKPOINT_BYTES",
    }
    old = getattr(inputs, names[reader])
    if bound is not None:
        setattr(inputs, names[reader], bound)
    try:
        with tempfile.TemporaryDirectory() as d:
            path = _place(kind, Path(d) / "input", body, gz and reader == "trace")
            if reader == "checkpoint":
                _place(digest_kind, checkpoint_mod._digest_path(path), digest_data, False)
            fifos = [p for p in Path(d).iterdir() if p.is_fifo()]
            with unblocked(*fifos) as blocked:
                try:
                    _read(reader, path)
                    event(f"{reader}: a result")
                except sl.SchedlabError as e:
                    event(f"{reader}: {type(e).__name__}")
            assert not blocked, "a reader blocked on a FIFO"
    finally:
        setattr(inputs, names[reader], old)


_PIECES = [b"a", b"bc", b"\n", b"\r", b"\r\n", b"\xe2\x82\xac", b"\xc3\xa9", b"\xff", b"\xe2"]


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    pieces=st.lists(st.sampled_from(_PIECES), max_size=80),
    block=st.sampled_from([1, 2, 3, 5, 7, 64, 1 << 16]),
)
def test_text_lines_are_text_io_wrappers_lines_whatever_the_block(pieces, block, monkeypatch):
    # the block reader against Python's own universal-newline text reader:
    # same lines, whatever block boundary cuts a \r\n or a UTF-8 character
    # (the monkeypatch is set again for each example, never undone between)
    import io

    data = b"".join(pieces)
    monkeypatch.setattr(inputs, "_BLOCK", block)
    got = list(inputs.text_lines("path", Path("x"), io.BytesIO(data), 1 << 20, 1 << 20, "text"))
    want = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="replace")
    assert got == [line.rstrip("\n") for line in want]


@pytest.mark.parametrize("block", [3, 1 << 16])
def test_text_lines_judges_a_line_by_its_characters(block, monkeypatch):
    import io

    monkeypatch.setattr(inputs, "_BLOCK", block)

    def read(data: bytes) -> list[str]:
        return list(inputs.text_lines("path", Path("x"), io.BytesIO(data), 1 << 20, 10, "text"))

    # ten two-byte characters are within a 10-character line bound
    assert read("é".encode() * 10 + b"\nz") == ["é" * 10, "z"]
    # lines ended by a lone \r are lines, however long the run without \n
    assert read(b"abcdefgh\r" * 20) == ["abcdefgh"] * 20
    for data in (b"a" * 11 + b"\n", b"a" * 50, b"ok\n" + "é".encode() * 11):
        with pytest.raises(sl.ConfigError, match="is longer than 10 characters"):
            read(data)

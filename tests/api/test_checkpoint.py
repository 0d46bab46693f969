"""Sweep checkpoints are verified before they are resumed."""

import json

import polars as pl
import pytest
import schedlab as sl
from schedlab.run import checkpoint as checkpoint_mod

W = sl.workloads.hackbench(groups=2, loops=15)
GRID = {"workload.loops": [10, 11]}
KW = {"replicates": 2, "seed": 3, "threads": 1, "chunk_size": 1, "progress": False}


def no_wall(df: pl.DataFrame) -> pl.DataFrame:
    return df.select([c for c in df.columns if "wall" not in c])


def run(ck=None, **kw):
    return sl.sweep("vm-2", "v3.8", W, GRID, checkpoint=ck, **{**KW, **kw})


@pytest.fixture(scope="module")
def fresh():
    return run()


@pytest.fixture
def good(tmp_path):
    """A complete, valid checkpoint of the 4-run sweep."""
    ck = tmp_path / "ck.parquet"
    run(ck)
    return ck


def redigest(ck):
    """Make ``ck``'s digest file accept its present bytes, as someone who
    crafts a checkpoint on purpose would: the checks behind it then run."""
    digest = checkpoint_mod._digest_path(ck)
    digest.write_text(json.dumps({"accept": [checkpoint_mod._file_sha256(ck)]}))


def rewrite(ck, df, *, rehash, **meta_over):
    """Write ``df`` to ``ck`` with the metadata ``ck`` had, its content hash
    recomputed (``rehash``) or kept, and ``meta_over`` on top; the digest
    file accepts the new bytes."""
    meta = pl.read_parquet_metadata(ck)
    if rehash:
        meta["schedlab.content_sha256"] = checkpoint_mod._content_hash(df)
    meta.update(meta_over)
    df.write_parquet(ck, metadata=meta)
    redigest(ck)


def refused(ck, match):
    with pytest.raises(sl.ConfigError, match=match) as info:
        run(ck)
    msg = str(info.value)
    assert f"checkpoint={str(ck)!r}" in msg and "remove it or choose another path" in msg
    return msg


def test_a_good_checkpoint_resumes_to_the_uninterrupted_result(good, fresh):
    full = pl.read_parquet(good)
    assert full.height == 4
    # keep two finished rows, as an interrupted sweep would have
    partial = [r for r in full.to_dicts() if (r["point"], r["replicate"]) in {(0, 1), (1, 0)}]
    checkpoint_mod.save_checkpoint(good, partial, pl.read_parquet_metadata(good)["schedlab.sweep"])
    seen = []
    resumed = run(good, progress=lambda done, total: seen.append(done))
    assert seen == [3, 4]  # two runs were resumed, not re-run
    assert no_wall(resumed).equals(no_wall(fresh))
    assert pl.read_parquet(good).height == 4


def test_cancelled_rows_are_run_again(good, fresh):
    df = pl.read_parquet(good).with_columns(
        status=pl.when(pl.col("point") == 1).then(pl.lit("cancelled")).otherwise("status")
    )
    rewrite(good, df, rehash=True)
    seen = []
    resumed = run(good, progress=lambda done, total: seen.append(done))
    assert seen == [3, 4]
    assert no_wall(resumed).equals(no_wall(fresh))


def test_bit_flipped_files_are_refused_before_parsing(good):
    # Every flipped bit is refused by the byte digest, before polars parses
    # the file (a damaged length field can make polars abort the process).
    data = good.read_bytes()
    n = len(data)
    offsets = range(0, n, max(1, n // 80))
    for i, off in enumerate(offsets):
        flipped = bytearray(data)
        flipped[off] ^= 1 << (i % 8)
        good.write_bytes(bytes(flipped))
        refused(good, "bytes do not match the digest")
    assert len(offsets) >= 40


def test_a_rewritten_file_with_its_old_digest_is_refused(good):
    # one row dropped, the content hash recomputed, the digest file untouched
    df = pl.read_parquet(good)[1:]
    meta = pl.read_parquet_metadata(good)
    meta["schedlab.content_sha256"] = checkpoint_mod._content_hash(df)
    df.write_parquet(good, metadata=meta)
    refused(good, "bytes do not match the digest")


def test_a_missing_or_damaged_digest_file_is_refused(good):
    digest = checkpoint_mod._digest_path(good)
    digest.write_text("{not json")
    refused(good, "digest file .* cannot be read")
    digest.unlink()
    msg = refused(good, "digest file .* is missing")
    assert "copy it along with the checkpoint" in msg


def test_a_kill_between_the_two_renames_leaves_a_resumable_checkpoint(good, fresh):
    # save_checkpoint replaces the digest file first, then the checkpoint:
    # a kill in between leaves the old checkpoint beside the new digest.
    old = good.read_bytes()
    full = pl.read_parquet(good)
    partial = [r for r in full.to_dicts() if r["point"] == 0]
    checkpoint_mod.save_checkpoint(good, partial, pl.read_parquet_metadata(good)["schedlab.sweep"])
    assert pl.read_parquet(good).height == 2
    good.write_bytes(old)  # as if the second rename never happened
    assert no_wall(run(good)).equals(no_wall(fresh))


def test_altered_values_with_the_old_hash_are_refused(good):
    df = pl.read_parquet(good)
    assert (df["messages_per_s"] > 0).all()
    df = df.with_columns(pl.col("messages_per_s") * 2)  # a metric doubled
    rewrite(good, df, rehash=False)
    refused(good, "content hash")


@pytest.mark.parametrize("rehash", [False, True])
def test_a_duplicate_row_is_refused(good, rehash):
    df = pl.read_parquet(good)
    rewrite(good, pl.concat([df, df[1:2]]), rehash=rehash)
    msg = refused(good, "content hash" if not rehash else "more than once")
    assert not rehash or "point=0, replicate=1" in msg


@pytest.mark.parametrize("rehash", [False, True])
def test_an_unplanned_row_is_refused(good, rehash):
    df = pl.read_parquet(good)
    extra = df[:1].with_columns(point=pl.lit(7, dtype=df["point"].dtype))
    rewrite(good, pl.concat([df, extra]), rehash=rehash)
    refused(good, "content hash" if not rehash else r"\(point=7, replicate=0\) not in the sweep")


def test_a_row_with_another_seed_is_refused(good):
    df = pl.read_parquet(good).with_columns(
        seed=pl.when(pl.col("point") == 1).then(pl.col("seed") + 1).otherwise("seed")
    )
    rewrite(good, df, rehash=True)
    refused(good, "seed=")


@pytest.mark.parametrize("keep", [0, 8, 0.5, -1])
def test_a_truncated_file_is_refused(good, keep):
    data = good.read_bytes()
    cut = int(len(data) * keep) if isinstance(keep, float) else keep % len(data)
    good.write_bytes(data[:cut])
    refused(good, "bytes do not match the digest")
    redigest(good)  # a file truncated before its digest was written
    refused(good, "cannot be read")


def test_another_version_is_refused(good):
    rewrite(good, pl.read_parquet(good), rehash=True, **{"schedlab.version": "0.0.1-other"})
    msg = refused(good, "written by schedlab version '0.0.1-other'")
    assert sl.__version__ in msg


def test_a_checkpoint_without_a_hash_is_refused(good):
    meta = pl.read_parquet_metadata(good)
    del meta["schedlab.content_sha256"]
    pl.read_parquet(good).write_parquet(good, metadata=meta)
    redigest(good)
    refused(good, "no content hash")


def test_a_different_sweep_is_still_refused(good):
    with pytest.raises(sl.ConfigError, match="different sweep"):
        sl.sweep("vm-2", "v3.8", W, {"workload.loops": [12]}, checkpoint=good, **KW)

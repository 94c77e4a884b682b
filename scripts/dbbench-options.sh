# Sourced by the db_bench comparisons (dbbench-throughput.sh,
# dbbench-instructions.sh): the two tools, and db_bench's flags for what
# `ledgerbench run micro --backends rocksdb-leveled --engine-memory 128MiB`
# opens.
#
#   dbbench_tools                sets DB_BENCH and BIN
#   dbbench_opts NUM THREADS     sets the array DBB_OPTS

# $LEDGERBENCH_DB_BENCH names another db_bench (Debian's rocksdb-tools is
# RocksDB 7.8: a comparison with it measures two RocksDB versions too);
# by default 11.8.1, built from the crate's sources once. $LEDGERBENCH_BIN
# names a ledgerbench binary (a published run's copy of a clean commit's
# build); by default the workspace's, built first.
dbbench_tools() {
    DB_BENCH=${LEDGERBENCH_DB_BENCH:-$(scripts/build-dbbench.sh)}
    if [[ -n "${LEDGERBENCH_BIN:-}" ]]; then
        BIN=$LEDGERBENCH_BIN
    else
        cargo build --release --workspace --locked --quiet
        # shellcheck source=scripts/bin.sh
        source scripts/bin.sh
        BIN="$(ledgerbench_bin)"
    fi
}
#
# rocksdb-leveled at --engine-memory 128MiB (crates/rocksdb: scale_memory
# and RocksConfig::default), spelled out for db_bench, whose own defaults
# differ from the library's in places; statistics on, as the backend keeps
# them for its counters (a timer and a histogram record per operation);
# an LRU block cache, the backend's (db_bench's default is HyperClockCache).
# 16-byte keys, 100-byte values, one put a commit, no compression.
dbbench_opts() {
    local num=$1 threads=$2
    DBB_OPTS=(--key_size=16 --value_size=100 --num="$num" --reads="$num" --threads="$threads"
        --batch_size=1 --compression_type=none --compaction_style=0 --disable_auto_compactions=0
        --write_buffer_size=$(((128 << 20) / 6)) --max_write_buffer_number=6
        --level0_file_num_compaction_trigger=50 --max_background_jobs=4 --open_files=5000
        --cache_size=$((32 << 20)) --cache_high_pri_pool_ratio=0.5 --block_size=4096 --bloom_bits=10
        --optimize_filters_for_memory=1 --level_compaction_dynamic_level_bytes=1
        --compaction_readahead_size=2097152 --enable_pipelined_write=0 --delayed_write_rate=16777216
        --hard_pending_compaction_bytes_limit=274877906944 --disable_wal=0 --sync=0 --use_fsync=0
        --use_direct_reads=0 --use_direct_io_for_flush_and_compaction=0 --statistics=1 --cache_type=lru_cache --seed=42)
}

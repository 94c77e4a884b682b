# The timing gate's two `ledgerbench ab` comparisons, sourced by
# scripts/gate.sh; scripts/ab-trials.sh OUT -- gate measures the first one
# with exactly these flags.
#
# Batch time: MDBX ingesting 300 ledgers in 15 batches, stores on tmpfs
# where there is room. The workload is chosen for rounds, not realism: on
# the 2-core VM one run of any engine varies by 5-9% from the next (a
# process-level effect, seen alike on RocksDB, LMDB and MDBX, pinned to a
# CPU or not), so catching 5% takes dozens of rounds, and a round should
# cost little. RocksDB's runs varied more for the same time (its
# background compaction), and lookups add a second of streaming to each
# run without helping batch time; the ledgers are generated once per side
# (ab's spool cache), not once per run. Rounds are added while batch
# time's noise is over ±3%: the half-width at which a 5% change is caught
# 19 times in 20 at alpha 0.01 (5% x 2.576 / (2.576 + 1.645)).
GATE_AB_BATCH=(
    --metric summary.batch_secs
    --noise-target summary.batch_secs=3 --max-rounds 60
    -- run stellar --preset smoke --ledgers 300 --batch-ledgers 20
    --streaming-ledgers 0 --pregenerate --backends mdbx --device none
)
# Lookup p99: ab's default workload (RocksDB leveled, 120 ledgers, then 10
# streamed with lookups), 20 rounds: the lookups' p99 showed same-code
# bands of ±2.5-9% even at 60 rounds (results/ab-2026-11-25/noise-target),
# so this catches gross regressions of lookups, not 5%.
GATE_AB_LOOKUPS=(
    --metric streaming.one_step.p99_us --metric streaming.two_step.p99_us
    --rounds 20
)

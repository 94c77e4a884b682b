package main

import (
	"fmt"

	"github.com/cockroachdb/pebble"
)

type pebbleEngine struct {
	db   *pebble.DB
	sync *pebble.WriteOptions
}

// openPebble maps ledgerbench's durability onto Pebble's WAL: none disables it;
// process and power sync it per commit. A NoSync commit waits in Pebble's
// own WAL buffer until its flush loop writes it, so a kill -9 can lose it
// (ledgerbench's conformance suite caught this): unlike RocksDB, Pebble has no
// commit that reaches the OS without an fsync.
func openPebble(dir string, cfg Config) (Engine, error) {
	cache := pebble.NewCache(max64(cfg.CacheBytes, 8<<20))
	defer cache.Unref()
	opts := &pebble.Options{
		Cache:                    cache,
		MemTableSize:             uint64(max64(cfg.MemtableBytes, 1<<20)),
		L0CompactionThreshold:    orDefault(cfg.L0CompactTrigger, 4),
		L0StopWritesThreshold:    orDefault(cfg.L0StopTrigger, 12),
		MaxConcurrentCompactions: func() int { return orDefault(cfg.Compactions, 1) },
		DisableWAL:               cfg.Durability == "none",
		Logger:                   quietLogger{},
	}
	db, err := pebble.Open(dir, opts)
	if err != nil {
		return nil, err
	}
	w := pebble.Sync
	if cfg.Durability == "none" {
		w = pebble.NoSync
	}
	return &pebbleEngine{db: db, sync: w}, nil
}

type quietLogger struct{}

func (quietLogger) Infof(string, ...interface{})  {}
func (quietLogger) Errorf(string, ...interface{}) {}

// Fatalf panics with Pebble's message: the guard catches it and stops the
// store's writes (Pebble's default logger would exit the whole process).
func (quietLogger) Fatalf(format string, args ...interface{}) {
	panic(fmt.Sprintf(format, args...))
}

func (e *pebbleEngine) Write(ops []Op) error {
	b := e.db.NewBatch()
	defer b.Close()
	for _, op := range ops {
		var err error
		switch {
		case op.Range:
			err = b.DeleteRange(op.Key, op.Value, nil)
		case op.Del:
			err = b.Delete(op.Key, nil)
		default:
			err = b.Set(op.Key, op.Value, nil)
		}
		if err != nil {
			return err
		}
	}
	return b.Commit(e.sync)
}

func (e *pebbleEngine) Get(key, dst []byte) (int, bool, error) {
	v, closer, err := e.db.Get(key)
	if err == pebble.ErrNotFound {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	copy(dst, v)
	return len(v), true, closer.Close()
}

func (e *pebbleEngine) Scan(start []byte, visit func(k, v []byte) bool) error {
	it, err := e.db.NewIter(&pebble.IterOptions{LowerBound: start})
	if err != nil {
		return err
	}
	for valid := it.First(); valid && visit(it.Key(), it.Value()); valid = it.Next() {
	}
	return it.Close()
}

func (e *pebbleEngine) Flush() error { return e.db.Flush() }

func (e *pebbleEngine) Compact() error {
	it, err := e.db.NewIter(nil)
	if err != nil {
		return err
	}
	var first, last []byte
	if it.First() {
		first = append([]byte(nil), it.Key()...)
	}
	if it.Last() {
		last = append(append([]byte(nil), it.Key()...), 0)
	}
	if err := it.Close(); err != nil || first == nil {
		return err
	}
	return e.db.Compact(first, last, true)
}

// Stats maps Pebble's Metrics onto ledgerbench's engine counters: WAL bytes
// written, bytes flushed and compacted (written and read) summed over
// levels, the block cache, files per level and the compaction debt.
func (e *pebbleEngine) Stats() (map[string]any, error) {
	m := e.db.Metrics()
	var flushed, compacted, read uint64
	var tables int64
	files := make([]int64, 0, len(m.Levels))
	for _, l := range m.Levels {
		flushed += l.BytesFlushed
		compacted += l.BytesCompacted
		read += l.BytesRead
		tables += l.Size
		files = append(files, l.NumFiles)
	}
	return map[string]any{
		"wal_bytes":                m.WAL.BytesWritten,
		"flush_write_bytes":        flushed,
		"compaction_write_bytes":   compacted,
		"compaction_read_bytes":    read,
		"block_cache_hits":         m.BlockCache.Hits,
		"block_cache_misses":       m.BlockCache.Misses,
		"files_per_level":          files,
		"pending_compaction_bytes": m.Compact.EstimatedDebt,
		"running_compactions":      m.Compact.NumInProgress,
		"memtable_bytes":           m.MemTable.Size,
		// Live tables only; DiskSpaceUsage would add WALs and obsolete files.
		"sst_bytes": tables,
	}, nil
}

func (e *pebbleEngine) Close() error { return e.db.Close() }

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

func orDefault(v, d int) int {
	if v > 0 {
		return v
	}
	return d
}

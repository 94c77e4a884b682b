package main

import (
	"sync/atomic"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

// vlogGCEvery is how often the value log is garbage-collected. Badger
// leaves that to the application (its README: call RunValueLogGC
// periodically); without it deleted and overwritten values are never
// reclaimed. It rewrites only files its discard statistics call half
// garbage, and those come from compactions of the LSM: with 1 MiB blobs in
// the value log and only their keys in the LSM, a blob store with a TTL
// filled an 8 GiB device in under a minute with the GC running and no file
// rewritten (its passes and rewrites are in the stats, `vlog_gc_*`).
const vlogGCEvery = 10 * time.Second

type badgerEngine struct {
	db   *badger.DB
	stop chan struct{}
	done chan struct{}
	// The value-log GC's work: passes, files rewritten, time in it.
	gcPasses   atomic.Int64
	gcRewrites atomic.Int64
	gcNanos    atomic.Int64
}

// openBadger: SyncWrites for power; otherwise commits reach the OS (the
// value log is written per commit) and survive kill -9. Badger has no mode
// that skips its value log, so none keeps what process keeps.
func openBadger(dir string, cfg Config) (Engine, error) {
	opts := badger.DefaultOptions(dir).
		WithLogger(nil).
		WithSyncWrites(cfg.Durability == "power").
		WithBlockCacheSize(max64(cfg.CacheBytes, 8<<20)).
		WithMemTableSize(max64(cfg.MemtableBytes, 1<<20)).
		// Badger keeps up to five memtables by default: at the 64 MiB
		// floor that is 320 MiB of write buffers, far past the engine's
		// budget. Two (the active one and one being flushed) stay nearer
		// it; Badger still needs more than 256 MiB in all (README).
		WithNumMemtables(2).
		WithNumLevelZeroTables(orDefault(cfg.L0CompactTrigger, 5)).
		WithNumLevelZeroTablesStall(orDefault(cfg.L0StopTrigger, 15)).
		WithNumCompactors(orDefault(cfg.Compactions, 2)).
		WithMetricsEnabled(true).
		// Values at least this big go to the value log; it must stay under
		// the largest batch Badger takes (15% of the memtable).
		WithValueThreshold(min(1<<20, max64(cfg.MemtableBytes, 1<<20)/10))
	db, err := badger.Open(opts)
	if err != nil {
		return nil, err
	}
	e := &badgerEngine{db: db, stop: make(chan struct{}), done: make(chan struct{})}
	go e.collect()
	return e, nil
}

// collect runs the value-log GC every vlogGCEvery until Close: each pass
// rewrites files at least half garbage until none is left
// (ErrNoRewrite), as Badger's README runs it.
func (e *badgerEngine) collect() {
	defer close(e.done)
	t := time.NewTicker(vlogGCEvery)
	defer t.Stop()
	for {
		select {
		case <-e.stop:
			return
		case <-t.C:
		}
		start := time.Now()
		for {
			// ErrNoRewrite: nothing worth rewriting; ErrRejected: closing or
			// another GC running; anything else is for the next tick too
			// (a full disk shows in the writes that fail, with its error).
			if err := e.db.RunValueLogGC(0.5); err != nil {
				break
			}
			e.gcRewrites.Add(1)
		}
		e.gcPasses.Add(1)
		e.gcNanos.Add(int64(time.Since(start)))
	}
}

// Write commits the batch in one transaction, so it lands whole or not at
// all; a batch too big for one transaction is an error saying so.
func (e *badgerEngine) Write(ops []Op) error {
	return e.db.Update(func(txn *badger.Txn) error {
		for _, op := range ops {
			var err error
			if op.Del {
				err = txn.Delete(op.Key)
			} else {
				err = txn.Set(op.Key, op.Value)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
}

func (e *badgerEngine) Get(key, dst []byte) (int, bool, error) {
	n := 0
	err := e.db.View(func(txn *badger.Txn) error {
		it, err := txn.Get(key)
		if err != nil {
			return err
		}
		// Value, not ValueCopy: the value is copied once, into dst.
		return it.Value(func(v []byte) error {
			n = len(v)
			copy(dst, v)
			return nil
		})
	})
	if err == badger.ErrKeyNotFound || err == badger.ErrEmptyKey {
		return 0, false, nil
	}
	return n, err == nil, err
}

func (e *badgerEngine) Scan(start []byte, visit func(k, v []byte) bool) error {
	return e.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.DefaultIteratorOptions)
		defer it.Close()
		for it.Seek(start); it.Valid(); it.Next() {
			item := it.Item()
			v, err := item.ValueCopy(nil)
			if err != nil {
				return err
			}
			if !visit(item.Key(), v) {
				return nil
			}
		}
		return nil
	})
}

// Flush syncs the value log and the memtables' write-ahead files; Badger
// writes a memtable out as a table when it is full.
func (e *badgerEngine) Flush() error { return e.db.Sync() }

func (e *badgerEngine) Compact() error { return e.db.Flatten(1) }

// Stats: Badger reports the LSM and value-log sizes and block-cache hits
// and misses; it does not count bytes written by flushes and compactions.
func (e *badgerEngine) Stats() (map[string]any, error) {
	lsm, vlog := e.db.Size()
	levels := e.db.Levels()
	files := make([]int64, len(levels))
	for i, l := range levels {
		files[i] = int64(l.NumTables)
	}
	out := map[string]any{
		"files_per_level": files,
		"extra": map[string]any{
			"lsm_bytes":        lsm,
			"vlog_bytes":       vlog,
			"vlog_gc_passes":   e.gcPasses.Load(),
			"vlog_gc_rewrites": e.gcRewrites.Load(),
			"vlog_gc_micros":   e.gcNanos.Load() / 1000,
		},
	}
	if m := e.db.BlockCacheMetrics(); m != nil {
		out["block_cache_hits"] = m.Hits()
		out["block_cache_misses"] = m.Misses()
	}
	return out, nil
}

// Close stops the value-log GC, waiting for a pass under way, then closes.
func (e *badgerEngine) Close() error {
	close(e.stop)
	<-e.done
	return e.db.Close()
}

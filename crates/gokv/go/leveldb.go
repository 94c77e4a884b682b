package main

import (
	"github.com/syndtr/goleveldb/leveldb"
	"github.com/syndtr/goleveldb/leveldb/errors"
	"github.com/syndtr/goleveldb/leveldb/opt"
	"github.com/syndtr/goleveldb/leveldb/util"
)

type levelEngine struct {
	db *leveldb.DB
	wo *opt.WriteOptions
}

// openLevelDB: goleveldb always writes its journal, so durability none
// keeps what process keeps; power syncs the journal per commit.
func openLevelDB(dir string, cfg Config) (Engine, error) {
	db, err := leveldb.OpenFile(dir, &opt.Options{
		BlockCacheCapacity:  int(max64(cfg.CacheBytes, 8<<20)),
		WriteBuffer:         int(max64(cfg.MemtableBytes, 1<<20)),
		CompactionL0Trigger: orDefault(cfg.L0CompactTrigger, 4),
		WriteL0PauseTrigger: orDefault(cfg.L0StopTrigger, 12),
		Filter:              nil,
	})
	if err != nil {
		return nil, err
	}
	return &levelEngine{db: db, wo: &opt.WriteOptions{Sync: cfg.Durability == "power"}}, nil
}

func (e *levelEngine) Write(ops []Op) error {
	b := new(leveldb.Batch)
	for _, op := range ops {
		if op.Del {
			b.Delete(op.Key)
		} else {
			b.Put(op.Key, op.Value)
		}
	}
	return e.db.Write(b, e.wo)
}

// Get copies the value goleveldb returns (it allocates one per read; its
// API has no other).
func (e *levelEngine) Get(key, dst []byte) (int, bool, error) {
	v, err := e.db.Get(key, nil)
	if err == errors.ErrNotFound {
		return 0, false, nil
	}
	copy(dst, v)
	return len(v), err == nil, err
}

func (e *levelEngine) Scan(start []byte, visit func(k, v []byte) bool) error {
	it := e.db.NewIterator(&util.Range{Start: start}, nil)
	defer it.Release()
	for it.Next() && visit(it.Key(), it.Value()) {
	}
	return it.Error()
}

// syncKey is written and deleted in one synced batch by Flush: goleveldb
// skips an empty batch, and a synced write is its only way to fsync the
// journal. The net effect is a tombstone no read can see.
var syncKey = []byte("\xff\xffledgerbench-flush")

// Flush makes every commit so far durable by syncing the journal.
// goleveldb has no memtable flush of its own (CompactRange would compact
// the whole range too): its memtable becomes a table when full.
func (e *levelEngine) Flush() error {
	b := new(leveldb.Batch)
	b.Put(syncKey, nil)
	b.Delete(syncKey)
	return e.db.Write(b, &opt.WriteOptions{Sync: true})
}

func (e *levelEngine) Compact() error { return e.db.CompactRange(util.Range{}) }

// Stats: goleveldb counts bytes read and written by compactions per level
// and all table IO; it has no block-cache hit counter.
func (e *levelEngine) Stats() (map[string]any, error) {
	var s leveldb.DBStats
	if err := e.db.Stats(&s); err != nil {
		return nil, err
	}
	var w, r int64
	for i := range s.LevelWrite {
		w += s.LevelWrite[i]
		r += s.LevelRead[i]
	}
	files := make([]int64, len(s.LevelTablesCounts))
	for i, n := range s.LevelTablesCounts {
		files[i] = int64(n)
	}
	return map[string]any{
		"files_per_level": files,
		"extra": map[string]any{
			"level_write_bytes": w,
			"level_read_bytes":  r,
			"io_write_bytes":    s.IOWrite,
			"io_read_bytes":     s.IORead,
			"write_delay_count": s.WriteDelayCount,
		},
	}, nil
}

func (e *levelEngine) Close() error { return e.db.Close() }

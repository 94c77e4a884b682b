package main

import (
	"bytes"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"
)

var bucket = []byte("kv")

type boltEngine struct {
	db *bolt.DB
}

// openBolt: bbolt syncs every commit unless NoSync, and without the sync a
// power cut may leave a torn store, so process and power both sync (as
// LMDB must); none sets NoSync.
func openBolt(dir string, cfg Config) (Engine, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	db, err := bolt.Open(filepath.Join(dir, "data.bolt"), 0o600, &bolt.Options{
		NoSync:         cfg.Durability == "none",
		NoFreelistSync: true,
	})
	if err != nil {
		return nil, err
	}
	err = db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(bucket)
		return err
	})
	if err != nil {
		db.Close()
		return nil, err
	}
	return &boltEngine{db: db}, nil
}

func (e *boltEngine) Write(ops []Op) error {
	return e.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucket)
		for _, op := range ops {
			var err error
			if op.Del {
				err = b.Delete(op.Key)
			} else {
				err = b.Put(op.Key, op.Value)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
}

func (e *boltEngine) Get(key, dst []byte) (int, bool, error) {
	n, found := 0, false
	err := e.db.View(func(tx *bolt.Tx) error {
		// The value is bbolt's mmap, valid inside the transaction only.
		if v := tx.Bucket(bucket).Get(key); v != nil {
			n, found = len(v), true
			copy(dst, v)
		}
		return nil
	})
	return n, found, err
}

func (e *boltEngine) Scan(start []byte, visit func(k, v []byte) bool) error {
	return e.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucket).Cursor()
		for k, v := c.Seek(start); k != nil; k, v = c.Next() {
			if bytes.Compare(k, start) < 0 {
				continue
			}
			if !visit(k, v) {
				return nil
			}
		}
		return nil
	})
}

func (e *boltEngine) Flush() error { return e.db.Sync() }

// Compact: bbolt has no in-place compaction (only a copy to a new file).
func (e *boltEngine) Compact() error { return nil }

func (e *boltEngine) Stats() (map[string]any, error) {
	s := e.db.Stats()
	var depth int
	var branch, leaf, overflow int
	err := e.db.View(func(tx *bolt.Tx) error {
		bs := tx.Bucket(bucket).Stats()
		depth, branch, leaf = bs.Depth, bs.BranchPageN, bs.LeafPageN
		overflow = bs.BranchOverflowN + bs.LeafOverflowN
		return nil
	})
	return map[string]any{
		"tree_depth":     depth,
		"branch_pages":   branch,
		"leaf_pages":     leaf,
		"overflow_pages": overflow,
		"page_size":      e.db.Info().PageSize,
		"extra": map[string]any{
			"free_pages":     s.FreePageN,
			"tx_writes":      s.TxStats.GetWrite(),
			"tx_pages_alloc": s.TxStats.GetPageAlloc(),
		},
	}, err
}

func (e *boltEngine) Close() error { return e.db.Close() }

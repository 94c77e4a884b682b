package main

// nullEngine answers from nothing and keeps nothing: run through the
// sidecar it measures the pipe's round trip, the cost every Go backend
// pays per operation on top of its engine.
type nullEngine struct {
	valueBytes int
}

func (e *nullEngine) Write(ops []Op) error { return nil }

// Get answers every key with valueBytes of bytes derived from the key,
// written straight into dst (nothing allocated).
func (e *nullEngine) Get(key, dst []byte) (int, bool, error) {
	n := e.valueBytes
	if n <= 0 {
		n = 256
	}
	x := uint64(0xcbf29ce484222325)
	for _, b := range key {
		x = (x ^ uint64(b)) * 0x100000001b3
	}
	if len(dst) < n {
		return n, true, nil
	}
	for i := range dst[:n] {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		dst[i] = byte(x)
	}
	return n, true, nil
}

func (e *nullEngine) Scan(start []byte, visit func(k, v []byte) bool) error {
	return nil
}

func (e *nullEngine) Flush() error   { return nil }
func (e *nullEngine) Compact() error { return nil }
func (e *nullEngine) Close() error   { return nil }

func (e *nullEngine) Stats() (map[string]any, error) {
	return map[string]any{
		"wal_bytes":              0,
		"flush_write_bytes":      0,
		"compaction_write_bytes": 0,
		"compaction_read_bytes":  0,
	}, nil
}

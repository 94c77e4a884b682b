package main

// nullEngine answers from nothing and keeps nothing: in process it
// measures the cgo call, through the sidecar the socket's round trip, the
// cost every Go backend pays per operation on top of its engine.
type nullEngine struct {
	value []byte
}

// newNull makes the value every read answers: valueBytes (256 when not
// set) of an xorshift stream, as the Rust null makes its own.
func newNull(valueBytes int) *nullEngine {
	if valueBytes <= 0 {
		valueBytes = 256
	}
	v := make([]byte, valueBytes)
	x := uint64(0xcbf29ce484222325)
	for i := range v {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		v[i] = byte(x)
	}
	return &nullEngine{value: v}
}

func (e *nullEngine) Write(ops []Op) error { return nil }

// Get copies the value into dst (the least any engine's Get does) and
// XORs the key's first 8 bytes into it, so reads of two keys differ.
func (e *nullEngine) Get(key, dst []byte) (int, bool, error) {
	n := len(e.value)
	if len(dst) < n {
		return n, true, nil
	}
	copy(dst, e.value)
	for i := 0; i < len(key) && i < 8 && i < n; i++ {
		dst[i] ^= key[i]
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

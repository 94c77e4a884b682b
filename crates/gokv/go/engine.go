// Package main holds ledgerbench's Go engines (Pebble, goleveldb, Badger,
// bbolt and a null engine) behind one Engine interface, reached two ways:
// loaded into ledgerbench as a shared library (capi.go, the default: a call
// costs a cgo transition) or served over a socket by the sidecar program
// (main.go: kept to measure what that path costs).
package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
)

// Config is the engine settings ledgerbench sends; each engine reads the
// fields that apply to it.
type Config struct {
	CacheBytes       int64  `json:"cache_bytes"`
	MemtableBytes    int64  `json:"memtable_bytes"`
	L0CompactTrigger int    `json:"l0_compaction_trigger"`
	L0StopTrigger    int    `json:"l0_stop_writes_trigger"`
	Compactions      int    `json:"max_concurrent_compactions"`
	Durability       string `json:"durability"`
	ValueBytes       int    `json:"value_bytes"`
}

// Op is one put, delete or range delete of a batch. A range delete
// removes Key (included) to Value (excluded); only Pebble is sent them (the
// harness expands them to deletes for the others). Key and Value point
// into the caller's buffer, valid during Write only: every engine copies
// what it keeps before its commit returns.
type Op struct {
	Del   bool
	Range bool
	Key   []byte
	Value []byte
}

// Engine is what every embedded engine provides.
type Engine interface {
	Write(ops []Op) error
	// Get copies the value into dst when it fits and returns its length
	// (a caller whose dst was short asks again with room for it), or
	// found false and no error when the key is absent.
	Get(key, dst []byte) (n int, found bool, err error)
	// Scan visits entries in key order from start until visit returns
	// false or the entries end; k and v are valid during the call only.
	Scan(start []byte, visit func(k, v []byte) bool) error
	Flush() error
	Compact() error
	Stats() (map[string]any, error)
	Close() error
}

// open opens engine's store in dir, every engine but null behind the
// full-disk guard.
func open(engine, dir string, cfg Config) (Engine, error) {
	var e Engine
	var err error
	switch engine {
	case "pebble":
		e, err = openPebble(dir, cfg)
	case "goleveldb":
		e, err = openLevelDB(dir, cfg)
	case "badger":
		e, err = openBadger(dir, cfg)
	case "bbolt":
		e, err = openBolt(dir, cfg)
	case "null":
		return newNull(cfg.ValueBytes), nil
	default:
		return nil, fmt.Errorf("unknown engine %q; accepted: pebble, goleveldb, badger, bbolt, null", engine)
	}
	if err != nil {
		return nil, err
	}
	return guard(e, engine, dir), nil
}

func u32(b []byte) (uint32, []byte, error) {
	if len(b) < 4 {
		return 0, nil, fmt.Errorf("truncated frame")
	}
	return binary.LittleEndian.Uint32(b), b[4:], nil
}

// opsPool keeps the slices batches decode into, so a batch costs no
// allocation of its own on this side.
var opsPool = sync.Pool{New: func() any { return new([]Op) }}

// decodeWrite reads a batch: u32 count, then per op a tag byte (0 put,
// 1 delete, 2 range delete), u32 key length, key, and for a put (a range
// delete) u32 value (end key) length, value (end key). The ops point into
// b (see Op); give the slice back with releaseOps.
func decodeWrite(b []byte) (*[]Op, error) {
	n, b, err := u32(b)
	if err != nil {
		return nil, err
	}
	ops := opsPool.Get().(*[]Op)
	*ops = (*ops)[:0]
	for i := uint32(0); i < n; i++ {
		if len(b) < 1 {
			releaseOps(ops)
			return nil, fmt.Errorf("truncated batch")
		}
		tag := b[0]
		b = b[1:]
		var kl uint32
		if kl, b, err = u32(b); err != nil || uint32(len(b)) < kl {
			releaseOps(ops)
			return nil, fmt.Errorf("truncated key")
		}
		op := Op{Del: tag == 1, Range: tag == 2, Key: b[:kl:kl]}
		b = b[kl:]
		if !op.Del {
			var vl uint32
			if vl, b, err = u32(b); err != nil || uint32(len(b)) < vl {
				releaseOps(ops)
				return nil, fmt.Errorf("truncated value")
			}
			op.Value = b[:vl:vl]
			b = b[vl:]
		}
		*ops = append(*ops, op)
	}
	return ops, nil
}

// releaseOps gives a decoded batch's slice back, dropping its pointers
// into the caller's buffer first.
func releaseOps(ops *[]Op) {
	clear(*ops)
	*ops = (*ops)[:0]
	opsPool.Put(ops)
}

// write decodes a batch and commits it.
func write(e Engine, b []byte) error {
	ops, err := decodeWrite(b)
	if err != nil {
		return err
	}
	defer releaseOps(ops)
	if !rangesFit(e, *ops) {
		return fmt.Errorf("a range delete sent to an engine without one (the harness expands them)")
	}
	return e.Write(*ops)
}

// scanPage writes the entries from start into out (u32 key length, key,
// u32 value length, value each) until limit entries are written or the
// next would not fit in max bytes, and reports how many and whether the
// store has more. A first entry larger than max is written anyway, so a
// page always moves the scan on.
func scanPage(e Engine, start []byte, limit, max int, out []byte) ([]byte, int, bool, error) {
	n, more := 0, false
	var l [4]byte
	err := e.Scan(start, func(k, v []byte) bool {
		size := 8 + len(k) + len(v)
		if n == limit || (n > 0 && len(out)+size > max) {
			more = true
			return false
		}
		binary.LittleEndian.PutUint32(l[:], uint32(len(k)))
		out = append(out, l[:]...)
		out = append(out, k...)
		binary.LittleEndian.PutUint32(l[:], uint32(len(v)))
		out = append(out, l[:]...)
		out = append(out, v...)
		n++
		return true
	})
	return out, n, more, err
}

// rangesFit reports whether e takes every op: only Pebble has range deletes.
func rangesFit(e Engine, ops []Op) bool {
	if g, ok := e.(*guarded); ok {
		e = g.Engine
	}
	if _, ok := e.(*pebbleEngine); ok {
		return true
	}
	for _, op := range ops {
		if op.Range {
			return false
		}
	}
	return true
}

func locked(err error) bool {
	s := strings.ToLower(err.Error())
	return strings.Contains(s, "lock") || strings.Contains(s, "resource temporarily unavailable")
}

// cgroupMemoryLimit is the memory limit of the cgroup this process is in
// (v1 or v2), or 0 when there is none.
func cgroupMemoryLimit() int64 {
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(self), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		var file string
		switch {
		case parts[0] == "0" && parts[1] == "":
			file = filepath.Join("/sys/fs/cgroup", parts[2], "memory.max")
		case strings.Contains(","+parts[1]+",", ",memory,"):
			file = filepath.Join("/sys/fs/cgroup/memory", parts[2], "memory.limit_in_bytes")
		default:
			continue
		}
		b, err := os.ReadFile(file)
		if err != nil {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		// "max" (v2) or a page-rounded huge number (v1) mean no limit.
		if err == nil && n > 0 && n < 1<<50 {
			return n
		}
	}
	return 0
}

// setMemoryLimit gives Go's collector a soft limit of three quarters of
// the memory cgroup this process is in now, or none outside one, and
// returns it (0: none). Go lets its heap grow to twice what is live
// before collecting; inside a memory cgroup that heap reaches the limit
// and the process spins in the kernel's reclaim instead of collecting
// (Badger under 512 MiB made no progress for minutes without this, and
// loaded in 2.2 s with it). Three quarters, as Go advises for containers,
// leaves the rest to the harness and any engine linked from C or Rust in
// the same process. Called at every open: a run moves its worker into its
// cgroup after the process started.
func setMemoryLimit() int64 {
	limit := cgroupMemoryLimit()
	if limit > 0 {
		debug.SetMemoryLimit(limit / 4 * 3)
		return limit / 4 * 3
	}
	debug.SetMemoryLimit(math.MaxInt64)
	return 0
}

// The C ABI ledgerbench loads (go build -buildmode=c-shared): a store is
// a handle, bytes cross as pointer and length without a copy on the way
// in, values and scan pages are copied into the caller's buffer, and an
// error comes back as a C string the caller frees (NULL: success).
// Nothing here allocates per GET.

package main

/*
#include <stddef.h>
#include <stdint.h>
*/
import "C"

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/cgo"
	"runtime/metrics"
	"unsafe"
)

// view is the caller's n bytes at p as a Go slice, valid during the call.
// An empty one is a Go slice: Rust's empty slices carry a dangling
// pointer the Go runtime must never see.
func view(p *C.char, n C.size_t) []byte {
	if n == 0 {
		return []byte{}
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(p)), int(n))
}

func cerr(err error) *C.char {
	if err == nil {
		return nil
	}
	return C.CString(err.Error())
}

// rescue, deferred by every exported function, turns a panic into the
// call's error: a Go panic unwinding into C aborts the harness.
func rescue(ret **C.char) {
	if r := recover(); r != nil {
		*ret = cerr(fmt.Errorf("the Go engine panicked: %v", r))
	}
}

func engineOf(h C.uintptr_t) Engine {
	return cgo.Handle(h).Value().(Engine)
}

// lbgo_open opens ENGINE's store in DIR with CONFIG (JSON) and sets *out
// to its handle.
//
//export lbgo_open
func lbgo_open(engine *C.char, elen C.size_t, dir *C.char, dlen C.size_t, config *C.char, clen C.size_t, out *C.uintptr_t) (ret *C.char) {
	defer rescue(&ret)
	var cfg Config
	if err := json.Unmarshal(view(config, clen), &cfg); err != nil {
		return cerr(fmt.Errorf("config: %w", err))
	}
	setMemoryLimit()
	e, err := open(string(view(engine, elen)), string(view(dir, dlen)), cfg)
	if err != nil {
		return cerr(err)
	}
	*out = C.uintptr_t(cgo.NewHandle(e))
	return nil
}

// lbgo_close closes the store and frees its handle, whatever the close
// returned.
//
//export lbgo_close
func lbgo_close(h C.uintptr_t) (ret *C.char) {
	defer rescue(&ret)
	e := engineOf(h)
	cgo.Handle(h).Delete()
	return cerr(e.Close())
}

// lbgo_get reads KEY: *vlen is -1 when absent, else the value's length,
// copied into BUF when it fits in CAP (else BUF is untouched: ask again
// with room for *vlen bytes).
//
//export lbgo_get
func lbgo_get(h C.uintptr_t, key *C.char, klen C.size_t, buf *C.char, bcap C.size_t, vlen *C.int64_t) (ret *C.char) {
	defer rescue(&ret)
	n, found, err := engineOf(h).Get(view(key, klen), view(buf, bcap))
	switch {
	case err != nil:
		return cerr(err)
	case !found:
		*vlen = -1
	default:
		*vlen = C.int64_t(n)
	}
	return nil
}

// lbgo_write commits one batch, encoded as decodeWrite reads it.
//
//export lbgo_write
func lbgo_write(h C.uintptr_t, batch *C.char, blen C.size_t) (ret *C.char) {
	defer rescue(&ret)
	return cerr(write(engineOf(h), view(batch, blen)))
}

// lbgo_scan writes the entries from START into BUF as scanPage does, at
// most LIMIT of them and CAP bytes, setting *used, *count and *more. A
// first entry over CAP is not written: *count is 0 and *used is the room
// it needs.
//
//export lbgo_scan
func lbgo_scan(h C.uintptr_t, start *C.char, slen C.size_t, limit C.size_t, buf *C.char, bcap C.size_t, used *C.size_t, count *C.size_t, more *C.int) (ret *C.char) {
	defer rescue(&ret)
	dst := view(buf, bcap)[:0]
	out, n, m, err := scanPage(engineOf(h), view(start, slen), int(limit), int(bcap), dst)
	if err != nil {
		return cerr(err)
	}
	*used, *count, *more = C.size_t(len(out)), C.size_t(n), 0
	if m {
		*more = 1
	}
	if len(out) > int(bcap) {
		// The first entry alone did not fit: scanPage grew a Go copy.
		*count = 0
		return nil
	}
	return nil
}

//export lbgo_flush
func lbgo_flush(h C.uintptr_t) (ret *C.char) {
	defer rescue(&ret)
	return cerr(engineOf(h).Flush())
}

//export lbgo_compact
func lbgo_compact(h C.uintptr_t) (ret *C.char) {
	defer rescue(&ret)
	return cerr(engineOf(h).Compact())
}

// goHeap reads the Go heap's live objects and the collector's settings,
// so a run reports the Go runtime's memory and threads as the engine's.
var goHeap = []metrics.Sample{
	{Name: "/memory/classes/heap/objects:bytes"},
	{Name: "/gc/gomemlimit:bytes"},
}

// lbgo_stats writes the engine's counters as JSON into BUF when they fit
// in CAP and sets *len to their length (ask again with more room when it
// is over CAP). The Go runtime's own figures go under "extra".
//
//export lbgo_stats
func lbgo_stats(h C.uintptr_t, buf *C.char, bcap C.size_t, jlen *C.size_t) (ret *C.char) {
	defer rescue(&ret)
	s, err := engineOf(h).Stats()
	if err != nil {
		return cerr(err)
	}
	extra, _ := s["extra"].(map[string]any)
	if extra == nil {
		extra = map[string]any{}
	}
	metrics.Read(goHeap)
	extra["go_heap_bytes"] = goHeap[0].Value.Uint64()
	if l := goHeap[1].Value.Uint64(); l < 1<<62 {
		extra["go_memory_limit_bytes"] = l
	}
	extra["go_maxprocs"] = runtime.GOMAXPROCS(0)
	s["extra"] = extra
	j, err := json.Marshal(s)
	if err != nil {
		return cerr(err)
	}
	*jlen = C.size_t(len(j))
	copy(view(buf, bcap), j)
	return nil
}

package main

import (
	"fmt"
	"sync/atomic"
	"syscall"
	"time"
)

// Thresholds of the full-disk guard.
const (
	// lowBelow: free bytes under which calls run watched.
	lowBelow = 256 << 20
	// fullBelow: free bytes under which the filesystem counts as full.
	fullBelow = 1 << 20
	// stuckAfter: how long a call may wait on a full disk.
	stuckAfter = 5 * time.Second
)

// guarded keeps a store's calls from hanging the harness on a full disk:
// Pebble retries a failed WAL write until space returns, and in process
// that would block the calling thread forever. While the filesystem has
// room (polled every 100 ms) calls run as they are; once it runs low they
// run on a goroutine of their own, watched, and a call still running after
// stuckAfter with the disk full returns an error that says so (the call
// itself goes on, and ends if space returns). A panic in a write, flush,
// compaction or close comes back as an error, and later writes, flushes
// and compactions return it without reaching the engine.
type guarded struct {
	Engine
	name string
	dir  string
	low  atomic.Bool
	done chan struct{}
	// stopped holds the panic that ended the engine's writes, if any.
	stopped atomic.Pointer[stoppedError]
}

// stoppedError is a panic inside an engine call, caught. Pebble panics
// (through its logger's Fatalf) when a commit fails, a full disk's WAL
// write for one, and says its commit pipeline is broken from then on: a
// later commit would wait forever for the failed one's turn.
type stoppedError struct{ cause any }

func (e *stoppedError) Error() string {
	return fmt.Sprintf("%v (the engine stopped taking writes: close and reopen the store)", e.cause)
}

// protect runs f, turning a panic into a *stoppedError so that it never
// unwinds into the C caller (a Go panic there aborts the whole harness).
func protect(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &stoppedError{cause: r}
		}
	}()
	return f()
}

func guard(e Engine, name, dir string) *guarded {
	g := &guarded{Engine: e, name: name, dir: dir, done: make(chan struct{})}
	g.poll()
	go func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-g.done:
				return
			case <-t.C:
				g.poll()
			}
		}
	}()
	return g
}

func (g *guarded) poll() {
	g.low.Store(freeBytes(g.dir) < lowBelow)
}

// freeBytes is the space left to an unprivileged writer on dir's
// filesystem (all of it when that cannot be read: no guard then).
func freeBytes(dir string) uint64 {
	var st syscall.Statfs_t
	if syscall.Statfs(dir, &st) != nil {
		return ^uint64(0)
	}
	return st.Bavail * uint64(st.Bsize)
}

func (g *guarded) call(f func() error) error {
	if s := g.stopped.Load(); s != nil {
		return s
	}
	return g.watch(f)
}

// watch runs f as call describes, and remembers a panic it ended in.
func (g *guarded) watch(f func() error) error {
	if !g.low.Load() {
		return g.remember(protect(f))
	}
	result := make(chan error, 1)
	go func() { result <- g.remember(protect(f)) }()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	var fullSince time.Time
	for {
		select {
		case err := <-result:
			return err
		case <-t.C:
			switch {
			case freeBytes(g.dir) >= fullBelow:
				fullSince = time.Time{}
			case fullSince.IsZero():
				fullSince = time.Now()
			case time.Since(fullSince) >= stuckAfter:
				return fmt.Errorf("no space left on device: the disk is full and %s has not returned for %v (it retries instead of failing)", g.name, stuckAfter)
			}
		}
	}
}

func (g *guarded) Write(ops []Op) error { return g.call(func() error { return g.Engine.Write(ops) }) }
func (g *guarded) Flush() error         { return g.call(g.Engine.Flush) }
func (g *guarded) Compact() error       { return g.call(g.Engine.Compact) }

// remember keeps the first panic a call ended in, and returns err.
func (g *guarded) remember(err error) error {
	if s, ok := err.(*stoppedError); ok {
		g.stopped.CompareAndSwap(nil, s)
	}
	return err
}

// Close closes the engine, watched as the other calls are (even once it
// stopped: the close releases its files and lock), and stops the polling.
func (g *guarded) Close() error {
	err := g.watch(g.Engine.Close)
	close(g.done)
	return err
}

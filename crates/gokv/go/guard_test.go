package main

import (
	"errors"
	"strings"
	"testing"
)

// panicky is an engine whose writes panic while boom is set, as Pebble's
// do when a commit fails, and which counts the calls that reach it.
type panicky struct {
	nullEngine
	boom   bool
	writes int
	closed int
}

func (p *panicky) Write([]Op) error {
	p.writes++
	if p.boom {
		panic("pebble: fatal commit error: write /x/000004.log: no space left on device")
	}
	return nil
}

func (p *panicky) Close() error { p.closed++; return nil }

func TestAPanicInAWriteComesBackAsAnErrorAndStopsLaterWrites(t *testing.T) {
	p := &panicky{nullEngine: *newNull(8)}
	g := guard(p, "pebble", t.TempDir())
	if err := g.Write(nil); err != nil {
		t.Fatalf("a write before the panic: %v", err)
	}
	p.boom = true
	err := g.Write(nil)
	var s *stoppedError
	if !errors.As(err, &s) {
		t.Fatalf("the panicking write returned %v, not a stoppedError", err)
	}
	for _, want := range []string{"no space left on device", "close and reopen"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	// Pebble's later commits would wait forever: they must not reach it.
	p.boom = false
	if err := g.Write(nil); !errors.As(err, &s) {
		t.Errorf("a write after the panic returned %v", err)
	}
	if err := g.Flush(); !errors.As(err, &s) {
		t.Errorf("a flush after the panic returned %v", err)
	}
	if p.writes != 2 {
		t.Errorf("%d writes reached the engine, want 2", p.writes)
	}
	// The close still runs: it releases the store's lock for a reopen.
	if err := g.Close(); err != nil || p.closed != 1 {
		t.Errorf("close after the panic: %v, %d closes", err, p.closed)
	}
}

func TestAPanicInAWatchedCallOnALowDiskIsCaughtOnItsGoroutine(t *testing.T) {
	p := &panicky{nullEngine: *newNull(8), boom: true}
	// No polling: the disk stays low for the test's length. The call runs
	// on a goroutine of its own: a panic there not caught would end the
	// test binary, not fail this test.
	g := &guarded{Engine: p, name: "pebble", dir: t.TempDir()}
	g.low.Store(true)
	err := g.watch(func() error { return p.Write(nil) })
	var s *stoppedError
	if !errors.As(err, &s) {
		t.Fatalf("the watched panicking call returned %v", err)
	}
	if g.stopped.Load() == nil {
		t.Error("the guard did not remember the panic")
	}
}

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// On a 3 MiB tmpfs Pebble's WAL write fails before a flush does, and
// Pebble panics (through its logger's Fatalf) on the failed commit: the
// call must come back as an error naming the full disk, the store must
// refuse later writes, close, and reopen with what it held before. Root
// only (it mounts a tmpfs).
func TestPebbleOnAFullDiskErrsStopsAndReopens(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a tmpfs")
	}
	mnt := filepath.Join(t.TempDir(), "small")
	if err := os.MkdirAll(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=3m", "ledgerbench-gotest", mnt).CombinedOutput(); err != nil {
		t.Fatalf("mount: %v: %s", err, out)
	}
	defer exec.Command("umount", "-l", mnt).Run()
	store := filepath.Join(mnt, "store")
	cfg := Config{Durability: "process"}
	e, err := open("pebble", store, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Write([]Op{{Key: []byte("before"), Value: []byte("kept")}}); err != nil {
		t.Fatal(err)
	}
	value := make([]byte, 4<<10)
	var failed error
	for round := 0; round < 4000 && failed == nil; round++ {
		ops := make([]Op, 16)
		for i := range ops {
			value[0], value[1] = byte(round), byte(i)
			ops[i] = Op{Key: []byte(fmt.Sprintf("%04d-%02d", round, i)), Value: append([]byte(nil), value...)}
		}
		failed = e.Write(ops)
	}
	if failed == nil || !strings.Contains(failed.Error(), "no space left on device") {
		t.Fatalf("writing 256 MiB into 3 MiB returned %v", failed)
	}
	var s *stoppedError
	if errors.As(failed, &s) {
		if err := e.Write([]Op{{Key: []byte("after"), Value: []byte("x")}}); !errors.As(err, &s) {
			t.Errorf("a write after Pebble's fatal commit error returned %v", err)
		}
	}
	if out, err := exec.Command("mount", "-o", "remount,size=64m", mnt).CombinedOutput(); err != nil {
		t.Fatalf("remount: %v: %s", err, out)
	}
	// Its error, if any, is the failed write's again; what matters is
	// that it returns and lets go of the store's lock.
	_ = e.Close()
	e, err = open("pebble", store, cfg)
	if err != nil {
		t.Fatalf("reopen after the disk had room again: %v", err)
	}
	defer e.Close()
	n, found, err := e.Get([]byte("before"), make([]byte, 16))
	if err != nil || !found || n != 4 {
		t.Errorf("the write before the full disk: found %v, %d bytes, %v", found, n, err)
	}
}

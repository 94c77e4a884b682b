// Command ledgerbench-sidecar embeds the Go key-value engines (Pebble, LevelDB,
// Badger, bbolt) and serves ledgerbench's operations on one store over its
// Unix socket, so the Rust harness can drive them through the same KvStore
// trait as the engines it links.
//
// Usage: ledgerbench-sidecar ENGINE DIR CONFIG_JSON SOCKET
//
// SOCKET is a name in Linux's abstract socket namespace. The sidecar listens
// on it, opens the store, and writes one response frame to its standard
// output saying whether the store opened. It then serves every connection
// on the socket concurrently, one request and its reply at a time per
// connection, so the harness has as many requests in flight as it has
// connections. The end of its standard input (the harness is gone) ends it
// without closing the store, as a crash would.
//
// Frames both ways are a little-endian u32 length and a body. A request body
// starts with an op byte; a response body with a status byte (0 ok, 1 not
// found, 2 error followed by its message).
package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
)

const (
	opWrite   = 1
	opGet     = 2
	opScan    = 3
	opFlush   = 4
	opCompact = 5
	opStats   = 6
	opClose   = 7
	opPing    = 8
	opGetMany = 9
)

const (
	stOK       = 0
	stNotFound = 1
	stError    = 2
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
// harness expands them to deletes for the others).
type Op struct {
	Del   bool
	Range bool
	Key   []byte
	Value []byte
}

// Engine is what every embedded engine provides.
type Engine interface {
	Write(ops []Op) error
	// Get returns the value, or nil and no error when absent.
	Get(key []byte) ([]byte, bool, error)
	// Scan visits up to limit entries from start; more reports whether the
	// store has entries after the last one visited.
	Scan(start []byte, limit int, visit func(k, v []byte)) (more bool, err error)
	Flush() error
	Compact() error
	Stats() (map[string]any, error)
	Close() error
}

func open(engine, dir string, cfg Config) (Engine, error) {
	switch engine {
	case "pebble":
		return openPebble(dir, cfg)
	case "goleveldb":
		return openLevelDB(dir, cfg)
	case "badger":
		return openBadger(dir, cfg)
	case "bbolt":
		return openBolt(dir, cfg)
	case "null":
		return &nullEngine{valueBytes: cfg.ValueBytes}, nil
	}
	return nil, fmt.Errorf("unknown engine %q; accepted: pebble, goleveldb, badger, bbolt, null", engine)
}

type conn struct {
	in  *bufio.Reader
	out *bufio.Writer
	buf []byte
}

func (c *conn) read() ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(c.in, n[:]); err != nil {
		return nil, err
	}
	size := binary.LittleEndian.Uint32(n[:])
	if cap(c.buf) < int(size) {
		c.buf = make([]byte, size)
	}
	c.buf = c.buf[:size]
	_, err := io.ReadFull(c.in, c.buf)
	return c.buf, err
}

func (c *conn) reply(status byte, parts ...[]byte) error {
	size := 1
	for _, p := range parts {
		size += len(p)
	}
	var n [4]byte
	binary.LittleEndian.PutUint32(n[:], uint32(size))
	c.out.Write(n[:])
	c.out.WriteByte(status)
	for _, p := range parts {
		c.out.Write(p)
	}
	return c.out.Flush()
}

func (c *conn) fail(err error) error {
	return c.reply(stError, []byte(err.Error()))
}

func u32(b []byte) (uint32, []byte, error) {
	if len(b) < 4 {
		return 0, nil, fmt.Errorf("truncated frame")
	}
	return binary.LittleEndian.Uint32(b), b[4:], nil
}

// decodeWrite reads a batch: u32 count, then per op a tag byte (0 put,
// 1 delete, 2 range delete), u32 key length, key, and for a put (a range
// delete) u32 value (end key) length, value (end key).
// Keys and values are copied: the frame buffer is reused.
func decodeWrite(b []byte) ([]Op, error) {
	n, b, err := u32(b)
	if err != nil {
		return nil, err
	}
	ops := make([]Op, 0, n)
	for i := uint32(0); i < n; i++ {
		if len(b) < 1 {
			return nil, fmt.Errorf("truncated batch")
		}
		tag := b[0]
		b = b[1:]
		var kl uint32
		if kl, b, err = u32(b); err != nil || uint32(len(b)) < kl {
			return nil, fmt.Errorf("truncated key")
		}
		op := Op{Del: tag == 1, Range: tag == 2, Key: append([]byte(nil), b[:kl]...)}
		b = b[kl:]
		if !op.Del {
			var vl uint32
			if vl, b, err = u32(b); err != nil || uint32(len(b)) < vl {
				return nil, fmt.Errorf("truncated value")
			}
			op.Value = append([]byte(nil), b[:vl]...)
			b = b[vl:]
		}
		ops = append(ops, op)
	}
	return ops, nil
}

// connBuf is the buffer per connection and direction: large frames bypass
// it, so a few clients do not cost the store megabytes.
const connBuf = 64 << 10

// serve answers one connection's requests until it ends. A close request
// closes the store and ends the process.
func serve(e Engine, c *conn) error {
	for {
		req, err := c.read()
		if err == io.EOF {
			// The harness dropped this connection; others may go on.
			return nil
		}
		if err != nil {
			return err
		}
		if len(req) == 0 {
			return fmt.Errorf("empty request")
		}
		body := req[1:]
		switch req[0] {
		case opPing:
			// A 4-byte body asks the reply to wait that many milliseconds,
			// so a test can see requests on two connections overlap; any
			// other body (the pipe-cost pings) is ignored.
			if len(body) == 4 {
				time.Sleep(time.Duration(binary.LittleEndian.Uint32(body)) * time.Millisecond)
			}
			err = c.reply(stOK)
		case opWrite:
			ops, derr := decodeWrite(body)
			if derr == nil && !rangesFit(e, ops) {
				derr = fmt.Errorf("a range delete sent to an engine without one (the harness expands them)")
			}
			if derr == nil {
				derr = e.Write(ops)
			}
			if derr != nil {
				err = c.fail(derr)
			} else {
				err = c.reply(stOK)
			}
		case opGet:
			v, found, gerr := e.Get(body)
			switch {
			case gerr != nil:
				err = c.fail(gerr)
			case !found:
				err = c.reply(stNotFound)
			default:
				err = c.reply(stOK, v)
			}
		case opGetMany:
			out, gerr := getMany(e, body)
			if gerr != nil {
				err = c.fail(gerr)
			} else {
				err = c.reply(stOK, out)
			}
		case opScan:
			limit, start, serr := u32(body)
			if serr != nil {
				err = c.fail(serr)
				break
			}
			// Entries: u32 key length, key, u32 value length, value; then a
			// byte saying whether more follow.
			var out []byte
			var l [4]byte
			more, serr := e.Scan(append([]byte(nil), start...), int(limit), func(k, v []byte) {
				binary.LittleEndian.PutUint32(l[:], uint32(len(k)))
				out = append(out, l[:]...)
				out = append(out, k...)
				binary.LittleEndian.PutUint32(l[:], uint32(len(v)))
				out = append(out, l[:]...)
				out = append(out, v...)
			})
			if serr != nil {
				err = c.fail(serr)
				break
			}
			flag := []byte{0}
			if more {
				flag[0] = 1
			}
			err = c.reply(stOK, flag, out)
		case opFlush:
			err = result(c, e.Flush())
		case opCompact:
			err = result(c, e.Compact())
		case opStats:
			s, serr := e.Stats()
			if serr != nil {
				err = c.fail(serr)
				break
			}
			j, _ := json.Marshal(s)
			err = c.reply(stOK, j)
		case opClose:
			cerr := e.Close()
			result(c, cerr)
			if cerr != nil {
				fmt.Fprintln(os.Stderr, "ledgerbench-sidecar: close:", cerr)
				os.Exit(1)
			}
			os.Exit(0)
		default:
			err = c.fail(fmt.Errorf("unknown op %d", req[0]))
		}
		if err != nil {
			return err
		}
	}
}

// getMany answers a u32 count of keys (each a u32 length and its bytes)
// in one reply: per key a found byte, then for a found one a u32 length
// and the value. One round trip for many reads: the crash checker reads
// thousands of keys a cycle, and each pipe round trip costs more than a
// read. Any read's error fails the whole request.
func getMany(e Engine, b []byte) ([]byte, error) {
	n, b, err := u32(b)
	if err != nil {
		return nil, err
	}
	var out []byte
	var l [4]byte
	for i := uint32(0); i < n; i++ {
		var kl uint32
		if kl, b, err = u32(b); err != nil {
			return nil, err
		}
		if uint32(len(b)) < kl {
			return nil, fmt.Errorf("get-many: key %d overruns the request", i)
		}
		v, found, gerr := e.Get(b[:kl])
		b = b[kl:]
		if gerr != nil {
			return nil, gerr
		}
		if !found {
			out = append(out, 0)
			continue
		}
		binary.LittleEndian.PutUint32(l[:], uint32(len(v)))
		out = append(out, 1)
		out = append(out, l[:]...)
		out = append(out, v...)
	}
	return out, nil
}

// rangesFit reports whether e takes every op: only Pebble has range deletes.
func rangesFit(e Engine, ops []Op) bool {
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

func result(c *conn, err error) error {
	if err != nil {
		return c.fail(err)
	}
	return c.reply(stOK)
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

func main() {
	// Go's collector lets the heap grow to twice what is live before it
	// runs; inside a memory cgroup that heap reaches the limit and the
	// process spins in the kernel's reclaim instead of collecting (Badger
	// under 512 MiB made no progress for minutes without this, and loaded
	// in 2.2 s with it). A soft limit of three quarters of the cgroup's, as
	// Go advises for containers, makes it collect first.
	if limit := cgroupMemoryLimit(); limit > 0 {
		debug.SetMemoryLimit(limit / 4 * 3)
	}
	out := &conn{out: bufio.NewWriterSize(os.Stdout, connBuf)}
	if len(os.Args) != 5 {
		out.fail(fmt.Errorf("usage: ledgerbench-sidecar ENGINE DIR CONFIG_JSON SOCKET"))
		os.Exit(2)
	}
	var cfg Config
	if err := json.Unmarshal([]byte(os.Args[3]), &cfg); err != nil {
		out.fail(fmt.Errorf("config: %w", err))
		os.Exit(2)
	}
	ln, err := net.Listen("unix", "@"+os.Args[4])
	if err != nil {
		out.fail(fmt.Errorf("listen on the socket: %w", err))
		os.Exit(1)
	}
	// A sidecar of a harness that was just killed may still hold the
	// store's lock for a few milliseconds while it exits.
	e, err := open(os.Args[1], os.Args[2], cfg)
	for i := 0; err != nil && i < 40 && locked(err); i++ {
		time.Sleep(50 * time.Millisecond)
		e, err = open(os.Args[1], os.Args[2], cfg)
	}
	if err != nil {
		out.fail(fmt.Errorf("open %s: %w", os.Args[2], err))
		os.Exit(1)
	}
	// The harness went away without a close (it was killed, or dropped
	// the store): end like a crash, without closing the store, so what
	// survives is what the engine made durable.
	go func() {
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	if err := out.reply(stOK); err != nil {
		os.Exit(1)
	}
	for {
		nc, err := ln.Accept()
		if err != nil {
			fmt.Fprintln(os.Stderr, "ledgerbench-sidecar: accept:", err)
			os.Exit(1)
		}
		go func() {
			c := &conn{
				in:  bufio.NewReaderSize(nc, connBuf),
				out: bufio.NewWriterSize(nc, connBuf),
			}
			// A connection that fails (the harness gave up on it mid-frame)
			// ends alone; the store and the other connections go on.
			if err := serve(e, c); err != nil {
				fmt.Fprintln(os.Stderr, "ledgerbench-sidecar: a connection:", err)
			}
			nc.Close()
		}()
	}
}

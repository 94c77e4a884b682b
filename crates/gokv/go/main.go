// The sidecar: ledgerbench-sidecar serves one store's operations over a
// Unix socket, the path every Go engine took before they were linked in
// process; kept so the cost of that path can be measured beside the
// in-process one (the `bridge = "sidecar"` setting).
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

type conn struct {
	in  *bufio.Reader
	out *bufio.Writer
	buf []byte
	// val holds the value of a GET; it grows to the largest value read.
	val []byte
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

// get reads key into c.val, growing it when the value is longer.
func (c *conn) get(e Engine, key []byte) ([]byte, bool, error) {
	n, found, err := e.Get(key, c.val[:cap(c.val)])
	if err == nil && found && n > cap(c.val) {
		c.val = make([]byte, n)
		n, found, err = e.Get(key, c.val)
	}
	if err != nil || !found {
		return nil, false, err
	}
	return c.val[:n], true, nil
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
			err = result(c, write(e, body))
		case opGet:
			v, found, gerr := c.get(e, body)
			switch {
			case gerr != nil:
				err = c.fail(gerr)
			case !found:
				err = c.reply(stNotFound)
			default:
				err = c.reply(stOK, v)
			}
		case opGetMany:
			out, gerr := c.getMany(e, body)
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
			out, _, more, serr := scanPage(e, append([]byte(nil), start...), int(limit), 1<<30, nil)
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
func (c *conn) getMany(e Engine, b []byte) ([]byte, error) {
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
		v, found, gerr := c.get(e, b[:kl])
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

func result(c *conn, err error) error {
	if err != nil {
		return c.fail(err)
	}
	return c.reply(stOK)
}

func main() {
	setMemoryLimit()
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

// Package zstd stands in for github.com/DataDog/zstd, which Pebble's
// sstable package imports when cgo is on: DataDog's package compiles
// zstd's C sources into the binary, and linked into ledgerbench beside the
// zstd that RocksDB's crates compile, every ZSTD_ symbol would be defined
// twice. This package gives Pebble the two calls it makes, on the pure-Go
// zstd of klauspost/compress (Badger's). Pebble compresses with Snappy
// unless told otherwise, as ledgerbench's configs leave it.
package zstd

import (
	"io"

	kzstd "github.com/klauspost/compress/zstd"
)

var decoder, _ = kzstd.NewReader(nil)

// Decompress decodes src into dst's storage when it is large enough, else
// into a new buffer, and returns the decoded bytes.
func Decompress(dst, src []byte) ([]byte, error) {
	return decoder.DecodeAll(src, dst[:0])
}

// Writer compresses what is written to it into an underlying writer.
type Writer struct {
	enc *kzstd.Encoder
	err error
}

// NewWriterLevel compresses into w at zstd's level.
func NewWriterLevel(w io.Writer, level int) *Writer {
	enc, err := kzstd.NewWriter(w, kzstd.WithEncoderLevel(kzstd.EncoderLevelFromZstd(level)))
	return &Writer{enc: enc, err: err}
}

// Write compresses p.
func (w *Writer) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	return w.enc.Write(p)
}

// Close flushes the compressed stream.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	return w.enc.Close()
}

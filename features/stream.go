package features

import (
	"encoding/base64"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/vrender/vrender/internal/nozero"
)

// PendingPixels are an image's pixel values made while its item is written
// (vision.Prepared): its base64 is encoded a chunk at a time, each chunk
// handed on while it is still in the CPU's cache, and the tensor and its
// base64 are never held whole unless a write keeps them.
type PendingPixels struct {
	// Len is the bytes of pixel values.
	Len int
	// Begin starts one write of the item (an item may be written more
	// than once, by concurrent writers).
	Begin func() PixelWrite
}

// PixelWrite is what one write of an item of pending pixel values writes
// them from.
type PixelWrite struct {
	// Source writes the pixel values in order; only its writer's error
	// may stop it. Nil when Kept is set.
	Source io.WriterTo
	// Kept, when set, is their base64 kept since the item was built (a
	// cache's entry another answer filled): it is written as a hit's.
	Kept *EncodedPixels
	// Keep, when set, claims this write's base64 (a cache filling its
	// entry): the item's encoded part is written into one buffer of its
	// own before each chunk is handed on, and Keep receives it once the
	// item is written whole, or nil when the write failed.
	Keep func(*EncodedPixels)
	// End, when set, is called once the write no longer reads Source.
	End func()
}

// itemStream is an item of pending pixel values: the msgpack before them,
// the pixel values as they are made, and the msgpack after them.
type itemStream struct {
	head, tail []byte
	px         *PendingPixels
	cols       int
}

func (st *itemStream) len() int { return len(st.head) + st.px.Len + len(st.tail) }

// encodedLen is the length of the item's padded base64.
func (st *itemStream) encodedLen() int { return base64.StdEncoding.EncodedLen(st.len()) }

// Chunk sizes of a streamed item: its base64 goes to the writer about
// streamChunk bytes at a time, small enough to be read back from the CPU's
// last-level cache by the kernel's copy, large enough that a write per
// chunk costs little (encoding 15 MB and writing it to a loopback socket,
// one core: 6.0-6.6 ms of CPU in 1 MB chunks, 6.1-6.9 in 256 KB ones,
// 6.5-7.4 written whole). 2 MB rather than 1: each write that fills the
// socket's buffer parks the writer and wakes it again, and half as many
// writes cost a one-1280x720-JPEG answer (15 MB, cache off) 8.17 ms of
// server CPU against 8.70 (mean of 8 interleaved runs of 50 requests,
// lower in 7 of 8; 4 MB: 8.42), for 1 MB more held per item being
// written. The source's pieces are encoded at most streamPiece bytes at a
// time, so a chunk buffer never grows.
const (
	streamChunk = 2 << 20
	streamPiece = 48 << 10
)

// StreamWriteBytes is about how many bytes of a streamed item each write
// to the connection hands on (a write may carry up to one more source
// piece): the send floor of `vrender bench images` writes its static
// answer in writes of this size.
const StreamWriteBytes = streamChunk

// chunkPool holds the chunk buffers of streamed items (cap
// streamChunkCap), shared by every request: one per item being written.
var chunkPool = sync.Pool{New: func() any { b := make([]byte, 0, streamChunkCap); return &b }}

const streamChunkCap = streamChunk + streamPiece/3*4 + 4

// StreamBufferBytes is what writing a streamed item holds besides its
// source: its chunk buffer.
const StreamBufferBytes = streamChunkCap

// writeBase64 writes the item's padded base64 to w (nil: appended to *dst
// instead, which then has room for it). It returns w's error, or an error
// when the source wrote other than its Len.
func (st *itemStream) writeBase64(w io.Writer, dst *[]byte) (err error) {
	pw := st.px.Begin()
	if pw.End != nil {
		defer pw.End()
	}
	if pw.Kept != nil {
		return st.writeKept(w, dst, pw.Kept)
	}
	done := pw.Keep
	e := b64Chunker{out: w}
	switch {
	case done != nil:
		// The cache's entry: every byte of it written before it is read.
		e.s.dst = nozero.Bytes((len(st.head) + st.px.Len) / 3 * 4)[:0]
		e.keep = true
		if w == nil {
			e.out = appender{dst}
		}
	case w == nil:
		e.s.dst = *dst
		defer func() { *dst = e.s.dst }()
	default:
		bp := chunkPool.Get().(*[]byte)
		defer chunkPool.Put(bp)
		e.s.dst = (*bp)[:0]
	}
	if done != nil {
		defer func() {
			if err != nil {
				done(nil)
			}
		}()
	}
	e.s.write(st.head)
	n, err := pw.Source.WriteTo(&e)
	if err != nil {
		return err
	}
	if int(n) != st.px.Len {
		return fmt.Errorf("features: %d bytes of pixel_values written, want %d", n, st.px.Len)
	}
	var kept *EncodedPixels
	if done != nil {
		kept = &EncodedPixels{b64: e.s.dst, rest: slices.Clone(e.s.carry[:e.s.c]), pixels: st.px.Len, cols: st.cols}
		if len(e.s.dst) != cap(e.s.dst) {
			return fmt.Errorf("features: %d bytes of base64 for an entry of %d", len(e.s.dst), cap(e.s.dst))
		}
	}
	// The last bytes: those the pixel values left over, the tail, padding.
	var end [512]byte
	rest := base64.StdEncoding.AppendEncode(end[:0], append(e.s.carry[:e.s.c:e.s.c], st.tail...))
	if e.out == nil {
		e.s.dst = append(e.s.dst, rest...)
	} else {
		if err := e.flush(); err != nil {
			return err
		}
		if _, err := e.out.Write(rest); err != nil {
			return err
		}
	}
	if done != nil {
		done(kept)
	}
	return nil
}

// writeKept writes the item as writeBase64 does from base64 kept before:
// the kept part in one write, as a cache hit's.
func (st *itemStream) writeKept(w io.Writer, dst *[]byte, kept *EncodedPixels) error {
	if kept.pixels != st.px.Len || kept.cols != st.cols {
		return fmt.Errorf("features: kept base64 of %d bytes in rows of %d for %d in rows of %d", kept.pixels, kept.cols, st.px.Len, st.cols)
	}
	var end [512]byte
	rest := appendBase64(end[:0], Blob{kept.rest, st.tail})
	if w == nil {
		*dst = append(append(*dst, kept.b64...), rest...)
		return nil
	}
	if _, err := w.Write(kept.b64); err != nil {
		return err
	}
	_, err := w.Write(rest)
	return err
}

// b64Chunker is the writer a streamed item's source writes to: it encodes
// into s.dst and hands what it encoded to out every streamChunk bytes (out
// nil: s.dst keeps everything). keep leaves what was handed on in s.dst
// (a cache's entry), else s.dst is reused from its start.
type b64Chunker struct {
	s       base64Stream
	out     io.Writer
	keep    bool
	flushed int // bytes of s.dst handed on
}

func (e *b64Chunker) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		k := min(len(p), streamPiece)
		e.s.write(p[:k])
		p = p[k:]
		if e.out != nil && len(e.s.dst)-e.flushed >= streamChunk {
			if err := e.flush(); err != nil {
				return n - len(p), err
			}
		}
	}
	return n, nil
}

// flush hands on what was encoded since the last flush.
func (e *b64Chunker) flush() error {
	if len(e.s.dst) == e.flushed {
		return nil
	}
	_, err := e.out.Write(e.s.dst[e.flushed:])
	if e.keep {
		e.flushed = len(e.s.dst)
	} else {
		e.s.dst, e.flushed = e.s.dst[:0], 0
	}
	return err
}

// appender is a writer appending to a byte slice.
type appender struct{ b *[]byte }

func (a appender) Write(p []byte) (int, error) {
	*a.b = append(*a.b, p...)
	return len(p), nil
}

package features

import (
	"encoding/base64"
	"fmt"
	"io"
	"sync"
)

// PendingPixels are an image's pixel values made while its item is written
// (vision.Prepared): its base64 is encoded a chunk at a time, each chunk
// handed on while it is still in the CPU's cache, and neither the tensor
// nor its base64 is ever held whole.
type PendingPixels struct {
	// Len is the bytes of pixel values.
	Len int
	// Source writes the pixel values in order, once per write of the item
	// (an item may be written more than once, by concurrent writers); only
	// its writer's error may stop it.
	Source io.WriterTo
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
func (st *itemStream) writeBase64(w io.Writer, dst *[]byte) error {
	e := b64Chunker{out: w}
	if w == nil {
		e.s.dst = *dst
		defer func() { *dst = e.s.dst }()
	} else {
		bp := chunkPool.Get().(*[]byte)
		defer chunkPool.Put(bp)
		e.s.dst = (*bp)[:0]
	}
	e.s.write(st.head)
	n, err := st.px.Source.WriteTo(&e)
	if err != nil {
		return err
	}
	if int(n) != st.px.Len {
		return fmt.Errorf("features: %d bytes of pixel_values written, want %d", n, st.px.Len)
	}
	// The last bytes: those the pixel values left over, the tail, padding.
	var end [512]byte
	rest := base64.StdEncoding.AppendEncode(end[:0], append(e.s.carry[:e.s.c:e.s.c], st.tail...))
	if e.out == nil {
		e.s.dst = append(e.s.dst, rest...)
		return nil
	}
	if err := e.flush(); err != nil {
		return err
	}
	_, err = e.out.Write(rest)
	return err
}

// b64Chunker is the writer a streamed item's source writes to: it encodes
// into s.dst and hands what it encoded to out every streamChunk bytes,
// reusing s.dst from its start (out nil: s.dst keeps everything).
type b64Chunker struct {
	s   base64Stream
	out io.Writer
}

func (e *b64Chunker) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		k := min(len(p), streamPiece)
		e.s.write(p[:k])
		p = p[k:]
		if e.out != nil && len(e.s.dst) >= streamChunk {
			if err := e.flush(); err != nil {
				return n - len(p), err
			}
		}
	}
	return n, nil
}

// flush hands on what was encoded since the last flush.
func (e *b64Chunker) flush() error {
	if len(e.s.dst) == 0 {
		return nil
	}
	_, err := e.out.Write(e.s.dst)
	e.s.dst = e.s.dst[:0]
	return err
}

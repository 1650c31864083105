// Package bench holds vrender's comparison benchmarks: measurements of
// vrender against the reference implementations it replaces, run in the
// same process invocation on the same inputs and reported as ratios.
package bench

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"time"

	"github.com/vrender/vrender/tokenizer"
)

// Targets of the tokenizer issue, printed next to the measurements.
const (
	TargetEncodeRatio = 15.0
	TargetDecodeRatio = 5.0
	TargetHeapBytes   = 64 << 20
)

// TokenizeOptions configures a tokenizer benchmark run.
type TokenizeOptions struct {
	ModelDir   string // directory holding tokenizer.json (or the file itself)
	Files      []Input
	Iterations int // timed runs per input and operation
	Warmup     int // untimed runs before them
	Reference  Reference
	// HTTP, when set, also measures POST /tokenize of the chat prompt
	// input (ChatPromptName) against a `vrender serve` child process.
	HTTP *HTTPOptions
}

// ChatPromptName is the name of the standard ~9,000-token chat prompt input.
const ChatPromptName = "chat prompt"

// Timing is the duration of one operation over a whole input.
type Timing struct {
	Iterations int     `json:"iterations"`
	MinNs      float64 `json:"min_ns"`
	MedianNs   float64 `json:"median_ns"`
}

// TokenizeReport is the result of a run; it is also the --json output.
type TokenizeReport struct {
	Model          string        `json:"model"`
	GOMAXPROCS     int           `json:"gomaxprocs"`
	ReferencePin   string        `json:"reference_pinning"`
	LoadNs         int64         `json:"load_ns"`
	HeapBytes      int64         `json:"heap_bytes"`       // live heap of the loaded tokenizer
	HeapAfterBytes int64         `json:"heap_after_bytes"` // the same after the runs (caches filled)
	RefLoadNs      int64         `json:"reference_load_ns"`
	Inputs         []InputResult `json:"inputs"`
	HTTP           *HTTPReport   `json:"http,omitempty"`
}

// InputResult compares both implementations on one input.
type InputResult struct {
	Name           string  `json:"name"`
	File           string  `json:"file"`
	Bytes          int     `json:"bytes"`
	DecodedBytes   int     `json:"decoded_bytes"`
	Tokens         int     `json:"tokens"`
	RefTokens      int     `json:"reference_tokens"`
	IDsEqual       bool    `json:"ids_equal"`
	FirstDiff      int     `json:"first_diff,omitempty"` // token index of the first differing id
	DecodedEqual   bool    `json:"decoded_equal"`
	Encode         Timing  `json:"encode"`
	Decode         Timing  `json:"decode"`
	RefEncode      Timing  `json:"reference_encode"`
	RefDecode      Timing  `json:"reference_decode"`
	EncodeMBps     float64 `json:"encode_mb_per_s"`
	RefEncodeMBps  float64 `json:"reference_encode_mb_per_s"`
	EncodeRatio    float64 `json:"encode_ratio"`     // median over median
	EncodeRatioMin float64 `json:"encode_ratio_min"` // fastest run over fastest run
	DecodeMBps     float64 `json:"decode_mb_per_s"`
	RefDecodeMBps  float64 `json:"reference_decode_mb_per_s"`
	DecodeRatio    float64 `json:"decode_ratio"`
	DecodeRatioMin float64 `json:"decode_ratio_min"`
}

// Tokenize measures vrender's and the reference's encode and decode
// throughput on one core. Both run on the same files in this call; the
// ratios use median times. It fails if the two disagree on any input, after
// measuring everything, so the report still shows the figures.
func Tokenize(ctx context.Context, opts TokenizeOptions) (*TokenizeReport, error) {
	if opts.Iterations < 1 {
		return nil, fmt.Errorf("bench tokenize: iterations must be at least 1")
	}
	tokenizerJSON := opts.ModelDir
	if filepath.Ext(tokenizerJSON) != ".json" {
		tokenizerJSON = filepath.Join(opts.ModelDir, "tokenizer.json")
	}
	paths := make([]string, len(opts.Files))
	texts := make([]string, len(opts.Files))
	for i, f := range opts.Files {
		data, err := os.ReadFile(f.Path)
		if err != nil {
			return nil, fmt.Errorf("bench tokenize: %w", err)
		}
		paths[i], texts[i] = f.Path, string(data)
	}

	// The reference runs first, in its own process, so its memory and
	// threads are gone before vrender is measured.
	ref, pinned, err := opts.Reference.run(ctx, tokenizerJSON, paths, opts.Iterations, opts.Warmup)
	if err != nil {
		return nil, err
	}
	report := &TokenizeReport{Model: opts.ModelDir, GOMAXPROCS: 1, RefLoadNs: ref.LoadNs,
		ReferencePin: "RAYON_NUM_THREADS=1 (taskset not found: not pinned)"}
	if pinned {
		report.ReferencePin = "taskset -c 0, RAYON_NUM_THREADS=1"
	}

	// One core for the Go side too: throughput per core is the target.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))

	baseline := liveHeap()
	start := time.Now()
	tok, err := tokenizer.Load(tokenizerJSON)
	report.LoadNs = time.Since(start).Nanoseconds()
	if err != nil {
		return nil, fmt.Errorf("bench tokenize: load %s: %w", tokenizerJSON, err)
	}
	report.HeapBytes = liveHeap() - baseline
	// Every iteration encodes the same text: measure the encoder, not the
	// segment cache.
	tok.SetSegmentCacheSize(0)

	var mismatch error
	for i, f := range opts.Files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		r := measureInput(tok, f, texts[i], ref.Files[i], opts.Iterations, opts.Warmup)
		if (!r.IDsEqual || !r.DecodedEqual) && mismatch == nil {
			mismatch = fmt.Errorf("bench tokenize: vrender and the reference disagree on %s (ids equal: %v, first differing token %d; decoded text equal: %v)",
				f.Name, r.IDsEqual, r.FirstDiff, r.DecodedEqual)
		}
		report.Inputs = append(report.Inputs, r)
	}
	report.HeapAfterBytes = liveHeap() - baseline
	// Everything counted in the baseline must still be live here, or the
	// difference would undercount the tokenizer's caches.
	runtime.KeepAlive(tok)
	runtime.KeepAlive(ref)
	runtime.KeepAlive(texts)
	if opts.HTTP != nil {
		for i, in := range report.Inputs {
			if opts.Files[i].Name != ChatPromptName {
				continue
			}
			text := texts[i]
			rep, err := RunHTTP(ctx, *opts.HTTP, TokenizeWorkloads("9k", func(i int) (string, error) {
				return ColdPrompt(text, coldTag(i)), nil
			}))
			report.HTTP = rep
			if err != nil {
				return report, err
			}
			rep.Compare("tokenize 9k", "cold", in.Encode.MedianNs, in.RefEncode.MedianNs, "≥20x")
			rep.Compare("tokenize 9k", "warm", in.Encode.MedianNs, in.RefEncode.MedianNs, "")
		}
	}
	return report, mismatch
}

// liveHeap returns the bytes of live heap objects after full collections;
// the second one empties sync.Pool victim caches, which are not live data.
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// measureInput times vrender on one input and compares it with the
// reference's run on the same file.
func measureInput(tok *tokenizer.Tokenizer, in Input, text string, ref referenceFile, iterations, warmup int) InputResult {
	var ids []int
	encode := timeIt(iterations, warmup, func() { ids = tok.Encode(text, false) })
	var decoded string
	decode := timeIt(iterations, warmup, func() { decoded = tok.Decode(ids, false) })
	sum := sha256.Sum256([]byte(decoded))

	r := InputResult{
		Name: in.Name, File: in.Path, Bytes: len(text), DecodedBytes: len(decoded),
		Tokens: len(ids), RefTokens: ref.Tokens,
		IDsEqual:     slices.Equal(ids, ref.IDs),
		DecodedEqual: hex.EncodeToString(sum[:]) == ref.DecodedSHA256,
		Encode:       encode, Decode: decode, RefEncode: ref.Encode, RefDecode: ref.Decode,
	}
	if !r.IDsEqual {
		for r.FirstDiff < min(len(ids), len(ref.IDs)) && ids[r.FirstDiff] == ref.IDs[r.FirstDiff] {
			r.FirstDiff++
		}
	}
	r.EncodeMBps = mbPerSecond(r.Bytes, encode.MedianNs)
	r.RefEncodeMBps = mbPerSecond(r.Bytes, ref.Encode.MedianNs)
	r.EncodeRatio = ref.Encode.MedianNs / encode.MedianNs
	r.EncodeRatioMin = ref.Encode.MinNs / encode.MinNs
	r.DecodeMBps = mbPerSecond(r.DecodedBytes, decode.MedianNs)
	r.RefDecodeMBps = mbPerSecond(r.DecodedBytes, ref.Decode.MedianNs)
	r.DecodeRatio = ref.Decode.MedianNs / decode.MedianNs
	r.DecodeRatioMin = ref.Decode.MinNs / decode.MinNs
	return r
}

// timeIt runs fn warmup times untimed and iterations times timed.
func timeIt(iterations, warmup int, fn func()) Timing {
	for i := 0; i < warmup; i++ {
		fn()
	}
	ns := make([]float64, iterations)
	for i := range ns {
		start := time.Now()
		fn()
		ns[i] = float64(time.Since(start).Nanoseconds())
	}
	return summarize(ns)
}

// summarize returns the minimum and median of durations in ns.
func summarize(ns []float64) Timing {
	sorted := slices.Clone(ns)
	sort.Float64s(sorted)
	mid := len(sorted) / 2
	median := sorted[mid]
	if len(sorted)%2 == 0 {
		median = (sorted[mid-1] + sorted[mid]) / 2
	}
	return Timing{Iterations: len(ns), MinNs: sorted[0], MedianNs: median}
}

// mbPerSecond is throughput in MB/s (10^6 bytes) for n bytes in ns nanoseconds.
func mbPerSecond(n int, ns float64) float64 {
	if ns <= 0 {
		return 0
	}
	return float64(n) / ns * 1e3
}

// WriteTable prints the report as a human-readable table.
func (r *TokenizeReport) WriteTable(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("bench tokenize %s — one core (vrender GOMAXPROCS=1; reference %s); MB/s and ratio from the median of %d runs, best/best from the fastest\n",
		r.Model, r.ReferencePin, r.iterations())
	ew.printf("load: vrender %s, reference %s; vrender heap after load %s (target ≤ %s: %s), after the runs %s\n\n",
		fmtDuration(r.LoadNs), fmtDuration(r.RefLoadNs), fmtMB(r.HeapBytes), fmtMB(TargetHeapBytes),
		verdict(r.HeapBytes <= TargetHeapBytes), fmtMB(r.HeapAfterBytes))
	ew.printf("%-12s %-7s %10s %8s %13s %15s %8s %10s %s\n", "input", "op", "bytes", "tokens", "vrender MB/s", "reference MB/s", "ratio", "best/best", "target")
	for _, in := range r.Inputs {
		ew.printf("%-12s %-7s %10d %8d %13.2f %15.2f %7.1fx %9.1fx ≥%.0fx %s\n", in.Name, "encode", in.Bytes, in.Tokens,
			in.EncodeMBps, in.RefEncodeMBps, in.EncodeRatio, in.EncodeRatioMin, TargetEncodeRatio, verdict(in.EncodeRatio >= TargetEncodeRatio))
		ew.printf("%-12s %-7s %10d %8d %13.2f %15.2f %7.1fx %9.1fx ≥%.0fx %s\n", in.Name, "decode", in.DecodedBytes, in.Tokens,
			in.DecodeMBps, in.RefDecodeMBps, in.DecodeRatio, in.DecodeRatioMin, TargetDecodeRatio, verdict(in.DecodeRatio >= TargetDecodeRatio))
	}
	ew.printf("\n")
	for _, in := range r.Inputs {
		switch {
		case !in.IDsEqual:
			ew.printf("%s: IDS DIFFER from the reference at token %d (vrender %d tokens, reference %d)\n",
				in.Name, in.FirstDiff, in.Tokens, in.RefTokens)
		case !in.DecodedEqual:
			ew.printf("%s: ids identical, DECODED TEXT DIFFERS from the reference\n", in.Name)
		default:
			ew.printf("%s: ids and decoded text identical to the reference\n", in.Name)
		}
	}
	if ew.err == nil && r.HTTP != nil {
		ew.printf("\nin-process figures above; ")
		return r.HTTP.WriteTable(w)
	}
	return ew.err
}

func (r *TokenizeReport) iterations() int {
	if len(r.Inputs) == 0 {
		return 0
	}
	return r.Inputs[0].Encode.Iterations
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

func fmtDuration(ns int64) string { return time.Duration(ns).Round(time.Millisecond).String() }

func fmtMB(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// errWriter keeps the first write error so the table code stays linear.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

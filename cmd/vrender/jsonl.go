package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/vrender/vrender/protocol"
)

// jsonlError is the line written in place of a result that failed.
type jsonlError struct {
	Error string `json:"error"`
}

// processJSONL answers every line of in with one JSON line on out: fn's
// result, or {"error": …} when fn fails, so that output line n always
// belongs to input line n. Output is flushed whenever no more input is
// buffered, so a caller can drive the command line by line as a
// co-process. It returns how many lines failed and how many were read.
func processJSONL(in io.Reader, out io.Writer, fn func(line []byte) (any, error)) (failed, total int, err error) {
	r := bufio.NewReaderSize(in, 1<<16)
	w := bufio.NewWriterSize(out, 1<<16)
	for {
		if r.Buffered() == 0 {
			if err := w.Flush(); err != nil {
				return failed, total, err
			}
		}
		line, rerr := r.ReadBytes('\n')
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return failed, total, fmt.Errorf("read input: %w", rerr)
		}
		if len(line) == 0 && rerr != nil {
			return failed, total, w.Flush()
		}
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		total++
		result, ferr := fn(line)
		if ferr != nil {
			failed++
			result = jsonlError{Error: ferr.Error()}
		}
		b, merr := protocol.MarshalJSON(result)
		if merr != nil {
			return failed, total, merr
		}
		w.Write(b)
		if err := w.WriteByte('\n'); err != nil {
			return failed, total, err
		}
		if rerr != nil { // last line had no newline
			return failed, total, w.Flush()
		}
	}
}

// jsonlSummary turns failed lines into the command's error (exit status 1)
// after all lines were answered.
func jsonlSummary(failed, total int, err error) error {
	if err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d lines failed", failed, total)
	}
	return nil
}

// decodeJSONLine decodes one input line as a JSON object into v.
func decodeJSONLine(line []byte, v any) error {
	if len(bytes.TrimSpace(line)) == 0 {
		return errors.New("empty line")
	}
	if err := json.Unmarshal(line, v); err != nil {
		return fmt.Errorf("invalid JSON: %w", err)
	}
	return nil
}

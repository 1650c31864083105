// Package pyfmt holds Python's repr/str text forms for floats, ints-from-JSON
// literals and strings, as CPython 3 writes them.
//
// vLLM's error messages, chat templates and json.dumps output all print
// values through these forms, so reproducing them byte for byte needs one
// faithful copy. Spellings that belong to a single caller (json.dumps's
// Infinity and NaN, how a byte that is not UTF-8 is shown) stay with that
// caller.
package pyfmt

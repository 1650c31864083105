//go:build !unix

package testenv

import "testing"

// GuardedPages is n bytes: without mmap there is no inaccessible page to
// end them at, and accesses past them go unnoticed.
func GuardedPages(_ testing.TB, n int) []byte { return make([]byte, n) }

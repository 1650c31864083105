//go:build !unix

package vision

import "testing"

// guardedPages is n bytes: without mmap there is no inaccessible page to end them at, and reads past
// them go unnoticed.
func guardedPages(_ *testing.T, n int) []byte { return make([]byte, n) }

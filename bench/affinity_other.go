//go:build !linux

package bench

// pinProcess cannot pin outside Linux.
func pinProcess(int) (func(), bool) { return func() {}, false }

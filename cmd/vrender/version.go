package main

import (
	"fmt"
	"io"
	"runtime/debug"
)

// version is set at link time (-ldflags "-X main.version=v1.2.3"); when it
// is not, the module version or the VCS revision stands in.
var version string

// vrenderVersion is the version GET /version and `vrender version` report.
func vrenderVersion() string {
	if version != "" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev string
	var dirty bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "devel"
	}
	v := "devel+" + rev[:min(12, len(rev))]
	if dirty {
		v += "-dirty"
	}
	return v
}

func runVersion(args []string, stdout io.Writer) error {
	c := newCommand("version", "", "Print vrender's version.")
	rest, err := c.parse(args, stdout)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("unexpected argument %q", rest[0])
	}
	_, err = fmt.Fprintf(stdout, "vrender %s\n", vrenderVersion())
	return err
}

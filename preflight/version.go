package preflight

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Version is a vLLM version as PEP 440 orders it (vLLM's versions come from
// setuptools-scm: "0.31.1", "0.31.0rc1.dev12+g1a2b3c4", "0.31.1.dev5+g…").
type Version struct {
	Release []int
	// Pre is "a", "b" or "rc" with PreN, or "" for no pre-release.
	Pre  string
	PreN int
	// Post and Dev are -1 when absent.
	Post, Dev int
	// Local is the "+…" suffix, kept for display; it does not order.
	Local string
	raw   string
}

// MinVersion is the oldest engine vrender supports: the tokens-only
// protocol (GenerateRequest with kv_transfer_params) it drives first
// shipped in v0.31.0.
var MinVersion = MustParseVersion("0.31.0")

var versionRE = regexp.MustCompile(`^v?(\d+(?:\.\d+)*)` +
	`(?:[-_.]?(a|b|c|rc|alpha|beta|pre|preview)[-_.]?(\d*))?` +
	`(?:[-_.]?(?:post|rev|r)[-_.]?(\d*))?` +
	`(?:[-_.]?dev[-_.]?(\d*))?` +
	`(?:\+([a-z0-9]+(?:[-_.][a-z0-9]+)*))?$`)

// ParseVersion parses a PEP 440 version string as vLLM reports it on GET
// /version.
func ParseVersion(s string) (Version, error) {
	m := versionRE.FindStringSubmatch(strings.ToLower(strings.TrimSpace(s)))
	if m == nil {
		return Version{}, fmt.Errorf("%q is not a PEP 440 version", s)
	}
	v := Version{Post: -1, Dev: -1, Local: m[6], raw: strings.TrimSpace(s)}
	for _, part := range strings.Split(m[1], ".") {
		n, err := strconv.Atoi(part)
		if err != nil {
			return Version{}, fmt.Errorf("version %q: release segment %q: %w", s, part, err)
		}
		v.Release = append(v.Release, n)
	}
	if m[2] != "" {
		v.Pre = map[string]string{"a": "a", "alpha": "a", "b": "b", "beta": "b",
			"c": "rc", "rc": "rc", "pre": "rc", "preview": "rc"}[m[2]]
		v.PreN = atoiOr0(m[3])
	}
	if m[4] != "" || strings.Contains(m[0], "post") {
		v.Post = atoiOr0(m[4])
	}
	if strings.Contains(m[0], "dev") {
		v.Dev = atoiOr0(m[5])
	}
	return v, nil
}

// MustParseVersion is ParseVersion for constants.
func MustParseVersion(s string) Version {
	v, err := ParseVersion(s)
	if err != nil {
		panic(err)
	}
	return v
}

func atoiOr0(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func (v Version) String() string { return v.raw }

// IsPreRelease reports an alpha, beta, release candidate or development
// build.
func (v Version) IsPreRelease() bool { return v.Pre != "" || v.Dev >= 0 }

// Compare orders versions as PEP 440 does: X.dev < Xa < Xb < Xrc < X <
// X.post, and a .devN sorts before the version it is a development build of.
func (v Version) Compare(w Version) int {
	n := max(len(v.Release), len(w.Release))
	for i := range n {
		if c := cmp.Compare(at(v.Release, i), at(w.Release, i)); c != 0 {
			return c
		}
	}
	if c := slices.Compare(v.preKey(), w.preKey()); c != 0 {
		return c
	}
	if c := cmp.Compare(v.Post, w.Post); c != 0 {
		return c
	}
	return cmp.Compare(devKey(v.Dev), devKey(w.Dev))
}

// preKey ranks the pre-release phase: a bare dev release of X sorts before
// X's alphas, a final (or post) release after its release candidates.
func (v Version) preKey() []int {
	switch {
	case v.Pre == "" && v.Post < 0 && v.Dev >= 0:
		return []int{-4, 0}
	case v.Pre == "":
		return []int{0, 0}
	}
	return []int{map[string]int{"a": -3, "b": -2, "rc": -1}[v.Pre], v.PreN}
}

// devKey makes "no dev segment" sort after every .devN.
func devKey(dev int) int {
	if dev < 0 {
		return int(^uint(0) >> 1)
	}
	return dev
}

func at(xs []int, i int) int {
	if i < len(xs) {
		return xs[i]
	}
	return 0
}

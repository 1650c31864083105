package jinja

import "strings"

// missingArg marks an argument that was not passed and has no default.
var missingArg = Value{ref: &undefInfo{msg: "missing argument"}}

// bind maps positional and keyword arguments onto names; the first nreq are
// required, the rest take defaults[i-nreq] (missingArg when absent).
func bind(fname string, args []Value, kw []kwArg, names []string, nreq int, defaults ...Value) ([]Value, error) {
	if len(args) > len(names) {
		return nil, typeErr("%s() takes at most %d arguments (%d given)", fname, len(names), len(args))
	}
	out := make([]Value, len(names))
	var setBuf [8]bool
	var set []bool
	if len(names) > len(setBuf) {
		set = make([]bool, len(names))
	} else {
		set = setBuf[:len(names)]
	}
	for i, a := range args {
		out[i], set[i] = a, true
	}
	for _, k := range kw {
		found := false
		for i, n := range names {
			if n == k.name {
				if set[i] {
					return nil, typeErr("%s() got multiple values for argument '%s'", fname, n)
				}
				out[i], set[i], found = k.val, true, true
				break
			}
		}
		if !found {
			return nil, typeErr("%s() got an unexpected keyword argument '%s'", fname, k.name)
		}
	}
	for i := range names {
		if set[i] {
			continue
		}
		if i < nreq {
			return nil, typeErr("%s() missing 1 required positional argument: '%s'", fname, names[i])
		}
		if i-nreq < len(defaults) {
			out[i] = defaults[i-nreq]
		} else {
			out[i] = missingArg
		}
	}
	return out, nil
}

func isMissing(v Value) bool { return v.ref == missingArg.ref }

func noKw(fname string, kw []kwArg) error {
	if len(kw) > 0 {
		return typeErr("%s() takes no keyword arguments", fname)
	}
	return nil
}

// stripSet returns the cutset for str.strip(chars): Python whitespace when
// chars is None or missing.
func stripFuncs(chars Value) (func(rune) bool, error) {
	if isMissing(chars) || chars.kind == KindNone {
		return pyIsSpace, nil
	}
	if chars.kind != KindStr {
		return nil, typeErr("strip arg must be None or str")
	}
	set := chars.s
	return func(r rune) bool { return strings.ContainsRune(set, r) }, nil
}

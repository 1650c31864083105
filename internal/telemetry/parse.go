package telemetry

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Sample is one parsed exposition line.
type Sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// Family is a parsed metric family: its TYPE and samples.
type Family struct {
	Type    string
	Help    string
	Samples []Sample
}

// ParseText parses Prometheus text exposition (version 0.0.4) strictly
// enough to catch what a scraper would reject: every sample belongs to a
// family declared by a TYPE line before it, names and labels are well
// formed, values parse, and no family is declared twice. It exists for
// tests and for tools reading vrender's /metrics.
func ParseText(r io.Reader) (map[string]*Family, error) {
	fams := map[string]*Family{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case line == "":
			continue
		case strings.HasPrefix(line, "# HELP "), strings.HasPrefix(line, "# TYPE "):
			fields := strings.SplitN(line[2:], " ", 3)
			if len(fields) < 3 || !validName(fields[1]) {
				return nil, fmt.Errorf("line %d: malformed %q", n, line)
			}
			f := fams[fields[1]]
			if f == nil {
				f = &Family{}
				fams[fields[1]] = f
			}
			if fields[0] == "HELP" {
				f.Help = fields[2]
				continue
			}
			if f.Type != "" {
				return nil, fmt.Errorf("line %d: second TYPE for %s", n, fields[1])
			}
			switch fields[2] {
			case "counter", "gauge", "histogram", "summary", "untyped":
			default:
				return nil, fmt.Errorf("line %d: unknown type %q", n, fields[2])
			}
			f.Type = fields[2]
		case strings.HasPrefix(line, "#"):
			continue
		default:
			s, err := ParseSample(line)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", n, err)
			}
			f := fams[familyOf(s.Name, fams)]
			if f == nil || f.Type == "" {
				return nil, fmt.Errorf("line %d: sample %s before its TYPE", n, s.Name)
			}
			f.Samples = append(f.Samples, s)
		}
	}
	return fams, sc.Err()
}

// familyOf maps a histogram's _bucket/_sum/_count series to its family.
func familyOf(name string, fams map[string]*Family) string {
	for _, suf := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suf); ok {
			if f := fams[base]; f != nil && (f.Type == "histogram" || f.Type == "summary") {
				return base
			}
		}
	}
	return name
}

// ParseSample parses one sample line, `name{k="v",...} value [timestamp]`,
// as Prometheus's text parser does: blanks may separate the tokens of the
// label set, label values take the \\, \" and \n escapes, and the value
// may be +Inf, -Inf or NaN. It is the one exposition reader: ParseText,
// bench and preflight all read samples through it.
func ParseSample(line string) (Sample, error) {
	s := Sample{Labels: map[string]string{}}
	i := strings.IndexAny(line, "{ \t")
	if i <= 0 {
		return s, fmt.Errorf("malformed sample %q", line)
	}
	s.Name, line = line[:i], line[i:]
	rest := line
	if !validName(s.Name) {
		return s, fmt.Errorf("bad metric name %q", s.Name)
	}
	if rest[0] == '{' {
		rest = rest[1:]
		for {
			rest = strings.TrimLeft(rest, " \t")
			if strings.HasPrefix(rest, "}") {
				rest = rest[1:]
				break
			}
			eq := strings.IndexByte(rest, '=')
			key := strings.TrimRight(rest[:max(eq, 0)], " \t")
			if eq <= 0 || !validName(key) {
				return s, fmt.Errorf("bad label in %q", s.Name+line)
			}
			rest = strings.TrimLeft(rest[eq+1:], " \t")
			if !strings.HasPrefix(rest, `"`) {
				return s, fmt.Errorf("bad label in %q", s.Name+line)
			}
			rest = rest[1:]
			var val strings.Builder
			closed := false
			for j := 0; j < len(rest); j++ {
				c := rest[j]
				if c == '\\' && j+1 < len(rest) {
					j++
					switch rest[j] {
					case 'n':
						val.WriteByte('\n')
					default:
						val.WriteByte(rest[j])
					}
					continue
				}
				if c == '"' {
					rest, closed = rest[j+1:], true
					break
				}
				val.WriteByte(c)
			}
			if !closed {
				return s, fmt.Errorf("unterminated label value in %q", s.Name+line)
			}
			if _, dup := s.Labels[key]; dup {
				return s, fmt.Errorf("duplicate label %s in %q", key, s.Name+line)
			}
			s.Labels[key] = val.String()
			rest = strings.TrimLeft(rest, " \t")
			rest = strings.TrimPrefix(rest, ",")
		}
	}
	fields := strings.Fields(rest)
	if len(fields) < 1 || len(fields) > 2 {
		return s, fmt.Errorf("malformed value in %q", s.Name+line)
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return s, fmt.Errorf("bad value in %q", s.Name+line)
	}
	s.Value = v
	return s, nil
}

func validName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		ok := c == '_' || c == ':' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (i > 0 && c >= '0' && c <= '9')
		if !ok {
			return false
		}
	}
	return true
}

// Value returns the value of the sample of family name whose labels
// include want, and whether there is one.
func Value(fams map[string]*Family, name string, want map[string]string) (float64, bool) {
	f := fams[familyOf(name, fams)]
	if f == nil {
		return 0, false
	}
next:
	for _, s := range f.Samples {
		if s.Name != name {
			continue
		}
		for k, v := range want {
			if s.Labels[k] != v {
				continue next
			}
		}
		return s.Value, true
	}
	return 0, false
}

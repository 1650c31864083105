package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// Subcommands take flags the way vLLM's argparse does, on top of Go's flag
// package: "--name value" and "--name=value", underscores and dashes alike
// (--max_model_len), "--no-NAME" for a boolean, positional arguments before,
// between or after flags, and flags listed in command.multi taking every
// following non-flag word as a value (argparse nargs="+").

// usageError is a command line that cannot be run as given: exit status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// command is one subcommand's flags and help text.
type command struct {
	name     string // as typed after vrender
	synopsis string // usage line after "vrender NAME "
	about    string // paragraph printed under the usage line
	fs       *flag.FlagSet
	multi    map[string]bool
	// sections groups the flags in --help, as vLLM groups its --help by
	// config section; nil lists them alphabetically under "Options".
	sections []helpSection
}

// helpSection is a titled group of flags (names without dashes) in --help.
type helpSection struct {
	title string
	flags []string
}

func newCommand(name, synopsis, about string) *command {
	fs := flag.NewFlagSet("vrender "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors and help are printed by parse
	return &command{name: name, synopsis: synopsis, about: about, fs: fs, multi: map[string]bool{}}
}

// parse parses args and returns the positional arguments. --help prints the
// help to stdout and returns flag.ErrHelp; a bad flag returns a usageError.
func (c *command) parse(args []string, stdout io.Writer) ([]string, error) {
	for _, a := range args {
		if a == "--" {
			break
		}
		if topic, ok := strings.CutPrefix(a, "--help="); ok {
			return nil, c.printHelpTopic(stdout, topic)
		}
	}
	flags, positional, err := c.normalize(args)
	if err != nil {
		return nil, err
	}
	if err := c.fs.Parse(flags); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			c.printHelp(stdout)
			return nil, flag.ErrHelp
		}
		return nil, usageError{err}
	}
	return append(positional, c.fs.Args()...), nil
}

// normalize rewrites args into flags Go's flag package accepts, in order,
// and the positional arguments found among them.
func (c *command) normalize(args []string) (flags, positional []string, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return flags, append(positional, args[i+1:]...), nil
		}
		if len(a) < 2 || a[0] != '-' {
			positional = append(positional, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		name = strings.ReplaceAll(name, "_", "-")
		if name == "h" || name == "help" {
			flags = append(flags, "--help")
			continue
		}
		f := c.fs.Lookup(name)
		if f == nil {
			if base, ok := strings.CutPrefix(name, "no-"); ok && isBoolFlag(c.fs.Lookup(base)) && !hasValue {
				flags = append(flags, "--"+base+"=false")
				continue
			}
			return nil, nil, usagef("unknown flag --%s", name)
		}
		switch {
		case hasValue:
			flags = append(flags, "--"+name+"="+value)
		case isBoolFlag(f):
			flags = append(flags, "--"+name)
		case i+1 >= len(args):
			return nil, nil, usagef("flag --%s needs a value", name)
		default:
			i++
			flags = append(flags, "--"+name, args[i])
			for c.multi[name] && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++
				flags = append(flags, "--"+name, args[i])
			}
		}
	}
	return flags, positional, nil
}

func isBoolFlag(f *flag.Flag) bool {
	if f == nil {
		return false
	}
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// printHelp writes the command's help: usage, description, flags with
// vLLM's double-dash spelling.
func (c *command) printHelp(w io.Writer) {
	fmt.Fprintf(w, "Usage: vrender %s %s\n\n%s\n", c.name, c.synopsis, c.about)
	if c.sections == nil {
		fmt.Fprint(w, "\nOptions:\n")
		c.fs.VisitAll(func(f *flag.Flag) { c.printFlag(w, f) })
	} else {
		placed := map[string]bool{}
		for _, sec := range c.sections {
			fmt.Fprintf(w, "\n%s:\n", sec.title)
			for _, name := range sec.flags {
				if f := c.fs.Lookup(name); f != nil {
					c.printFlag(w, f)
					placed[name] = true
				}
			}
		}
		var other []*flag.Flag
		c.fs.VisitAll(func(f *flag.Flag) {
			if !placed[f.Name] {
				other = append(other, f)
			}
		})
		if len(other) > 0 {
			fmt.Fprint(w, "\nOther options:\n")
			for _, f := range other {
				c.printFlag(w, f)
			}
		}
	}
	if c.sections == nil {
		fmt.Fprintln(w, "  -h, --help\n      show this help")
		return
	}
	fmt.Fprintln(w, "  -h, --help[=TOPIC]\n      show this help; with TOPIC only the sections whose title, or else the options whose name, contains it")
}

// printHelpTopic is --help=TOPIC, as vLLM's --help=ModelConfig or
// --help=max-model-len: the sections whose title contains TOPIC, or else
// the options whose name does (case aside). It returns flag.ErrHelp, or a
// usageError when nothing matches.
func (c *command) printHelpTopic(w io.Writer, topic string) error {
	want := strings.ToLower(strings.TrimLeft(topic, "-"))
	if want == "" {
		c.printHelp(w)
		return flag.ErrHelp
	}
	var titles []string
	var sections []helpSection
	for _, sec := range c.sections {
		titles = append(titles, sec.title)
		if strings.Contains(strings.ToLower(sec.title), want) {
			sections = append(sections, sec)
		}
	}
	var flags []*flag.Flag
	if len(sections) == 0 {
		c.fs.VisitAll(func(f *flag.Flag) {
			if strings.Contains(f.Name, want) {
				flags = append(flags, f)
			}
		})
	}
	if len(sections) == 0 && len(flags) == 0 {
		if len(titles) == 0 {
			return usagef("--help=%s: no option's name contains %q", topic, want)
		}
		return usagef("--help=%s: no section title or option name contains %q (sections: %s)", topic, want, strings.Join(titles, "; "))
	}
	fmt.Fprintf(w, "Usage: vrender %s %s\n", c.name, c.synopsis)
	for _, sec := range sections {
		fmt.Fprintf(w, "\n%s:\n", sec.title)
		for _, name := range sec.flags {
			if f := c.fs.Lookup(name); f != nil {
				c.printFlag(w, f)
			}
		}
	}
	if len(flags) > 0 {
		fmt.Fprintf(w, "\nOptions matching %q:\n", want)
		for _, f := range flags {
			c.printFlag(w, f)
		}
	}
	return flag.ErrHelp
}

// printFlag writes one flag's help: its vLLM spelling, its argument and
// its usage, with the default unless the usage names it.
func (c *command) printFlag(w io.Writer, f *flag.Flag) {
	kind, usage := flag.UnquoteUsage(f)
	if c.multi[f.Name] {
		kind += " [" + kind + " ...]"
	}
	line := "  --" + f.Name
	if kind != "" && !isBoolFlag(f) {
		line += " " + kind
	}
	// A usage that names its own default (often in words) gets no second one.
	if f.DefValue != "" && f.DefValue != "0" && f.DefValue != "false" && f.DefValue != "[]" &&
		!strings.Contains(usage, "(default") {
		usage += " (default " + f.DefValue + ")"
	}
	fmt.Fprintf(w, "%s\n      %s\n", line, strings.ReplaceAll(usage, "\n", "\n      "))
}

// stringList is a flag that collects every value it is given.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, " ") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// humanInt is an integer flag that accepts vLLM's human-readable forms:
// 25.6k (decimal suffixes k m g t), 32K (binary suffixes K M G T, integer
// only), plain integers, and "auto" or -1 for "derive it" (0).
type humanInt int

func (h *humanInt) String() string { return strconv.Itoa(int(*h)) }

var humanIntPattern = regexp.MustCompile(`^(\d+(?:\.\d+)?)([kmgtKMGT]?)$`)

func (h *humanInt) Set(v string) error {
	v = strings.TrimSpace(v)
	if v == "auto" || v == "-1" {
		*h = 0
		return nil
	}
	m := humanIntPattern.FindStringSubmatch(v)
	if m == nil {
		return fmt.Errorf("invalid integer %q", v)
	}
	number, suffix := m[1], m[2]
	decimal := map[string]float64{"k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}
	binary := map[string]int{"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
	if mult, ok := decimal[suffix]; ok {
		f, _ := strconv.ParseFloat(number, 64)
		*h = humanInt(int(f * mult))
		return nil
	}
	n, err := strconv.Atoi(number)
	if err != nil {
		return fmt.Errorf("decimals are only allowed with decimal suffixes (k, m, g, t), got %q", v)
	}
	if mult, ok := binary[suffix]; ok {
		n *= mult
	}
	*h = humanInt(n)
	return nil
}

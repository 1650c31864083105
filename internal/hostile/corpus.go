package hostile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Case is one corpus entry: a request and the answer it must get.
type Case struct {
	// Name identifies the case in failures; unique across the corpus.
	Name string `json:"name"`
	// Method defaults to POST.
	Method string `json:"method"`
	Path   string `json:"path"`
	// Body is sent verbatim. Gen names a generator (see Generators, or
	// the test's server-backed ones) whose fragment replaces the
	// Placeholder in Body, or is the whole body when Body is empty.
	Body string `json:"body"`
	Gen  string `json:"gen"`
	// ContentType defaults to application/json; "-" sends none.
	ContentType string `json:"content_type"`
	// Server picks the server: "" (the default flags) or "trusted"
	// (--trust-request-chat-template).
	Server string `json:"server"`
	// Status and Type are the expected answer; Message, when set, must
	// occur in the error message.
	Status  int    `json:"status"`
	Type    string `json:"type"`
	Message string `json:"message"`
	// Known, when set, says why vrender does not answer as expected yet
	// (a bug filed elsewhere): the case is reported, not failed, and
	// fails once it passes so that the note is removed with the fix.
	Known string `json:"known"`

	// File and Line locate the entry, for failure messages.
	File string `json:"-"`
	Line int    `json:"-"`
}

// Servers a case may name.
const (
	ServerDefault = ""
	ServerTrusted = "trusted"
)

// Where reports the case's location and name.
func (c *Case) Where() string { return fmt.Sprintf("%s:%d %s", c.File, c.Line, c.Name) }

// LoadCorpus reads every *.jsonl file in dir (blank lines and lines
// starting with # are skipped) and checks the entries.
func LoadCorpus(dir string) ([]Case, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return nil, fmt.Errorf("hostile: list corpus: %w", err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("hostile: no *.jsonl corpus files in %s", dir)
	}
	slices.Sort(files)
	var cases []Case
	names := map[string]string{}
	for _, f := range files {
		cs, err := loadFile(f)
		if err != nil {
			return nil, err
		}
		for _, c := range cs {
			if prev, ok := names[c.Name]; ok {
				return nil, fmt.Errorf("hostile: %s: name %q already used at %s", c.Where(), c.Name, prev)
			}
			names[c.Name] = c.Where()
		}
		cases = append(cases, cs...)
	}
	return cases, nil
}

func loadFile(path string) ([]Case, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("hostile: read corpus: %w", err)
	}
	var cases []Case
	sc := bufio.NewScanner(bytes.NewReader(data))
	// Corpus lines carry whole request bodies.
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(text))
		dec.DisallowUnknownFields()
		var c Case
		if err := dec.Decode(&c); err != nil {
			return nil, fmt.Errorf("hostile: %s:%d: %w", path, line, err)
		}
		c.File, c.Line = filepath.Base(path), line
		if err := c.check(); err != nil {
			return nil, fmt.Errorf("hostile: %s: %w", c.Where(), err)
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("hostile: read %s: %w", path, err)
	}
	return cases, nil
}

// check fills defaults and rejects entries that cannot be run.
func (c *Case) check() error {
	if c.Method == "" {
		c.Method = http.MethodPost
	}
	if c.ContentType == "" {
		c.ContentType = "application/json"
	}
	switch {
	case c.Name == "":
		return fmt.Errorf("missing name")
	case !strings.HasPrefix(c.Path, "/"):
		return fmt.Errorf("path %q must start with /", c.Path)
	case c.Gen != "" && c.Body != "" && strings.Count(c.Body, Placeholder) != 1:
		return fmt.Errorf("a body with a generator must hold the placeholder %s once", Placeholder)
	case c.Status < 400 || c.Status > 499:
		// The corpus is about refusals: every entry expects a 4xx.
		return fmt.Errorf("status %d is not a 4xx", c.Status)
	case c.Type == "":
		return fmt.Errorf("missing type")
	case c.Server != ServerDefault && c.Server != ServerTrusted:
		return fmt.Errorf("unknown server %q", c.Server)
	}
	return nil
}

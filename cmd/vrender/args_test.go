package main

import (
	"bytes"
	"errors"
	"flag"
	"slices"
	"strings"
	"testing"
)

// testCommand mirrors serve's flag kinds: strings, an int, a bool, a
// multi-valued list and a human-readable int.
func testCommand() (*command, *struct {
	model, host string
	port        int
	jsonl       bool
	names       stringList
	maxLen      humanInt
}) {
	v := &struct {
		model, host string
		port        int
		jsonl       bool
		names       stringList
		maxLen      humanInt
	}{}
	c := newCommand("t", "[MODEL]", "test")
	c.fs.StringVar(&v.model, "model", "", "model")
	c.fs.StringVar(&v.host, "host", "", "host")
	c.fs.IntVar(&v.port, "port", 8000, "port")
	c.fs.BoolVar(&v.jsonl, "jsonl", false, "jsonl")
	c.fs.Var(&v.names, "served-model-name", "names")
	c.fs.Var(&v.maxLen, "max-model-len", "len")
	c.multi["served-model-name"] = true
	return c, v
}

func TestParseVLLMStyle(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		positional []string
		model      string
		port       int
		jsonl      bool
		names      []string
		maxLen     int
	}{
		{name: "model first", args: []string{"Qwen/Qwen3-8B", "--port", "9000"}, positional: []string{"Qwen/Qwen3-8B"}, port: 9000},
		{name: "model last", args: []string{"--port=9000", "--jsonl", "Qwen/Qwen3-8B"}, positional: []string{"Qwen/Qwen3-8B"}, port: 9000, jsonl: true},
		{name: "model between", args: []string{"--port", "9000", "m", "--jsonl"}, positional: []string{"m"}, port: 9000, jsonl: true},
		{name: "underscores", args: []string{"--max_model_len", "4096", "--served_model_name=x"}, maxLen: 4096, names: []string{"x"}},
		{name: "single dash", args: []string{"-port", "1"}, port: 1},
		{name: "served names space separated", args: []string{"--served-model-name", "a", "b", "c", "--port", "1", "m"}, names: []string{"a", "b", "c"}, port: 1, positional: []string{"m"}},
		{name: "served names swallow a trailing model like argparse", args: []string{"--served-model-name", "a", "m"}, names: []string{"a", "m"}},
		{name: "served names repeated", args: []string{"--served-model-name", "a", "--served-model-name=b"}, names: []string{"a", "b"}},
		{name: "no- prefix", args: []string{"--jsonl", "--no-jsonl"}, jsonl: false},
		{name: "bool with value", args: []string{"--jsonl=true"}, jsonl: true},
		{name: "double dash ends flags", args: []string{"--", "--port"}, positional: []string{"--port"}},
		{name: "negative value", args: []string{"--max-model-len", "-1"}, maxLen: 0},
		{name: "human int", args: []string{"--max-model-len", "32k"}, maxLen: 32000},
		{name: "model flag", args: []string{"--model", "m"}, model: "m"},
		{name: "lone dash is positional", args: []string{"-"}, positional: []string{"-"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, v := testCommand()
			pos, err := c.parse(tt.args, &bytes.Buffer{})
			if err != nil {
				t.Fatal(err)
			}
			wantPort := tt.port
			if wantPort == 0 {
				wantPort = 8000
			}
			if !slices.Equal(pos, tt.positional) || v.model != tt.model || v.port != wantPort || v.jsonl != tt.jsonl ||
				!slices.Equal([]string(v.names), tt.names) || int(v.maxLen) != tt.maxLen {
				t.Errorf("got positional=%q model=%q port=%d jsonl=%v names=%q maxLen=%d",
					pos, v.model, v.port, v.jsonl, v.names, v.maxLen)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--bogus"}, "unknown flag --bogus"},
		{[]string{"--port"}, "flag --port needs a value"},
		{[]string{"--port", "x"}, "invalid value"},
		{[]string{"--max-model-len", "1.5K"}, "decimals are only allowed"},
		{[]string{"--max-model-len", "lots"}, "invalid integer"},
		{[]string{"--no-port"}, "unknown flag --no-port"},
	}
	for _, tt := range tests {
		c, _ := testCommand()
		_, err := c.parse(tt.args, &bytes.Buffer{})
		var usage usageError
		if !errors.As(err, &usage) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parse(%q) = %v, want a usage error containing %q", tt.args, err, tt.want)
		}
	}
}

func TestParseHelp(t *testing.T) {
	for _, arg := range []string{"-h", "--help", "-help"} {
		c, _ := testCommand()
		out := &bytes.Buffer{}
		_, err := c.parse([]string{"m", arg}, out)
		if !errors.Is(err, flag.ErrHelp) {
			t.Errorf("%s: err = %v, want flag.ErrHelp", arg, err)
		}
		for _, want := range []string{"Usage: vrender t [MODEL]", "--served-model-name value [value ...]", "--port int", "(default 8000)", "--jsonl\n"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%s: help lacks %q:\n%s", arg, want, out)
			}
		}
	}
}

func TestHumanInt(t *testing.T) {
	tests := []struct {
		in   string
		want int
		ok   bool
	}{
		{"4096", 4096, true}, {"1k", 1000, true}, {"25.6k", 25600, true}, {"1K", 1024, true},
		{"32K", 32768, true}, {"2m", 2000000, true}, {"1M", 1 << 20, true}, {"1g", 1e9, true},
		{"auto", 0, true}, {"-1", 0, true}, {" 8k ", 8000, true},
		{"1.5K", 0, false}, {"k", 0, false}, {"-5", 0, false}, {"1kb", 0, false},
	}
	for _, tt := range tests {
		var h humanInt
		err := h.Set(tt.in)
		if (err == nil) != tt.ok || (tt.ok && int(h) != tt.want) {
			t.Errorf("Set(%q) = %d, %v; want %d ok=%v", tt.in, h, err, tt.want, tt.ok)
		}
	}
}

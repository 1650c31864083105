package main

import (
	"context"
	"slices"
	"testing"
)

func TestServeAPIKeys(t *testing.T) {
	tests := []struct {
		name  string
		flags []string
		env   string
		want  []string
	}{
		{"none", nil, "", nil},
		{"env", nil, "sk-env", []string{"sk-env"}},
		{"flags win over env", []string{"sk-a", "sk-b"}, "sk-env", []string{"sk-a", "sk-b"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(apiKeyEnv, tc.env)
			f := serveSecurityFlags{apiKeys: tc.flags}
			if got := f.keys(); !slices.Equal(got, tc.want) {
				t.Errorf("keys() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestServeSecurityFlagsValidate(t *testing.T) {
	ok := serveSecurityFlags{maxBodyBytes: 1, maxMessages: -1, maxTools: 3, maxDerenderTokens: 5, shutdownTimeout: 1}
	if err := ok.validate(); err != nil {
		t.Errorf("valid flags refused: %v", err)
	}
	for _, edit := range []func(*serveSecurityFlags){
		func(f *serveSecurityFlags) { f.maxBodyBytes = 0 },
		func(f *serveSecurityFlags) { f.shutdownTimeout = 0 },
		func(f *serveSecurityFlags) { f.maxMessages = 0 },
		func(f *serveSecurityFlags) { f.maxDerenderTokens = 0 },
		func(f *serveSecurityFlags) { f.maxPromptBytes = -2 },
	} {
		f := ok
		edit(&f)
		if err := f.validate(); err == nil {
			t.Errorf("invalid flags %+v accepted", f)
		}
	}
}

// --max-prompt-bytes: 0 derives the limit from the context length, -1
// turns it off (0 for the generator), a positive value is taken as given.
func TestServePromptBytes(t *testing.T) {
	for _, tc := range []struct{ flag, maxModelLen, want int }{
		{0, 40960, 1 << 20},
		{0, 131072, 2 << 20},
		{0, 4096, 1 << 20},
		{-1, 40960, 0},
		{5000, 40960, 5000},
	} {
		f := serveSecurityFlags{maxPromptBytes: tc.flag}
		if got := f.promptBytes(tc.maxModelLen); got != tc.want {
			t.Errorf("--max-prompt-bytes %d, --max-model-len %d: limit %d, want %d", tc.flag, tc.maxModelLen, got, tc.want)
		}
	}
}

func TestTracesEndpoint(t *testing.T) {
	t.Setenv(tracesEndpointEnv, "http://env:4318")
	if got := tracesEndpoint(""); got != "http://env:4318" {
		t.Errorf("env endpoint: %q", got)
	}
	if got := tracesEndpoint("http://flag:4318"); got != "http://flag:4318" {
		t.Errorf("flag endpoint: %q", got)
	}
	for _, bad := range []string{"collector:4318", "ftp://x", "http://"} {
		if _, _, err := newTracerProvider(context.Background(), bad, "test"); err == nil {
			t.Errorf("endpoint %q accepted", bad)
		}
	}
	tp, stop, err := newTracerProvider(context.Background(), "http://127.0.0.1:1", "test")
	if err != nil || tp == nil {
		t.Fatalf("good endpoint: %v", err)
	}
	_ = stop(context.Background())
}

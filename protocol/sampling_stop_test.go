package protocol

import (
	"errors"
	"strings"
	"testing"
)

func TestStopLimits(t *testing.T) {
	cases := []struct {
		name    string
		stop    []string
		wantErr string
	}{
		{name: "benchmark size fits", stop: repeat(strings.Repeat("x", 1000), 4000)},
		{name: "at count limit", stop: repeat("s", MaxStopStrings)},
		{name: "too many", stop: repeat("s", MaxStopStrings+1), wantErr: "stop must have at most 8192 strings, got 8193."},
		{name: "at byte limit", stop: []string{strings.Repeat("x", MaxStopTotalBytes)}},
		{name: "too long", stop: []string{strings.Repeat("x", MaxStopTotalBytes), "y"}, wantErr: "stop strings must total at most 4194304 bytes (UTF-8), got 4194305."},
	}
	for _, tc := range cases {
		p := NewSamplingParams()
		p.Stop = tc.stop
		err := p.Finalize(128)
		if tc.wantErr == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		var se *SamplingParamsError
		if !errors.As(err, &se) || se.Msg != tc.wantErr || se.Parameter == nil || *se.Parameter != "stop" {
			t.Errorf("%s: got %v, want %q on param stop", tc.name, err, tc.wantErr)
		}
	}
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

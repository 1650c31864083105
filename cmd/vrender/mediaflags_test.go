package main

import (
	"math"
	"strings"
	"testing"
)

func TestImageLimit(t *testing.T) {
	for _, tt := range []struct {
		in      string
		want    int
		wantErr bool
	}{
		{"", -1, false},
		{`{"image": 2}`, 2, false},
		{`{"video": 1}`, -1, false},
		{"image=0", 0, false},
		{"image=3,video=1", 3, false},
		{`{"image": -1}`, 0, true},
		{`{"image": "x"}`, 0, true},
		{"image", 0, true},
		{"image=x", 0, true},
		{"{bad", 0, true},
	} {
		f := mediaFlags{limitMMPerPrompt: tt.in}
		got, err := f.imageLimit()
		if (err != nil) != tt.wantErr || (!tt.wantErr && got != tt.want) {
			t.Errorf("imageLimit(%q) = %d, %v; want %d (error %v)", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestCacheBytesFromGB(t *testing.T) {
	for _, tt := range []struct {
		gb      float64
		want    int64
		wantErr bool
	}{
		{4, 4 << 30, false},
		{0, 0, false},
		{0.5, 1 << 29, false},
		{1e-9, 1, false},
		{-1, 0, true},
		{math.NaN(), 0, true},
		{math.Inf(1), 0, true},
		{1e10, 0, true},
	} {
		got, err := cacheBytesFromGB("--x-gb", tt.gb)
		if (err != nil) != tt.wantErr || got != tt.want || err != nil && !strings.HasPrefix(err.Error(), "--x-gb must be") {
			t.Errorf("cacheBytesFromGB(%v) = %d, %v; want %d (error %v)", tt.gb, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestMaxImagePixels(t *testing.T) {
	for _, tt := range []struct {
		env     string
		set     bool
		want    int64
		wantErr string
	}{
		{"", false, 178_956_970, ""},
		{"1000000", true, 1_000_000, ""},
		{" 1_000_000\n", true, 1_000_000, ""},
		{"0", true, 0, ""},
		{"-5", true, -5, ""},
		{"99999999999999999999", true, math.MaxInt64, ""},
		{"", true, 0, "VLLM_MAX_IMAGE_PIXELS: invalid literal for int() with base 10: ''"},
		{"1e6", true, 0, "VLLM_MAX_IMAGE_PIXELS: invalid literal for int() with base 10: '1e6'"},
		{"lots", true, 0, "VLLM_MAX_IMAGE_PIXELS: invalid literal for int() with base 10: 'lots'"},
	} {
		got, err := maxImagePixels(func(k string) (string, bool) {
			if k != "VLLM_MAX_IMAGE_PIXELS" {
				t.Fatalf("looked up %s", k)
			}
			return tt.env, tt.set
		})
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if got != tt.want || msg != tt.wantErr {
			t.Errorf("VLLM_MAX_IMAGE_PIXELS=%q (set %v): %d, %q; want %d, %q", tt.env, tt.set, got, msg, tt.want, tt.wantErr)
		}
	}
}

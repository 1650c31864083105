package main

import (
	"math"
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
		got, err := cacheBytesFromGB(tt.gb)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("cacheBytesFromGB(%v) = %d, %v; want %d (error %v)", tt.gb, got, err, tt.want, tt.wantErr)
		}
	}
}

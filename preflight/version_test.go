package preflight

import "testing"

func TestParseVersion(t *testing.T) {
	tests := []struct {
		in      string
		release []int
		pre     string
		preN    int
		post    int
		dev     int
		local   string
	}{
		{"0.31.1", []int{0, 31, 1}, "", 0, -1, -1, ""},
		{"v0.31.0", []int{0, 31, 0}, "", 0, -1, -1, ""},
		{"0.31.0rc1.dev12+g1a2b3c4", []int{0, 31, 0}, "rc", 1, -1, 12, "g1a2b3c4"},
		{"0.31.1.dev5+g1a2b3c4.d20260101", []int{0, 31, 1}, "", 0, -1, 5, "g1a2b3c4.d20260101"},
		{"0.31.0+cu128", []int{0, 31, 0}, "", 0, -1, -1, "cu128"},
		{"0.32.0.post1", []int{0, 32, 0}, "", 0, 1, -1, ""},
		{"1.0b2", []int{1, 0}, "b", 2, -1, -1, ""},
	}
	for _, tt := range tests {
		v, err := ParseVersion(tt.in)
		if err != nil {
			t.Errorf("ParseVersion(%q): %v", tt.in, err)
			continue
		}
		if len(v.Release) != len(tt.release) || v.Pre != tt.pre || v.PreN != tt.preN || v.Post != tt.post ||
			v.Dev != tt.dev || v.Local != tt.local || v.String() != tt.in {
			t.Errorf("ParseVersion(%q) = %+v", tt.in, v)
		}
		for i := range tt.release {
			if v.Release[i] != tt.release[i] {
				t.Errorf("ParseVersion(%q).Release = %v, want %v", tt.in, v.Release, tt.release)
			}
		}
	}
	for _, bad := range []string{"", "latest", "0.31.x", "0.31.1 extra", "dev"} {
		if _, err := ParseVersion(bad); err == nil {
			t.Errorf("ParseVersion(%q) succeeded", bad)
		}
	}
}

func TestVersionCompare(t *testing.T) {
	// Each is older than the next, as PEP 440 (and pip) order them.
	ordered := []string{"0.30.2", "0.31.0.dev3", "0.31.0a1", "0.31.0b1", "0.31.0rc1.dev12+gabc", "0.31.0rc1",
		"0.31.0", "0.31.0.post1", "0.31.1.dev5+gdef", "0.31.1", "0.32", "1.0.0"}
	for i := range ordered {
		for j := range ordered {
			a, b := MustParseVersion(ordered[i]), MustParseVersion(ordered[j])
			want := 0
			switch {
			case i < j:
				want = -1
			case i > j:
				want = 1
			}
			if got := a.Compare(b); got != want {
				t.Errorf("Compare(%s, %s) = %d, want %d", a, b, got, want)
			}
		}
	}
	if MustParseVersion("0.31").Compare(MustParseVersion("0.31.0")) != 0 {
		t.Error("0.31 != 0.31.0")
	}
	if MustParseVersion("0.31.0+cu128").Compare(MinVersion) != 0 {
		t.Error("a local version label must not order")
	}
}

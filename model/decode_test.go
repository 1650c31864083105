package model

import "testing"

func TestCleanUpTokenization(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Hello , world . isn't it ?", "Hello, world. isn't it?"},
		{"I 'm sure they 're here , aren 't they !", "I'm sure they're here, aren 't they!"},
		{"we 've it 's do n't", "we've it's don't"},
		{"a ' b", "a'b"},
		// Sequential replacement: " ,"→"," then " ."→"." only once per pass.
		{"x  .", "x ."},
	}
	for _, tt := range tests {
		if got := cleanUpTokenization(tt.in); got != tt.want {
			t.Errorf("cleanUpTokenization(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

package pyfmt

import "testing"

// Expected values are python3's repr() of the same str.
func TestAppendStrRepr(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"empty", "", `''`},
		{"plain", "plain", `'plain'`},
		{"single quote picks double", "it's", `"it's"`},
		{"lone single quote", "'", `"'"`},
		{"both quotes", `it's "q"`, `'it\'s "q"'`},
		{"double quotes only", `say "hi"`, `'say "hi"'`},
		{"backslash", `back\slash`, `'back\\slash'`},
		{"named escapes", "tab\tnl\ncr\r", `'tab\tnl\ncr\r'`},
		{"controls", "\x00\x07\x1b\x7f", `'\x00\x07\x1b\x7f'`},
		{"C1 next line", "\u0085", `'\x85'`},
		{"no-break space", "\u00a0", `'\xa0'`},
		{"soft hyphen", "\u00ad", `'\xad'`},
		{"zero width space", "\u200b", `'\u200b'`},
		{"line separator", "\u2028", `'\u2028'`},
		{"private use", "\ue000", `'\ue000'`},
		{"last code point", "\U0010ffff", `'\U0010ffff'`},
		{"astral format char", "\U000e0001", `'\U000e0001'`},
		{"printable non-ASCII", "😀 héllo 你好", `'😀 héllo 你好'`},
		{"replacement char", "\ufffd", "'\ufffd'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(AppendStrRepr(nil, tt.in, "?")); got != tt.want {
				t.Errorf("AppendStrRepr(%q) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

func TestAppendStrReprBadByte(t *testing.T) {
	got := string(AppendStrRepr([]byte("x="), "a\xffb\x80", `\ufffd`))
	if want := `x='a\ufffdb\ufffd'`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

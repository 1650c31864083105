package telemetry

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestStagesExpositionParses(t *testing.T) {
	st := NewStages()
	st.Observe(StageTemplate, 3*time.Millisecond)
	st.Observe(StageTemplate, 2*time.Second)
	st.Since(StageParse, st.Start())
	var b bytes.Buffer
	if err := st.WritePrometheus(&b); err != nil {
		t.Fatal(err)
	}
	if err := WriteProcess(&b, time.Now()); err != nil {
		t.Fatal(err)
	}
	fams, err := ParseText(&b)
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	tests := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"vrender_stage_seconds_count", map[string]string{"stage": "template"}, 2},
		{"vrender_stage_seconds_bucket", map[string]string{"stage": "template", "le": "0.005"}, 1},
		{"vrender_stage_seconds_bucket", map[string]string{"stage": "template", "le": "+Inf"}, 2},
		{"vrender_stage_seconds_count", map[string]string{"stage": "parse"}, 1},
		{"vrender_stage_seconds_count", map[string]string{"stage": "tokenize"}, 0},
	}
	for _, tc := range tests {
		got, ok := Value(fams, tc.name, tc.labels)
		if !ok || got != tc.want {
			t.Errorf("%s%v = %v (found %v), want %v", tc.name, tc.labels, got, ok, tc.want)
		}
	}
	if sum, _ := Value(fams, "vrender_stage_seconds_sum", map[string]string{"stage": "template"}); sum < 2.003 || sum > 2.0031 {
		t.Errorf("template sum %v, want 2.003", sum)
	}
	if _, ok := Value(fams, "process_cpu_seconds_total", nil); !ok {
		t.Error("process_cpu_seconds_total missing")
	}
}

func TestNilStagesRecordNothing(t *testing.T) {
	var st *Stages
	if !st.Start().IsZero() {
		t.Error("nil Stages read the clock")
	}
	st.Since(StageTokenize, time.Time{})
	st.Observe(StageTokenize, time.Second)
	if st.Histogram(StageTokenize) != nil {
		t.Error("nil Stages has a histogram")
	}
}

func TestParseTextRejects(t *testing.T) {
	tests := []struct{ name, text string }{
		{"sample before type", "foo 1\n"},
		{"bad value", "# TYPE foo counter\nfoo one\n"},
		{"bad name", "# TYPE 1foo counter\n1foo 1\n"},
		{"unterminated label", "# TYPE foo counter\nfoo{a=\"x} 1\n"},
		{"duplicate type", "# TYPE foo counter\n# TYPE foo counter\nfoo 1\n"},
		{"duplicate label", "# TYPE foo counter\nfoo{a=\"1\",a=\"2\"} 1\n"},
	}
	for _, tc := range tests {
		if _, err := ParseText(strings.NewReader(tc.text)); err == nil {
			t.Errorf("%s: parsed", tc.name)
		}
	}
	fams, err := ParseText(strings.NewReader("# TYPE foo counter\nfoo{a=\"q\\\"\\\\\",b=\"\"} 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := Value(fams, "foo", map[string]string{"a": `q"\`}); !ok || v != 2 {
		t.Errorf("escaped label: %v %v", v, ok)
	}
}

func TestLabelEscapes(t *testing.T) {
	if got := Label("engine", "a\"b\\c\nd"); got != `engine="a\"b\\c\nd"` {
		t.Errorf("Label = %s", got)
	}
}

// BenchmarkStageTimer is the cost a hook adds per timed stage: a clock
// read and a histogram observation.
func BenchmarkStageTimer(b *testing.B) {
	st := NewStages()
	start := st.Start()
	for b.Loop() {
		start = st.Since(StageDetokenize, start)
	}
}

func TestStyles(t *testing.T) {
	h := NewValueHistogram([]float64{10})
	h.ObserveValue(4)
	h.ObserveValue(40)
	var b strings.Builder
	if err := h.WriteSeriesStyle(&b, "x", `a="1"`, StylePython); err != nil {
		t.Fatal(err)
	}
	if err := WriteCount(&b, "c_total", "", 3, StyleGo); err != nil {
		t.Fatal(err)
	}
	want := "x_bucket{a=\"1\",le=\"10\"} 1.0\nx_bucket{a=\"1\",le=\"+Inf\"} 2.0\nx_sum{a=\"1\"} 44\nx_count{a=\"1\"} 2.0\nc_total 3\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestParseSampleBlanks(t *testing.T) {
	for _, line := range []string{`m{a="x\"y", b = "2"} +Inf 123`, "m\t1", `m{ } 1`} {
		s, err := ParseSample(line)
		if err != nil || s.Name != "m" {
			t.Errorf("%q: %+v %v", line, s, err)
		}
	}
	s, _ := ParseSample(`m{a="x\"y", b = "2"} +Inf 123`)
	if s.Labels["a"] != `x"y` || s.Labels["b"] != "2" {
		t.Errorf("labels %v", s.Labels)
	}
}

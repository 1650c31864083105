package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/testenv"
)

func TestParseImageReference(t *testing.T) {
	files := []string{"/tmp/a.jpeg", "/tmp/b.png"}
	good := `{"python":"3.11.2","pillow":"9.4.0","numpy":"1.24.2","images":[
		{"file":"/tmp/a.jpeg","size_wh":[1280,720],"resized_hw":[728,1288],"grid_thw":[1,52,92],"process":{"iterations":3,"min_ns":5e7,"median_ns":5.5e7}},
		{"file":"/tmp/b.png","size_wh":[640,480],"resized_hw":[476,644],"grid_thw":[1,34,46],"process":{"iterations":5,"min_ns":1e7,"median_ns":1.2e7}}]}`
	run, err := parseImageReference([]byte(good), files)
	if err != nil {
		t.Fatal(err)
	}
	if run.Pillow != "9.4.0" || run.Images[0].ResizedHW != [2]int{728, 1288} || run.Images[1].GridTHW != [3]int{1, 34, 46} ||
		run.Images[0].Process.MedianNs != 5.5e7 || run.Images[1].Process.Iterations != 5 {
		t.Fatalf("parsed %+v", run)
	}
	cases := []struct{ name, out, wantErr string }{
		{"not JSON", "Traceback (most recent call last):", "output"},
		{"too few", `{"images":[{"file":"/tmp/a.jpeg","process":{"iterations":1,"median_ns":1}}]}`, "1 results for 2 files"},
		{"wrong order", strings.Replace(good, `"/tmp/a.jpeg"`, `"/tmp/c.jpeg"`, 1), "result 0 is for /tmp/c.jpeg"},
		{"untimed", strings.Replace(good, `"iterations":5`, `"iterations":0`, 1), "no timed run of /tmp/b.png"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := parseImageReference([]byte(tc.out), files); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// TestImageRequestBody checks the hand-assembled body is the JSON a client
// would marshal: history turns alternate user/assistant, the images come
// before the text in the last user message, return_mm_kwargs only when
// asked.
func TestImageRequestBody(t *testing.T) {
	body := imageRequestBody([]string{"q \"1\"", "a <1>"}, []string{"data:image/png;base64,AAAA", "data:image/png;base64,BBBB"}, "what now?", true)
	var got map[string]any
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, body)
	}
	want := map[string]any{"model": "m", "return_mm_kwargs": false, "messages": []any{
		map[string]any{"role": "user", "content": "q \"1\""},
		map[string]any{"role": "assistant", "content": "a <1>"},
		map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64,AAAA"}},
			map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64,BBBB"}},
			map[string]any{"type": "text", "text": "what now?"},
		}},
	}}
	if g, w := testenv.MustJSON(t, got), testenv.MustJSON(t, want); g != w {
		t.Fatalf("body\n%s\nwant\n%s", g, w)
	}
	if bytes.Contains(imageRequestBody(nil, nil, "x", false), []byte("return_mm_kwargs")) {
		t.Fatal("return_mm_kwargs sent on the full path")
	}
}

// TestImageShapeBodiesAreNew checks no two requests of a shape, nor the
// warm-up, send the same image bytes: a processed-image cache must never
// serve the matrix.
func TestImageShapeBodiesAreNew(t *testing.T) {
	data, err := EncodeImage(ImageSize{"32x32", 32, 32}, "jpeg", 1)
	if err != nil {
		t.Fatal(err)
	}
	u, err := newUniqueImage("jpeg", data)
	if err != nil {
		t.Fatal(err)
	}
	s := &imageShape{in: &imageInput{ImageInput: &ImageInput{Format: "jpeg", Size: "32x32"}, unique: u}, count: 8, mode: ModeFull}
	seen := map[string]string{}
	for i := -1; i < 20; i++ {
		var req struct {
			Messages []struct {
				Content []struct {
					ImageURL struct{ URL string } `json:"image_url"`
				}
			}
		}
		if err := json.Unmarshal(s.bodyOf(i), &req); err != nil {
			t.Fatal(err)
		}
		parts := req.Messages[0].Content
		if len(parts) != 9 {
			t.Fatalf("unit %d: %d parts, want 8 images and the text", i, len(parts))
		}
		for k, p := range parts[:8] {
			where := fmt.Sprintf("unit %d image %d", i, k)
			if prev, dup := seen[p.ImageURL.URL]; dup {
				t.Fatalf("%s repeats %s", where, prev)
			}
			seen[p.ImageURL.URL] = where
		}
	}
}

// TestConversationWorkload checks each turn re-sends the same two
// screenshots after a history that grows by two messages, and that two
// conversations never share screenshots.
func TestConversationWorkload(t *testing.T) {
	data, err := EncodeImage(ImageSize{"32x32", 32, 32}, "png", 1)
	if err != nil {
		t.Fatal(err)
	}
	u, err := newUniqueImage("png", data)
	if err != nil {
		t.Fatal(err)
	}
	w := conversationWorkload(&imageInput{ImageInput: &ImageInput{Format: "png", Size: "32x32"}, unique: u}, 10)
	if w.Independent || w.Check != nil {
		t.Fatal("a conversation must run in order over one connection")
	}
	urlsOf := func(i int) [][]string {
		calls, err := w.Next(i)
		if err != nil {
			t.Fatal(err)
		}
		if len(calls) != 10 {
			t.Fatalf("%d calls, want 10", len(calls))
		}
		var out [][]string
		for turn, c := range calls {
			var req struct {
				Messages []json.RawMessage
			}
			if err := json.Unmarshal(c.Body, &req); err != nil {
				t.Fatal(err)
			}
			if len(req.Messages) != 2*turn+1 {
				t.Fatalf("turn %d has %d messages, want %d", turn, len(req.Messages), 2*turn+1)
			}
			var last struct {
				Content []struct {
					ImageURL struct{ URL string } `json:"image_url"`
				}
			}
			if err := json.Unmarshal(req.Messages[len(req.Messages)-1], &last); err != nil {
				t.Fatal(err)
			}
			out = append(out, []string{last.Content[0].ImageURL.URL, last.Content[1].ImageURL.URL})
		}
		return out
	}
	a, b := urlsOf(0), urlsOf(1)
	for turn := range a {
		if a[turn][0] != a[0][0] || a[turn][1] != a[0][1] {
			t.Fatalf("turn %d sends other screenshots than turn 0", turn)
		}
	}
	if a[0][0] == a[0][1] {
		t.Fatal("the two screenshots are the same bytes")
	}
	if a[0][0] == b[0][0] || a[0][1] == b[0][1] {
		t.Fatal("two conversations share a screenshot")
	}
}

func TestCheckImageAnswer(t *testing.T) {
	full := `{"token_ids":[1],"features":{"mm_hashes":{"image":["a","b"]},"mm_placeholders":{"image":[{"offset":1,"length":4},{"offset":6,"length":4}]},"kwargs_data":{"image":["x","y"]}}}`
	bare := `{"token_ids":[1],"features":{"mm_hashes":{"image":["a"]},"mm_placeholders":{"image":[{"offset":1,"length":4}]},"kwargs_data":null}}`
	cases := []struct {
		name, body string
		n          int
		kwargs     bool
		wantErr    string
	}{
		{"full", full, 2, true, ""},
		{"no kwargs", bare, 1, false, ""},
		{"count", full, 3, true, "2 hashes and 2 placeholders for 3 images"},
		{"kwargs missing", bare, 1, true, "kwargs_data present false"},
		{"kwargs unwanted", full, 2, false, "kwargs_data present true"},
		{"no features", `{"token_ids":[1]}`, 1, false, "without features"},
		{"not JSON", `oops`, 1, false, "render answer"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := checkImageAnswer([]byte(tc.body), tc.n, tc.kwargs)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestImageShapeRow(t *testing.T) {
	in := &imageInput{ImageInput: &ImageInput{Format: "jpeg", Size: "1280x720", ReferenceNs: 50e6}}
	s := &imageShape{in: in, count: 4, mode: ModeFull, body: 1000, inProc: InProcessFigure{Runs: 3, NsPerOp: 8e6}}
	r := s.row(HTTPResult{CPUPerReqNs: 10e6})
	if r.ReferenceNs != 200e6 || r.Ratio != 20 || r.Target != 0 || r.BodyBytes != 1000 || r.InProcess.NsPerOp != 8e6 {
		t.Fatalf("row %+v", r)
	}
	s.count = 1
	if r := s.row(HTTPResult{CPUPerReqNs: 10e6}); r.Target != TargetImageFullRatio || r.Ratio != 5 {
		t.Fatalf("one 720p JPEG, full: %+v", r)
	}
	s.mode = ModeNoKwargs
	if r := s.row(HTTPResult{}); r.Target != TargetImageNoKwargsRatio || r.Ratio != 0 {
		t.Fatalf("one 720p JPEG, no kwargs, nothing measured: %+v", r)
	}
}

func TestBusyNote(t *testing.T) {
	cases := []struct {
		before, after string
		cpus          int
		shared        bool
	}{
		{"0.10 0.20 0.30", "0.40 0.20 0.30", 2, false},
		{"0.10 0.20 0.30", "3.50 1.00 0.30", 2, true},
		{"14.1 9.1 5.0", "", 2, true},
		{"", "", 2, false},
		{"garbage", "1.5", 4, false},
	}
	for _, tc := range cases {
		if got := busyNote(tc.before, tc.after, tc.cpus); (got != "") != tc.shared {
			t.Errorf("busyNote(%q, %q, %d) = %q, shared want %v", tc.before, tc.after, tc.cpus, got, tc.shared)
		}
	}
}

// TestImagesReportTable checks every section of the table is printed from
// the report's figures, with targets judged.
func TestImagesReportTable(t *testing.T) {
	rep := &ImagesReport{Model: "qwen2_5_vl", NumCPU: 2, LoadBefore: "3.00 2.00 1.00", LoadAfter: "2.00 2.00 1.00",
		Python: "3.11.2", Pillow: "9.4.0", Numpy: "1.24.2", RefPinned: true, ServerPinned: true, ClientPinned: true,
		SyscallCounter: "/proc/PID/io syscr+syscw",
		Images: []ImageInput{{Size: "1280x720", Format: "jpeg", Bytes: 112432, ResizedHW: [2]int{728, 1288}, GridTHW: [3]int{1, 52, 92},
			Tokens: 1196, ReferenceNs: 55e6}},
		Floor: HTTPRow{HTTPResult: HTTPResult{Units: 100, CPUPerReqNs: 130e3, BusyPct: 50, SyscallsPerReq: 3, PeakRSSBytes: 70 << 20}},
		Rows: []ImageRow{
			{Format: "jpeg", Size: "1280x720", Images: 1, Mode: ModeFull, BodyBytes: 150000,
				HTTP:      HTTPResult{Units: 6, CPUPerReqNs: 5e6, BusyPct: 90, SyscallsPerReq: 13.5, AllocsPerUnit: 268, PeakRSSBytes: 168 << 20},
				InProcess: InProcessFigure{Runs: 10, NsPerOp: 4.5e6, AllocsPerOp: 170, BytesPerOp: 69 << 20}, ReferenceNs: 55e6, Ratio: 11,
				Target: TargetImageFullRatio},
			{Format: "jpeg", Size: "1280x720", Images: 1, Mode: ModeNoKwargs, HTTP: HTTPResult{Units: 60, CPUPerReqNs: 1e6},
				ReferenceNs: 55e6, Ratio: 55, Target: TargetImageNoKwargsRatio},
		},
		SendFloor: &SendFloorRow{Request: "jpeg 1280x720 x1", AnswerBytes: 15 << 20, WriteBytes: 2 << 20,
			HTTP:        HTTPResult{Units: 20, CPUPerReqNs: 2.5e6, BusyPct: 60, SyscallsPerReq: 40, AllocsPerUnit: -1, PeakRSSBytes: 40 << 20},
			ImageWorkNs: 2.5e6, ReferenceNs: 55e6, BestRatio: 22},
		Conversation: &ConversationRow{Turns: 10, Screenshot: "png 1280x720", HTTP: HTTPResult{Units: 3, CPUPerReqNs: 2e6},
			ReferenceNs: 110e6, Ratio: 55, UncachedNs: 20e6, Target: TargetImageConversationRatio},
		Scaling: []ScalingRow{
			{Cores: 1, Workload: "jpeg 1920x1080 x1 full", HTTP: HTTPResult{Requests: 40, CPUPerReqNs: 9e6, BusyPct: 99}, ReqPerSec: 110,
				PerCore: 110, CPUBoundPerSec: 111.11, RefPerSec: 9, BaseRSS: 70 << 20, ScalingLoad: "8 clients at once"},
			{Cores: 2, Workload: "jpeg 1920x1080 x1 full", HTTP: HTTPResult{Requests: 80, CPUPerReqNs: 9.5e6, BusyPct: 190}, ReqPerSec: 210,
				PerCore: 105, CPUBoundPerSec: 210.53, RefPerSec: 9, BaseRSS: 72 << 20, ScalingLoad: "8 clients at once"},
		},
	}
	var b strings.Builder
	if err := rep.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"the machine was shared (1-minute load 3.00 on 2 CPUs)",
		"Pillow 9.4.0, numpy 1.24.2",
		"jpeg   1280x720      112432    1288x728      1,52,92    1196          55.00",
		"GET /v1/models         floor",
		"jpeg 1280x720 x1       full          0.14      6       5.00   90%      13.5          268      168         4.50         170      69.0       55.0    11.0x ≥6x met",
		"send floor (under jpeg 1280x720 x1 full)",
		"  send floor           static        0.14     20       2.50   60%      40.0            -       40            -           -         -       55.0    22.0x best possible",
		"image work above the send floor 2.50 ms of 5.00 (50%); the floor answers 15.00 MB of static bytes in 2048 KiB writes",
		"jpeg 1280x720 x1       no-kwargs",
		"55.0x ≥100x MISSED",
		"10 turns, 2 screenshots      3           2.00                  20.00",
		"55.0x ≥30x met",
		"(jpeg 1920x1080 x1 full, 8 clients at once)",
		"    1        40           9.00     110.00     110.00   99%           111.11          9.00             9.00             70",
		"    2        80           9.50     210.00     105.00  190%           210.53          9.00             4.50             72",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	// The floor stands right under its full-path row.
	if i, j := strings.Index(out, "jpeg 1280x720 x1       full"), strings.Index(out, "  send floor "); i < 0 || j < i ||
		strings.Count(out[i:j], "\n") != 1 {
		t.Errorf("the send floor is not under its full-path row:\n%s", out)
	}
	// Without a conversation, scaling or send floor section their headers vanish.
	rep.Conversation, rep.Scaling, rep.SendFloor = nil, nil, nil
	b.Reset()
	if err := rep.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "conversation:") || strings.Contains(b.String(), "scaling:") || strings.Contains(b.String(), "send floor") {
		t.Fatalf("empty sections printed:\n%s", b.String())
	}
}

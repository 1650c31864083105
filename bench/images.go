package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"time"

	"github.com/vrender/vrender/features"
	"github.com/vrender/vrender/model"
	"github.com/vrender/vrender/server"
	"github.com/vrender/vrender/vision"
)

// Image bench targets (issue 31): server CPU per request over HTTP on one
// core against the Python reference of the same run.
const (
	TargetImageFullRatio         = 6.0   // one 1280x720 JPEG, full path
	TargetImageNoKwargsRatio     = 100.0 // return_mm_kwargs false
	TargetImageConversationRatio = 30.0  // the 10-turn conversation, with the processed-image cache
)

// Image bench modes: the full path (pixel_values in the answer) and
// return_mm_kwargs false (ids, hashes and placeholders from the headers).
const (
	ModeFull     = "full"
	ModeNoKwargs = "no-kwargs"
)

// imageRenderPath is the route every image bench request goes to.
const imageRenderPath = "/v1/chat/completions/render"

// ImagesOptions configures `vrender bench images`.
type ImagesOptions struct {
	ModelDir string // a Qwen2-VL-family model directory (preprocessor_config.json)
	Sizes    []ImageSize
	Formats  []string
	Counts   []int // images per request
	// MinTime is how much CPU each in-process row and each reference image
	// are timed for, and each HTTP row runs for at least (server CPU).
	MinTime time.Duration
	// MinUnits is the fewest requests (sessions for the conversation) an
	// HTTP row sends after its warm-up.
	MinUnits  int
	Reference ImageReference
	// Server is the `vrender serve` child the HTTP rows drive (Cores is
	// set per section).
	Server ServerOptions
	// SendFloorBin is the vrender binary whose hidden send-floor server
	// the send floor is measured against ("": Server.Bin), so a --http-bin
	// of another build is still compared with this one's floor.
	SendFloorBin string
	// Turns of the conversation re-sending the same two screenshots (0:
	// skip it).
	Turns int
	// ScalingCores are the server core counts of the scaling section (nil:
	// skip it); ScalingConns the clients sending at once there.
	ScalingCores []int
	ScalingConns int
}

// ImagesReport is the result of a run; it is also the --json output.
type ImagesReport struct {
	Model          string `json:"model"`
	NumCPU         int    `json:"num_cpu"`
	LoadBefore     string `json:"loadavg_before"`
	LoadAfter      string `json:"loadavg_after"`
	Python         string `json:"python"`
	Pillow         string `json:"pillow"`
	Numpy          string `json:"numpy"`
	RefPinned      bool   `json:"reference_pinned"`
	ServerPinned   bool   `json:"server_pinned"`
	ClientPinned   bool   `json:"client_pinned"`
	SyscallCounter string `json:"syscall_counter"`
	// Images are the generated pictures and the reference's cost of one.
	Images []ImageInput `json:"images"`
	// Floor is GET /v1/models on the matrix's server.
	Floor        HTTPRow          `json:"floor"`
	Rows         []ImageRow       `json:"rows"`
	SendFloor    *SendFloorRow    `json:"send_floor,omitempty"`
	Conversation *ConversationRow `json:"conversation,omitempty"`
	Scaling      []ScalingRow     `json:"scaling,omitempty"`
}

// ImageInput is one generated picture.
type ImageInput struct {
	Size      string `json:"size"`
	Format    string `json:"format"`
	Bytes     int    `json:"bytes"`
	ResizedHW [2]int `json:"resized_hw"`
	GridTHW   [3]int `json:"grid_thw"`
	Tokens    int    `json:"tokens"`
	// ReferenceNs is the reference's CPU for one image (median).
	ReferenceNs float64 `json:"reference_ns"`
	RefRuns     int     `json:"reference_runs"`
}

// ImageRow is one request shape: server CPU over HTTP beside the same work
// in process and the reference.
type ImageRow struct {
	Format    string `json:"format"`
	Size      string `json:"size"`
	Images    int    `json:"images"`
	Mode      string `json:"mode"`
	BodyBytes int    `json:"body_bytes"`
	// HTTP is the server process's cost per request.
	HTTP HTTPResult `json:"http"`
	// InProcess is the same request through the server's handler in this
	// process (httptest, only ServeHTTP timed).
	InProcess InProcessFigure `json:"in_process"`
	// ReferenceNs is the reference's CPU for the request's images: vLLM's
	// media thread processes a request's images one after another.
	ReferenceNs float64 `json:"reference_ns"`
	Ratio       float64 `json:"ratio"` // reference over server CPU per request
	Target      float64 `json:"target,omitempty"`
}

// InProcessFigure is a Go-benchmark-style figure: CPU, allocations and
// bytes per request.
type InProcessFigure struct {
	Runs        int     `json:"runs"`
	NsPerOp     float64 `json:"ns_per_op"`
	AllocsPerOp float64 `json:"allocs_per_op"`
	BytesPerOp  float64 `json:"bytes_per_op"`
}

// SendFloorRow is the send floor of the target full-path row: the same
// requests, client and pinning against a child answering a static body of
// the full-path answer's size (ServeSendFloor), so no image work at all.
type SendFloorRow struct {
	Request     string     `json:"request"` // the full-path row it stands beside
	AnswerBytes int        `json:"answer_bytes"`
	WriteBytes  int        `json:"write_bytes"` // bytes per write to the connection
	HTTP        HTTPResult `json:"http"`
	// ImageWorkNs is the full-path row's server CPU per request above the
	// floor: what image work (decode, resize, patchify, encoding) costs.
	ImageWorkNs float64 `json:"image_work_ns_per_request"`
	ReferenceNs float64 `json:"reference_ns"`
	// BestRatio is the reference over the floor: the most any renderer
	// sending this answer over loopback could reach.
	BestRatio float64 `json:"best_ratio"`
}

// ConversationRow is the agent conversation: Turns requests, each
// re-sending the same two screenshots after the turns before it.
type ConversationRow struct {
	Turns       int        `json:"turns"`
	Screenshot  string     `json:"screenshot"`
	HTTP        HTTPResult `json:"http"`
	ReferenceNs float64    `json:"reference_ns_per_request"`
	Ratio       float64    `json:"ratio"`
	// UncachedNs is what a request would cost if every turn processed its
	// two screenshots again: twice the one-image full-path row.
	UncachedNs float64 `json:"uncached_ns_per_request,omitempty"`
	Target     float64 `json:"target"`
}

// ScalingRow is the scaling load at one server core count.
type ScalingRow struct {
	Cores     int        `json:"cores"`
	Workload  string     `json:"workload"`
	HTTP      HTTPResult `json:"http"`
	ReqPerSec float64    `json:"requests_per_s"`
	PerCore   float64    `json:"requests_per_s_per_core"`
	// CPUBoundPerSec is cores over the server CPU per request: the
	// requests per second the cores give when nothing else runs on them.
	// On a shared machine the server gets less than its cores (busy <
	// 100% per core), and wall-time throughput understates it.
	CPUBoundPerSec float64 `json:"cpu_bound_requests_per_s"`
	RefPerSec      float64 `json:"reference_requests_per_s"` // one media thread: the same at any core count
	BaseRSS        int64   `json:"server_rss_before_bytes"`
	ScalingLoad    string  `json:"load"`
}

// Images runs the image bench: the reference on the generated pictures,
// every request shape in process, then over HTTP against a child server on
// one core, the conversation, and the scaling section.
func Images(ctx context.Context, opts ImagesOptions) (*ImagesReport, error) {
	if len(opts.Sizes) == 0 || len(opts.Formats) == 0 || len(opts.Counts) == 0 {
		return nil, fmt.Errorf("bench images: no sizes, formats or image counts")
	}
	opts.MinUnits = max(1, opts.MinUnits)
	rep := &ImagesReport{Model: opts.ModelDir, NumCPU: runtime.NumCPU(), LoadBefore: loadAvg(),
		SyscallCounter: "/proc/PID/io syscr+syscw: read- and write-family system calls (as the other bench tools count them)"}
	m, err := model.Load(ctx, opts.ModelDir, model.Options{})
	if err != nil {
		return nil, fmt.Errorf("bench images: %w", err)
	}
	configPath := filepath.Join(opts.ModelDir, "preprocessor_config.json")
	config, err := os.ReadFile(configPath)
	if err != nil {
		return nil, fmt.Errorf("bench images: %s is not an image model: %w", opts.ModelDir, err)
	}
	proc, err := vision.New(config, vision.BFloat16)
	if err != nil {
		return nil, fmt.Errorf("bench images: %w", err)
	}

	dir, err := os.MkdirTemp("", "vrender-bench-images-")
	if err != nil {
		return nil, fmt.Errorf("bench images: %w", err)
	}
	defer os.RemoveAll(dir)
	inputs, err := makeImageInputs(opts, proc, dir, rep)
	if err != nil {
		return nil, err
	}
	if err := referenceImages(ctx, opts, configPath, inputs, rep); err != nil {
		return nil, err
	}

	shapes := imageShapes(opts, inputs)
	if err := measureImagesInProcess(ctx, m, opts.MinTime, shapes); err != nil {
		return nil, err
	}

	workloads := make([]Workload, 0, len(shapes)+1)
	for _, s := range shapes {
		workloads = append(workloads, s.workload(false))
	}
	var conv *imageInput
	if opts.Turns > 0 {
		conv = inputs[imageKey{"png", "1280x720"}]
		if conv == nil {
			conv = inputs[imageKey{opts.Formats[0], opts.Sizes[len(opts.Sizes)-1].Name}]
		}
		workloads = append(workloads, conversationWorkload(conv, opts.Turns))
	}
	srvOpts := opts.Server
	srvOpts.Cores = 1
	hrep, err := RunHTTP(ctx, HTTPOptions{Server: srvOpts, MinCPU: opts.MinTime, Conns: []int{1}, MinUnits: opts.MinUnits}, workloads)
	if hrep == nil {
		return nil, err
	}
	rep.ServerPinned, rep.ClientPinned = hrep.ServerPinned, hrep.ClientPinned
	if len(hrep.Floors) > 0 {
		rep.Floor = hrep.Floors[0]
	}
	for i, s := range shapes {
		if i >= len(hrep.Rows) {
			break
		}
		rep.Rows = append(rep.Rows, s.row(hrep.Rows[i].HTTPResult))
	}
	if err != nil {
		return rep, err
	}
	if err := sendFloor(ctx, opts, shapes, rep); err != nil {
		return rep, err
	}
	if conv != nil && len(hrep.Rows) > len(shapes) {
		rep.Conversation = conversationRow(conv, opts.Turns, hrep.Rows[len(shapes)].HTTPResult, rep.Rows)
	}
	if err := imageScaling(ctx, opts, inputs, rep); err != nil {
		return rep, err
	}
	rep.LoadAfter = loadAvg()
	return rep, nil
}

// imageKey names a generated picture.
type imageKey struct{ format, size string }

// imageInput is a generated picture, ready to be sent fresh every time.
type imageInput struct {
	*ImageInput
	file   string // the untagged file, for the reference
	unique *uniqueImage
}

// makeImageInputs generates one picture per size and format, writes it
// for the reference and records its plan.
func makeImageInputs(opts ImagesOptions, proc vision.Processor, dir string, rep *ImagesReport) (map[imageKey]*imageInput, error) {
	inputs := map[imageKey]*imageInput{}
	seed := uint64(1)
	for _, s := range opts.Sizes {
		for _, f := range opts.Formats {
			data, err := EncodeImage(s, f, seed)
			seed++
			if err != nil {
				return nil, err
			}
			u, err := newUniqueImage(f, data)
			if err != nil {
				return nil, err
			}
			plan, err := proc.Plan(s.Width, s.Height, vision.Kwargs{})
			if err != nil {
				return nil, fmt.Errorf("bench images: %s: %w", s.Name, err)
			}
			path := filepath.Join(dir, s.Name+"."+f)
			if err := os.WriteFile(path, data, 0o644); err != nil {
				return nil, fmt.Errorf("bench images: %w", err)
			}
			rep.Images = append(rep.Images, ImageInput{Size: s.Name, Format: f, Bytes: len(data),
				ResizedHW: [2]int{plan.ResizedHeight, plan.ResizedWidth}, GridTHW: plan.GridTHW, Tokens: plan.NumTokens})
			inputs[imageKey{f, s.Name}] = &imageInput{file: path, unique: u}
		}
	}
	for i := range rep.Images {
		in := &rep.Images[i]
		inputs[imageKey{in.Format, in.Size}].ImageInput = in
	}
	return inputs, nil
}

// referenceImages times the reference on every picture and checks it
// resized each to the size vrender does: else the two did different work.
func referenceImages(ctx context.Context, opts ImagesOptions, configPath string, inputs map[imageKey]*imageInput, rep *ImagesReport) error {
	files := make([]string, len(rep.Images))
	for i, in := range rep.Images {
		files[i] = inputs[imageKey{in.Format, in.Size}].file
	}
	run, pinned, err := opts.Reference.run(ctx, configPath, files, 3, 1, opts.MinTime)
	if err != nil {
		return err
	}
	rep.Python, rep.Pillow, rep.Numpy, rep.RefPinned = run.Python, run.Pillow, run.Numpy, pinned
	for i := range rep.Images {
		in, got := &rep.Images[i], run.Images[i]
		if got.ResizedHW != in.ResizedHW || got.GridTHW != in.GridTHW {
			return fmt.Errorf("bench images: the reference resized %s %s to %v (grid %v), vrender plans %v (grid %v)",
				in.Format, in.Size, got.ResizedHW, got.GridTHW, in.ResizedHW, in.GridTHW)
		}
		in.ReferenceNs, in.RefRuns = got.Process.MedianNs, got.Process.Iterations
	}
	return nil
}

// imageShape is one request shape of the matrix.
type imageShape struct {
	in     *imageInput
	count  int
	mode   string
	inProc InProcessFigure
	body   int
	answer int // bytes of the warm-up's answer
}

// imageShapes are the matrix's request shapes, smallest first, so the
// server's peak RSS after each row grows with the rows.
func imageShapes(opts ImagesOptions, inputs map[imageKey]*imageInput) []*imageShape {
	var out []*imageShape
	for _, s := range opts.Sizes {
		for _, f := range opts.Formats {
			for _, n := range opts.Counts {
				for _, mode := range []string{ModeFull, ModeNoKwargs} {
					out = append(out, &imageShape{in: inputs[imageKey{f, s.Name}], count: n, mode: mode})
				}
			}
		}
	}
	return out
}

func (s *imageShape) name() string {
	return fmt.Sprintf("%s %s x%d", s.in.Format, s.in.Size, s.count)
}

// body is request i's body: every image of it tagged anew, so no cache
// serves it (i = -1 is the warm-up's).
func (s *imageShape) bodyOf(i int) []byte {
	urls := make([]string, s.count)
	for k := range urls {
		urls[k] = s.in.unique.dataURL(imageTag(i, k))
	}
	return imageRequestBody(nil, urls, "Describe the pictures.", s.mode == ModeNoKwargs)
}

// imageTag numbers image k of unit i so that no two (unit, image) pairs
// share one; the warm-up (-1) takes the first 16.
func imageTag(i, k int) int { return (i+1)*16 + k }

// workload sends the shape's requests. The matrix sends them one after
// another (independent false): a request of eight 1080p images costs the
// server seconds, and a concurrent driver's units made ahead would all be
// run at the end. The scaling load is independent, to be sent at once.
func (s *imageShape) workload(independent bool) Workload {
	return Workload{Name: s.name(), Kind: s.mode, Independent: independent, Next: func(i int) ([]Call, error) {
		return []Call{{Method: "POST", Path: imageRenderPath, Body: s.bodyOf(i)}}, nil
	}}
}

// row joins the shape's figures with its HTTP result.
func (s *imageShape) row(h HTTPResult) ImageRow {
	r := ImageRow{Format: s.in.Format, Size: s.in.Size, Images: s.count, Mode: s.mode, BodyBytes: s.body, HTTP: h,
		InProcess: s.inProc, ReferenceNs: float64(s.count) * s.in.ReferenceNs}
	if h.CPUPerReqNs > 0 {
		r.Ratio = r.ReferenceNs / h.CPUPerReqNs
	}
	if s.in.Format == "jpeg" && s.in.Size == "1280x720" && s.count == 1 {
		r.Target = TargetImageFullRatio
		if s.mode == ModeNoKwargs {
			r.Target = TargetImageNoKwargsRatio
		}
	}
	return r
}

// imageRequestBody is a chat render body: the turns before (user and
// assistant text), then one user message with the images and text. It is
// put together as bytes: the data URLs are base64 and need no escaping,
// and marshalling tens of megabytes per request would make the client,
// not the server, set the pace.
func imageRequestBody(history []string, urls []string, text string, omitKwargs bool) []byte {
	n := 256 + len(text)
	for _, u := range urls {
		n += len(u) + 64
	}
	for _, h := range history {
		n += len(h) + 64
	}
	b := make([]byte, 0, n)
	b = append(b, `{"model":"m","messages":[`...)
	for i, h := range history {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		b = append(b, `{"role":"`+role+`","content":`...)
		b = append(b, jsonBody(h)...)
		b = append(b, "},"...)
	}
	b = append(b, `{"role":"user","content":[`...)
	for _, u := range urls {
		b = append(b, `{"type":"image_url","image_url":{"url":"`...)
		b = append(b, u...)
		b = append(b, `"}},`...)
	}
	b = append(b, `{"type":"text","text":`...)
	b = append(b, jsonBody(text)...)
	b = append(b, `}]}]`...)
	if omitKwargs {
		b = append(b, `,"return_mm_kwargs":false`...)
	}
	return append(b, '}')
}

// measureImagesInProcess runs every shape through the server's handler in
// this process on one core: CPU inside ServeHTTP (serverClock), and the
// heap allocations of the whole loop minus the client's bodies.
func measureImagesInProcess(ctx context.Context, m *model.Model, minTime time.Duration, shapes []*imageShape) error {
	h, err := server.New(server.Config{Model: m, ServedModelNames: []string{"m"},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return fmt.Errorf("bench images: %w", err)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for _, s := range shapes {
		// The warm-up checks the answer once: every image counted, pixel
		// values present exactly on the full path.
		warm := s.bodyOf(-1)
		s.body = len(warm)
		var clk serverClock
		out, err := clk.post(h, imageRenderPath, warm)
		if err != nil {
			return fmt.Errorf("bench images %s %s: %w", s.name(), s.mode, err)
		}
		if err := checkImageAnswer(out, s.count, s.mode == ModeFull); err != nil {
			return fmt.Errorf("bench images %s %s: %w", s.name(), s.mode, err)
		}
		s.answer = len(out)
		runtime.GC()
		clk = serverClock{}
		var client heapAllocs
		start := readHeapAllocs()
		runs := 0
		for runs < 1 || clk.cpu < minTime {
			if err := ctx.Err(); err != nil {
				return err
			}
			c0 := readHeapAllocs()
			body := s.bodyOf(1_000_000 + runs)
			client = client.add(readHeapAllocs().sub(c0))
			if _, err := clk.post(h, imageRenderPath, body); err != nil {
				return fmt.Errorf("bench images %s %s: %w", s.name(), s.mode, err)
			}
			runs++
		}
		total := readHeapAllocs().sub(start).sub(client)
		s.inProc = InProcessFigure{Runs: runs, NsPerOp: float64(clk.cpu.Nanoseconds()) / float64(runs),
			AllocsPerOp: float64(total.objects) / float64(runs), BytesPerOp: float64(total.bytes) / float64(runs)}
	}
	return nil
}

// heapAllocs are cumulative heap allocations (runtime/metrics: cheap to
// read, no stop-the-world as ReadMemStats).
type heapAllocs struct{ objects, bytes uint64 }

func readHeapAllocs() heapAllocs {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:objects"}, {Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return heapAllocs{s[0].Value.Uint64(), s[1].Value.Uint64()}
}

func (a heapAllocs) sub(b heapAllocs) heapAllocs {
	return heapAllocs{a.objects - b.objects, a.bytes - b.bytes}
}
func (a heapAllocs) add(b heapAllocs) heapAllocs {
	return heapAllocs{a.objects + b.objects, a.bytes + b.bytes}
}

// checkImageAnswer checks a render answer carries n images' hashes and
// placeholders, with kwargs_data exactly when withKwargs.
func checkImageAnswer(body []byte, n int, withKwargs bool) error {
	var res struct {
		Features *struct {
			MMHashes       map[string][]string `json:"mm_hashes"`
			MMPlaceholders map[string][]any    `json:"mm_placeholders"`
			KwargsData     json.RawMessage     `json:"kwargs_data"`
		} `json:"features"`
	}
	if err := json.Unmarshal(body, &res); err != nil {
		return fmt.Errorf("render answer: %w", err)
	}
	f := res.Features
	if f == nil {
		return fmt.Errorf("render answer without features: %.200s", body)
	}
	if len(f.MMHashes["image"]) != n || len(f.MMPlaceholders["image"]) != n {
		return fmt.Errorf("render answer has %d hashes and %d placeholders for %d images",
			len(f.MMHashes["image"]), len(f.MMPlaceholders["image"]), n)
	}
	hasKwargs := len(f.KwargsData) > 0 && string(f.KwargsData) != "null"
	if hasKwargs != withKwargs {
		return fmt.Errorf("render answer: kwargs_data present %v, want %v", hasKwargs, withKwargs)
	}
	return nil
}

// sendFloorMinCPU is the least server CPU the send floor runs for.
const sendFloorMinCPU = 500 * time.Millisecond

// sendFloor measures the send floor of the full-path target row (one
// 1280x720 JPEG) when the matrix has it: its requests against a
// ServeSendFloor child answering as many bytes as the warm-up's answer,
// started, pinned and driven as the matrix's server, right after it.
func sendFloor(ctx context.Context, opts ImagesOptions, shapes []*imageShape, rep *ImagesReport) error {
	var shape *imageShape
	var full *ImageRow
	for i, s := range shapes {
		if i < len(rep.Rows) && rep.Rows[i].Target == TargetImageFullRatio && s.answer > 0 {
			shape, full = s, &rep.Rows[i]
		}
	}
	if shape == nil {
		return nil
	}
	srvOpts := opts.Server
	srvOpts.Cores = 1
	if opts.SendFloorBin != "" {
		srvOpts.Bin = opts.SendFloorBin
	}
	srv, err := StartSendFloor(ctx, srvOpts, shape.answer)
	if err != nil {
		return err
	}
	defer srv.Stop()
	restore, _ := pinProcess(1)
	defer restore()
	w := shape.workload(false)
	w.Name, w.Kind = "send floor: "+w.Name, "send-floor"
	// The floor is a third of the full path's CPU: a longer run gives it
	// /proc's 10 ms ticks' resolution over as many requests.
	h, err := srv.Measure(ctx, w, max(opts.MinTime, sendFloorMinCPU), opts.MinUnits, 1)
	if err != nil {
		return err
	}
	rep.SendFloor = sendFloorRow(*full, shape.answer, h)
	return nil
}

// sendFloorRow sets the floor h beside the full-path row full.
func sendFloorRow(full ImageRow, answer int, h HTTPResult) *SendFloorRow {
	r := &SendFloorRow{Request: fmt.Sprintf("%s %s x%d", full.Format, full.Size, full.Images), AnswerBytes: answer,
		WriteBytes: features.StreamWriteBytes, HTTP: h, ReferenceNs: full.ReferenceNs}
	if h.CPUPerReqNs > 0 {
		r.BestRatio = r.ReferenceNs / h.CPUPerReqNs
		if full.HTTP.CPUPerReqNs > 0 {
			r.ImageWorkNs = full.HTTP.CPUPerReqNs - h.CPUPerReqNs
		}
	}
	return r
}

// conversationWorkload is one unit per conversation: turns requests, each
// the conversation so far and the same two screenshots again. Every
// conversation has screenshots of its own (new tags), so it pays for them
// once at most, as an agent's session does.
func conversationWorkload(in *imageInput, turns int) Workload {
	return Workload{Name: fmt.Sprintf("conversation %d turns", turns), Kind: "conversation", Next: func(i int) ([]Call, error) {
		urls := []string{in.unique.dataURL(imageTag(i, 0)), in.unique.dataURL(imageTag(i, 1))}
		calls := make([]Call, turns)
		var history []string
		for t := range calls {
			text := fmt.Sprintf("Step %d: here are the two screens again; what changed, and what do I click next?", t+1)
			calls[t] = Call{Method: "POST", Path: imageRenderPath, Body: imageRequestBody(history, urls, text, false)}
			history = append(history, text, fmt.Sprintf("Step %d done: I clicked the button at (%d, %d).", t+1, 100+7*t, 200+3*t))
		}
		return calls, nil
	}}
}

func conversationRow(in *imageInput, turns int, h HTTPResult, rows []ImageRow) *ConversationRow {
	c := &ConversationRow{Turns: turns, Screenshot: in.Format + " " + in.Size, HTTP: h, ReferenceNs: 2 * in.ReferenceNs,
		Target: TargetImageConversationRatio}
	if h.CPUPerReqNs > 0 {
		c.Ratio = c.ReferenceNs / h.CPUPerReqNs
	}
	for _, r := range rows {
		if r.Format == in.Format && r.Size == in.Size && r.Images == 1 && r.Mode == ModeFull {
			c.UncachedNs = 2 * r.HTTP.CPUPerReqNs
		}
	}
	return c
}

// imageScaling runs the scaling load — one 1920x1080 JPEG per request
// (the largest size measured), full path, ScalingConns clients at once —
// against a fresh server on each core count: throughput per core, and the
// peak RSS of that many concurrent requests.
func imageScaling(ctx context.Context, opts ImagesOptions, inputs map[imageKey]*imageInput, rep *ImagesReport) error {
	if len(opts.ScalingCores) == 0 {
		return nil
	}
	last := opts.Sizes[len(opts.Sizes)-1].Name
	in := inputs[imageKey{"jpeg", last}]
	if in == nil {
		in = inputs[imageKey{opts.Formats[0], last}]
	}
	shape := &imageShape{in: in, count: 1, mode: ModeFull}
	conns := max(1, opts.ScalingConns)
	for _, cores := range opts.ScalingCores {
		srvOpts := opts.Server
		srvOpts.Cores = cores
		// The server's CPU target grows with its cores, so each section
		// lasts about as long in wall time.
		h, err := RunHTTP(ctx, HTTPOptions{Server: srvOpts, MinCPU: time.Duration(cores) * opts.MinTime, Conns: []int{conns},
			MinUnits: max(opts.MinUnits, conns)}, []Workload{shape.workload(true)})
		if err != nil {
			return err
		}
		r := h.Rows[0].HTTPResult
		row := ScalingRow{Cores: cores, Workload: shape.name() + " " + ModeFull, HTTP: r, RefPerSec: perSecond(in.ReferenceNs),
			BaseRSS: h.Floors[0].PeakRSSBytes, ScalingLoad: fmt.Sprintf("%d clients at once", conns)}
		if r.CPUPerReqNs > 0 {
			row.CPUBoundPerSec = float64(cores) * 1e9 / r.CPUPerReqNs
		}
		if r.WallSeconds > 0 {
			row.ReqPerSec = float64(r.Requests) / r.WallSeconds
			row.PerCore = row.ReqPerSec / float64(cores)
		}
		rep.Scaling = append(rep.Scaling, row)
	}
	return nil
}

// loadAvg is /proc/loadavg's first three fields ("" where there is none):
// the report says how busy the machine was.
func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

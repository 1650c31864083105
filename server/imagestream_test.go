package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vrender/vrender/internal/testenv"
	"github.com/vrender/vrender/media"
	"github.com/vrender/vrender/model"
	"github.com/vrender/vrender/protocol"
	"github.com/vrender/vrender/render"
)

// imagesRenderBody is a render request of the corpus images as data URLs.
func imagesRenderBody(t *testing.T, names ...string) []byte {
	t.Helper()
	var parts []string
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(multimodalDir(t), "images", n))
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, `{"type":"image_url","image_url":{"url":"data:image/png;base64,`+base64.StdEncoding.EncodeToString(data)+`"}}`)
	}
	return []byte(`{"model":"m","messages":[{"role":"user","content":[` + strings.Join(parts, ",") +
		`,{"type":"text","text":"What is this?"}]}]}`)
}

// bufferedAnswer is the answer body to a chat render request built whole
// in one buffer (the engine path's AppendJSON), its request id masked as
// rawPost masks it.
func bufferedAnswer(t *testing.T, body []byte) []byte {
	t.Helper()
	m, err := model.Load(context.Background(), filepath.Join(multimodalDir(t), "models", "qwen2_5_vl"), model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	images, err := render.DefaultImageConfig(m, media.Config{})
	if err != nil {
		t.Fatal(err)
	}
	images.CacheBytes = 0
	gen, err := generatorWithImages(m, images)
	if err != nil {
		t.Fatal(err)
	}
	req, err := protocol.DecodeChatCompletionRequest(body)
	if err != nil {
		t.Fatal(err)
	}
	res, err := gen.RenderChat(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	out, err := protocol.AppendJSON(nil, &res.Request)
	if err != nil {
		t.Fatal(err)
	}
	return answerRequestID.ReplaceAllFunc(out, func(b []byte) []byte { return bytes.Repeat([]byte{'x'}, len(b)) })
}

// splitAnswer cuts a raw HTTP answer into its head and body, checking
// that the body is its Content-Length long.
func splitAnswer(t *testing.T, raw []byte) (head string, body []byte) {
	t.Helper()
	h, b, ok := bytes.Cut(raw, []byte("\r\n\r\n"))
	if !ok {
		t.Fatalf("no end of headers in %.200q", raw)
	}
	for _, line := range strings.Split(string(h), "\r\n") {
		if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
			if n, err := strconv.Atoi(v); err != nil || n != len(b) {
				t.Fatalf("Content-Length %s for a body of %d bytes", v, len(b))
			}
			return string(h), b
		}
	}
	t.Fatalf("no Content-Length in %q", h)
	return "", nil
}

// TestImageAnswerStreamedAsBuffered: the bytes the server puts on the wire
// for an answer whose pixel values are made as it is written are the
// buffered answer's, behind a 200 with its exact Content-Length: one and
// four images, the cache off, and on for a miss, a hit and a request mixing
// both.
func TestImageAnswerStreamedAsBuffered(t *testing.T) {
	plain := imageHTTPServer(t, "qwen2_5_vl", 0)
	cached := imageHTTPServer(t, "qwen2_5_vl", -1)
	one := []string{"jpeg_444_1280x720.jpg"}
	four := []string{"png_rgb_640x480.png", "jpeg_444_1280x720.jpg", "webp_lossy_512x384.webp", "png_rgb_56x30.png"}
	for _, names := range [][]string{one, four} {
		body := imagesRenderBody(t, names...)
		want := bufferedAnswer(t, body)
		for _, c := range []struct{ name, addr string }{{"uncached", plain}, {"miss", cached}, {"hit", cached}} {
			head, got := splitAnswer(t, rawPost(t, c.addr, "/v1/chat/completions/render", body))
			if !strings.HasPrefix(head, "HTTP/1.1 200 OK\r\n") || strings.Contains(head, "Transfer-Encoding") {
				t.Fatalf("%d images %s: head %q", len(names), c.name, head)
			}
			if !bytes.Equal(got, want) {
				i := testenv.FirstDiff(got, want)
				t.Fatalf("%d images %s: %d bytes, buffered %d; first difference at %d", len(names), c.name, len(got), len(want), i)
			}
		}
	}
}

// TestImageAnswerErrorBeforeAnyByte: a request whose last image is broken
// gets its 400 and the error body, never a 200 and part of an answer,
// whether the other images are cached or not.
func TestImageAnswerErrorBeforeAnyByte(t *testing.T) {
	for _, cache := range []int64{0, -1} {
		addr := imageHTTPServer(t, "qwen2_5_vl", cache)
		good := []string{"jpeg_444_1280x720.jpg", "png_rgb_640x480.png", "png_rgb_56x30.png"}
		for round := range 2 {
			head, body := splitAnswer(t, rawPost(t, addr, "/v1/chat/completions/render",
				imagesRenderBody(t, append(good, "invalid_truncated.jpg")...)))
			if !strings.HasPrefix(head, "HTTP/1.1 400 Bad Request\r\n") ||
				!bytes.Contains(body, []byte(`"message":"Failed to load image: image file is truncated`)) {
				t.Fatalf("cache %d round %d: %q %.300q", cache, round, head, body)
			}
		}
	}
}

// dialAnswer sends body to addr's chat render route and returns the
// connection with the answer's status line and headers read.
func dialAnswer(t *testing.T, addr string, body []byte) (net.Conn, *bufio.Reader, string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Fprintf(c, "POST /v1/chat/completions/render HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		addr, len(body), body); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReaderSize(c, 1024)
	status, err := br.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if line == "\r\n" {
			return c, br, status
		}
	}
}

// TestImageAnswerSlowClients: a client that stops reading in the middle
// of an answer that fills the cache holds no other request for the same
// image (they answer in full meanwhile), and one that goes away has its
// answer's work stopped within a second (the budget and goroutines back
// where they were); the next request for the image still answers in full.
func TestImageAnswerSlowClients(t *testing.T) {
	srv, b := budgetServer(t, "http://127.0.0.1:1", 1<<30)
	addr := srv.Listener.Addr().String()
	// 33 MB of answer: far more than the sockets' buffers hold.
	body := imagesRenderBody(t, "jpeg_420_1920x1080.jpg")
	want := bufferedAnswer(t, body)
	full := func(what string) {
		t.Helper()
		_, got := splitAnswer(t, rawPost(t, addr, "/v1/chat/completions/render", body))
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: the answer differs from the buffered one at byte %d", what, testenv.FirstDiff(got, want))
		}
	}
	// Warm-up: lazily started goroutines in place before the baseline.
	_, warm := splitAnswer(t, rawPost(t, addr, "/v1/chat/completions/render", imagesRenderBody(t, "png_rgb_56x30.png")))
	if len(warm) == 0 {
		t.Fatal("no warm-up answer")
	}
	baseline := runtime.NumGoroutine()
	settled := func(what string) {
		t.Helper()
		if !within(time.Second, func() bool { return b.Stats().InUse == 0 && runtime.NumGoroutine() <= baseline }) {
			t.Fatalf("%s: budget %+v, %d goroutines (%d before) a second later", what, b.Stats(), runtime.NumGoroutine(), baseline)
		}
	}

	stalled, br, status := dialAnswer(t, addr, body)
	if !strings.HasPrefix(status, "HTTP/1.1 200") {
		t.Fatalf("status %q", status)
	}
	if _, err := io.ReadFull(br, make([]byte, 4096)); err != nil {
		t.Fatal(err)
	}
	// The stalled answer is still making the cached image's pixel values;
	// these, hits of the same entry, do not wait for it.
	for i := range 2 {
		done := make(chan struct{})
		go func() {
			defer close(done)
			full(fmt.Sprintf("request %d beside a stalled client", i))
		}()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("a request for the same image waits for the stalled client")
		}
	}
	if b.Stats().InUse == 0 {
		t.Fatal("the stalled answer holds no budget: it ended early")
	}
	stalled.Close()
	settled("stalled client gone")

	// A client that reads part of a new image's answer and leaves.
	body = imagesRenderBody(t, "png_doc_1275x1650.png")
	want = bufferedAnswer(t, body)
	gone, br, _ := dialAnswer(t, addr, body)
	if _, err := io.ReadFull(br, make([]byte, 64<<10)); err != nil {
		t.Fatal(err)
	}
	gone.Close()
	settled("client gone mid-answer")
	full("the request after a client left mid-answer")
	full("a hit")
}

package bench

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vrender/vrender/features"
)

// TestSendFloorHandler checks the floor answers the render path with
// exactly its size of JSON text, in several writes when the answer is
// larger than one, and nothing else but /health.
func TestSendFloorHandler(t *testing.T) {
	for _, size := range []int{2, 1000, 2*features.StreamWriteBytes + 5} {
		ts := httptest.NewServer(sendFloorHandler(size))
		resp, err := http.Post(ts.URL+imageRenderPath, "application/json", strings.NewReader(`{"model":"m"}`))
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK || len(body) != size || resp.Header.Get("Content-Length") != strconv.Itoa(size) ||
			resp.Header.Get("Content-Type") != "application/json" || body[0] != '"' || body[size-1] != '"' {
			t.Fatalf("size %d: status %d, %d bytes, headers %v", size, resp.StatusCode, len(body), resp.Header)
		}
		for path, want := range map[string]int{"/health": http.StatusOK, "/v1/models": http.StatusNotFound, "/metrics": http.StatusNotFound} {
			resp, err := http.Get(ts.URL + path)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != want {
				t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, want)
			}
		}
		ts.Close()
	}
}

// TestServeSendFloor serves on a real listener until its context ends,
// and refuses an answer too small to be a JSON string.
func TestServeSendFloor(t *testing.T) {
	if err := ServeSendFloor(context.Background(), "127.0.0.1:0", 1); err == nil {
		t.Fatal("a 1-byte answer was accepted")
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ServeSendFloor(ctx, addr, 64) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	resp, err := http.Post("http://"+addr+imageRenderPath, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if len(body) != 64 {
		t.Fatalf("%d bytes, want 64", len(body))
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("stopped with %v", err)
	}
}

func TestSendFloorRow(t *testing.T) {
	full := ImageRow{Format: "jpeg", Size: "1280x720", Images: 1, Mode: ModeFull, ReferenceNs: 40e6, HTTP: HTTPResult{CPUPerReqNs: 8e6}}
	r := sendFloorRow(full, 15_000_000, HTTPResult{CPUPerReqNs: 3.2e6})
	if r.Request != "jpeg 1280x720 x1" || r.AnswerBytes != 15_000_000 || r.WriteBytes != features.StreamWriteBytes ||
		r.ImageWorkNs != 4.8e6 || r.ReferenceNs != 40e6 || r.BestRatio != 12.5 {
		t.Fatalf("row %+v", r)
	}
	if r := sendFloorRow(full, 1, HTTPResult{}); r.BestRatio != 0 || r.ImageWorkNs != 0 {
		t.Fatalf("nothing measured: %+v", r)
	}
}

package enginesim

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

const prompt17 = `"token_ids":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17]`

// prefillOn sends a prefill request and returns its kv_transfer_params.
func prefillOn(t *testing.T, url string) json.RawMessage {
	t.Helper()
	status, _, out := post(t, url, `{`+prompt17+`,"sampling_params":{"max_tokens":1},`+
		`"kv_transfer_params":{"do_remote_decode":true,"do_remote_prefill":false,"remote_engine_id":null,`+
		`"remote_block_ids":null,"remote_host":null,"remote_port":null}}`)
	var resp struct {
		KV      json.RawMessage `json:"kv_transfer_params"`
		Choices []struct {
			TokenIDs []int `json:"token_ids"`
		} `json:"choices"`
	}
	if err := json.Unmarshal([]byte(out), &resp); status != http.StatusOK || err != nil || len(resp.KV) < 10 {
		t.Fatalf("prefill: %d %s (%v)", status, out, err)
	}
	if len(resp.Choices) != 1 || len(resp.Choices[0].TokenIDs) != 1 {
		t.Fatalf("prefill generated %s, want one token", out)
	}
	return resp.KV
}

func TestKVRoleProducer(t *testing.T) {
	_, url := scripted(t, pingScript, Config{KVRole: KVRoleProducer})
	kv := prefillOn(t, url)
	var p remotePrefillParams
	if err := json.Unmarshal(kv, &p); err != nil || !p.DoRemotePrefill || p.DoRemoteDecode ||
		len(p.RemoteBlockIDs) != 2 || !engineIDPattern.MatchString(*p.RemoteEngineID) {
		t.Fatalf("kv_transfer_params %s (%v)", kv, err)
	}
	refused := []struct{ name, body, want string }{
		{"plain decode", `{` + prompt17 + `,"sampling_params":{"max_tokens":3}}`, "only prefill requests"},
		{"transferred decode", `{` + prompt17 + `,"sampling_params":{"max_tokens":3},"kv_transfer_params":` + string(kv) + `}`,
			"does not decode transferred KV"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			status, _, out := post(t, url, tc.body)
			if status != http.StatusBadRequest || !strings.Contains(out, tc.want) {
				t.Fatalf("got %d %s, want 400 %q", status, out, tc.want)
			}
		})
	}
}

func TestKVRoleConsumer(t *testing.T) {
	reg := NewKVRegistry()
	_, prodURL := scripted(t, pingScript, Config{KVRole: KVRoleProducer, KVRegistry: reg})
	_, consURL := scripted(t, pingScript, Config{KVRole: KVRoleConsumer, KVRegistry: reg})
	_, looseURL := scripted(t, pingScript, Config{KVRole: KVRoleConsumer}) // another process: no registry
	kv := prefillOn(t, prodURL)
	decode := func(url, kv string) (int, string) {
		status, _, out := post(t, url, `{`+prompt17+`,"sampling_params":{"max_tokens":3},"kv_transfer_params":`+kv+`}`)
		return status, out
	}
	if status, out := decode(consURL, string(kv)); status != http.StatusOK || !strings.Contains(out, `"kv_transfer_params":null`) {
		t.Fatalf("decode with the producer's params: %d %s", status, out)
	}
	// The lease was handed over: reading it again is refused.
	if status, out := decode(consURL, string(kv)); status != http.StatusBadRequest || !strings.Contains(out, "no prefill engine issued") {
		t.Fatalf("second read: %d %s", status, out)
	}
	foreign := mustMap(t, prefillOn(t, prodURL))
	foreign["remote_block_ids"] = []int{900, 901}
	fb, _ := json.Marshal(foreign)
	good, _ := json.Marshal(mustMap(t, kv))
	otherEngine := mustMap(t, prefillOn(t, prodURL))
	otherEngine["remote_engine_id"] = "0123456789abcdef0123456789abcdef"
	oe, _ := json.Marshal(otherEngine)
	tests := []struct {
		name, url, kv, want string
	}{
		{"no params", consURL, `null`, "serves only decode requests"},
		{"prefill params", consURL, `{"do_remote_decode":true}`, "do_remote_prefill must be true"},
		{"bad engine id", consURL, `{"do_remote_prefill":true,"remote_engine_id":"evil","remote_request_id":"r","remote_block_ids":[0,1],"remote_host":"h","remote_port":1}`,
			`remote_engine_id \"evil\" is not`},
		{"wrong block count", consURL, strings.Replace(string(good), `"remote_block_ids":[0,1]`, `"remote_block_ids":[0]`, 1), "name 1 blocks"},
		{"foreign blocks", consURL, string(fb), "are not the blocks"},
		{"unknown producer", consURL, string(oe), "no prefill engine issued"},
		{"no port", looseURL, `{"do_remote_prefill":true,"remote_engine_id":"0123456789abcdef0123456789abcdef","remote_request_id":"r","remote_block_ids":[0,1],"remote_host":"h"}`,
			"remote_port is missing"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, out := decode(tc.url, tc.kv)
			if status != http.StatusBadRequest || !strings.Contains(out, tc.want) {
				t.Fatalf("got %d %s, want 400 %q", status, out, tc.want)
			}
		})
	}
	// Without a registry, well-formed params of any producer are taken.
	if status, out := decode(looseURL, string(oe)); status != http.StatusOK {
		t.Fatalf("consumer without registry: %d %s", status, out)
	}
}

func mustMap(t *testing.T, raw json.RawMessage) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestSerialPrefillStallsDecode checks the interference model: a decode
// stream's tokens wait while another request's prefill runs.
func TestSerialPrefillStallsDecode(t *testing.T) {
	for _, serial := range []bool{false, true} {
		_, url := scripted(t, pingScript, Config{SerialPrefill: serial, FirstTokenLatency: 150 * time.Millisecond,
			TokenLatency: 5 * time.Millisecond})
		var wg sync.WaitGroup
		var decodeTime time.Duration
		wg.Go(func() {
			// A long stream: prefill, then 40 tokens.
			start := time.Now()
			status, _, out := post(t, url, `{"token_ids":[1,2,3],"sampling_params":{"max_tokens":40,"ignore_eos":true},"stream":true}`)
			if status != http.StatusOK || !strings.HasSuffix(out, "[DONE]\n\n") {
				t.Errorf("stream: %d %s", status, out)
			}
			decodeTime = time.Since(start)
		})
		time.Sleep(200 * time.Millisecond) // the first request is decoding now
		for range 2 {
			post(t, url, `{"token_ids":[4,5,6],"sampling_params":{"max_tokens":1}}`)
		}
		wg.Wait()
		// Alone it takes 150ms + 39*5ms = 345ms; two 150ms prefills in the
		// middle stall it by about 300ms when prefill is serial.
		stalled := decodeTime > 550*time.Millisecond
		if stalled != serial {
			t.Fatalf("serial=%v: the stream took %s", serial, decodeTime)
		}
	}
}

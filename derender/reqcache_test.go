package derender

import (
	"crypto/sha256"
	"reflect"
	"strconv"
	"testing"

	"github.com/vrender/vrender/protocol"
)

// The parser request kept for a cached chat request is what decoding it
// again gives; requests the cache does not hold, or no longer holds, are
// decoded every time; errors are never kept.
func TestRequestCacheParserRequest(t *testing.T) {
	decode := func(body string) *protocol.ChatCompletionRequest {
		t.Helper()
		cr, err := protocol.DecodeChatCompletionRequest([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		return cr
	}
	body := func(i int) string {
		return `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f` +
			strconv.Itoa(i) + `","parameters":{"type":"object"}}}],"chat_template_kwargs":{"enable_thinking":false}}`
	}
	rc := newRequestCache()
	cr := decode(body(0))
	rc.Add(sha256.Sum256([]byte(body(0))), cr)
	first, err := rc.parserRequest(cr)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := parserRequest(cr)
	if !reflect.DeepEqual(first, want) {
		t.Fatalf("kept %+v, decoding gives %+v", first, want)
	}
	if again, _ := rc.parserRequest(cr); again != first {
		t.Fatal("a held request's parser request is decoded again")
	}
	loose := decode(body(1))
	a, _ := rc.parserRequest(loose)
	b, _ := rc.parserRequest(loose)
	if a == b || !reflect.DeepEqual(a, b) {
		t.Fatal("a request the cache does not hold must be decoded on every call")
	}
	if len(rc.derived) != 1 {
		t.Fatalf("derived holds %d entries, want 1", len(rc.derived))
	}
	// Replacing a key's request and evicting drop what was kept.
	cr2 := decode(body(0))
	rc.Add(sha256.Sum256([]byte(body(0))), cr2)
	if _, ok := rc.derived[cr]; ok {
		t.Fatal("a replaced request stays in derived")
	}
	for i := 2; i < chatRequestCacheSize+10; i++ {
		rc.Add(sha256.Sum256([]byte(body(i))), decode(body(i)))
	}
	if len(rc.derived) != rc.c.Len() {
		t.Fatalf("derived %d entries, cache %d", len(rc.derived), rc.c.Len())
	}
	// Decoded requests are validated; one built by hand can still fail.
	bad := &protocol.ChatCompletionRequest{ToolChoice: protocol.ToolChoice{Kind: protocol.ToolChoiceBadString, Name: "sometimes"}}
	rc.Add(sha256.Sum256([]byte("bad")), bad)
	_, err1 := rc.parserRequest(bad)
	_, err2 := rc.parserRequest(bad)
	if err1 == nil || err2 == nil || err1.Error() != err2.Error() || rc.derived[bad] != nil {
		t.Fatalf("errors %v / %v must repeat and not be kept", err1, err2)
	}
}

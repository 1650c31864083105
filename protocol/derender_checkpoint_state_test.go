package protocol

import (
	"encoding/json"
	"reflect"
	"testing"
)

// checkpointOnly reads what json.Unmarshal reads, whenever it reads at all.
func TestCheckpointOnlyMatchesUnmarshal(t *testing.T) {
	for _, raw := range []string{`{"vrender_checkpoint":"v4.abc_-DEF=.sig"}`, `{"vrender_checkpoint":""}`,
		`{"vrender_checkpoint":"a\"b"}`, `{"vrender_checkpoint":"a\\u0041"}`, `{"vrender_checkpoint": "x"}`,
		`{"vrender_checkpoint":"x","role_sent":true}`, `{"vrender_checkpoint":"é"}`, `{"vrender_checkpoint":"x"} `, `{"vrender_checkpoint":"}`} {
		checkCheckpointOnly(t, []byte(raw))
	}
	if _, ok := checkpointOnly([]byte(`{"vrender_checkpoint":"v4.abc"}`)); !ok {
		t.Fatal("the plain echo must take the fast path")
	}
}

func FuzzCheckpointOnly(f *testing.F) {
	f.Add([]byte(`{"vrender_checkpoint":"v4.abc"}`))
	f.Add([]byte(`{"vrender_checkpoint":"a\u0001"}`))
	f.Fuzz(checkCheckpointOnly)
}

func checkCheckpointOnly(t *testing.T, raw []byte) {
	ck, ok := checkpointOnly(raw)
	if !ok {
		return
	}
	var s DerenderStreamState
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("%q: fast path read %q, json.Unmarshal fails: %v", raw, ck, err)
	}
	if want := (DerenderStreamState{VrenderCheckpoint: ck}); !reflect.DeepEqual(s, want) {
		t.Fatalf("%q: fast path %+v, json.Unmarshal %+v", raw, want, s)
	}
}

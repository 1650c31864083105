package pylax

import (
	"encoding/json"
	"reflect"
	"testing"
)

// Items, Members and stringOf against json.Unmarshal, the reading they replace.
var membersSeeds = []string{
	`[]`, ` [ ] `, `[1, "a" ,{"b":[2]}, null]`, `[[[]]]`, `{}`, `{"a":1,"a":[2 ],"b":{}}`, `{"\u0061":1,"a":2}`,
	"[\"\xff\"]", "{\"\xff\":1,\"\xfe\":2}", `[1,]`, `[`, `{"a"}`, `null`, `"x"`, `[1] x`, `[1e400,-0]`, `["\ud800"]`, `"\ud83d\ude00\u00e9\n"`, "\"\xff\xc3\"", `"\udc00\ud800x"`,
}

func FuzzItemsMembers(f *testing.F) {
	for _, s := range membersSeeds {
		f.Add(s)
	}
	f.Fuzz(checkItemsMembers)
}

func TestItemsMembersMatchUnmarshal(t *testing.T) {
	for _, s := range membersSeeds {
		checkItemsMembers(t, s)
	}
}

func checkItemsMembers(t *testing.T, in string) {
	if items, ok := Items([]byte(in)); ok {
		var want []json.RawMessage
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			// wire takes only what json.loads takes; encoding/json is stricter
			// about nothing the body parser lets through.
			t.Fatalf("%q: Items read what json.Unmarshal rejects (%v)", in, err)
		}
		if !reflect.DeepEqual(items, want) {
			t.Fatalf("%q:\nItems %q\njson  %q", in, items, want)
		}
	}
	if s, ok := stringOf([]byte(in)); ok {
		var want string
		if err := json.Unmarshal([]byte(in), &want); err != nil || s != want {
			t.Fatalf("%q: stringOf %q, json %q (%v)", in, s, want, err)
		}
	}
	if members, ok := Members([]byte(in)); ok {
		var want map[string]json.RawMessage
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatalf("%q: Members read what json.Unmarshal rejects (%v)", in, err)
		}
		if len(members) != len(want) {
			t.Fatalf("%q:\nMembers %q\njson    %q", in, members, want)
		}
		for k, v := range want {
			if string(members[k]) != string(v) {
				t.Fatalf("%q: member %q: Members %q, json %q", in, k, members[k], v)
			}
		}
	}
}

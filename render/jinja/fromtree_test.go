package jinja

import (
	"fmt"
	"testing"

	"github.com/vrender/vrender/internal/wire"
)

// fromTreeSlow is FromTree as it was before the slab allocator: every
// container allocated on its own. FromTree and FromTrees must build the
// same values.
func fromTreeSlow(n *wire.Node) (Value, error) {
	switch n.Kind {
	case wire.Array:
		items := make([]Value, len(n.Arr))
		for i, c := range n.Arr {
			v, err := fromTreeSlow(c)
			if err != nil {
				return Value{}, err
			}
			items[i] = v
		}
		return List(items), nil
	case wire.Object:
		d := NewDict(len(n.Keys))
		for i, k := range n.Keys {
			v, err := fromTreeSlow(n.Vals[i])
			if err != nil {
				return Value{}, err
			}
			d.SetStr(k, v)
		}
		return DictValue(d), nil
	}
	return scalarFromTree(n)
}

// sameValue reports where a and b differ, "" when they are the same value
// built the same way (a dict's index included).
func sameValue(a, b Value) string {
	if a.kind != b.kind || a.safe != b.safe || a.n != b.n || a.s != b.s {
		return fmt.Sprintf("%s != %s", pyRepr(a), pyRepr(b))
	}
	switch a.kind {
	case KindList, KindTuple:
		ai, bi := a.items(), b.items()
		if len(ai) != len(bi) {
			return fmt.Sprintf("length %d != %d", len(ai), len(bi))
		}
		for i := range ai {
			if d := sameValue(ai[i], bi[i]); d != "" {
				return fmt.Sprintf("[%d]: %s", i, d)
			}
		}
	case KindDict:
		ad, bd := a.dict(), b.dict()
		if ad.Len() != bd.Len() || (ad.idx == nil) != (bd.idx == nil) {
			return fmt.Sprintf("dict of %d (indexed %v) != %d (indexed %v)", ad.Len(), ad.idx != nil, bd.Len(), bd.idx != nil)
		}
		for i := range ad.keys {
			if d := sameValue(ad.keys[i], bd.keys[i]); d != "" {
				return fmt.Sprintf("key %d: %s", i, d)
			}
			if d := sameValue(ad.vals[i], bd.vals[i]); d != "" {
				return fmt.Sprintf("[%s]: %s", pyRepr(ad.keys[i]), d)
			}
		}
	}
	return ""
}

// checkFromTrees converts docs one by one the slow way, and all at once
// and singly through the slabs, and fails on any difference.
func checkFromTrees(t *testing.T, docs []string) {
	t.Helper()
	var trees []*wire.Node
	var want []Value
	var wantErr []error
	for _, doc := range docs {
		n, err := wire.Parse([]byte(doc))
		if err != nil {
			continue
		}
		v, err := fromTreeSlow(n)
		trees, want, wantErr = append(trees, n), append(want, v), append(wantErr, err)
	}
	for i, n := range trees {
		got, err := FromTree(n)
		if fmt.Sprint(err) != fmt.Sprint(wantErr[i]) {
			t.Fatalf("%d: FromTree error %v, slow path %v", i, err, wantErr[i])
		}
		if err == nil {
			if d := sameValue(got, want[i]); d != "" {
				t.Fatalf("%d: FromTree differs from the slow path: %s", i, d)
			}
		}
	}
	got, failed, err := FromTrees(trees)
	first := -1
	for i, e := range wantErr {
		if e != nil {
			first = i
			break
		}
	}
	if failed != first || fmt.Sprint(err) != fmt.Sprint(errAt(wantErr, first)) {
		t.Fatalf("FromTrees failed at %d (%v), slow path at %d (%v)", failed, err, first, errAt(wantErr, first))
	}
	if err != nil {
		return
	}
	for i := range trees {
		if d := sameValue(got[i], want[i]); d != "" {
			t.Fatalf("%d: FromTrees differs from the slow path: %s", i, d)
		}
	}
}

func errAt(errs []error, i int) error {
	if i < 0 {
		return nil
	}
	return errs[i]
}

func TestFromTreesMatchesSlowPath(t *testing.T) {
	docs := []string{
		`null`, `true`, `"s"`, `1`, `-2.5e3`, `123456789012345678901234567890`, `[]`, `{}`,
		`[[],[[]],{"a":[{}]}]`,
		`{"a":1,"b":{"c":[1,2,{"d":null}]},"a":3}`,
		`{"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":{"x":[1,2,3]}}`,
		`[1e999, -1e999]`,
		longConversation(),
	}
	for _, pc := range parityContexts {
		docs = append(docs, pc.json)
	}
	checkFromTrees(t, docs)
	for _, doc := range docs {
		checkFromTrees(t, []string{doc})
	}
}

// TestFromTreesContainersAreIndependent: containers share slabs, so one
// that grows must not write into its neighbour. Templates cannot grow them
// (the sandbox refuses list.append and dict.update), but Go code can.
func TestFromTreesContainersAreIndependent(t *testing.T) {
	var trees []*wire.Node
	for _, doc := range []string{`{"a":[1,2],"b":[3],"e":{"f":4},"g":{"h":5}}`, `{"y":6}`, `[7,8]`} {
		n, err := wire.Parse([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		trees = append(trees, n)
	}
	vals, _, err := FromTrees(trees)
	if err != nil {
		t.Fatal(err)
	}
	d := vals[0].dict()
	a, _ := d.GetStr("a")
	p := a.ref.(*[]Value)
	*p = append(*p, Int(9))
	e, _ := d.GetStr("e")
	e.dict().SetStr("z", Int(1))
	vals[1].dict().SetStr("new", Int(2))
	got := pyRepr(vals[0]) + "|" + pyRepr(vals[1]) + "|" + pyRepr(vals[2])
	want := `{'a': [1, 2, 9], 'b': [3], 'e': {'f': 4, 'z': 1}, 'g': {'h': 5}}|{'y': 6, 'new': 2}|[7, 8]`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// FuzzFromTrees compares the slab conversion of untrusted JSON (request
// messages and tools) with the slow path.
func FuzzFromTrees(f *testing.F) {
	for _, pc := range parityContexts {
		f.Add(pc.json, `[1,{"a":[2]}]`)
	}
	f.Add(`{"a":1,"a":[{"b":2}]}`, `99999999999999999999`)
	f.Fuzz(func(t *testing.T, a, b string) {
		checkFromTrees(t, []string{a, b})
	})
}

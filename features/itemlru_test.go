package features

import "testing"

func TestItemLRU(t *testing.T) {
	c := NewItemLRU[string](100)
	if !c.Add("a", 40, "A") || !c.Add("b", 40, "B") {
		t.Fatal("items that fit were not kept")
	}
	if v, ok := c.Get("a"); !ok || v != "A" { // a is now the most recently used
		t.Fatalf("Get(a) = %q, %v", v, ok)
	}
	if !c.Add("c", 40, "C") { // evicts b, the least recently used
		t.Fatal("c not kept")
	}
	if _, ok := c.Get("b"); ok {
		t.Error("b survived an eviction it was first in line for")
	}
	for _, h := range []string{"a", "c"} {
		if _, ok := c.Get(h); !ok {
			t.Errorf("%s evicted", h)
		}
	}
	if c.Bytes() != 80 || c.Len() != 2 {
		t.Errorf("Bytes, Len = %d, %d; want 80, 2", c.Bytes(), c.Len())
	}
	if c.Add("big", 101, "X") {
		t.Error("an item larger than the cache was kept")
	}
	if c.Len() != 2 {
		t.Error("an item too large to keep evicted others")
	}
	c.Add("a", 10, "A2") // re-added: its new size counts, once
	if c.Bytes() != 50 {
		t.Errorf("Bytes after re-adding a = %d, want 50", c.Bytes())
	}
	if !c.Add("d", 100, "D") || c.Len() != 1 || c.Bytes() != 100 {
		t.Errorf("an item of the whole cache: Len %d Bytes %d", c.Len(), c.Bytes())
	}
	c.Remove("d")
	c.Add("e", 1, "E")
	c.Clear()
	if c.Len() != 0 || c.Bytes() != 0 {
		t.Errorf("after Clear: Len %d Bytes %d", c.Len(), c.Bytes())
	}
}

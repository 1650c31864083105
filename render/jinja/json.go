package jinja

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"github.com/vrender/vrender/internal/wire"
)

// FromJSON decodes JSON into a Value the way Python's json.loads does:
// objects become insertion-ordered dicts (duplicate keys keep the first
// position and the last value), numbers with a fraction or exponent become
// floats and all others ints. The Value may alias data.
func FromJSON(data []byte) (Value, error) {
	n, err := wire.Parse(data)
	if err != nil {
		return Value{}, fmt.Errorf("jinja: decode JSON: %w", err)
	}
	return FromTree(n)
}

// FromTree converts a decoded JSON value (internal/wire) as FromJSON does.
func FromTree(n *wire.Node) (Value, error) {
	var c treeConv
	c.reserve(n)
	return c.value(n)
}

// FromTrees converts many trees as FromTree does, with a few allocations
// for all of them: the dicts and the slices of every container come out of
// slabs sized by a counting pass. On error, failed is the index of the tree
// that did not convert.
func FromTrees(trees []*wire.Node) (vals []Value, failed int, err error) {
	var c treeConv
	for _, n := range trees {
		c.reserve(n)
	}
	vals = make([]Value, len(trees))
	for i, n := range trees {
		if vals[i], err = c.value(n); err != nil {
			return nil, i, err
		}
	}
	return vals, -1, nil
}

// treeConv hands out the storage of converted trees. Every slice it gives
// a container is capped at its length, so a template that appends to a
// list or adds a key reallocates instead of overwriting a neighbour.
type treeConv struct {
	vals  []Value // keys, values and items
	dicts []Dict
	lists [][]Value // the slices List values point at
	// counts of what reserve saw, allocated on the first value call
	nVals, nDicts, nLists int
}

func (c *treeConv) reserve(n *wire.Node) {
	switch n.Kind {
	case wire.Array:
		c.nLists++
		c.nVals += len(n.Arr)
		for _, it := range n.Arr {
			c.reserve(it)
		}
	case wire.Object:
		c.nDicts++
		c.nVals += 2 * len(n.Keys)
		for _, v := range n.Vals {
			c.reserve(v)
		}
	}
}

// take returns k values of the slab with length 0 and capacity k.
func (c *treeConv) take(k int) []Value {
	if len(c.vals) < k {
		// More than reserved (not expected): a slab of its own.
		return make([]Value, 0, k)
	}
	s := c.vals[:0:k]
	c.vals = c.vals[k:]
	return s
}

func (c *treeConv) value(n *wire.Node) (Value, error) {
	if c.nVals+c.nDicts+c.nLists > 0 {
		if c.nVals > 0 {
			c.vals = make([]Value, c.nVals)
		}
		if c.nDicts > 0 {
			c.dicts = make([]Dict, c.nDicts)
		}
		if c.nLists > 0 {
			c.lists = make([][]Value, c.nLists)
		}
		c.nVals, c.nDicts, c.nLists = 0, 0, 0
	}
	switch n.Kind {
	case wire.Array:
		items := c.take(len(n.Arr))
		for _, it := range n.Arr {
			v, err := c.value(it)
			if err != nil {
				return Value{}, err
			}
			items = append(items, v)
		}
		var p *[]Value
		if len(c.lists) > 0 {
			p, c.lists = &c.lists[0], c.lists[1:]
		} else {
			p = new([]Value)
		}
		*p = items
		return Value{kind: KindList, ref: p}, nil
	case wire.Object:
		var d *Dict
		if len(c.dicts) > 0 {
			d, c.dicts = &c.dicts[0], c.dicts[1:]
		} else {
			d = new(Dict)
		}
		d.keys, d.vals = c.take(len(n.Keys)), c.take(len(n.Keys))
		for i, k := range n.Keys {
			v, err := c.value(n.Vals[i])
			if err != nil {
				return Value{}, err
			}
			d.SetStr(k, v)
		}
		return DictValue(d), nil
	}
	return scalarFromTree(n)
}

// scalarFromTree converts a tree that is not a container.
func scalarFromTree(n *wire.Node) (Value, error) {
	switch n.Kind {
	case wire.Null:
		return noneValue, nil
	case wire.Bool:
		return Bool(n.B), nil
	case wire.String:
		return Str(n.S), nil
	case wire.Number:
		return parseJSONNumber(n.S)
	}
	return Value{}, fmt.Errorf("jinja: bad JSON node kind %d", n.Kind)
}

func parseJSONNumber(s string) (Value, error) {
	if strings.ContainsAny(s, ".eE") {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil && !math.IsInf(f, 0) {
			return Value{}, err
		}
		return Float(f), nil
	}
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return Int(i), nil
	}
	b, ok := new(big.Int).SetString(s, 10)
	if !ok {
		return Value{}, fmt.Errorf("bad number %q", s)
	}
	return bigValue(b), nil
}

// FromGo converts plain Go data (as encoding/json produces it, or built by
// hand) into a Value. Go maps have no order, so their keys are sorted; use
// FromJSON or *Dict to keep an order.
func FromGo(x any) (Value, error) {
	switch t := x.(type) {
	case nil:
		return noneValue, nil
	case Value:
		return t, nil
	case *Dict:
		return DictValue(t), nil
	case bool:
		return Bool(t), nil
	case string:
		return Str(t), nil
	case int:
		return Int(int64(t)), nil
	case int32:
		return Int(int64(t)), nil
	case int64:
		return Int(t), nil
	case uint32:
		return Int(int64(t)), nil
	case float32:
		return Float(float64(t)), nil
	case float64:
		return Float(t), nil
	case json.Number:
		return parseJSONNumber(string(t))
	case json.RawMessage:
		return FromJSON(t)
	case []string:
		items := make([]Value, len(t))
		for i, s := range t {
			items[i] = Str(s)
		}
		return List(items), nil
	case []any:
		items := make([]Value, len(t))
		for i, e := range t {
			v, err := FromGo(e)
			if err != nil {
				return Value{}, err
			}
			items[i] = v
		}
		return List(items), nil
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		d := NewDict(len(keys))
		for _, k := range keys {
			v, err := FromGo(t[k])
			if err != nil {
				return Value{}, err
			}
			d.SetStr(k, v)
		}
		return DictValue(d), nil
	}
	return Value{}, fmt.Errorf("jinja: cannot convert %T to a template value", x)
}

// jsonOpts are the arguments of Python's json.dumps that tojson exposes.
type jsonOpts struct {
	ensureASCII bool
	indent      *string // nil: single line
	itemSep     string
	keySep      string
	sortKeys    bool
	maxLen      int // 0: unlimited
	// base is the builder's length where the value starts, when it is
	// written after other text.
	base int
}

// pyJSONDumps is json.dumps(v, ...) with Python's separators, float repr and
// key coercions.
func pyJSONDumps(v Value, o jsonOpts) (string, error) {
	var b strings.Builder
	if err := writeJSON(&b, v, o, 0); err != nil {
		return "", err
	}
	return b.String(), nil
}

func writeJSONNewline(b *strings.Builder, o jsonOpts, depth int) {
	b.WriteByte('\n')
	for i := 0; i < depth; i++ {
		b.WriteString(*o.indent)
	}
}

func writeJSON(b *strings.Builder, v Value, o jsonOpts, depth int) error {
	if depth > 500 {
		return newErr(KindType, "RecursionError", "maximum recursion depth exceeded while encoding a JSON object")
	}
	if o.maxLen > 0 && b.Len()-o.base > o.maxLen {
		return limitErr("value exceeds %d bytes", o.maxLen)
	}
	switch v.kind {
	case KindNone:
		b.WriteString("null")
	case KindBool:
		if v.n != 0 {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case KindInt:
		b.WriteString(strconv.FormatInt(v.n, 10))
	case KindBigInt:
		b.WriteString(v.bigInt().String())
	case KindFloat:
		b.WriteString(jsonFloat(v.fl()))
	case KindStr:
		writeJSONString(b, v.s, o.ensureASCII)
	case KindList, KindTuple:
		items := v.items()
		if len(items) == 0 {
			b.WriteString("[]")
			return nil
		}
		b.WriteByte('[')
		for i, it := range items {
			if i > 0 {
				b.WriteString(o.itemSep)
			}
			if o.indent != nil {
				writeJSONNewline(b, o, depth+1)
			}
			if err := writeJSON(b, it, o, depth+1); err != nil {
				return err
			}
		}
		if o.indent != nil {
			writeJSONNewline(b, o, depth)
		}
		b.WriteByte(']')
	case KindDict:
		return writeJSONDict(b, v.dict(), o, depth)
	default:
		return typeErr("Object of type %s is not JSON serializable", v.typeName())
	}
	return nil
}

func jsonFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case math.IsNaN(f):
		return "NaN"
	}
	return formatFloatRepr(f)
}

func jsonKey(k Value) (string, error) {
	switch k.kind {
	case KindStr:
		return k.s, nil
	case KindFloat:
		return jsonFloat(k.fl()), nil
	case KindBool:
		if k.n != 0 {
			return "true", nil
		}
		return "false", nil
	case KindNone:
		return "null", nil
	case KindInt, KindBigInt:
		return pyStr(k), nil
	}
	return "", typeErr("keys must be str, int, float, bool or None, not %s", k.typeName())
}

func writeJSONDict(b *strings.Builder, d *Dict, o jsonOpts, depth int) error {
	if d.Len() == 0 {
		b.WriteString("{}")
		return nil
	}
	var order []int
	if o.sortKeys {
		order = make([]int, d.Len())
		for i := range order {
			order[i] = i
		}
		var sortErr error
		sort.SliceStable(order, func(i, j int) bool {
			lt, err := pyLess(d.keys[order[i]], d.keys[order[j]])
			if err != nil && sortErr == nil {
				sortErr = err
			}
			return lt
		})
		if sortErr != nil {
			return sortErr
		}
	}
	b.WriteByte('{')
	for n := range d.keys {
		i := n
		if order != nil {
			i = order[n]
		}
		if n > 0 {
			b.WriteString(o.itemSep)
		}
		if o.indent != nil {
			writeJSONNewline(b, o, depth+1)
		}
		ks, err := jsonKey(d.keys[i])
		if err != nil {
			return err
		}
		writeJSONString(b, ks, o.ensureASCII)
		b.WriteString(o.keySep)
		if err := writeJSON(b, d.vals[i], o, depth+1); err != nil {
			return err
		}
	}
	if o.indent != nil {
		writeJSONNewline(b, o, depth)
	}
	b.WriteByte('}')
	return nil
}

// writeJSONString writes s as Python's json.dumps does (package wire):
// with ensure_ascii DEL and every non-ASCII character escaped, without it
// everything but '"', '\\' and the controls raw. A byte that is not UTF-8
// (a Python str cannot hold one) is written as U+FFFD, as a lossy decode
// would have made it.
func writeJSONString(b *strings.Builder, s string, ascii bool) {
	// Most strings fit the stack buffer, so escaping them allocates nothing.
	var buf [256]byte
	if ascii {
		b.Write(wire.AppendStringASCII(buf[:0], s))
	} else {
		b.Write(wire.AppendString(buf[:0], s))
	}
}

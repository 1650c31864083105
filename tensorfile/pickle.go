package tensorfile

import (
	"encoding/binary"
	"strings"
)

// The pickle machine for a torch.save archive's data.pkl. torch.save
// pickles a plain tensor with protocol 2 as
//
//	GLOBAL torch._utils._rebuild_tensor_v2
//	(storage as BINPERSID ("storage", GLOBAL torch.FloatStorage, "0", "cpu", numel),
//	 storage_offset, size tuple, stride tuple, requires_grad, OrderedDict())
//	REDUCE STOP
//
// with BINPUT after every memoizable value. The machine knows the opcodes
// such a pickle (and the protocol-4 framing opcodes) uses and the globals
// it names; every other opcode and global is refused, so nothing a client
// sends is ever resolved to code.

// global is a GLOBAL the machine allows.
type global struct{ module, name string }

var (
	rebuildTensorV2 = global{"torch._utils", "_rebuild_tensor_v2"}
	orderedDictType = global{"collections", "OrderedDict"}
)

// orderedDict is an empty collections.OrderedDict (a tensor's
// backward_hooks).
type orderedDict struct{}

// mark is the MARK opcode's stack entry.
type mark struct{}

const (
	maxPickleStack = 1024
	maxPickleMemo  = 1024
)

type unpickler struct {
	s     []byte
	i     int
	stack []any
	memo  map[uint32]any
}

func (u *unpickler) need(n int) ([]byte, error) {
	if n < 0 || len(u.s)-u.i < n {
		return nil, errUnpickle("pickle data was truncated")
	}
	b := u.s[u.i : u.i+n]
	u.i += n
	return b, nil
}

func (u *unpickler) push(v any) error {
	if len(u.stack) >= maxPickleStack {
		return errUnpickle("the pickle stack is deeper than %d", maxPickleStack)
	}
	u.stack = append(u.stack, v)
	return nil
}

func (u *unpickler) pop() (any, error) {
	if len(u.stack) == 0 {
		return nil, errUnpickle("unpickling stack underflow")
	}
	v := u.stack[len(u.stack)-1]
	u.stack = u.stack[:len(u.stack)-1]
	if _, ok := v.(mark); ok {
		return nil, errUnpickle("unexpected MARK found")
	}
	return v, nil
}

// popMark pops the values above the topmost MARK, and the MARK.
func (u *unpickler) popMark() ([]any, error) {
	for k := len(u.stack) - 1; k >= 0; k-- {
		if _, ok := u.stack[k].(mark); ok {
			items := append([]any(nil), u.stack[k+1:]...)
			u.stack = u.stack[:k]
			return items, nil
		}
	}
	return nil, errUnpickle("could not find MARK")
}

func (u *unpickler) popN(n int) ([]any, error) {
	items := make([]any, n)
	for k := n - 1; k >= 0; k-- {
		v, err := u.pop()
		if err != nil {
			return nil, err
		}
		items[k] = v
	}
	return items, nil
}

func (u *unpickler) put(idx uint32) error {
	if len(u.stack) == 0 {
		return errUnpickle("unpickling stack underflow")
	}
	if u.memo == nil {
		u.memo = map[uint32]any{}
	}
	if _, ok := u.memo[idx]; !ok && len(u.memo) >= maxPickleMemo {
		return errUnpickle("more than %d memo entries", maxPickleMemo)
	}
	u.memo[idx] = u.stack[len(u.stack)-1]
	return nil
}

func (u *unpickler) get(idx uint32) error {
	v, ok := u.memo[idx]
	if !ok {
		return errUnpickle("Memo value not found at index %d", idx)
	}
	return u.push(v)
}

// run executes the pickle up to STOP and returns its value.
func (u *unpickler) run() (any, error) {
	for {
		b, err := u.need(1)
		if err != nil {
			return nil, err
		}
		op := b[0]
		switch op {
		case 0x80: // PROTO
			p, err := u.need(1)
			if err != nil {
				return nil, err
			}
			if p[0] > 5 {
				return nil, errUnpickle("unsupported pickle protocol: %d", p[0])
			}
		case 0x95: // FRAME: the length is advisory
			if _, err := u.need(8); err != nil {
				return nil, err
			}
		case '.': // STOP
			return u.pop()
		case 'c': // GLOBAL
			module, err := u.line()
			if err != nil {
				return nil, err
			}
			name, err := u.line()
			if err != nil {
				return nil, err
			}
			g, err := allowGlobal(module, name)
			if err != nil {
				return nil, err
			}
			err = u.push(g)
			if err != nil {
				return nil, err
			}
		case 0x93: // STACK_GLOBAL
			items, err := u.popN(2)
			if err != nil {
				return nil, err
			}
			module, ok1 := items[0].(string)
			name, ok2 := items[1].(string)
			if !ok1 || !ok2 {
				return nil, errUnpickle("STACK_GLOBAL requires str")
			}
			g, err := allowGlobal(module, name)
			if err != nil {
				return nil, err
			}
			if err := u.push(g); err != nil {
				return nil, err
			}
		case 'q', 'r', 0x94: // BINPUT, LONG_BINPUT, MEMOIZE
			var idx uint32
			switch op {
			case 'q':
				b, err := u.need(1)
				if err != nil {
					return nil, err
				}
				idx = uint32(b[0])
			case 'r':
				b, err := u.need(4)
				if err != nil {
					return nil, err
				}
				idx = binary.LittleEndian.Uint32(b)
			default:
				idx = uint32(len(u.memo))
			}
			if err := u.put(idx); err != nil {
				return nil, err
			}
		case 'h', 'j': // BINGET, LONG_BINGET
			n := 1
			if op == 'j' {
				n = 4
			}
			b, err := u.need(n)
			if err != nil {
				return nil, err
			}
			idx := uint32(b[0])
			if n == 4 {
				idx = binary.LittleEndian.Uint32(b)
			}
			if err := u.get(idx); err != nil {
				return nil, err
			}
		case '(': // MARK
			if err := u.push(mark{}); err != nil {
				return nil, err
			}
		case ')': // EMPTY_TUPLE
			if err := u.push([]any{}); err != nil {
				return nil, err
			}
		case 't': // TUPLE
			items, err := u.popMark()
			if err != nil {
				return nil, err
			}
			if err := u.push(items); err != nil {
				return nil, err
			}
		case 0x85, 0x86, 0x87: // TUPLE1, TUPLE2, TUPLE3
			items, err := u.popN(int(op-0x85) + 1)
			if err != nil {
				return nil, err
			}
			if err := u.push(items); err != nil {
				return nil, err
			}
		case 'X', 0x8c: // BINUNICODE, SHORT_BINUNICODE
			var n int
			if op == 'X' {
				b, err := u.need(4)
				if err != nil {
					return nil, err
				}
				n = int(binary.LittleEndian.Uint32(b))
			} else {
				b, err := u.need(1)
				if err != nil {
					return nil, err
				}
				n = int(b[0])
			}
			s, err := u.need(n)
			if err != nil {
				return nil, err
			}
			if err := u.push(string(s)); err != nil {
				return nil, err
			}
		case 'K', 'M', 'J': // BININT1, BININT2, BININT
			var v int
			switch op {
			case 'K':
				b, err := u.need(1)
				if err != nil {
					return nil, err
				}
				v = int(b[0])
			case 'M':
				b, err := u.need(2)
				if err != nil {
					return nil, err
				}
				v = int(binary.LittleEndian.Uint16(b))
			default:
				b, err := u.need(4)
				if err != nil {
					return nil, err
				}
				v = int(int32(binary.LittleEndian.Uint32(b)))
			}
			if err := u.push(v); err != nil {
				return nil, err
			}
		case 0x8a: // LONG1: a little-endian two's complement int of n bytes
			b, err := u.need(1)
			if err != nil {
				return nil, err
			}
			n := int(b[0])
			if n > 8 {
				return nil, errUnpickle("an int of %d bytes is larger than a tensor needs", n)
			}
			d, err := u.need(n)
			if err != nil {
				return nil, err
			}
			var x uint64
			for k := n - 1; k >= 0; k-- {
				x = x<<8 | uint64(d[k])
			}
			if n > 0 && n < 8 && d[n-1]&0x80 != 0 {
				x |= ^uint64(0) << (8 * n) // sign-extend
			}
			if err := u.push(int(int64(x))); err != nil {
				return nil, err
			}
		case 0x88, 0x89: // NEWTRUE, NEWFALSE
			if err := u.push(op == 0x88); err != nil {
				return nil, err
			}
		case 'N': // NONE
			if err := u.push(nil); err != nil {
				return nil, err
			}
		case 'Q': // BINPERSID
			pid, err := u.pop()
			if err != nil {
				return nil, err
			}
			ref, err := persistentLoad(pid)
			if err != nil {
				return nil, err
			}
			if err := u.push(ref); err != nil {
				return nil, err
			}
		case 'R': // REDUCE
			items, err := u.popN(2)
			if err != nil {
				return nil, err
			}
			v, err := reduce(items[0], items[1])
			if err != nil {
				return nil, err
			}
			if err := u.push(v); err != nil {
				return nil, err
			}
		default:
			return nil, errUnpickle("Unsupported operand %d", op)
		}
	}
}

// line reads a GLOBAL operand line (without its newline).
func (u *unpickler) line() (string, error) {
	rest := u.s[u.i:]
	k := 0
	for k < len(rest) && rest[k] != '\n' {
		k++
	}
	if k == len(rest) || k > 256 {
		return "", errUnpickle("pickle data was truncated")
	}
	u.i += k + 1
	return string(rest[:k]), nil
}

// allowGlobal resolves a GLOBAL: the tensor rebuild function, OrderedDict
// and the legacy storage classes. Other globals weights_only allows (a
// Parameter, a sparse or quantized tensor, torch.Size, ...) are not one
// plain dense tensor; the rest weights_only refuses with this message.
func allowGlobal(module, name string) (any, error) {
	g := global{module, name}
	switch {
	case g == rebuildTensorV2 || g == orderedDictType:
		return g, nil
	case module == "torch":
		if _, ok := storageTypes[name]; ok {
			return g, nil
		}
	}
	if module == "torch" || strings.HasPrefix(module, "torch.") || module == "collections" {
		return nil, errNotPlain(module + "." + name)
	}
	return nil, errUnpickle("Unsupported global: GLOBAL %s.%s was not an allowed global by default.", module, name)
}

// persistentLoad reads torch's storage persistent id.
func persistentLoad(pid any) (storageRef, error) {
	t, ok := pid.([]any)
	if !ok || len(t) == 0 {
		return storageRef{}, errUnpickle("persistent_load: a tuple was expected")
	}
	if tn, _ := t[0].(string); tn != "storage" {
		return storageRef{}, errUnpickle("Unknown typename for persistent_load, expected 'storage' but got '%v'", t[0])
	}
	if len(t) != 5 {
		return storageRef{}, errUnpickle("persistent_load: a storage id has 5 fields, got %d", len(t))
	}
	cls, ok1 := t[1].(global)
	key, ok2 := t[2].(string)
	loc, ok3 := t[3].(string)
	numel, ok4 := t[4].(int)
	dtype, ok5 := storageTypes[cls.name]
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || cls.module != "torch" || numel < 0 {
		return storageRef{}, errUnpickle("persistent_load: malformed storage id")
	}
	return storageRef{dtype: dtype, key: key, location: loc, numel: numel}, nil
}

// reduce applies REDUCE: OrderedDict() or _rebuild_tensor_v2(storage,
// storage_offset, size, stride, requires_grad, backward_hooks[, metadata]).
func reduce(fn, args any) (any, error) {
	g, ok := fn.(global)
	a, isTuple := args.([]any)
	if !ok || !isTuple {
		return nil, errUnpickle("REDUCE of %s", describe(fn))
	}
	switch g {
	case orderedDictType:
		if len(a) != 0 {
			return nil, errNotPlain("an OrderedDict with items")
		}
		return orderedDict{}, nil
	case rebuildTensorV2:
	default:
		return nil, errUnpickle("REDUCE of %s.%s", g.module, g.name)
	}
	if len(a) != 6 && len(a) != 7 {
		return nil, errNotPlain("a _rebuild_tensor_v2 call with " + describe(a))
	}
	st, ok := a[0].(storageRef)
	if !ok {
		return nil, errNotPlain("a tensor whose storage is " + describe(a[0]))
	}
	offset, ok := a[1].(int)
	if !ok || offset < 0 || offset > st.numel {
		return nil, errNotPlain("a tensor with a bad storage offset")
	}
	size, ok1 := intTuple(a[2])
	stride, ok2 := intTuple(a[3])
	if !ok1 || !ok2 || len(size) != len(stride) || len(size) > 64 {
		return nil, errNotPlain("a tensor with a bad size or stride")
	}
	for i, s := range stride {
		// A stride past the storage could only address it when its
		// dimension has one element; refusing it keeps offsets small.
		if s < 0 || size[i] > 1 && s > st.numel {
			return nil, errNotPlain("a tensor with a bad size or stride")
		}
	}
	if _, ok := a[4].(bool); !ok {
		return nil, errNotPlain("a tensor with a bad requires_grad")
	}
	if _, ok := a[5].(orderedDict); !ok {
		return nil, errNotPlain("a tensor with backward hooks")
	}
	if len(a) == 7 && a[6] != nil {
		return nil, errNotPlain("a tensor with metadata")
	}
	return &rebuiltTensor{storage: st, offset: offset, size: size, stride: stride}, nil
}

func intTuple(v any) ([]int, bool) {
	t, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]int, len(t))
	for i, x := range t {
		n, ok := x.(int)
		if !ok {
			return nil, false
		}
		out[i] = n
	}
	return out, true
}

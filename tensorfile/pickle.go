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
		switch op := b[0]; op {
		case '.': // STOP
			return u.pop()
		case 0x80, 0x95: // PROTO, FRAME
			err = u.framing(op)
		case 'c', 0x93: // GLOBAL, STACK_GLOBAL
			err = u.global(op)
		case 'q', 'r', 0x94, 'h', 'j': // BINPUT, LONG_BINPUT, MEMOIZE, BINGET, LONG_BINGET
			err = u.memoOp(op)
		case '(', ')', 't', 0x85, 0x86, 0x87: // MARK, EMPTY_TUPLE, TUPLE, TUPLE1-3
			err = u.tuple(op)
		case 'X', 0x8c, 'K', 'M', 'J', 0x8a, 0x88, 0x89, 'N': // strings, ints, bools, None
			err = u.constant(op)
		case 'Q', 'R': // BINPERSID, REDUCE
			err = u.call(op)
		default:
			err = errUnpickle("Unsupported operand %d", op)
		}
		if err != nil {
			return nil, err
		}
	}
}

// uint reads an n-byte (1, 2 or 4) little-endian unsigned argument.
func (u *unpickler) uint(n int) (uint32, error) {
	b, err := u.need(n)
	if err != nil {
		return 0, err
	}
	switch n {
	case 1:
		return uint32(b[0]), nil
	case 2:
		return uint32(binary.LittleEndian.Uint16(b)), nil
	}
	return binary.LittleEndian.Uint32(b), nil
}

// framing is PROTO (up to 5) and FRAME, whose length is advisory.
func (u *unpickler) framing(op byte) error {
	if op == 0x95 {
		_, err := u.need(8)
		return err
	}
	p, err := u.need(1)
	if err != nil {
		return err
	}
	if p[0] > 5 {
		return errUnpickle("unsupported pickle protocol: %d", p[0])
	}
	return nil
}

// global is GLOBAL (module and name as lines) and STACK_GLOBAL (as two
// strings on the stack); only allowGlobal's names resolve.
func (u *unpickler) global(op byte) error {
	var module, name string
	if op == 'c' {
		var err error
		if module, err = u.line(); err != nil {
			return err
		}
		if name, err = u.line(); err != nil {
			return err
		}
	} else {
		items, err := u.popN(2)
		if err != nil {
			return err
		}
		var ok1, ok2 bool
		module, ok1 = items[0].(string)
		name, ok2 = items[1].(string)
		if !ok1 || !ok2 {
			return errUnpickle("STACK_GLOBAL requires str")
		}
	}
	g, err := allowGlobal(module, name)
	if err != nil {
		return err
	}
	return u.push(g)
}

// memoOp stores the top of the stack (BINPUT, LONG_BINPUT, MEMOIZE) or
// pushes a stored value (BINGET, LONG_BINGET).
func (u *unpickler) memoOp(op byte) error {
	switch op {
	case 0x94:
		return u.put(uint32(len(u.memo)))
	case 'q', 'h':
		idx, err := u.uint(1)
		if err != nil {
			return err
		}
		if op == 'q' {
			return u.put(idx)
		}
		return u.get(idx)
	}
	idx, err := u.uint(4)
	if err != nil {
		return err
	}
	if op == 'r' {
		return u.put(idx)
	}
	return u.get(idx)
}

// tuple is MARK and the tuple builders: EMPTY_TUPLE, TUPLE (back to the
// mark), TUPLE1, TUPLE2 and TUPLE3.
func (u *unpickler) tuple(op byte) error {
	switch op {
	case '(':
		return u.push(mark{})
	case ')':
		return u.push([]any{})
	}
	var items []any
	var err error
	if op == 't' {
		items, err = u.popMark()
	} else {
		items, err = u.popN(int(op-0x85) + 1)
	}
	if err != nil {
		return err
	}
	return u.push(items)
}

// constant pushes a literal: BINUNICODE, SHORT_BINUNICODE, BININT1,
// BININT2, BININT, LONG1, NEWTRUE, NEWFALSE and NONE.
func (u *unpickler) constant(op byte) error {
	var v any
	switch op {
	case 'X', 0x8c:
		width := 4
		if op == 0x8c {
			width = 1
		}
		n, err := u.uint(width)
		if err != nil {
			return err
		}
		s, err := u.need(int(n))
		if err != nil {
			return err
		}
		v = string(s)
	case 'K', 'M':
		width := 1
		if op == 'M' {
			width = 2
		}
		n, err := u.uint(width)
		if err != nil {
			return err
		}
		v = int(n)
	case 'J':
		n, err := u.uint(4)
		if err != nil {
			return err
		}
		v = int(int32(n))
	case 0x8a:
		n, err := u.long1()
		if err != nil {
			return err
		}
		v = n
	case 0x88, 0x89:
		v = op == 0x88
	case 'N':
		v = nil
	}
	return u.push(v)
}

// long1 reads LONG1's argument: a little-endian two's complement int of
// n bytes, n at most 8.
func (u *unpickler) long1() (int, error) {
	b, err := u.need(1)
	if err != nil {
		return 0, err
	}
	n := int(b[0])
	if n > 8 {
		return 0, errUnpickle("an int of %d bytes is larger than a tensor needs", n)
	}
	d, err := u.need(n)
	if err != nil {
		return 0, err
	}
	var x uint64
	for k := n - 1; k >= 0; k-- {
		x = x<<8 | uint64(d[k])
	}
	if n > 0 && n < 8 && d[n-1]&0x80 != 0 {
		x |= ^uint64(0) << (8 * n) // sign-extend
	}
	return int(int64(x)), nil
}

// call is BINPERSID (a storage reference) and REDUCE (a call of an
// allowed global).
func (u *unpickler) call(op byte) error {
	var v any
	if op == 'Q' {
		pid, err := u.pop()
		if err != nil {
			return err
		}
		if v, err = persistentLoad(pid); err != nil {
			return err
		}
	} else {
		items, err := u.popN(2)
		if err != nil {
			return err
		}
		if v, err = reduce(items[0], items[1]); err != nil {
			return err
		}
	}
	return u.push(v)
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

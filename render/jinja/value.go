package jinja

import (
	"math"
	"math/big"
)

// Kind is the Python type of a Value.
type Kind uint8

// The zero Kind is KindUndefined so that the zero Value is Jinja's Undefined.
const (
	KindUndefinedValue Kind = iota
	KindNone
	KindBool
	KindInt
	KindBigInt
	KindFloat
	KindStr
	KindList
	KindTuple
	KindDict
	KindCallable
	KindNamespace
	KindLoop
	// KindIter is a Python iterator or view: a generator from filters such
	// as map and select, reversed(), or dict.items()/keys()/values().
	KindIter
)

// Value is a Python value as a template sees it. It is a small struct so that
// ints, floats, bools and strings are not boxed; containers live behind ref.
type Value struct {
	kind Kind
	// safe marks a str as Markup (the result of |safe or |escape): Python's
	// Markup escapes the other operand of + and %.
	safe bool
	n    int64  // int value, bool as 0/1, float bits
	s    string // str value
	ref  any    // *[]Value (list, tuple), *Dict, *big.Int, *Callable, *Namespace, *loopCtx, *undefInfo
}

// groupTupleFields names the fields of groupby's namedtuple; a tuple whose
// s holds field names answers them as attributes.
const groupTupleFields = "grouper list"

// undefInfo says why a value is undefined; the message is the one Jinja2's
// Undefined would raise when the value is used.
type undefInfo struct {
	msg string
	// security is set for sandbox refusals (Jinja's unsafe_undefined), which
	// raise SecurityError instead of UndefinedError.
	security bool
}

var (
	noneValue  = Value{kind: KindNone}
	trueValue  = Value{kind: KindBool, n: 1}
	falseValue = Value{kind: KindBool}
	emptyStr   = Value{kind: KindStr}
)

// None is Python's None.
func None() Value { return noneValue }

// Bool is a Python bool.
func Bool(b bool) Value {
	if b {
		return trueValue
	}
	return falseValue
}

// Int is a Python int.
func Int(i int64) Value { return Value{kind: KindInt, n: i} }

// Float is a Python float.
func Float(f float64) Value { return Value{kind: KindFloat, n: int64(math.Float64bits(f))} }

// fl is the value of a float.
func (v Value) fl() float64 { return math.Float64frombits(uint64(v.n)) }

// Str is a Python str.
func Str(s string) Value { return Value{kind: KindStr, s: s} }

func markup(s string) Value { return Value{kind: KindStr, s: s, safe: true} }

// bigValue normalises a big.Int: values that fit int64 become plain ints.
func bigValue(b *big.Int) Value {
	if b.IsInt64() {
		return Int(b.Int64())
	}
	return Value{kind: KindBigInt, ref: b}
}

// List is a Python list holding items (not copied).
func List(items []Value) Value { return Value{kind: KindList, ref: &items} }

// Tuple is a Python tuple holding items (not copied).
func Tuple(items []Value) Value { return Value{kind: KindTuple, ref: &items} }

// DictValue wraps an ordered dict.
func DictValue(d *Dict) Value { return Value{kind: KindDict, ref: d} }

func undefined(msg string) Value {
	return Value{kind: KindUndefinedValue, ref: &undefInfo{msg: msg}}
}

// Undefined values made by failed lookups carry what their message needs in
// n and s instead of an allocated message: n holds the mode and a code for
// the object's type, s the name.
const (
	undefModeName = 1 + iota
	undefModeAttr
	undefModeElem
)

func undefinedName(name string) Value {
	return Value{kind: KindUndefinedValue, n: undefModeName, s: name}
}

// undefinedAttr is Jinja's Undefined(obj=obj, name=name): the message depends
// on whether the name was a str (attribute) or not (element).
func undefinedAttr(obj Value, name Value) Value {
	if obj.kind == KindIter {
		// Its type name lives behind ref: build the message now.
		if name.kind == KindStr {
			return undefined("'" + objectTypeRepr(obj) + "' has no attribute " + pyRepr(name))
		}
		return undefined(objectTypeRepr(obj) + " has no element " + pyRepr(name))
	}
	code := int64(obj.kind) << 8
	if obj.safe {
		code |= 1 << 16
	}
	if obj.kind == KindCallable && obj.ref.(*Callable).macro != nil {
		code |= 1 << 17
	}
	if name.kind == KindStr {
		return Value{kind: KindUndefinedValue, n: undefModeAttr | code, s: name.s}
	}
	return Value{kind: KindUndefinedValue, n: undefModeElem | code, s: pyRepr(name)}
}

func (v Value) undefinedMessage() (string, bool) {
	if u, ok := v.ref.(*undefInfo); ok && u != nil {
		return u.msg, u.security
	}
	obj := Value{kind: Kind(v.n >> 8 & 0xff), safe: v.n&(1<<16) != 0}
	if obj.kind == KindCallable {
		c := &Callable{}
		if v.n&(1<<17) != 0 {
			c.macro = &macroDef{}
		}
		obj.ref = c
	}
	switch v.n & 0xff {
	case undefModeName:
		return pyRepr(Str(v.s)) + " is undefined", false
	case undefModeAttr:
		return "'" + objectTypeRepr(obj) + "' has no attribute " + pyRepr(Str(v.s)), false
	case undefModeElem:
		return objectTypeRepr(obj) + " has no element " + v.s, false
	}
	return "undefined value", false
}

func unsafeUndefined(obj Value, attr string) Value {
	return Value{ref: &undefInfo{
		msg:      "access to attribute " + pyRepr(Str(attr)) + " of " + pyRepr(Str(obj.typeName())) + " object is unsafe.",
		security: true,
	}}
}

// objectTypeRepr mirrors jinja2.utils.object_type_repr.
func objectTypeRepr(v Value) string {
	switch v.kind {
	case KindNone:
		return "None"
	case KindUndefinedValue:
		return "jinja2.runtime.Undefined object"
	case KindStr:
		if v.safe {
			return "markupsafe.Markup object"
		}
	case KindNamespace:
		return "jinja2.utils.Namespace object"
	case KindLoop:
		return "jinja2.runtime.LoopContext object"
	case KindCallable:
		if c, _ := v.ref.(*Callable); c != nil && c.macro != nil {
			return "jinja2.runtime.Macro object"
		}
	}
	return v.typeName() + " object"
}

// Kind reports the Python type of v.
func (v Value) Kind() Kind { return v.kind }

// IsUndefined reports whether v is Jinja's Undefined.
func (v Value) IsUndefined() bool { return v.kind == KindUndefinedValue }

func (v Value) undefinedError() *TemplateError {
	msg, security := v.undefinedMessage()
	if security {
		return newErr(KindSecurity, "SecurityError", msg)
	}
	return newErr(KindUndefined, "UndefinedError", msg)
}

func (v Value) items() []Value {
	if p, ok := v.ref.(*[]Value); ok {
		return *p
	}
	return nil
}

func (v Value) dict() *Dict { d, _ := v.ref.(*Dict); return d }

func (v Value) bigInt() *big.Int {
	if v.kind == KindBigInt {
		return v.ref.(*big.Int)
	}
	return big.NewInt(v.n)
}

func (v Value) isIntLike() bool {
	return v.kind == KindInt || v.kind == KindBool || v.kind == KindBigInt
}

func (v Value) isNumber() bool {
	return v.kind == KindInt || v.kind == KindBool || v.kind == KindFloat || v.kind == KindBigInt
}

func (v Value) toFloat() float64 {
	switch v.kind {
	case KindFloat:
		return v.fl()
	case KindBigInt:
		f, _ := new(big.Float).SetInt(v.ref.(*big.Int)).Float64()
		return f
	}
	return float64(v.n)
}

// Truth is Python's bool(v).
func (v Value) Truth() bool {
	switch v.kind {
	case KindUndefinedValue, KindNone:
		return false
	case KindBool, KindInt:
		return v.n != 0
	case KindBigInt:
		return true
	case KindFloat:
		return v.fl() != 0
	case KindStr:
		return v.s != ""
	case KindList, KindTuple:
		return len(v.items()) > 0
	case KindDict:
		return v.dict().Len() > 0
	case KindIter:
		if it := v.ref.(*iterState); it.view {
			return len(it.items) > 0
		}
	}
	return true
}

// typeName is Python's type(v).__name__.
func (v Value) typeName() string {
	switch v.kind {
	case KindUndefinedValue:
		return "Undefined"
	case KindNone:
		return "NoneType"
	case KindBool:
		return "bool"
	case KindInt, KindBigInt:
		return "int"
	case KindFloat:
		return "float"
	case KindStr:
		if v.safe {
			return "Markup"
		}
		return "str"
	case KindList:
		return "list"
	case KindTuple:
		return "tuple"
	case KindDict:
		return "dict"
	case KindCallable:
		c, _ := v.ref.(*Callable)
		if c == nil || c.macro != nil {
			return "Macro"
		}
		if c.self != nil {
			return "builtin_function_or_method"
		}
		return "function"
	case KindNamespace:
		return "Namespace"
	case KindLoop:
		return "LoopContext"
	case KindIter:
		return v.ref.(*iterState).typeName
	}
	return "object"
}

// iterState backs a KindIter value. Generators are single-use; views
// (dict_items and friends) are re-iterable and have a length. err is a
// failure Python would raise lazily, when the generator is consumed.
type iterState struct {
	typeName string
	items    []Value
	view     bool
	consumed bool
	err      error
}

func iterValue(typeName string, items []Value, err error) Value {
	return Value{kind: KindIter, ref: &iterState{typeName: typeName, items: items, err: err}}
}

func viewValue(typeName string, items []Value) Value {
	return Value{kind: KindIter, ref: &iterState{typeName: typeName, items: items, view: true}}
}

// Namespace is the mutable object namespace() returns.
type Namespace struct {
	attrs *Dict
}

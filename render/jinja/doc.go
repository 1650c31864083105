// Package jinja is a Jinja2 template engine with Python semantics, written to
// render Hugging Face chat templates byte-for-byte as transformers renders
// them: Jinja2 3.1's ImmutableSandboxedEnvironment with trim_blocks,
// lstrip_blocks, keep_trailing_newline=False, the loopcontrols extension,
// transformers' {% generation %} tag and its tojson, raise_exception and
// strftime_now globals.
//
// A template is lexed, parsed into an AST and compiled once into a tree of Go
// closures; rendering walks the closures over Python-like values (Value):
// None, bool, int (int64, promoted to math/big on overflow), float (printed
// with Python's shortest repr), str (indexed by rune), list, tuple,
// insertion-ordered dict, Undefined, macros, namespaces and loop objects.
//
// Errors are *TemplateError values whose PyType and Message are what Python
// would raise (UndefinedError, TypeError, SecurityError, TemplateError, ...).
//
// Hostile templates are bounded by Limits: a cap on output and string size
// (MaxOutputBytes), on loop iterations plus macro calls (MaxSteps), on macro
// and recursive-loop nesting (MaxDepth); the context passed to Render is
// checked for cancellation every few hundred steps.
package jinja

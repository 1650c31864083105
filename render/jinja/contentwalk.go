package jinja

// DetectContentFormat walks src's AST as vLLM's _detect_content_format
// walks Jinja2's (vllm/renderers/hf.py): "openai" when some loop iterates
// over a message's content (message being the target of a loop over
// "messages" or a variable assigned from it, slices, filters and tests
// included) or over a variable named "content"; "string" otherwise. ok is
// false when vLLM's walk gives up (the template does not parse, or an
// assertion fails on a non-name loop or set target), where vLLM falls back
// to its default. The walk reads the AST only.
func DetectContentFormat(src string) (format string, ok bool) {
	body, err := parse(src)
	if err != nil {
		return "", false
	}
	var w astWalk
	w.stmts(body)

	// _iter_nodes_assign_var_or_elems(root, "messages"), breadth first.
	// vLLM re-queues a name each time it is assigned, which never ends for
	// a cycle (a = messages; messages = a); a name is queued once here,
	// which finds the same names.
	messagesVars := []string{"messages"}
	queued := map[string]bool{"messages": true}
	for i := 0; i < len(messagesVars); i++ {
		v := messagesVars[i]
		for _, s := range w.sets {
			if !isVarOrElemsAccess(s.value, v, "") {
				continue
			}
			name, isName := s.target.(*nameExpr)
			if !isName {
				return "", false
			}
			if !queued[name.name] {
				queued[name.name] = true
				messagesVars = append(messagesVars, name.name)
			}
		}
	}
	var messageVars []string
	for _, f := range w.fors {
		for _, v := range messagesVars {
			if isVarOrElemsAccess(f.iter, v, "") {
				name, isName := f.target.(*nameExpr)
				if !isName {
					return "", false
				}
				messageVars = append(messageVars, name.name)
				break
			}
		}
	}
	for _, f := range w.fors {
		for _, v := range messageVars {
			if isVarOrElemsAccess(f.iter, v, "content") {
				if _, isName := f.target.(*nameExpr); !isName {
					return "", false
				}
				return "openai", true
			}
		}
		if n, isName := f.iter.(*nameExpr); isName && n.name == "content" {
			if _, isName := f.target.(*nameExpr); !isName {
				return "", false
			}
			return "openai", true
		}
	}
	return "string", true
}

// astWalk collects the for and set statements in Jinja2's find_all order
// (depth first, parents before children).
type astWalk struct {
	fors []*forStmt
	sets []*setStmt
}

func (w *astWalk) stmts(body []stmt) {
	for _, s := range body {
		switch s := s.(type) {
		case *forStmt:
			w.fors = append(w.fors, s)
			w.stmts(s.body)
			w.stmts(s.els)
		case *ifStmt:
			for _, b := range s.bodies {
				w.stmts(b)
			}
			w.stmts(s.els)
		case *setStmt:
			w.sets = append(w.sets, s)
		case *setBlockStmt:
			w.stmts(s.body)
		case *macroStmt:
			w.stmts(s.body)
		case *callBlockStmt:
			w.stmts(s.body)
		case *filterBlockStmt:
			w.stmts(s.body)
		case *withStmt:
			w.stmts(s.body)
		case *scopeStmt:
			w.stmts(s.body)
		case *generationStmt:
			w.stmts(s.body)
		}
	}
}

// isVarOrElemsAccess is vLLM's _is_var_or_elems_access: varname (or its
// key, by attribute or constant subscript) under filters, tests and
// slices.
func isVarOrElemsAccess(x expr, varname, key string) bool {
	switch e := x.(type) {
	case *filterExpr:
		return e.x != nil && isVarOrElemsAccess(e.x, varname, key)
	case *testExpr:
		return isVarOrElemsAccess(e.x, varname, key)
	case *getitemExpr:
		if _, isSlice := e.key.(*sliceExpr); isSlice {
			return isVarOrElemsAccess(e.obj, varname, key)
		}
	}
	if key == "" {
		return isVarAccess(x, varname)
	}
	switch e := x.(type) {
	case *getitemExpr:
		c, isConst := e.key.(*constExpr)
		if !isConst || !isVarAccess(e.obj, varname) {
			return false
		}
		return c.v.Kind() == KindStr && c.v.s == key
	case *getattrExpr:
		return isVarAccess(e.obj, varname) && e.attr == key
	}
	return false
}

func isVarAccess(x expr, varname string) bool {
	n, ok := x.(*nameExpr)
	return ok && n.name == varname
}

package render

import (
	"regexp"
	"strings"
)

// vLLM decides the "auto" content format by walking the template's Jinja
// AST (vllm/renderers/hf.py _detect_content_format): if some loop iterates
// over a message's content, where messages are the "messages" variable or a
// variable assigned from it (slices and filters included) and a message is
// the target of a loop over those, the template wants OpenAI-style parts.
// The same walk is done here on the template's statements.

var (
	commentRE   = regexp.MustCompile(`(?s)\{#.*?#\}`)
	statementRE = regexp.MustCompile(`(?s)\{%[-+]?(.*?)[-+]?%\}`)
	forRE       = regexp.MustCompile(`(?s)^for\s+(.+?)\s+in\s+(.+?)(?:\s+if\s+.*|\s+recursive)?$`)
	setRE       = regexp.MustCompile(`(?s)^set\s+([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.+)$`)
	nameRE      = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

type forStmt struct{ target, iter string }
type setStmt struct{ name, expr string }

// detectContentFormat returns "openai" when the template loops over a
// message's content, else "string".
func detectContentFormat(src string) string {
	var fors []forStmt
	var sets []setStmt
	for _, m := range statementRE.FindAllStringSubmatch(commentRE.ReplaceAllString(src, ""), -1) {
		stmt := strings.TrimSpace(m[1])
		if f := forRE.FindStringSubmatch(stmt); f != nil {
			fors = append(fors, forStmt{strings.TrimSpace(f[1]), strings.TrimSpace(f[2])})
		} else if s := setRE.FindStringSubmatch(stmt); s != nil {
			sets = append(sets, setStmt{s[1], strings.TrimSpace(s[2])})
		}
	}

	// Variables holding the messages list, found breadth-first.
	messagesVars := []string{"messages"}
	seen := map[string]bool{"messages": true}
	for i := 0; i < len(messagesVars); i++ {
		for _, s := range sets {
			if !seen[s.name] && isVarOrElemsAccess(s.expr, messagesVars[i], "") {
				seen[s.name] = true
				messagesVars = append(messagesVars, s.name)
			}
		}
	}
	var messageVars []string
	for _, f := range fors {
		for _, v := range messagesVars {
			if isVarOrElemsAccess(f.iter, v, "") {
				if !nameRE.MatchString(f.target) {
					// vLLM's walk asserts a plain name and falls back to "string".
					return FormatString
				}
				messageVars = append(messageVars, f.target)
				break
			}
		}
	}
	for _, f := range fors {
		for _, v := range messageVars {
			if isVarOrElemsAccess(f.iter, v, "content") {
				return FormatOpenAI
			}
		}
	}
	return FormatString
}

// isVarOrElemsAccess mirrors vLLM's _is_var_or_elems_access on expression
// text: the variable (or its key) possibly filtered, tested or sliced.
func isVarOrElemsAccess(expr, varname, key string) bool {
	e := strings.TrimSpace(expr)
	for {
		if i := topLevelIndex(e, "|"); i >= 0 {
			e = strings.TrimSpace(e[:i])
			continue
		}
		if i := topLevelIndex(e, " is "); i >= 0 {
			e = strings.TrimSpace(e[:i])
			continue
		}
		if strings.HasSuffix(e, "]") {
			if open := matchingOpen(e); open > 0 && topLevelIndex(e[open+1:len(e)-1], ":") >= 0 {
				e = strings.TrimSpace(e[:open])
				continue
			}
		}
		break
	}
	if key == "" {
		return e == varname
	}
	rest, ok := strings.CutPrefix(e, varname)
	if !ok {
		return false
	}
	rest = strings.TrimSpace(rest)
	return rest == "."+key || rest == "['"+key+"']" || rest == `["`+key+`"]`
}

// topLevelIndex finds sep outside brackets and string literals.
func topLevelIndex(s, sep string) int {
	depth := 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '(' || c == '[' || c == '{':
			depth++
		case c == ')' || c == ']' || c == '}':
			depth--
		case depth == 0 && strings.HasPrefix(s[i:], sep):
			return i
		}
	}
	return -1
}

// matchingOpen returns the index of the '[' matching s's final ']'.
func matchingOpen(s string) int {
	depth := 0
	for i := len(s) - 1; i >= 0; i-- {
		switch s[i] {
		case ']', ')', '}':
			depth++
		case '[', '(', '{':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// mentionsDeveloper reports whether a template handles the developer role
// itself; vLLM maps developer messages to system ones otherwise.
func mentionsDeveloper(src string) bool {
	return strings.Contains(src, `'developer'`) || strings.Contains(src, `"developer"`)
}

package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/protocol"
)

// loraFlags are vLLM's --lora-modules and --enable-lora, shared by serve
// and engine-sim. The adapters' weights are the engines' business: vrender
// only needs their names (which "model" values to accept, route and key
// apart) and paths (the root of their /v1/models cards).
type loraFlags struct {
	modules stringList
	enable  bool
}

func (f *loraFlags) register(c *command) {
	c.fs.Var(&f.modules, "lora-modules", "LoRA adapters a request may name in \"model\": `name=path` or JSON\n"+
		"{\"name\": \"NAME\", \"path\": \"PATH\", \"base_model_name\": \"ID\"}; several per flag, space-separated, and the\n"+
		"flag repeatable; needs --enable-lora. The engines must load the same adapters under the same names")
	c.multi["lora-modules"] = true
	c.fs.BoolVar(&f.enable, "enable-lora", false, "enable LoRA adapters (vLLM refuses --lora-modules without it)")
}

// adapters parses and checks the flags against the served model names.
func (f *loraFlags) adapters(servedNames []string) ([]protocol.LoRAModulePath, error) {
	var mods []protocol.LoRAModulePath
	for _, item := range f.modules {
		m, skip, err := parseLoRAModule(item)
		if err != nil {
			return nil, usageError{err}
		}
		if !skip {
			mods = append(mods, m)
		}
	}
	if len(mods) == 0 {
		return nil, nil
	}
	if !f.enable {
		// vLLM starts, then fails loading the first adapter in the worker
		// (vllm/v1/worker/lora_model_runner_mixin.py _ensure_lora_enabled).
		return nil, usagef("--lora-modules needs --enable-lora (vLLM: \"LoRA is not enabled. Use --enable-lora to enable LoRA.\")")
	}
	if err := protocol.ValidateLoRAModules(mods, servedNames); err != nil {
		return nil, usagef("--lora-modules: %v", err)
	}
	return mods, nil
}

// parseLoRAModule reads one --lora-modules value as vLLM's
// LoRAParserAction does (vllm/entrypoints/openai/cli_args.py): "" and
// "None" (optional_type) are skipped; a value with "=" and no "," is
// name=path; anything else is JSON, an object of LoRAModulePath's fields
// (name, path, base_model_name, is_3d_lora_weight), with vLLM's error
// messages. vLLM does not check the fields' types; vrender wants strings.
func parseLoRAModule(item string) (m protocol.LoRAModulePath, skip bool, err error) {
	if item == "" || item == "None" {
		return m, true, nil
	}
	if strings.Contains(item, "=") && !strings.Contains(item, ",") {
		name, path, _ := strings.Cut(item, "=")
		if strings.Contains(path, "=") {
			// vLLM's name, path = item.split("=") raises an uncaught
			// ValueError (too many values to unpack).
			return m, false, fmt.Errorf("invalid --lora-modules value %s: name=path takes one '='", item)
		}
		return protocol.LoRAModulePath{Name: name, Path: path}, false, nil
	}
	n, perr := wire.Parse([]byte(item))
	if perr != nil {
		// vLLM's parser.error messages, capitalised as vLLM prints them.
		return m, false, errors.New("Invalid JSON format for --lora-modules: " + item)
	}
	invalid := func(reason string) error {
		return errors.New("Invalid fields for --lora-modules: " + item + " - " + reason)
	}
	if n.Kind != wire.Object {
		return m, false, invalid("LoRAModulePath() argument after ** must be a mapping, not " + pyTypeName(n))
	}
	var haveName, havePath bool
	for i, k := range n.Keys {
		v := n.Vals[i]
		var dst *string
		switch k {
		case "name":
			dst, haveName = &m.Name, true
		case "path":
			dst, havePath = &m.Path, true
		case "base_model_name":
			if v.Kind == wire.Null {
				continue
			}
			dst = &m.BaseModelName
		case "is_3d_lora_weight":
			continue // how the engine loads the weights
		default:
			return m, false, invalid("LoRAModulePath.__init__() got an unexpected keyword argument '" + k + "'")
		}
		s, ok := v.Text()
		if !ok {
			return m, false, invalid(k + " must be a string, not " + pyTypeName(v))
		}
		*dst = s
	}
	switch {
	case !haveName && !havePath:
		return m, false, invalid("LoRAModulePath.__init__() missing 2 required positional arguments: 'name' and 'path'")
	case !haveName:
		return m, false, invalid("LoRAModulePath.__init__() missing 1 required positional argument: 'name'")
	case !havePath:
		return m, false, invalid("LoRAModulePath.__init__() missing 1 required positional argument: 'path'")
	}
	return m, false, nil
}

// pyTypeName is the Python type json.loads gives n.
func pyTypeName(n *wire.Node) string {
	switch n.Kind {
	case wire.Null:
		return "NoneType"
	case wire.Bool:
		return "bool"
	case wire.Number:
		if n.IsFloat() {
			return "float"
		}
		return "int"
	case wire.String:
		return "str"
	case wire.Array:
		return "list"
	}
	return "dict"
}

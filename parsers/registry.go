package parsers

import "sort"

// reasoningFactory builds a reasoning machine for one request.
type reasoningFactory func(v Vocab, req *Request, promptIDs []int) (reasoningMachine, error)

// toolFactory builds a tool machine for one request.
type toolFactory func(v Vocab, req *Request) (toolMachine, error)

// reasoningInfo describes a reasoning parser family.
type reasoningInfo struct {
	newMachine reasoningFactory
	// needsSpecialTokens forces skip_special_tokens off.
	needsSpecialTokens bool
	// engineBased marks vLLM's ParserEngine adapters
	// (engine_based_streaming): with one of them (or none) an engine-based
	// tool parser also runs for tool_choice "none".
	engineBased bool
}

// toolInfo describes a tool parser family.
type toolInfo struct {
	newMachine toolFactory
	// requiredAndNamed is the parser class's supports_required_and_named:
	// when false, required and named tool_choice are parsed like auto.
	// vLLM turns it off for every parser with a structural tag unless
	// VLLM_ENFORCE_STRICT_TOOL_CALLING is off (see Config.LegacyToolChoice);
	// supportsRequiredAndNamed applies that.
	requiredAndNamed bool
	// structuralTag is the parser's structural_tag_model: the key of the
	// structural-tag builder that constrains its tool calls ("" for
	// parsers that keep vLLM's JSON-schema path).
	structuralTag string
	// needsSpecialTokens forces skip_special_tokens off when tools are
	// given and tool_choice is not "none" (the markers are special tokens).
	needsSpecialTokens bool
	// engineBased marks vLLM's ParserEngine adapters: with an engine-based
	// (or no) reasoning parser, vLLM runs them even for tool_choice "none"
	// and returns their content (calls dropped).
	engineBased bool
	// ownIDs marks a parser whose tool call ids are the ones vLLM sends
	// (mistral's nine alphanumerics, which Mistral's chat templates check
	// on the next turn); other machines' ids are placeholders the server
	// replaces with vLLM's chatcmpl-tool-<uuid>.
	ownIDs bool
}

// reasoningParsers is every reasoning parser, keyed by vLLM's name
// (--reasoning-parser); read-only.
var reasoningParsers = map[string]reasoningInfo{
	"deepseek_r1":  {newMachine: thinkingFactory(r1Spec, true)},
	"deepseek_v3":  {newMachine: newDeepSeekV3Reasoning},
	"ernie45":      {newMachine: newErnie45Reasoning},
	"glm45":        {newMachine: engineFactory(glm45Spec), needsSpecialTokens: true, engineBased: true},
	"granite":      {newMachine: newGraniteReasoning},
	"hunyuan_a13b": {newMachine: newHunyuanReasoningMachine},
	"kimi_k2":      {newMachine: engineFactory(kimiK2Spec), needsSpecialTokens: true, engineBased: true},
	"minimax_m2":   {newMachine: engineFactory(minimaxM2Spec), needsSpecialTokens: true, engineBased: true},
	// vLLM's IdentityReasoningParser with the "<think>" the template
	// swallowed put back.
	"minimax_m2_append_think": {newMachine: newAppendThink, engineBased: true},
	"mistral":                 {newMachine: newMistralReasoning},
	"olmo3":                   {newMachine: newOlmo3Reasoning},
	"openai_gptoss":           {newMachine: newHarmonyReasoning, needsSpecialTokens: true},
	"qwen3":                   {newMachine: engineFactory(qwen3Spec), needsSpecialTokens: true, engineBased: true},
	"seed_oss":                {newMachine: engineFactory(seedOSSSpec), needsSpecialTokens: true, engineBased: true},
	"step3":                   {newMachine: thinkingFactory(step3Spec, false)},
}

// toolParsers is every tool parser, keyed by vLLM's name
// (--tool-call-parser); read-only. Parsers with a structural tag parse
// required and named tool_choice like auto under vLLM's default strict
// tool calling (supportsRequiredAndNamed).
var toolParsers = map[string]toolInfo{
	"deepseek_v3":     {newMachine: newDeepSeekV3, requiredAndNamed: true, structuralTag: "deepseek_r1"},
	"deepseek_v31":    {newMachine: newDeepSeekV31, requiredAndNamed: true, structuralTag: "deepseek_v3_1"},
	"glm45":           {newMachine: newGLM47, needsSpecialTokens: true, engineBased: true, structuralTag: "glm_4_7"},
	"glm47":           {newMachine: newGLM47, needsSpecialTokens: true, engineBased: true, structuralTag: "glm_4_7"},
	"granite":         {newMachine: newGranite, requiredAndNamed: true},
	"granite4":        {newMachine: newGranite4, needsSpecialTokens: true, requiredAndNamed: true},
	"hermes":          {newMachine: newHermes, needsSpecialTokens: true, requiredAndNamed: true, structuralTag: "hermes"},
	"hunyuan_a13b":    {newMachine: newHunyuanA13B, requiredAndNamed: true},
	"internlm":        {newMachine: newInternLM, needsSpecialTokens: true, requiredAndNamed: true},
	"jamba":           {newMachine: newJamba, needsSpecialTokens: true, requiredAndNamed: true},
	"kimi_k2":         {newMachine: newKimiK2, needsSpecialTokens: true, engineBased: true, requiredAndNamed: true, structuralTag: "kimi"},
	"llama3_json":     {newMachine: newLlama3JSON, requiredAndNamed: true, structuralTag: "llama"},
	"llama4_pythonic": {newMachine: newLlama4Pythonic, requiredAndNamed: true},
	"minimax_m2":      {newMachine: newMinimaxM2, needsSpecialTokens: true, engineBased: true, requiredAndNamed: true, structuralTag: "minimax"},
	"mistral":         {newMachine: newMistral, needsSpecialTokens: true, requiredAndNamed: true, ownIDs: true},
	"openai":          {newMachine: newHarmonyTools, needsSpecialTokens: true},
	"phi4_mini_json":  {newMachine: newPhi4MiniJSON, requiredAndNamed: true},
	"pythonic":        {newMachine: newPythonic, requiredAndNamed: true},
	"qwen3_coder":     {newMachine: newQwen3Coder, needsSpecialTokens: true, engineBased: true, requiredAndNamed: true, structuralTag: "qwen_3_coder"},
	"qwen3_xml":       {newMachine: newQwen3Coder, needsSpecialTokens: true, engineBased: true, requiredAndNamed: true, structuralTag: "qwen_3_coder"},
	"seed_oss":        {newMachine: newSeedOSS, needsSpecialTokens: true, engineBased: true, requiredAndNamed: true},
	"step3":           {newMachine: newStep3, needsSpecialTokens: true, requiredAndNamed: true},
	"xlam":            {newMachine: newXLAM, requiredAndNamed: true},
}

// ReasoningParsers lists the registered reasoning parser names.
func ReasoningParsers() []string { return keys(reasoningParsers) }

// ToolParsers lists the registered tool parser names.
func ToolParsers() []string { return keys(toolParsers) }

// HasReasoning reports whether a reasoning parser is registered.
func HasReasoning(name string) bool { _, ok := reasoningParsers[name]; return ok }

// HasTool reports whether a tool parser is registered.
func HasTool(name string) bool { _, ok := toolParsers[name]; return ok }

// StructuralTagModel is the structural_tag_model of a tool parser ("" when
// it has none or is not registered).
func StructuralTagModel(name string) string { return toolParsers[name].structuralTag }

// supportsRequiredAndNamed is the effective supports_required_and_named:
// vLLM's ToolParser.__init_subclass__ clears it for parsers with a
// structural_tag_model while strict tool calling is enforced.
func (info toolInfo) supportsRequiredAndNamed(legacy bool) bool {
	return info.requiredAndNamed && (info.structuralTag == "" || legacy)
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

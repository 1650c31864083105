package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/model"
	"github.com/vrender/vrender/parsers"
	"github.com/vrender/vrender/protocol"
	"github.com/vrender/vrender/render"
)

// renderFlags are vLLM's templating and sampling-default flags, shared by
// `vrender serve` and `vrender render`.
type renderFlags struct {
	chatTemplate                   string
	contentFormat                  string
	trustRequestChatTemplate       bool
	defaultChatTemplateKwargs      string
	enableAutoToolChoice           bool
	toolCallParser                 string
	reasoningParser                string
	excludeToolsWhenToolChoiceNone bool
	generationConfig               string
	overrideGenerationConfig       string
	maxLogprobs                    int
	// maxPromptBytes is serve's --max-prompt-bytes, resolved (0: none);
	// `vrender render` reads local files and sets no limit.
	maxPromptBytes int
	media          mediaFlags
}

func (f *renderFlags) register(c *command) {
	fs := c.fs
	fs.StringVar(&f.chatTemplate, "chat-template", "", "chat template `FILE_OR_TEMPLATE` replacing the model's (a file path or the template itself)")
	fs.StringVar(&f.contentFormat, "chat-template-content-format", render.FormatAuto, "how message content reaches the template: auto, string or openai")
	fs.BoolVar(&f.trustRequestChatTemplate, "trust-request-chat-template", false, "accept a chat_template sent in requests")
	fs.StringVar(&f.defaultChatTemplateKwargs, "default-chat-template-kwargs", "", "`JSON` object of chat template kwargs; request kwargs win")
	fs.BoolVar(&f.enableAutoToolChoice, "enable-auto-tool-choice", false, "accept tool_choice \"auto\" (requires --tool-call-parser)")
	fs.StringVar(&f.toolCallParser, "tool-call-parser", "", "tool call parser `NAME` (vLLM's names: hermes, qwen3_xml, llama3_json, …)")
	fs.StringVar(&f.reasoningParser, "reasoning-parser", "", "reasoning parser `NAME` (vLLM's names: qwen3, deepseek_r1, openai_gptoss, …; a gpt-oss model gets\n"+
		"openai_gptoss when unset, as in vllm serve); checked here, used by derender")
	fs.BoolVar(&f.excludeToolsWhenToolChoiceNone, "exclude-tools-when-tool-choice-none", false, "leave tools out of the prompt when tool_choice is \"none\"")
	fs.StringVar(&f.generationConfig, "generation-config", render.GenerationConfigAuto, "where sampling defaults come from (`SOURCE`): auto (the model's generation_config.json), vllm (none) or a directory holding one")
	fs.StringVar(&f.overrideGenerationConfig, "override-generation-config", "", "`JSON` object overriding generation config keys, e.g. {\"temperature\": 0.5}")
	fs.IntVar(&f.maxLogprobs, "max-logprobs", 20, "largest number of logprobs per token (`N`; -1: vocabulary size); vLLM checks it when derendering, the render endpoints ignore it")
	f.media.register(c)
}

// Parser names vLLM registers (vllm/tool_parsers and vllm/reasoning at
// bf578e1). vrender accepts only the parsers it registers (vLLM's message,
// listing those); a vLLM name it lacks gets that said in a second sentence.
var (
	toolCallParsers = []string{
		"deepseek_v3", "deepseek_v31", "deepseek_v32", "deepseek_v4", "cohere_command3", "cohere_command4",
		"ernie45", "glm45", "glm47", "granite", "granite4", "hermes", "poolside_v1", "hunyuan_a13b", "hy_v3",
		"internlm", "jamba", "lfm2", "kimi_k2", "llama3_json", "llama4_json", "llama4_pythonic", "longcat",
		"mimo", "minimax_m2", "minimax_m3", "minicpm5", "mistral", "olmo3", "openai", "phi4_mini_json",
		"pythonic", "qwen3_coder", "qwen3_xml", "seed_oss", "step3", "step3p5", "inkling", "xlam",
		"gigachat3", "functiongemma", "gemma4", "apertus",
	}
	reasoningParsers = []string{
		"deepseek_r1", "deepseek_v3", "deepseek_v4", "poolside_v1", "cohere_command3", "cohere_command4",
		"ernie45", "gemma4", "glm45", "glm47", "openai_gptoss", "granite", "holo2", "hunyuan_a13b", "hy_v3",
		"kimi_k2", "mimo", "minimax_m2", "minimax_m2_append_think", "minimax_m3", "mistral", "nemotron_v3",
		"olmo3", "qwen3", "seed_oss", "step3", "step3p5", "inkling",
	}
)

// vllmOnly is the note for a parser name vLLM has and vrender does not.
func vllmOnly(vllmNames []string, name string) string {
	if !slices.Contains(vllmNames, name) {
		return ""
	}
	return "; " + name + " is a vLLM parser that vrender does not implement"
}

// validate applies vLLM's start-up checks with its messages.
func (f *renderFlags) validate() error {
	if f.enableAutoToolChoice && f.toolCallParser == "" {
		return usagef("Error: --enable-auto-tool-choice requires --tool-call-parser")
	}
	// vLLM checks the name only with --enable-auto-tool-choice; without it
	// vrender would still fail at start-up (the derender tier builds the
	// parser), so the same message with the valid names comes first.
	if f.toolCallParser != "" && !parsers.HasTool(f.toolCallParser) {
		return usagef("invalid tool call parser: %s (chose from { %s })%s", f.toolCallParser,
			strings.Join(parsers.ToolParsers(), ","), vllmOnly(toolCallParsers, f.toolCallParser))
	}
	if f.reasoningParser != "" && !parsers.HasReasoning(f.reasoningParser) {
		return usagef("invalid reasoning parser: %s (chose from { %s })%s", f.reasoningParser,
			strings.Join(parsers.ReasoningParsers(), ","), vllmOnly(reasoningParsers, f.reasoningParser))
	}
	switch f.contentFormat {
	case render.FormatAuto, render.FormatString, render.FormatOpenAI:
	default:
		return usagef("--chat-template-content-format must be auto, string or openai, got %q", f.contentFormat)
	}
	for name, v := range map[string]string{
		"default-chat-template-kwargs": f.defaultChatTemplateKwargs,
		"override-generation-config":   f.overrideGenerationConfig,
	} {
		if v == "" {
			continue
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(v), &obj); err != nil || obj == nil {
			return usagef("--%s must be a JSON object, got %q", name, v)
		}
	}
	return nil
}

// generator builds the renderer and generator the flags describe for m.
func (f *renderFlags) generator(m *model.Model) (*render.Generator, error) {
	if err := f.validate(); err != nil {
		return nil, err
	}
	var kwargs json.RawMessage
	if f.defaultChatTemplateKwargs != "" {
		kwargs = json.RawMessage(f.defaultChatTemplateKwargs)
	}
	var hm *render.HarmonyConfig
	if m.UsesHarmony() {
		var err error
		if hm, err = harmonyConfig(); err != nil {
			return nil, err
		}
	}
	images, err := f.media.imageConfig(m)
	if err != nil {
		return nil, err
	}
	r, err := render.New(m, render.Config{
		ChatTemplate:                   f.chatTemplate,
		ContentFormat:                  f.contentFormat,
		TrustRequestChatTemplate:       f.trustRequestChatTemplate,
		DefaultChatTemplateKwargs:      kwargs,
		ExcludeToolsWhenToolChoiceNone: f.excludeToolsWhenToolChoiceNone,
		Harmony:                        hm,
		Images:                         images,
	})
	if err != nil {
		return nil, err
	}
	var override json.RawMessage
	if f.overrideGenerationConfig != "" {
		override = json.RawMessage(f.overrideGenerationConfig)
	}
	d, err := render.LoadSamplingDefaults(m, f.generationConfig, override)
	if err != nil {
		return nil, err
	}
	return render.NewGenerator(r, m.MaxModelLen, render.GeneratorConfig{
		EnableAutoToolChoice:     f.enableAutoToolChoice,
		ToolCallParser:           f.toolCallParser,
		LegacyToolChoice:         legacyToolChoice(),
		TrustRequestChatTemplate: f.trustRequestChatTemplate,
		Defaults:                 d,
		MaxPromptBytes:           f.maxPromptBytes,
	}), nil
}

// parserConfig is the parser selection the flags make for m. A Harmony
// model (gpt-oss) gets reasoning parser openai_gptoss when none is named,
// as vllm serve's GptOssForCausalLMConfig sets it.
func (f *renderFlags) parserConfig(m *model.Model) parsers.Config {
	cfg := parsers.Config{ReasoningParser: f.reasoningParser, ToolParser: f.toolCallParser,
		EnableAutoToolChoice: f.enableAutoToolChoice, LegacyToolChoice: legacyToolChoice()}
	if cfg.ReasoningParser == "" && m.UsesHarmony() {
		cfg.ReasoningParser = "openai_gptoss"
	}
	return cfg
}

// harmonyConfig reads vLLM's gpt-oss environment: VLLM_SYSTEM_START_DATE
// and VLLM_GPT_OSS_HARMONY_SYSTEM_INSTRUCTIONS (bool(int(...)) in
// vllm/envs.py, so anything but an integer is an error).
func harmonyConfig() (*render.HarmonyConfig, error) {
	hc := &render.HarmonyConfig{StartDate: os.Getenv("VLLM_SYSTEM_START_DATE")}
	if v, ok := os.LookupEnv("VLLM_GPT_OSS_HARMONY_SYSTEM_INSTRUCTIONS"); ok {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return nil, usagef("VLLM_GPT_OSS_HARMONY_SYSTEM_INSTRUCTIONS must be an integer, got %q", v)
		}
		hc.SystemInstructions = n != 0
	}
	return hc, nil
}

// legacyToolChoice reads VLLM_ENFORCE_STRICT_TOOL_CALLING as vllm/envs.py
// does: strict (structural tags) unless it is set to something other than
// "true" or "1", case-insensitively.
func legacyToolChoice() bool {
	v, ok := os.LookupEnv("VLLM_ENFORCE_STRICT_TOOL_CALLING")
	if !ok {
		return false
	}
	v = strings.ToLower(v)
	return v != "true" && v != "1"
}

// runRender is `vrender render`: a chat (or completion) request on stdin,
// the GenerateRequest the render endpoint would answer on stdout.
func runRender(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	c := newCommand("render", "--model MODEL [--chat-template F] [--text] [--completion] < request.json",
		"Read a chat completion request (vLLM's /v1/chat/completions/render body) from stdin and\n"+
			"print the GenerateRequest vLLM's render server answers: token IDs and sampling params.\n"+
			"With --text, print the rendered prompt string instead, exactly (no newline added): what\n"+
			"the chat template made of the conversation.\n"+
			"With --completion, stdin is a completion request (/v1/completions/render) and the output\n"+
			"is a JSON array with one GenerateRequest per prompt.\n"+
			"A request vLLM would refuse prints vLLM's error message and exits with status 1.")
	var (
		mf         modelFlags
		rf         renderFlags
		text       bool
		completion bool
	)
	mf.register(c, true)
	rf.register(c)
	c.fs.BoolVar(&text, "text", false, "print the rendered prompt text instead of the GenerateRequest")
	c.fs.BoolVar(&completion, "completion", false, "stdin is a completion request")
	rest, err := c.parse(args, stdout)
	if err != nil {
		return err
	}
	switch {
	case len(rest) > 0:
		return usagef("unexpected argument %q (the model goes in --model)", rest[0])
	case text && completion:
		return usagef("--text renders chat requests; a completion prompt is its own text")
	}
	if err := rf.validate(); err != nil {
		return err
	}
	// Malformed input fails before the model is loaded, which takes a while.
	data, err := io.ReadAll(stdin)
	if err != nil {
		return fmt.Errorf("read stdin: %w", err)
	}
	var (
		chatReq       *protocol.ChatCompletionRequest
		completionReq *protocol.CompletionRequest
	)
	if completion {
		completionReq, err = protocol.DecodeCompletionRequest(data)
	} else {
		chatReq, err = protocol.DecodeChatCompletionRequest(data)
	}
	if err != nil {
		return fmt.Errorf("stdin: %w", err)
	}
	m, err := mf.load(ctx)
	if err != nil {
		return err
	}
	g, err := rf.generator(m)
	if err != nil {
		return err
	}
	var out any
	if completion {
		reqs, err := g.RenderCompletion(ctx, completionReq)
		if err != nil {
			return renderCLIError(err)
		}
		if reqs == nil {
			reqs = []protocol.GenerateRequest{}
		}
		out = reqs
	} else {
		res, err := g.RenderChat(ctx, chatReq)
		if err != nil {
			return renderCLIError(err)
		}
		if text {
			_, err = io.WriteString(stdout, res.Prompt.Text)
			return err
		}
		out = res.Request
	}
	b, err := protocol.MarshalJSON(out)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", b)
	return err
}

// renderCLIError words a refused request as the error body's message.
func renderCLIError(err error) error {
	var bad *render.BadRequestError
	if errors.As(err, &bad) {
		return fmt.Errorf("400 BadRequestError: %s", pylax.SanitizeMessage(bad.Message))
	}
	var img *render.ImageError
	if errors.As(err, &img) {
		return fmt.Errorf("%d %s: %s", img.Status, img.Type, pylax.SanitizeMessage(img.Message))
	}
	return err
}

package render

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vrender/vrender/internal/telemetry"
	"github.com/vrender/vrender/model"
	"github.com/vrender/vrender/render/jinja"
	"github.com/vrender/vrender/tokenizer"
)

// Config holds the server flags that shape rendering.
type Config struct {
	// ChatTemplate is --chat-template: a file path or an inline template;
	// "" means the model's own.
	ChatTemplate string
	// ContentFormat is --chat-template-content-format: auto, string or openai
	// ("" means auto).
	ContentFormat string
	// TrustRequestChatTemplate is --trust-request-chat-template.
	TrustRequestChatTemplate bool
	// DefaultChatTemplateKwargs is --default-chat-template-kwargs as the raw
	// JSON object (key order kept); request kwargs win over it.
	DefaultChatTemplateKwargs json.RawMessage
	// ExcludeToolsWhenToolChoiceNone is --exclude-tools-when-tool-choice-none.
	ExcludeToolsWhenToolChoiceNone bool
	// Harmony, when set, renders chat requests as vLLM does for gpt-oss
	// (config.json model_type gpt_oss): no chat template.
	Harmony *HarmonyConfig
	// Now is the clock strftime_now reads; nil means time.Now.
	Now func() time.Time
	// Images, when set, renders image parts for a model with an image
	// processor (a preprocessor_config.json); text-only models and a nil
	// Images refuse them.
	Images *ImageConfig
}

// compiled is a template compiled once, with what vLLM derives from its
// source.
type compiled struct {
	src  string
	tmpl *jinja.Template
	err  error // compile error, reported on use as vLLM does
	// format is the auto-detected content format.
	format string
	// usesDeveloper: the template handles developer messages itself.
	usesDeveloper bool
	// mentionsContent: "content" occurs in the source (transformers'
	// continue_final_message check).
	mentionsContent bool
}

func compileTemplate(src string) *compiled {
	t, err := jinja.Compile(src, jinja.Options{})
	return &compiled{
		src:             src,
		tmpl:            t,
		err:             err,
		format:          detectContentFormat(src),
		usesDeveloper:   mentionsDeveloper(src),
		mentionsContent: strings.Contains(src, "content"),
	}
}

// Renderer renders chat requests for one model. It is safe for concurrent
// use.
type Renderer struct {
	cfg         Config
	tok         *tokenizer.Tokenizer
	maxModelLen int
	// server is --chat-template, nil when not given.
	server *compiled
	// named are the model's templates by name ("default", "tool_use", …).
	named map[string]*compiled
	// specials are the tokenizer's special tokens that are set, in
	// transformers' special_tokens_map order.
	specials      []specialToken
	defaultKwargs *node
	// images renders image parts; nil refuses them.
	images *images
	// post, when set, replaces the tokenizer.json post-processor as
	// transformers' Llama and Gemma tokenizers do.
	post *specialsOverride

	mu       sync.Mutex
	requests map[string]*compiled // request templates (trusted servers only)

	// stages times template rendering and tokenization (SetStages).
	stages atomic.Pointer[telemetry.Stages]
	// tmplHits and tmplMisses count request-supplied templates found in,
	// and compiled into, the requests cache.
	tmplHits, tmplMisses atomic.Int64
}

// SetStages makes the renderer time its template and tokenize stages into
// st (nil stops timing). Safe to call while serving.
func (r *Renderer) SetStages(st *telemetry.Stages) { r.stages.Store(st) }

// TemplateCacheStats reports how many request-supplied chat templates were
// found compiled in the cache (hits) and how many were compiled (misses).
// The server's and model's templates are compiled once at start and are
// not counted.
func (r *Renderer) TemplateCacheStats() (hits, misses int64) {
	return r.tmplHits.Load(), r.tmplMisses.Load()
}

type specialToken struct{ name, value string }

// maxRequestTemplates bounds the cache of request-supplied templates.
const maxRequestTemplates = 32

// New prepares a renderer for m: it loads --chat-template and compiles every
// template once.
func New(m *model.Model, cfg Config) (*Renderer, error) {
	if m == nil || m.Tokenizer == nil {
		return nil, errors.New("render: model has no tokenizer")
	}
	switch cfg.ContentFormat {
	case "":
		cfg.ContentFormat = FormatAuto
	case FormatAuto, FormatString, FormatOpenAI:
	default:
		return nil, fmt.Errorf("render: --chat-template-content-format must be auto, string or openai, got %q", cfg.ContentFormat)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	r := &Renderer{
		cfg:         cfg,
		tok:         m.Tokenizer,
		maxModelLen: m.MaxModelLen,
		named:       map[string]*compiled{},
		requests:    map[string]*compiled{},
	}
	if cfg.ChatTemplate != "" {
		src, err := loadChatTemplate(cfg.ChatTemplate)
		if err != nil {
			return nil, err
		}
		r.server = compileTemplate(src)
		if r.server.err != nil {
			return nil, fmt.Errorf("render: --chat-template: %w", r.server.err)
		}
	}
	names := make([]string, 0, len(m.ChatTemplates))
	for name := range m.ChatTemplates {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		c := compileTemplate(m.ChatTemplates[name])
		if c.err != nil {
			slog.Warn("model chat template does not compile; requests using it will fail",
				"model", m.Path, "template", name, "err", c.err)
		}
		r.named[name] = c
	}
	tc := m.TokenizerConfig
	for _, st := range []specialToken{
		{"bos_token", tc.BOSToken}, {"eos_token", tc.EOSToken}, {"unk_token", tc.UNKToken},
		{"sep_token", tc.SEPToken}, {"pad_token", tc.PADToken}, {"cls_token", tc.CLSToken},
		{"mask_token", tc.MaskToken},
	} {
		if st.value != "" {
			r.specials = append(r.specials, st)
		}
	}
	if len(cfg.DefaultChatTemplateKwargs) > 0 {
		n, err := parseJSON(cfg.DefaultChatTemplateKwargs)
		if err != nil || n.Kind != jObj {
			return nil, fmt.Errorf("render: --default-chat-template-kwargs must be a JSON object")
		}
		r.defaultKwargs = n
	}
	r.post = postProcessorOverride(m)
	var err error
	if r.images, err = newImages(m, cfg.Images); err != nil {
		return nil, err
	}
	return r, nil
}

// loadChatTemplate is vLLM's load_chat_template: a readable file, else the
// argument itself when it looks like a template.
func loadChatTemplate(arg string) (string, error) {
	data, err := os.ReadFile(arg)
	if err == nil {
		return string(data), nil
	}
	if !strings.ContainsAny(arg, "{}\n") {
		//lint:ignore ST1005 vLLM's message, byte for byte
		return "", fmt.Errorf("The supplied chat template (%s) looks like a file path, but it failed to be opened. Reason: %v", arg, err)
	}
	return arg, nil
}

// chooseTemplate is vLLM's resolve_chat_template followed by transformers'
// get_chat_template: the request's template (trusted servers only), else
// --chat-template, else the model's (tool_use when tools are given).
func (r *Renderer) chooseTemplate(reqTemplate *string, hasTools bool) (*compiled, error) {
	if reqTemplate != nil {
		if !r.cfg.TrustRequestChatTemplate {
			return nil, badRequest("Chat template is passed with request, but --trust-request-chat-template is not set. Refused request with untrusted chat template.")
		}
		if c, ok := r.named[*reqTemplate]; ok {
			return c, nil
		}
		return r.requestTemplate(*reqTemplate), nil
	}
	if r.server != nil {
		return r.server, nil
	}
	switch {
	case len(r.named) == 0:
		return nil, badRequest("As of transformers v4.44, default chat template is no longer allowed, so you must provide a chat template if the tokenizer does not define one.")
	case hasTools && r.named["tool_use"] != nil:
		return r.named["tool_use"], nil
	case r.named["default"] != nil:
		return r.named["default"], nil
	}
	names := make([]string, 0, len(r.named))
	for n := range r.named {
		names = append(names, pyStrRepr(n))
	}
	sort.Strings(names)
	return nil, badRequest("This model has multiple chat templates with no default specified! Please either pass a chat template or the name of the template you wish to use to the `chat_template` argument. Available template names are [%s].", strings.Join(names, ", "))
}

// requestTemplate compiles a request's template, caching a few: clients that
// send one tend to send the same one every time.
func (r *Renderer) requestTemplate(src string) *compiled {
	r.mu.Lock()
	c, ok := r.requests[src]
	r.mu.Unlock()
	if ok {
		r.tmplHits.Add(1)
		return c
	}
	r.tmplMisses.Add(1)
	c = compileTemplate(src)
	r.mu.Lock()
	if len(r.requests) >= maxRequestTemplates {
		for k := range r.requests { // evict an arbitrary entry
			delete(r.requests, k)
			break
		}
	}
	r.requests[src] = c
	r.mu.Unlock()
	return c
}

package tokenizer

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"

	"github.com/vrender/vrender/internal/wire"
	"golang.org/x/text/unicode/norm"
)

type patternJSON struct {
	String *string `json:"String"`
	Regex  *string `json:"Regex"`
}

// componentJSON holds the fields of every supported normalizer,
// pre-tokenizer, post-processor and decoder; "type" says which apply.
type componentJSON struct {
	Type string `json:"type"`

	// Sequence
	Normalizers   []json.RawMessage `json:"normalizers"`
	Pretokenizers []json.RawMessage `json:"pretokenizers"`
	Processors    []json.RawMessage `json:"processors"`
	Decoders      []json.RawMessage `json:"decoders"`

	// Split, Replace
	Pattern  *patternJSON `json:"pattern"`
	Behavior string       `json:"behavior"`
	Invert   bool         `json:"invert"`
	Content  *string      `json:"content"`

	// ByteLevel
	AddPrefixSpace *bool `json:"add_prefix_space"`
	UseRegex       *bool `json:"use_regex"`

	// Metaspace
	Replacement   *string `json:"replacement"`
	PrependScheme *string `json:"prepend_scheme"`
	Split         *bool   `json:"split"`

	// Digits
	IndividualDigits bool `json:"individual_digits"`

	// CharDelimiterSplit
	Delimiter *string `json:"delimiter"`

	// Strip normalizer / Strip decoder
	StripLeft  bool `json:"strip_left"`
	StripRight bool `json:"strip_right"`
	Start      int  `json:"start"`
	Stop       int  `json:"stop"`

	// Prepend
	Prepend *string `json:"prepend"`

	// BertNormalizer
	CleanText          *bool `json:"clean_text"`
	HandleChineseChars *bool `json:"handle_chinese_chars"`
	StripAccents       *bool `json:"strip_accents"`
	Lowercase          *bool `json:"lowercase"`

	// TemplateProcessing
	Single        json.RawMessage                `json:"single"`
	SpecialTokens map[string]templateSpecialJSON `json:"special_tokens"`

	// RobertaProcessing, BertProcessing: ["token", id]
	Sep []json.RawMessage `json:"sep"`
	Cls []json.RawMessage `json:"cls"`

	// WordPiece, BPEDecoder, CTC decoders
	Prefix             *string `json:"prefix"`
	Cleanup            *bool   `json:"cleanup"`
	Suffix             *string `json:"suffix"`
	PadToken           *string `json:"pad_token"`
	WordDelimiterToken *string `json:"word_delimiter_token"`
}

type templateSpecialJSON struct {
	ID     string   `json:"id"`
	IDs    []int    `json:"ids"`
	Tokens []string `json:"tokens"`
}

// Load reads a tokenizer.json file.
func Load(path string) (*Tokenizer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	t, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// Parse builds a tokenizer from tokenizer.json bytes.
func Parse(data []byte) (*Tokenizer, error) {
	// The vocabulary and merges are most of the file: the model is read in
	// place by wire.Reader, and only the small sections go through
	// encoding/json.
	f := map[string][]byte{}
	var model *bpeModel
	r := wire.NewReader(data)
	err := r.Object(func(key string) error {
		if key == "model" {
			var err error
			if model, err = readModel(r); err != nil {
				return fmt.Errorf("model: %w", err)
			}
			return nil
		}
		raw, err := r.Raw()
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		f[key] = raw
		return nil
	})
	if err == nil {
		err = r.End()
	}
	if err != nil {
		return nil, fmt.Errorf("tokenizer: parse tokenizer.json: %w", err)
	}
	if v, ok := f["version"]; ok {
		var version string
		if err := json.Unmarshal(v, &version); err != nil || version != "1.0" {
			return nil, fmt.Errorf("tokenizer: unknown tokenizer.json version %s", v)
		}
	}
	if model == nil {
		return nil, fmt.Errorf("tokenizer: model: missing model")
	}
	if !isNull(f["truncation"]) || !isNull(f["padding"]) {
		// transformers resets both on every call it makes, and vLLM goes
		// through transformers: encode never truncates or pads here.
		slog.Debug("tokenizer: ignoring truncation/padding settings of tokenizer.json")
	}
	var added []AddedToken
	if raw := f["added_tokens"]; !isNull(raw) {
		if err := json.Unmarshal(raw, &added); err != nil {
			return nil, fmt.Errorf("tokenizer: added_tokens: %w", err)
		}
	}
	t := &Tokenizer{model: model}
	if t.normalizer, err = buildNormalizer(f["normalizer"]); err != nil {
		return nil, fmt.Errorf("tokenizer: normalizer: %w", err)
	}
	if t.preTokenizers, err = buildPreTokenizer(f["pre_tokenizer"]); err != nil {
		return nil, fmt.Errorf("tokenizer: pre_tokenizer: %w", err)
	}
	byteLevel := false
	for _, p := range t.preTokenizers {
		if _, ok := p.(*byteLevelPreTok); ok {
			byteLevel = true
		}
	}
	model.setPreTokenization(byteLevel)
	t.added = newAddedVocab(added, t.model, t.normalizer)
	if t.postProcessor, err = buildPostProcessor(f["post_processor"]); err != nil {
		return nil, fmt.Errorf("tokenizer: post_processor: %w", err)
	}
	if t.decoder, err = buildDecoder(f["decoder"]); err != nil {
		return nil, fmt.Errorf("tokenizer: decoder: %w", err)
	}
	t.init()
	return t, nil
}

func isNull(m []byte) bool {
	return len(m) == 0 || string(m) == "null"
}

func parseComponent(raw json.RawMessage) (*componentJSON, error) {
	var c componentJSON
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, err
	}
	if c.Type == "" {
		return nil, fmt.Errorf("component without a type: %.200s", raw)
	}
	return &c, nil
}

// readModel reads the model object at the scanner's position. The merges
// are resolved against the vocabulary as they are read when the file has
// its usual key order; otherwise they are kept raw and resolved at the end.
func readModel(r *wire.Reader) (*bpeModel, error) {
	fields := map[string][]byte{}
	var (
		v         *vocab
		merges    *mergeTable
		rawMerges []byte
		prefix    *string
	)
	err := r.Object(func(key string) error {
		var err error
		switch key {
		case "vocab":
			var arena []byte
			var ends []int
			var ids []int32
			if arena, ends, ids, err = readVocab(r); err != nil {
				return fmt.Errorf("vocab: %w", err)
			}
			v = newVocab(arena, ends, ids)
			return nil
		case "merges":
			if _, seen := fields["continuing_subword_prefix"]; v != nil && seen {
				if merges, err = resolveMerges(r, v, deref(prefix)); err != nil {
					return fmt.Errorf("merges: %w", err)
				}
				return nil
			}
		}
		raw, err := r.Raw()
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		fields[key] = raw
		if key == "continuing_subword_prefix" {
			if err := json.Unmarshal(raw, &prefix); err != nil {
				return fmt.Errorf("%s: %w", key, err)
			}
		}
		if key == "merges" {
			rawMerges = raw
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	typ := "BPE"
	var cfg bpeConfig
	var suffix *string
	var dropout *float64
	for _, field := range []struct {
		name string
		dst  any
	}{
		{"type", &typ}, {"dropout", &dropout}, {"unk_token", &cfg.unkToken}, {"end_of_word_suffix", &suffix},
		{"fuse_unk", &cfg.fuseUnk}, {"byte_fallback", &cfg.byteFallback}, {"ignore_merges", &cfg.ignoreMerges},
	} {
		if raw, ok := fields[field.name]; ok {
			if err := json.Unmarshal(raw, field.dst); err != nil {
				return nil, fmt.Errorf("%s: %w", field.name, err)
			}
		}
	}
	if _, ok := fields["type"]; !ok && merges == nil && rawMerges == nil {
		return nil, fmt.Errorf("model without a type")
	}
	if typ != "BPE" {
		return nil, fmt.Errorf("unsupported type %q", typ)
	}
	if dropout != nil && *dropout != 0 {
		// Dropout is random by design: no deterministic parity is possible.
		return nil, fmt.Errorf("BPE dropout %v is not supported", *dropout)
	}
	if v == nil || (merges == nil && rawMerges == nil) {
		return nil, fmt.Errorf("BPE model without vocab or merges")
	}
	cfg.prefix, cfg.suffix = deref(prefix), deref(suffix)
	if merges == nil {
		if merges, err = resolveMerges(wire.NewReader(rawMerges), v, cfg.prefix); err != nil {
			return nil, fmt.Errorf("merges: %w", err)
		}
	}
	return newBPE(cfg, v, merges), nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func buildNormalizer(raw json.RawMessage) (normalizer, error) {
	return buildComponent(raw, func(c *componentJSON) []json.RawMessage { return c.Normalizers },
		func(seq []normalizer) normalizer { return normalizerSeq(seq) }, normalizerOf)
}

func normalizerOf(c *componentJSON) (normalizer, error) {
	switch c.Type {
	case "NFC":
		return unicodeNormalizer{norm.NFC}, nil
	case "NFD":
		return unicodeNormalizer{norm.NFD}, nil
	case "NFKC":
		return unicodeNormalizer{norm.NFKC}, nil
	case "NFKD":
		return unicodeNormalizer{norm.NFKD}, nil
	case "Lowercase":
		return lowercaseNormalizer{}, nil
	case "StripAccents":
		return stripAccentsNormalizer{}, nil
	case "Strip":
		return stripNormalizer{left: c.StripLeft, right: c.StripRight}, nil
	case "Prepend":
		if c.Prepend == nil {
			return nil, fmt.Errorf("normalizer Prepend without prepend")
		}
		return prependNormalizer{prefix: *c.Prepend}, nil
	case "Replace":
		if c.Pattern == nil || c.Content == nil {
			return nil, fmt.Errorf("normalizer Replace needs pattern and content")
		}
		m, err := compilePattern(*c.Pattern)
		if err != nil {
			return nil, fmt.Errorf("normalizer Replace: %w", err)
		}
		return replaceNormalizer{pattern: m, content: *c.Content}, nil
	case "ByteLevel":
		return byteLevelNormalizer{}, nil
	case "BertNormalizer":
		b := bertNormalizer{cleanText: boolOr(c.CleanText, true), chineseChars: boolOr(c.HandleChineseChars, true),
			lowercase: boolOr(c.Lowercase, true)}
		b.stripAccents = boolOr(c.StripAccents, b.lowercase)
		return b, nil
	}
	return nil, fmt.Errorf("unknown normalizer type %q", c.Type)
}

// buildComponent reads one tokenizer.json component of a kind: null is
// none (the zero T), a Sequence is its items' components joined by seq
// (the null ones left out), and every other type is built by one.
func buildComponent[T any](raw json.RawMessage, items func(*componentJSON) []json.RawMessage,
	seq func([]T) T, one func(*componentJSON) (T, error)) (T, error) {
	var zero T
	if isNull(raw) {
		return zero, nil
	}
	c, err := parseComponent(raw)
	if err != nil {
		return zero, err
	}
	if c.Type != "Sequence" {
		return one(c)
	}
	var parts []T
	for i, sub := range items(c) {
		x, err := buildComponent(sub, items, seq, one)
		if err != nil {
			return zero, fmt.Errorf("sequence item %d: %w", i, err)
		}
		if any(x) != nil {
			parts = append(parts, x)
		}
	}
	return seq(parts), nil
}

func boolOr(p *bool, def bool) bool {
	if p == nil {
		return def
	}
	return *p
}

// buildPreTokenizer returns the pre-tokenizers to apply in order; nested
// Sequences are flattened since each step applies to every piece anyway.
func buildPreTokenizer(raw json.RawMessage) ([]preTokenizer, error) {
	if isNull(raw) {
		return nil, nil
	}
	c, err := parseComponent(raw)
	if err != nil {
		return nil, err
	}
	one := func(p preTokenizer) ([]preTokenizer, error) { return []preTokenizer{p}, nil }
	switch c.Type {
	case "Sequence":
		var seq []preTokenizer
		for i, sub := range c.Pretokenizers {
			ps, err := buildPreTokenizer(sub)
			if err != nil {
				return nil, fmt.Errorf("sequence item %d: %w", i, err)
			}
			seq = append(seq, ps...)
		}
		return seq, nil
	case "Split":
		if c.Pattern == nil {
			return nil, fmt.Errorf("pre-tokenizer Split without pattern")
		}
		m, err := compilePattern(*c.Pattern)
		if err != nil {
			return nil, fmt.Errorf("pre-tokenizer Split: %w", err)
		}
		b, err := parseSplitBehavior(c.Behavior)
		if err != nil {
			return nil, fmt.Errorf("pre-tokenizer Split: %w", err)
		}
		return one(&splitPreTok{m: m, behavior: b, invert: c.Invert})
	case "ByteLevel":
		p := &byteLevelPreTok{addPrefixSpace: boolOr(c.AddPrefixSpace, true)}
		if boolOr(c.UseRegex, true) {
			if p.re, err = compilePattern(patternJSON{Regex: new(gpt2Pattern)}); err != nil {
				return nil, err
			}
		}
		return one(p)
	case "Metaspace":
		p := &metaspacePreTok{repl: '▁', scheme: prependAlways, splitOn: boolOr(c.Split, true)}
		if c.Replacement != nil {
			r := []rune(*c.Replacement)
			if len(r) != 1 {
				return nil, fmt.Errorf("metaspace replacement %q is not one character", *c.Replacement)
			}
			p.repl = r[0]
		}
		p.replStr = string(p.repl)
		if p.scheme, err = parsePrependScheme(c); err != nil {
			return nil, err
		}
		return one(p)
	case "Digits":
		return one(&digitsPreTok{individual: c.IndividualDigits})
	case "Whitespace":
		return one(whitespacePreTok{})
	case "WhitespaceSplit":
		return one(whitespaceSplitPreTok{})
	case "Punctuation":
		b := splitIsolated
		if c.Behavior != "" {
			if b, err = parseSplitBehavior(c.Behavior); err != nil {
				return nil, fmt.Errorf("pre-tokenizer Punctuation: %w", err)
			}
		}
		return one(&punctuationPreTok{behavior: b})
	case "BertPreTokenizer":
		return one(bertPreTok{})
	case "CharDelimiterSplit":
		if c.Delimiter == nil || len([]rune(*c.Delimiter)) != 1 {
			return nil, fmt.Errorf("CharDelimiterSplit needs a one-character delimiter")
		}
		return one(&charDelimiterPreTok{delim: []rune(*c.Delimiter)[0]})
	}
	return nil, fmt.Errorf("unknown pre-tokenizer type %q", c.Type)
}

// gpt2Pattern is the regex of the ByteLevel pre-tokenizer when use_regex is set.
const gpt2Pattern = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`

// parsePrependScheme reads Metaspace's prepend_scheme, honouring the legacy
// add_prefix_space field as HF does.
func parsePrependScheme(c *componentJSON) (prependScheme, error) {
	s := prependAlways
	if c.PrependScheme != nil {
		switch *c.PrependScheme {
		case "always":
			s = prependAlways
		case "first":
			s = prependFirst
		case "never":
			s = prependNever
		default:
			return 0, fmt.Errorf("unknown prepend_scheme %q", *c.PrependScheme)
		}
	}
	if c.AddPrefixSpace != nil && !*c.AddPrefixSpace {
		if s != prependNever && c.PrependScheme != nil {
			return 0, fmt.Errorf("add_prefix_space does not match declared prepend_scheme")
		}
		s = prependNever
	}
	return s, nil
}

func buildPostProcessor(raw json.RawMessage) (postProcessor, error) {
	return buildComponent(raw, func(c *componentJSON) []json.RawMessage { return c.Processors },
		func(seq []postProcessor) postProcessor { return processorSeq(seq) }, postProcessorOf)
}

func postProcessorOf(c *componentJSON) (postProcessor, error) {
	switch c.Type {
	case "ByteLevel":
		return byteLevelProcessor{}, nil
	case "TemplateProcessing":
		return buildTemplate(c)
	case "RobertaProcessing", "BertProcessing":
		cls, err := tokenIDPair(c.Cls)
		if err != nil {
			return nil, fmt.Errorf("%s cls: %w", c.Type, err)
		}
		sep, err := tokenIDPair(c.Sep)
		if err != nil {
			return nil, fmt.Errorf("%s sep: %w", c.Type, err)
		}
		return clsSepProcessor{cls: cls, sep: sep}, nil
	}
	return nil, fmt.Errorf("unknown post-processor type %q", c.Type)
}

// tokenIDPair reads a ["token", id] pair.
func tokenIDPair(raw []json.RawMessage) (int, error) {
	var id int
	if len(raw) != 2 {
		return 0, fmt.Errorf("expected [token, id]")
	}
	if err := json.Unmarshal(raw[1], &id); err != nil {
		return 0, err
	}
	return id, nil
}

// buildTemplate reads TemplateProcessing's single template, a list of
// {"Sequence": {...}} and {"SpecialToken": {...}} objects.
func buildTemplate(c *componentJSON) (postProcessor, error) {
	type pieceID struct {
		ID string `json:"id"`
	}
	var items []struct {
		Sequence     *pieceID `json:"Sequence"`
		SpecialToken *pieceID `json:"SpecialToken"`
	}
	if err := json.Unmarshal(c.Single, &items); err != nil {
		return nil, fmt.Errorf("TemplateProcessing single: %w", err)
	}
	p := &templateProcessor{}
	for _, it := range items {
		switch {
		case it.Sequence != nil && it.SpecialToken == nil:
			p.single = append(p.single, templatePiece{sequence: true})
		case it.SpecialToken != nil && it.Sequence == nil:
			st, ok := c.SpecialTokens[it.SpecialToken.ID]
			if !ok {
				return nil, fmt.Errorf("TemplateProcessing: missing special token %q", it.SpecialToken.ID)
			}
			p.single = append(p.single, templatePiece{ids: st.IDs})
		default:
			return nil, fmt.Errorf("TemplateProcessing: a piece must be one Sequence or one SpecialToken")
		}
	}
	return p, nil
}

func buildDecoder(raw json.RawMessage) (decoder, error) {
	return buildComponent(raw, func(c *componentJSON) []json.RawMessage { return c.Decoders },
		func(seq []decoder) decoder { return decoderSeq(seq) }, decoderOf)
}

func decoderOf(c *componentJSON) (decoder, error) {
	switch c.Type {
	case "ByteLevel":
		return byteLevelDecoder{}, nil
	case "Metaspace":
		d := metaspaceDecoder{repl: '▁'}
		if c.Replacement != nil {
			r := []rune(*c.Replacement)
			if len(r) != 1 {
				return nil, fmt.Errorf("metaspace replacement %q is not one character", *c.Replacement)
			}
			d.repl = r[0]
		}
		var err error
		if d.scheme, err = parsePrependScheme(c); err != nil {
			return nil, err
		}
		return d, nil
	case "ByteFallback":
		return byteFallbackDecoder{}, nil
	case "Fuse":
		return fuseDecoder{}, nil
	case "Strip":
		if c.Content == nil || len([]rune(*c.Content)) != 1 {
			return nil, fmt.Errorf("decoder Strip needs a one-character content")
		}
		return stripDecoder{content: []rune(*c.Content)[0], start: c.Start, stop: c.Stop}, nil
	case "Replace":
		if c.Pattern == nil || c.Content == nil {
			return nil, fmt.Errorf("decoder Replace needs pattern and content")
		}
		m, err := compilePattern(*c.Pattern)
		if err != nil {
			return nil, fmt.Errorf("decoder Replace: %w", err)
		}
		return replaceDecoder{pattern: m, content: *c.Content}, nil
	case "WordPiece":
		d := wordPieceDecoder{prefix: "##", cleanup: boolOr(c.Cleanup, true)}
		if c.Prefix != nil {
			d.prefix = *c.Prefix
		}
		return d, nil
	case "BPEDecoder":
		d := bpeDecoder{suffix: "</w>"}
		if c.Suffix != nil {
			d.suffix = *c.Suffix
		}
		return d, nil
	case "CTC":
		d := ctcDecoder{pad: "<pad>", delimiter: "|", cleanup: boolOr(c.Cleanup, true)}
		if c.PadToken != nil {
			d.pad = *c.PadToken
		}
		if c.WordDelimiterToken != nil {
			d.delimiter = *c.WordDelimiterToken
		}
		return d, nil
	}
	return nil, fmt.Errorf("unknown decoder type %q", c.Type)
}

package tokenizer_test

// The parity corpus: a deterministic set of strings that exercises every
// part of a tokenizer pipeline that has bitten re-implementations before —
// added-token matching, normalizers, the pre-tokenizer regexes (contractions,
// digit runs, whitespace lookahead, Unicode classes), byte fallback and the
// byte-level alphabet. Hand-written samples come first; seeded random
// compositions of them and random valid UTF-8 make up the rest.

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/vrender/vrender/tokenizer"
)

// corpusCase is one corpus string with the category it was built for, so a
// mismatch report says which kind of input broke.
type corpusCase struct {
	Category string
	Text     string
}

// corpusMinCases is the acceptance bar: at least this many strings per model.
const corpusMinCases = 2000

// proseSamples are short hand-written texts, one or two sentences per
// language, in the scripts the tokenizers must handle.
var proseSamples = []string{
	// English
	"The quick brown fox jumps over the lazy dog. It wasn't the dog's fault, was it?",
	"I'm sure they'll say we've been here before; you'd think it'd be obvious by now.",
	// German
	"Größere Straßen führen über die Brücke nach Köln. Die Übergänge sind äußerst schön.",
	// French
	"L'été dernier, nous sommes allés à la plage où l'on a mangé des crêpes. Ça s'est bien passé !",
	// Spanish
	"¿Dónde está la estación? ¡El niño comió piña y jalapeños en el año 2023!",
	// Portuguese
	"Não sei se ele já chegou; a situação é complicada, mas vamos ver amanhã.",
	// Italian
	"Perché l'università è chiusa? Città, caffè e più di novantanove virtù.",
	// Dutch
	"Het is een mooie dag om te fietsen langs de grachten van Amsterdam.",
	// Polish
	"Zażółć gęślą jaźń. Łódź jest dużym miastem w środkowej Polsce.",
	// Turkish (dotted and dotless i)
	"İstanbul'da ılık bir akşam; Iğdır ve Şırnak'tan gelen çocuklar güldü.",
	// Vietnamese (stacked diacritics)
	"Tiếng Việt có nhiều dấu thanh: ả, ẫ, ặ, ề, ổ, ữ. Người Việt Nam rất hiếu khách.",
	// Russian
	"Съешь же ещё этих мягких французских булок, да выпей чаю. Ёлка стоит в углу.",
	// Ukrainian
	"Чуєш їх, доцю, га? Кумедна ж ти, прощайся без ґольфів!",
	// Greek
	"Ξεσκεπάζω την ψυχοφθόρα βδελυγμία. Η Αθήνα είναι η πρωτεύουσα της Ελλάδας.",
	// Arabic
	"مرحبا بالعالم! هذه جملة عربية قصيرة تحتوي على أرقام ١٢٣ وتشكيل: كَتَبَ.",
	// Hebrew
	"שלום עולם! זוהי משפט קצר בעברית עם ניקוד: שָׁלוֹם.",
	// Persian
	"سلام دنیا! این یک جمله فارسی است با اعداد ۱۲۳۴.",
	// Hindi (Devanagari)
	"नमस्ते दुनिया! हिन्दी में यह एक छोटा वाक्य है। क़िला और ज़रूर।",
	// Bengali
	"আমি বাংলায় গান গাই। এটি একটি ছোট বাক্য।",
	// Tamil
	"வணக்கம் உலகம்! இது ஒரு சிறிய வாக்கியம்.",
	// Thai (no spaces between words)
	"สวัสดีชาวโลก ภาษาไทยไม่มีการเว้นวรรคระหว่างคำ ๑๒๓",
	// Chinese (simplified and traditional)
	"你好，世界！今天天气很好，我们去公园散步吧。",
	"繁體中文測試：臺灣的夜市很熱鬧。",
	// Japanese (Hiragana, Katakana, Kanji boundaries)
	"こんにちは世界！カタカナとひらがなと漢字が混ざった文章です。ｶﾀｶﾅ半角も。",
	"東京タワーへ行きました。コンピューターのプログラミングは楽しいですね。",
	// Korean
	"안녕하세요 세계! 한국어 문장은 띄어쓰기를 사용합니다.",
	// Swahili, Indonesian
	"Habari ya dunia! Ninapenda kusoma vitabu vya Kiswahili.",
	"Selamat pagi! Saya suka makan nasi goreng di Jakarta.",
	// Georgian, Armenian, Amharic
	"გამარჯობა მსოფლიო! ქართული ანბანი ლამაზია.",
	"Բարեւ աշխարհ: Հայերենը հնագույն լեզու է:",
	"ሰላም ለዓለም! ይህ አጭር የአማርኛ ዓረፍተ ነገር ነው።",
	// Mixed scripts without separators
	"Hello世界мирعالم🌍שלוםनमस्ते",
	"iPhone15ProMax与Galaxy S24 Ultra对比：価格は¥159,800です",
}

// codeSamples are short programs in the languages a chat model sees most.
var codeSamples = []string{
	"package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfor i := 0; i < 10; i++ {\n\t\tfmt.Printf(\"%d: %q\\n\", i, \"héllo\")\n\t}\n}\n",
	"func (s *Server) handle(w http.ResponseWriter, r *http.Request) error {\n\tif err := json.NewDecoder(r.Body).Decode(&req); err != nil {\n\t\treturn fmt.Errorf(\"decode: %w\", err)\n\t}\n\treturn nil\n}",
	"def fib(n: int) -> int:\n    \"\"\"Return the n-th Fibonacci number.\"\"\"\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n\nprint(f\"{fib(30):,}\")\n",
	"class Foo(Base):\n    def __init__(self, **kwargs):\n        super().__init__()\n        self._x = kwargs.get('x', None)  # can't be None\n\n    @property\n    def x(self): return self._x\n",
	"const add = (a, b) => a + b;\nexport async function fetchJSON(url) {\n  const res = await fetch(url, { headers: { 'Accept': 'application/json' } });\n  if (!res.ok) throw new Error(`HTTP ${res.status}`);\n  return res.json();\n}\n",
	"fn main() {\n    let v: Vec<u32> = (1..=10).filter(|x| x % 2 == 0).collect();\n    println!(\"{:?} {}\", v, v.iter().sum::<u32>());\n}\n\nimpl<'a> Parser<'a> {\n    pub fn new(s: &'a str) -> Self { Self { s } }\n}\n",
	"SELECT u.id, u.name, COUNT(o.id) AS orders\nFROM users u\nLEFT JOIN orders o ON o.user_id = u.id\nWHERE u.created_at >= '2024-01-01' AND u.email LIKE '%@example.com'\nGROUP BY u.id, u.name\nHAVING COUNT(o.id) > 3\nORDER BY orders DESC;",
	"#include <stdio.h>\nint main(void) {\n    char buf[256];\n    while (fgets(buf, sizeof buf, stdin)) printf(\"%s\", buf);\n    return 0;\n}\n",
	"#!/bin/bash\nset -euo pipefail\nfor f in *.txt; do\n  wc -l \"$f\" | awk '{print $1}' >> counts.log\ndone\n",
	"<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><title>Test &amp; demo</title></head>\n<body><h1>Hi</h1><p class='x'>a&nbsp;b</p></body>\n</html>",
	"    indented with spaces\n\tindented with a tab\n\t\t  mixed\t \tindent\n",
	"x=1;y=2;z=x**y//3%4;print(x,y,z)!=None&&a||b>>=c<<=d",
}

// jsonSamples are JSON documents as they appear in tool calls and responses.
var jsonSamples = []string{
	`{"name": "get_weather", "arguments": {"location": "San Francisco, CA", "unit": "celsius"}}`,
	`{"type":"function","function":{"name":"search","description":"Search the web","parameters":{"type":"object","properties":{"query":{"type":"string"},"top_k":{"type":"integer","minimum":1,"maximum":50}},"required":["query"]}}}`,
	"[\n  {\"id\": 1, \"tags\": [\"a\", \"b\"], \"score\": 0.98765, \"ok\": true},\n  {\"id\": 2, \"tags\": [], \"score\": -1.5e-10, \"ok\": false, \"extra\": null}\n]",
	`{"text": "caf\u00e9 \ud83d\ude00 \"quoted\" back\\slash \n newline", "emoji": "😀", "cjk": "漢字"}`,
	`{"deep":{"deeper":{"deepest":{"value":[1,[2,[3,[4,[5]]]]]}}}}`,
}

// emojiSamples cover ZWJ sequences, skin tones, flags, keycaps, variation
// selectors and tag sequences.
var emojiSamples = []string{
	"👨‍👩‍👧‍👦", "👍🏽", "👩🏿‍💻", "🏳️‍🌈", "🇯🇵🇺🇸🇩🇪", "1️⃣#️⃣", "❤️‍🔥", "🧑‍🤝‍🧑",
	"🤷🏻‍♀️", "👁️‍🗨️", "🏴󠁧󠁢󠁳󠁣󠁴󠁿", "😀😃😄😁", "🫠🫡🪿", "✌🏾 peace", "☺︎ vs ☺️",
}

// contractionSamples target the (?i:'s|'t|…) alternatives, including case
// folding corner cases: ſ (long s) and K (Kelvin sign) fold to s and k.
var contractionSamples = []string{
	"DON'T", "don't", "Don't", "'S", "'s", "IT'S", "it's", "we'LL", "We'll", "they'Re",
	"I'M", "I'm", "you'VE", "he'D", "'T", "'ſ", "'ſt", "ſ", "it'ſ", "ß ẞ", "\u212a Kelvin 'K",
	"Don’t use curly apostrophes’s", "rock 'n' roll", "''s", "'''", "o'clock", "'ll've'd",
	"İ ı i̇ I", "ǅ ǈ ǋ Titlecase", "ﬁ ﬂ ﬃ ligatures",
}

// whitespaceKinds are every Unicode White_Space character plus look-alikes
// that are not white space, so \s classes are checked both ways.
var whitespaceKinds = []string{
	"\t", "\n", "\v", "\f", "\r", " ", "\u0085", "\u00a0", "\u1680",
	"\u2000", "\u2001", "\u2002", "\u2003", "\u2004", "\u2005", "\u2006",
	"\u2007", "\u2008", "\u2009", "\u200a", "\u2028", "\u2029", "\u202f",
	"\u205f", "\u3000",
	// Not White_Space, but often mistaken for it.
	"\u180e", "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad",
}

// digitSamples cover ASCII runs of every length class of \p{N}{1,3} and
// non-ASCII numbers (Nd, Nl, No).
var digitSamples = []string{
	"0", "12", "123", "1234", "12345", "1234567", "3.14159265358979", "1,000,000", "-42", "+7",
	"0x1F", "1e-9", "2024-06-01T12:34:56Z", "192.168.0.1", "$1,299.99", "50%", "v1.2.3",
	"١٢٣٤٥", "۱۲۳۴", "०१२३४", "১২৩", "๑๒๓", "１２３４", "²³¹⁴", "½¾⅓", "ⅠⅡⅢⅫ", "①②③", "𝟘𝟙𝟚", "〇一二三",
}

// normalizationSamples exercise NFC: decomposed input, singletons,
// composition exclusions, canonical reordering and Hangul jamo.
var normalizationSamples = []string{
	"e\u0301", "cafe\u0301", "A\u030a", "\u212b", "\u2126", "\u0958", "\u1100\u1161\u11a8",
	"a\u0323\u0302", "a\u0302\u0323", "\u1e9b\u0323", "\u0344", "\u0f73", "\u00c5\u0301",
	">\u0338", "<\u0338", "=\u0338", "\u0041\u0308\u0304", "o\u0308\u0301\u0327",
	"Ame\u0301lie\u0300", "\u30ab\u3099", "\u304b\u3099", "\uac00\u11a8", "ǆ", "x\u0300\u0301\u0302\u0303\u0304\u0305\u0306\u0307",
	"\u0301 leading combining mark", "Z\u0351\u036b\u0343\u036a\u0302\u036b\u033d\u034f\u0334\u0319\u0324\u031e\u0349\u035a\u032f\u031e\u0320\u034dA\u036b\u0357\u0334\u0362\u0335\u031c\u0330\u0354L",
}

// oddCharSamples are characters with special meaning to tokenizers or
// Unicode: the replacement character, noncharacters, private use, controls,
// the SentencePiece space '▁' and byte-level alphabet letters like 'Ġ'.
var oddCharSamples = []string{
	"\ufffd", "a\ufffdb", "\ufdd0\ufdef", "\ufffe\uffff", "\U0001fffe\U0010ffff", "\ue000\uf8ff",
	"\U000f0000\U0010fffd", "\x00", "a\x00b", "\x01\x02\x1b[31mred\x1b[0m", "\x7f\u0080\u009f",
	"▁", "▁▁hello▁world", "ĠHello Ġworld Ċ", "ĉĊċ", "<0x41>", "<0xE2><0x96><0x81>",
	"\u061c\u200e\u200f\u202a\u202e\u2066\u2069", "\U000e0001\U000e0041", "\ufe0f\ufe0e", "\U000E0100",
}

// chatTemplates are chat-format skeletons of the five model families; each
// is used for every model, so one model's markers are plain text to another.
var chatTemplates = []string{
	"<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n%s<|im_end|>\n<|im_start|>assistant\n",
	"<|im_start|>user\n%s<|im_end|>\n<|im_start|>assistant\n<think>\nLet me think about this.\n</think>\n\n<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call><|im_end|>",
	"<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023<|eot_id|><|start_header_id|>user<|end_header_id|>\n\n%s<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
	"<bos><start_of_turn>user\n%s<end_of_turn>\n<start_of_turn>model\n",
	"<|start|>system<|message|>You are ChatGPT.<|end|><|start|>user<|message|>%s<|end|><|start|>assistant<|channel|>analysis<|message|>",
	"<｜begin▁of▁sentence｜>You are helpful.<｜User｜>%s<｜Assistant｜><think>\n",
}

// separators join random fragments.
var separators = []string{"", " ", "  ", "\n", "\n\n", "\t", "\r\n", " \n ", "\u3000", "   \t", ". ", ", "}

// corpusBuilder accumulates cases and holds the seeded source.
type corpusBuilder struct {
	rng   *rand.Rand
	cases []corpusCase
	seen  map[string]bool
}

func (b *corpusBuilder) add(category, text string) {
	if b.seen[text] {
		return
	}
	b.seen[text] = true
	b.cases = append(b.cases, corpusCase{Category: category, Text: text})
}

func (b *corpusBuilder) pick(pool []string) string { return pool[b.rng.IntN(len(pool))] }

// parityCorpus returns the corpus for a model whose added tokens are given.
// The same seed and tokens always give the same corpus.
func parityCorpus(seed uint64, added []tokenizer.AddedToken) []corpusCase {
	b := &corpusBuilder{rng: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)), seen: map[string]bool{}}
	markers := chosenAddedTokens(b.rng, added)

	b.addHandWritten()
	b.addVariants()
	b.addWhitespace()
	b.addDigits()
	b.addLongWords()
	b.addAddedTokens(markers)
	b.addJSON(150)
	b.addRandomUTF8(250)
	b.addCompositions(markers, 1300)
	return b.cases
}

// chosenAddedTokens keeps every added token whose content has no digits and
// a seeded sample of the numbered ones (gemma3 has 6,242 "<unusedN>",
// deepseek_v3 hundreds of placeholders), so each model's corpus stays small.
func chosenAddedTokens(rng *rand.Rand, added []tokenizer.AddedToken) []string {
	var named, numbered []string
	for _, a := range added {
		if a.Content == "" {
			continue
		}
		if strings.ContainsAny(a.Content, "0123456789") {
			numbered = append(numbered, a.Content)
		} else {
			named = append(named, a.Content)
		}
	}
	// gemma3's runs of "\n", "\t" and "▁" are named tokens too; keep a few
	// lengths of each so they do not crowd out the markers.
	var out []string
	for _, c := range named {
		r, _ := utf8.DecodeRuneInString(c)
		isRun := strings.Trim(c, string(r)) == "" && (r == '\n' || r == '\t' || r == '▁')
		if n := utf8.RuneCountInString(c); isRun && n > 4 && n%7 != 0 {
			continue
		}
		out = append(out, c)
	}
	rng.Shuffle(len(numbered), func(i, j int) { numbered[i], numbered[j] = numbered[j], numbered[i] })
	if len(numbered) > 40 {
		numbered = numbered[:40]
	}
	out = append(out, numbered...)
	sort.Strings(out) // deterministic order independent of tokenizer.json order
	return out
}

func (b *corpusBuilder) addHandWritten() {
	for _, s := range proseSamples {
		b.add("prose", s)
	}
	for _, s := range codeSamples {
		b.add("code", s)
	}
	for _, s := range jsonSamples {
		b.add("json", s)
	}
	for _, s := range emojiSamples {
		b.add("emoji", s)
		b.add("emoji", "I love this "+s+"!")
	}
	for _, s := range contractionSamples {
		b.add("contraction", s)
		b.add("contraction", "he said "+s+" twice "+s+"s")
	}
	for _, s := range normalizationSamples {
		b.add("normalization", s)
		b.add("normalization", "word "+s+" word")
		b.add("normalization", norm.NFD.String(s))
	}
	for _, s := range oddCharSamples {
		b.add("oddchar", s)
		b.add("oddchar", "x "+s+" y")
	}
	for _, tmpl := range chatTemplates {
		for i := 0; i < 6; i++ {
			b.add("chat", fmt.Sprintf(tmpl, b.pick(proseSamples)))
		}
	}
	b.add("empty", "")
}

// addVariants derives forms of the prose and code samples that change how
// the pre-tokenizer sees them: NFD/NFC, case, surrounding spaces.
func (b *corpusBuilder) addVariants() {
	for _, s := range append(append([]string{}, proseSamples...), codeSamples...) {
		b.add("nfd", norm.NFD.String(s))
		b.add("nfkd", norm.NFKD.String(s))
		b.add("upper", strings.ToUpper(s))
		b.add("lower", strings.ToLower(s))
		b.add("spaces", " "+s)
		b.add("spaces", s+" ")
		b.add("spaces", "   "+s+"\n\n")
		b.add("spaces", "\t"+s+"\r\n")
		b.add("crlf", strings.ReplaceAll(s, "\n", "\r\n"))
		b.add("crlf", strings.ReplaceAll(s, " ", "\r\n"))
		b.add("tabs", strings.ReplaceAll(s, " ", "\t"))
		b.add("spaces", strings.ReplaceAll(s, " ", "  "))
		b.add("spaces", strings.ReplaceAll(s, " ", "\u00a0"))
		b.add("spaces", strings.ReplaceAll(s, " ", "\u3000"))
	}
}

func (b *corpusBuilder) addWhitespace() {
	for _, ws := range whitespaceKinds {
		b.add("whitespace", ws)
		b.add("whitespace", "a"+ws+"b")
		b.add("whitespace", "a"+ws+ws+ws+"b")
		b.add("whitespace", ws+"lead and trail"+ws)
		b.add("whitespace", "x"+ws+" "+ws+"\n"+ws+"y")
		b.add("whitespace", "a "+ws+"b")
	}
	for n := 1; n <= 40; n += 3 {
		b.add("whitespace", strings.Repeat(" ", n))
		b.add("whitespace", "a"+strings.Repeat(" ", n)+"b")
		b.add("whitespace", "a"+strings.Repeat(" ", n))
		b.add("whitespace", strings.Repeat(" ", n)+"a")
		b.add("whitespace", "a"+strings.Repeat("\n", n)+"b")
		b.add("whitespace", strings.Repeat("\t", n)+"x")
		b.add("whitespace", strings.Repeat("\r\n", n))
		b.add("whitespace", "a"+strings.Repeat(" \n", n)+"b")
		b.add("whitespace", "a"+strings.Repeat(" ", n)+"\n"+strings.Repeat(" ", n)+"b")
	}
	for i := 0; i < 60; i++ {
		var sb strings.Builder
		for j := b.rng.IntN(12) + 1; j > 0; j-- {
			sb.WriteString(b.pick(whitespaceKinds))
			if b.rng.IntN(3) == 0 {
				sb.WriteString(b.pick([]string{"a", "Z", "1", ".", "é", "漢"}))
			}
		}
		b.add("whitespace", sb.String())
	}
}

func (b *corpusBuilder) addDigits() {
	for _, d := range digitSamples {
		b.add("digits", d)
		b.add("digits", "abc"+d+"def")
		b.add("digits", "x "+d+" y")
	}
	for n := 1; n <= 64; n++ {
		var sb strings.Builder
		for i := 0; i < n; i++ {
			sb.WriteByte(byte('0' + b.rng.IntN(10)))
		}
		b.add("digits", sb.String())
		if n%4 == 0 {
			b.add("digits", "version "+sb.String()+"th")
			b.add("digits", "€"+sb.String()+".00")
		}
	}
	b.add("digits", strings.Repeat("9", 3000))
}

// addLongWords stresses BPE merge loops and regex backtracking.
func (b *corpusBuilder) addLongWords() {
	b.add("long", strings.Repeat("a", 3000))
	b.add("long", strings.Repeat("ab", 1200))
	b.add("long", strings.Repeat("hello", 500))
	b.add("long", strings.Repeat("漢", 1500))
	b.add("long", strings.Repeat("🙂", 400))
	b.add("long", strings.Repeat("é", 1000))
	b.add("long", strings.Repeat("e\u0301", 600))
	b.add("long", strings.Repeat(" ", 2000)+"x")
	b.add("long", strings.Repeat("-", 2000))
	b.add("long", strings.Repeat("!?", 700))
	b.add("long", "pneumonoultramicroscopicsilicovolcanoconiosis Donaudampfschifffahrtsgesellschaftskapitän")
	b.add("long", strings.Repeat("ก", 800))
	b.add("long", strings.Repeat("▁", 500))
	b.add("long", strings.Repeat("\n", 300))
	letters := "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	for i := 0; i < 8; i++ {
		var sb strings.Builder
		for j := 0; j < 200+b.rng.IntN(1800); j++ {
			sb.WriteByte(letters[b.rng.IntN(len(letters))])
		}
		b.add("long", sb.String())
	}
}

// addAddedTokens embeds the model's own added tokens in text in the
// positions that matter for matching and for lstrip/rstrip/single_word.
func (b *corpusBuilder) addAddedTokens(markers []string) {
	for _, m := range markers {
		b.add("added", m)
		b.add("added", "Hello"+m+"world")
		b.add("added", "Hello "+m+" world")
		b.add("added", m+m)
		b.add("added", "  "+m+"\n\n")
		b.add("added", m+"\n"+b.pick(proseSamples))
		if r := []rune(m); len(r) > 2 {
			b.add("added", "partial "+string(r[:len(r)/2])+" and "+string(r[1:]))
			b.add("added", strings.ToUpper(m)+" "+strings.ToLower(m))
		}
	}
	for i := 0; i < 120 && len(markers) > 0; i++ {
		var sb strings.Builder
		for j := b.rng.IntN(6) + 2; j > 0; j-- {
			sb.WriteString(b.pick(markers))
			if b.rng.IntN(2) == 0 {
				sb.WriteString(b.pick(separators))
				sb.WriteString(b.pick(proseSamples))
			}
		}
		b.add("added", sb.String())
	}
}

// addJSON emits random JSON values, compact and indented.
func (b *corpusBuilder) addJSON(n int) {
	for i := 0; i < n; i++ {
		v := b.randomJSON(0)
		var data []byte
		if i%2 == 0 {
			data, _ = json.Marshal(v)
		} else {
			data, _ = json.MarshalIndent(v, "", "  ")
		}
		b.add("json", string(data))
	}
}

func (b *corpusBuilder) randomJSON(depth int) any {
	k := b.rng.IntN(7)
	if depth > 3 {
		k = b.rng.IntN(4)
	}
	switch k {
	case 0:
		return b.rng.IntN(1_000_000) - 500_000
	case 1:
		return b.rng.NormFloat64() * 1e3
	case 2:
		return b.pick([]string{"yes", "no", "héllo wörld", "<b>bold</b>", "tab\there", "line\nbreak", "😀", "漢字かな", "\"q\"", `back\slash`})
	case 3:
		return b.rng.IntN(2) == 0
	case 4:
		arr := make([]any, b.rng.IntN(5))
		for i := range arr {
			arr[i] = b.randomJSON(depth + 1)
		}
		return arr
	default:
		obj := map[string]any{}
		for i := b.rng.IntN(5); i >= 0; i-- {
			key := b.pick([]string{"id", "name", "arguments", "type", "values", "données", "ключ", "キー", "x_y", "camelCase"})
			obj[key] = b.randomJSON(depth + 1)
		}
		return obj
	}
}

// runeRanges are weighted code point ranges for random valid UTF-8.
var runeRanges = []struct {
	lo, hi rune
	weight int
}{
	{0x20, 0x7e, 30},       // ASCII printable
	{0x00, 0x1f, 3},        // C0 controls
	{0x80, 0xff, 4},        // C1 controls and Latin-1
	{0x100, 0x24f, 4},      // Latin extended
	{0x300, 0x36f, 4},      // combining diacritics
	{0x370, 0x4ff, 4},      // Greek, Cyrillic
	{0x590, 0x6ff, 3},      // Hebrew, Arabic
	{0x900, 0x97f, 3},      // Devanagari
	{0xe00, 0xe7f, 3},      // Thai
	{0x1100, 0x11ff, 2},    // Hangul jamo
	{0x2000, 0x206f, 3},    // general punctuation and spaces
	{0x3000, 0x30ff, 4},    // CJK punctuation, Hiragana, Katakana
	{0x4e00, 0x9fff, 5},    // CJK unified
	{0xac00, 0xd7a3, 3},    // Hangul syllables
	{0xe000, 0xf8ff, 2},    // private use
	{0xfdd0, 0xfdef, 1},    // noncharacters
	{0xfe00, 0xfe0f, 1},    // variation selectors
	{0xff00, 0xffef, 2},    // half/full width forms
	{0xfff0, 0xffff, 1},    // specials incl. U+FFFD, U+FFFE, U+FFFF
	{0x1f300, 0x1faff, 4},  // emoji
	{0x1f3fb, 0x1f3ff, 1},  // skin tone modifiers
	{0x20000, 0x2a6df, 2},  // CJK extension B
	{0xe0000, 0xe007f, 1},  // tags
	{0xf0000, 0x10ffff, 1}, // supplementary private use and the last noncharacters
	{0x0, 0x10ffff, 3},     // anything, mostly unassigned
}

func (b *corpusBuilder) randomRune() rune {
	total := 0
	for _, r := range runeRanges {
		total += r.weight
	}
	n := b.rng.IntN(total)
	for _, r := range runeRanges {
		if n < r.weight {
			for {
				c := r.lo + rune(b.rng.IntN(int(r.hi-r.lo+1)))
				if utf8.ValidRune(c) { // excludes surrogates
					return c
				}
			}
		}
		n -= r.weight
	}
	panic("unreachable")
}

func (b *corpusBuilder) addRandomUTF8(n int) {
	for i := 0; i < n; i++ {
		var sb strings.Builder
		for j := b.rng.IntN(60) + 1; j > 0; j-- {
			switch b.rng.IntN(10) {
			case 0:
				sb.WriteString(b.pick(whitespaceKinds))
			case 1:
				sb.WriteRune('\u200d') // ZWJ between arbitrary characters
			default:
				sb.WriteRune(b.randomRune())
			}
		}
		b.add("random", sb.String())
	}
}

// addCompositions glues fragments of every category with random
// separators, then perturbs the result, until n more cases exist.
func (b *corpusBuilder) addCompositions(markers []string, n int) {
	pools := [][]string{proseSamples, codeSamples, jsonSamples, emojiSamples, contractionSamples,
		whitespaceKinds, digitSamples, normalizationSamples, oddCharSamples}
	if len(markers) > 0 {
		pools = append(pools, markers, markers)
	}
	target := len(b.cases) + n
	for len(b.cases) < target {
		var sb strings.Builder
		for k := b.rng.IntN(5) + 1; k > 0; k-- {
			frag := b.pick(pools[b.rng.IntN(len(pools))])
			if b.rng.IntN(4) == 0 { // a random slice of a longer fragment
				frag = runeSlice(frag, b.rng)
			}
			sb.WriteString(frag)
			sb.WriteString(b.pick(separators))
		}
		s := sb.String()
		switch b.rng.IntN(12) {
		case 0:
			s = norm.NFD.String(s)
		case 1:
			s = strings.ToUpper(s)
		case 2:
			s = " " + s
		case 3:
			s = strings.Repeat(" ", b.rng.IntN(5)+1) + s + strings.Repeat(" ", b.rng.IntN(5)+1)
		case 4:
			s = fmt.Sprintf(b.pick(chatTemplates), s)
		case 5:
			s = strings.TrimSpace(s)
		}
		b.add("mixed", s)
	}
}

// runeSlice returns a random run of whole runes of s.
func runeSlice(s string, rng *rand.Rand) string {
	r := []rune(s)
	if len(r) < 2 {
		return s
	}
	i := rng.IntN(len(r))
	j := i + 1 + rng.IntN(len(r)-i)
	return string(r[i:j])
}

// corpusCategories lists the categories every corpus must contain.
var corpusCategories = []string{
	"prose", "code", "json", "emoji", "contraction", "normalization", "oddchar", "chat", "nfd",
	"upper", "spaces", "crlf", "tabs", "whitespace", "digits", "long", "added", "random", "mixed",
}

// trimForReport shortens a quoted text around byte offset pos for messages.
func trimForReport(s string, pos int) string {
	const window = 60
	lo, hi := max(pos-window, 0), min(pos+window, len(s))
	for lo > 0 && !utf8.RuneStart(s[lo]) {
		lo--
	}
	for hi < len(s) && !utf8.RuneStart(s[hi]) {
		hi++
	}
	out := fmt.Sprintf("%q", s[lo:hi])
	if lo > 0 {
		out = "…" + out
	}
	if hi < len(s) {
		out += "…"
	}
	return out
}

// corpusTestTokens imitates the added tokens of the real models (markers,
// numbered reserved tokens, gemma3's whitespace runs) without loading one.
func corpusTestTokens() []tokenizer.AddedToken {
	var out []tokenizer.AddedToken
	add := func(content string, special bool) {
		out = append(out, tokenizer.AddedToken{ID: 1000 + len(out), Content: content, Special: special})
	}
	for _, c := range []string{"<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>", "<tool_call>"} {
		add(c, c[1] == '|')
	}
	for i := 0; i < 300; i++ {
		add(fmt.Sprintf("<|reserved_special_token_%d|>", i), true)
	}
	for n := 1; n <= 31; n++ {
		add(strings.Repeat("\n", n), false)
		add(strings.Repeat("▁", n+1), false)
	}
	return out
}

func TestParityCorpus(t *testing.T) {
	tokens := corpusTestTokens()
	cases := parityCorpus(1, tokens)
	if len(cases) < corpusMinCases {
		t.Errorf("corpus has %d cases, want at least %d", len(cases), corpusMinCases)
	}
	again := parityCorpus(1, tokens)
	if len(again) != len(cases) {
		t.Fatalf("corpus is not deterministic: %d then %d cases", len(cases), len(again))
	}
	perCategory := map[string]int{}
	var all strings.Builder
	for i, c := range cases {
		if c != again[i] {
			t.Fatalf("corpus is not deterministic at case %d: %q then %q", i, c.Text, again[i].Text)
		}
		if !utf8.ValidString(c.Text) {
			t.Errorf("case %d (%s) is not valid UTF-8: %q", i, c.Category, c.Text)
		}
		perCategory[c.Category]++
		all.WriteString(c.Text)
	}
	for _, cat := range corpusCategories {
		if perCategory[cat] == 0 {
			t.Errorf("category %q is missing", cat)
		}
	}
	text := all.String()
	for _, want := range []string{"<|im_start|>", "<think>", "<|reserved_special_token_", "▁▁", "\ufffd", "\u200d",
		"\U0001f3fd", "\u3000", "\r\n", "\t", "ſ", "DON'T", "e\u0301", "\ufdd0"} {
		if !strings.Contains(text, want) {
			t.Errorf("corpus never contains %q", want)
		}
	}
	t.Logf("%d cases: %v", len(cases), perCategory)
}

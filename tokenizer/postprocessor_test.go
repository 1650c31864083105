package tokenizer

import (
	"slices"
	"testing"
)

func TestPostProcessors(t *testing.T) {
	template := `{"type":"TemplateProcessing",` +
		`"single":[{"SpecialToken":{"id":"<s>","type_id":0}},{"Sequence":{"id":"A","type_id":0}},{"SpecialToken":{"id":"</s>","type_id":0}}],` +
		`"pair":[{"Sequence":{"id":"A","type_id":0}},{"Sequence":{"id":"B","type_id":1}}],` +
		`"special_tokens":{"<s>":{"id":"<s>","ids":[3],"tokens":["<s>"]},"</s>":{"id":"</s>","ids":[4,5],"tokens":["</","s>"]}}}`
	tests := []struct {
		name, post, in string
		add            bool
		want           []int
	}{
		{"template", template, "ab a", true, []int{3, 2, 0, 4, 5}},
		{"template without special tokens", template, "ab a", false, []int{2, 0}},
		{"roberta", `{"type":"RobertaProcessing","sep":["</",4],"cls":["<s>",3],"trim_offsets":true,"add_prefix_space":true}`, "ab", true, []int{3, 2, 4}},
		{"roberta without special tokens", `{"type":"RobertaProcessing","sep":["</",4],"cls":["<s>",3],"trim_offsets":true,"add_prefix_space":true}`, "ab", false, []int{2}},
		{"bert", `{"type":"BertProcessing","sep":["s>",5],"cls":["<s>",3]}`, "ba", true, []int{3, 1, 0, 5}},
		{"sequence with byte level", `{"type":"Sequence","processors":[{"type":"ByteLevel","add_prefix_space":true,"trim_offsets":false,"use_regex":true},` + template + `]}`, "ab", true, []int{3, 2, 4, 5}},
		{"none", "", "ab", true, []int{2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tok := testTokenizerJSON{
				postProcessor: tc.post,
				model:         testBPE([]string{"a", "b", "ab", "<s>", "</", "s>"}, []string{"a b"}, nil),
				added:         []AddedToken{{ID: 3, Content: "<s>", Special: true}},
			}.build(t)
			if got := tok.Encode(tc.in, tc.add); !slices.Equal(got, tc.want) {
				t.Errorf("Encode(%q, %v) = %v, want %v", tc.in, tc.add, got, tc.want)
			}
		})
	}
}

func TestPostProcessorErrors(t *testing.T) {
	tests := []struct{ name, json, wantErr string }{
		{"unknown type", `{"type":"Nope"}`, `unknown post-processor type "Nope"`},
		// HF's tokenizer.json holds templates as piece objects only.
		{"template as a string", `{"type":"TemplateProcessing","single":"<s> $A","special_tokens":{}}`, "TemplateProcessing single"},
		{"missing special token", `{"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"<x>","type_id":0}}],"special_tokens":{}}`, `missing special token "<x>"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := buildPostProcessor([]byte(tc.json))
			if err == nil || !contains(err.Error(), tc.wantErr) {
				t.Fatalf("error = %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}

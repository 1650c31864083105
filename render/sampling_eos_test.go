package render

import (
	"reflect"
	"testing"

	"github.com/vrender/vrender/protocol"
)

func TestEngineStops(t *testing.T) {
	eos := 151645
	tests := []struct {
		name      string
		request   []int
		ignoreEOS bool
		primary   *int
		genEOS    []int
		want      EngineStops
	}{
		{name: "Qwen3: the other eos id joins stop_token_ids", primary: &eos, genEOS: []int{151645, 151643},
			want: EngineStops{EOS: &eos, StopTokenIDs: []int{151643}, All: []int{151643, 151645}}},
		{name: "request ids kept after the eos ids", request: []int{7, 151643}, primary: &eos, genEOS: []int{151645, 151643},
			want: EngineStops{EOS: &eos, StopTokenIDs: []int{151643, 7}, All: []int{7, 151643, 151645}}},
		{name: "only the primary eos", request: []int{3}, primary: &eos, genEOS: []int{151645},
			want: EngineStops{EOS: &eos, StopTokenIDs: []int{3}, All: []int{3, 151645}}},
		{name: "ignore_eos keeps stop_token_ids but still counts eos for min_tokens", request: []int{3}, ignoreEOS: true, primary: &eos,
			genEOS: []int{151645, 151643}, want: EngineStops{StopTokenIDs: []int{3}, All: []int{3, 151643, 151645}}},
		{name: "no eos anywhere", request: []int{3}, want: EngineStops{StopTokenIDs: []int{3}, All: []int{3}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := protocol.NewSamplingParams()
			p.StopTokenIDs = tt.request
			if p.StopTokenIDs == nil {
				p.StopTokenIDs = []int{}
			}
			p.IgnoreEOS = tt.ignoreEOS
			got := engineStops(p, tt.primary, tt.genEOS)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestGenerationConfigEOS(t *testing.T) {
	m := fixtureModel(t)
	if got := generationConfigEOS(m.GenerationConfig); !reflect.DeepEqual(got, []int{151645, 151643}) {
		t.Errorf("list form = %v", got)
	}
	if got := generationConfigEOS(map[string]any{"eos_token_id": 2.0}); !reflect.DeepEqual(got, []int{2}) {
		t.Errorf("int form = %v", got)
	}
	if got := generationConfigEOS(nil); got != nil {
		t.Errorf("absent = %v", got)
	}
}

package tokenizer

// postProcessor is the single-sequence part of HF's PostProcessor: it
// returns the final ids of an encoded sequence.
type postProcessor interface {
	apply(seq []int, addSpecialTokens bool) []int
}

// templatePiece is one element of a TemplateProcessing template: either the
// sequence (ids == nil) or the ids of a special token.
type templatePiece struct {
	sequence bool
	ids      []int
}

type templateProcessor struct{ single []templatePiece }

func (p *templateProcessor) apply(seq []int, add bool) []int {
	n := 0
	for _, pc := range p.single {
		if pc.sequence {
			n += len(seq)
		} else if add {
			n += len(pc.ids)
		}
	}
	out := make([]int, 0, n)
	for _, pc := range p.single {
		if pc.sequence {
			out = append(out, seq...)
		} else if add {
			out = append(out, pc.ids...)
		}
	}
	return out
}

// byteLevelProcessor only adjusts offsets in HF; ids pass through.
type byteLevelProcessor struct{}

func (byteLevelProcessor) apply(seq []int, _ bool) []int { return seq }

// clsSepProcessor is RobertaProcessing and BertProcessing for one sequence.
type clsSepProcessor struct{ cls, sep int }

func (p clsSepProcessor) apply(seq []int, add bool) []int {
	if !add {
		return seq
	}
	out := make([]int, 0, len(seq)+2)
	out = append(out, p.cls)
	out = append(out, seq...)
	return append(out, p.sep)
}

type processorSeq []postProcessor

func (s processorSeq) apply(seq []int, add bool) []int {
	for _, p := range s {
		seq = p.apply(seq, add)
	}
	return seq
}

package enginesim

// Simulated logprobs: per token the sampled token's logprob and
// top_logprobs, the sampled token first, then alternatives in rank order,
// in either wire shape (Config.LogprobsShape). Values come
// from fixed tables, chosen by token and position, so they are
// deterministic, plausible (sampled > alternatives) and need no float
// formatting per token.

var sampledLogprobs = []string{"-0.0123", "-0.0451", "-0.1054", "-0.2231", "-0.0021", "-0.3567", "-0.0513", "-0.6931"}

// altLogprobs[j] is the logprob of the alternative ranked j+2: decreasing.
var altLogprobs = []string{"-1.25", "-1.75", "-2.25", "-2.75", "-3.25", "-3.75", "-4.25", "-4.75", "-5.25", "-5.75", "-6.25", "-6.75", "-7.25", "-7.75", "-8.25", "-8.75", "-9.25", "-9.75", "-10.25", "-10.75"}

// maxTopLogprobs caps top_logprobs for logprobs=-1 (vLLM: the whole
// vocabulary), which would otherwise be absurd to simulate.
const maxTopLogprobs = 20

// appendLogprobEntry appends one content entry for token t at position pos
// with k alternatives requested (vLLM lists max(k, 1) entries), in the
// GenerateLogProbs shape or, unless generateShape, in the OpenAI shape
// vLLM's generate writes today: the same tokens and values, each token a
// "token_id:N" placeholder with "bytes": null and no rank.
func appendLogprobEntry(b []byte, t, pos, k, vocab int, generateShape bool) []byte {
	n := max(k, 1)
	if k < 0 {
		n = maxTopLogprobs
	}
	n = min(n, maxTopLogprobs, vocab)
	lp := sampledLogprobs[(t+pos)%len(sampledLogprobs)]
	b = appendLogprob(b, t, lp, 1, generateShape)
	b = b[:len(b)-1] // reopen the entry for its top_logprobs
	b = append(b, `,"top_logprobs":[`...)
	b = appendLogprob(b, t, lp, 1, generateShape)
	for j := 1; j < n; j++ {
		alt := (t + j*7919) % vocab
		if alt == t {
			alt = (alt + 1) % vocab
		}
		b = append(b, ',')
		b = appendLogprob(b, alt, altLogprobs[j-1], j+1, generateShape)
	}
	return append(b, "]}"...)
}

// appendLogprob appends one {token, logprob} object of either shape.
func appendLogprob(b []byte, t int, lp string, rank int, generateShape bool) []byte {
	if generateShape {
		b = append(b, `{"token_id":`...)
		b = appendInt(b, t)
		b = append(b, `,"logprob":`...)
		b = append(b, lp...)
		b = append(b, `,"rank":`...)
		b = appendInt(b, rank)
		return append(b, '}')
	}
	b = append(b, `{"token":"token_id:`...)
	b = appendInt(b, t)
	b = append(b, `","logprob":`...)
	b = append(b, lp...)
	return append(b, `,"bytes":null}`...)
}

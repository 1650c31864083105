// Package upsample is libjpeg-turbo's h2v2_fancy_upsample (jdsample.c), the 4:2:0 chroma filter,
// exact to the sample: one output row from its nearer and farther input rows, in Go and, on amd64
// with AVX2, in assembly sixteen samples at a time, tested identical to the Go version.
package upsample

// H2V2Fancy writes the 2*len(near) samples of one output row: column sums 3*near+far, then the
// same triangle filter across columns, biased 8 then 7, divided by 16; at the row's ends the edge
// sum stands in for the missing neighbour. sums is scratch of len(near)+2 values.
func H2V2Fancy(out, near, far []byte, sums []int16) {
	n := len(near)
	out, far, sums = out[:2*n], far[:n], sums[:n+2]
	// sums[1+i] is column i's sum; sums[0] and sums[n+1] repeat the edges.
	done := h2v2Sums(sums[1:], near, far)
	for i := done; i < n; i++ {
		sums[1+i] = 3*int16(near[i]) + int16(far[i])
	}
	sums[0], sums[n+1] = sums[1], sums[n]
	done = h2v2Filter(out, sums)
	for i := done; i < n; i++ {
		this := 3 * sums[1+i]
		out[2*i] = byte((this + sums[i] + 8) >> 4)
		out[2*i+1] = byte((this + sums[i+2] + 7) >> 4)
	}
}

// h2v2FancyGo is jdsample.c's loop as written, the reference of H2V2Fancy.
func h2v2FancyGo(out, near, far []byte) {
	n := len(near)
	far, out = far[:n], out[:2*n]
	sums := make([]int32, n)
	for i := range near {
		sums[i] = 3*int32(near[i]) + int32(far[i])
	}
	last := sums[0]
	for i := 0; i < n; i++ {
		this := sums[i]
		next := this
		if i+1 < n {
			next = sums[i+1]
		}
		out[2*i] = byte((3*this + last + 8) >> 4)
		out[2*i+1] = byte((3*this + next + 7) >> 4)
		last = this
	}
}

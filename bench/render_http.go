package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/vrender/vrender/internal/benchdata"
	"github.com/vrender/vrender/protocol"
	"github.com/vrender/vrender/render"
)

// renderHTTP measures the render workloads over HTTP and compares them with
// the in-process and reference figures of the same run: the single
// requests with report's rows, the multi-turn session with a reference run
// over the session's requests and in-process renders of them.
func renderHTTP(ctx context.Context, opts RenderOptions, r *render.Renderer, tokenizerJSON, template string, specials map[string]string,
	sizes []benchdata.Size, report *RenderReport, dir string) error {
	last := sizes[len(sizes)-1]
	session, err := ColdConversation(benchdata.Conversation(last), coldTag(-1))
	if err != nil {
		return err
	}
	// The session's reference: every turn rendered and tokenized (the
	// median of 3 runs each), as the session renders each turn once.
	var reqFiles []string
	for t := range MultiTurnTurns {
		q := session
		q.Messages = session.Messages[:TurnMessages(t, len(session.Messages))]
		f, err := writeRenderRequest(dir, fmt.Sprintf("turn%02d", t), template, q, specials)
		if err != nil {
			return err
		}
		reqFiles = append(reqFiles, f)
	}
	py, err := opts.Renderer.run(ctx, reqFiles, 3, 1, 0)
	if err != nil {
		return err
	}
	promptFiles := make([]string, len(reqFiles))
	for i := range reqFiles {
		promptFiles[i] = filepath.Join(dir, fmt.Sprintf("turn%02d.prompt.txt", i))
		if err := os.WriteFile(promptFiles[i], []byte(py.Requests[i].Prompt), 0o644); err != nil {
			return fmt.Errorf("bench render: %w", err)
		}
	}
	tok, _, err := opts.Tokenizer.run(ctx, tokenizerJSON, promptFiles, 3, 1)
	if err != nil {
		return err
	}
	refSession := 0.0
	for i := range reqFiles {
		refSession += py.Requests[i].Render.MedianNs + tok.Files[i].Encode.MedianNs
	}
	inSession, err := renderSessionNs(ctx, r, benchdata.Conversation(last))
	if err != nil {
		return err
	}

	rep, err := RunHTTP(ctx, *opts.HTTP, RenderWorkloads(sizes))
	if rep == nil {
		return err
	}
	report.HTTP = rep
	for _, q := range report.Requests {
		ref := q.RefTemplate.MedianNs + q.RefTokenize.MedianNs
		target := ""
		switch q.Name {
		case "9k":
			target = "≥20x, HTTP+JSON ≤15%"
		case "1k":
			target = "≥8x"
		}
		rep.Compare("render "+q.Name, "cold", q.Render.MedianNs, ref, target)
		rep.Compare("render "+q.Name, "warm", q.Render.MedianNs, ref, "")
	}
	rep.Compare(MultiTurnWorkload(last).Name, "multi-turn", inSession, refSession, "≥25x")
	return err
}

// renderSessionNs is the fastest of a few in-process renders of a whole
// session (every turn once), in CPU ns; each run is a session of its own
// text, as over HTTP.
func renderSessionNs(ctx context.Context, r *render.Renderer, base benchdata.Request) (float64, error) {
	best := 0.0
	for k := range 5 {
		q, err := ColdConversation(base, fmt.Sprintf("[in-pro%d] ", k))
		if err != nil {
			return 0, err
		}
		// The messages are decoded as the server decodes them with the
		// body, outside the render being timed.
		msgs, err := protocol.ParseMessages(q.Messages)
		if err != nil {
			return 0, err
		}
		start := cpuTime()
		for t := range MultiTurnTurns {
			in := render.ChatInput{Messages: msgs[:TurnMessages(t, len(msgs))], Tools: q.Tools,
				AddGenerationPrompt: q.AddGenerationPrompt}
			if _, err := r.RenderChat(ctx, in); err != nil {
				return 0, fmt.Errorf("bench render: session turn %d: %w", t, err)
			}
		}
		if d := float64((cpuTime() - start).Nanoseconds()); best == 0 || d < best {
			best = d
		}
	}
	return best, nil
}

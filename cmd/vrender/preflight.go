package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"time"

	"github.com/vrender/vrender/preflight"
)

// errPreflightFailed is returned after the report was printed, so that the
// exit status is non-zero.
var errPreflightFailed = errors.New("a check failed (see above)")

// runPreflight is `vrender preflight`: the production checklist against
// real engines, stopping at the first failure.
func runPreflight(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCommand("preflight", "[MODEL] (--engine URL | --prefill-engine URL --decode-engine URL) [options]",
		"Check the engines vrender will drive, stopping at the first failure with what to fix (exit status 1):\n"+
			"each engine's GET /version is vLLM >= "+preflight.MinVersion.String()+"; one short chat request end to end (vrender's\n"+
			"render for MODEL, generate on the engine or prefill (max_tokens 1, kv_transfer_params do_remote_decode)\n"+
			"then decode, vrender's derender, a non-empty answer); then --long-prompts prompts of --long-prompt-tokens\n"+
			"tokens one at a time while reading the engines' /metrics: NIXL KV transfers (average transfer time,\n"+
			"vllm:nixl_num_kv_expired_reqs, vllm:nixl_num_failed_transfers), failing if expired or failed increased.\n"+
			"Render flags (--chat-template, --reasoning-parser, ...) take serve's values.")
	var (
		mf                    modelFlags
		rf                    renderFlags
		eng, prefill, decode  string
		apiKey, servedName    string
		longPrompts, longToks int
		timeout               time.Duration
		asJSON                bool
	)
	mf.register(c, true)
	rf.register(c)
	c.fs.StringVar(&eng, "engine", "", "collocated tokens-only engine `URL` to check")
	c.fs.StringVar(&prefill, "prefill-engine", "", "prefill engine `URL` of a disaggregated pair (with --decode-engine)")
	c.fs.StringVar(&decode, "decode-engine", "", "decode engine `URL` of a disaggregated pair (with --prefill-engine)")
	c.fs.StringVar(&apiKey, "engine-api-key", "", "`KEY` sent to the engines as a bearer token (their --api-key)")
	c.fs.StringVar(&servedName, "served-model-name", "", "the model `NAME` the engines serve (default: MODEL)")
	c.fs.IntVar(&longPrompts, "long-prompts", 3, "long prompts (`N`) sent one at a time; 0 skips them")
	c.fs.IntVar(&longToks, "long-prompt-tokens", 4096, "rendered length (`T` tokens) of each long prompt")
	c.fs.DurationVar(&timeout, "request-timeout", 5*time.Minute, "longest wait (`DURATION`) for one engine request")
	c.fs.BoolVar(&asJSON, "json", false, "print the report as JSON")

	rest, err := c.parse(args, stdout)
	if err != nil {
		return err
	}
	switch {
	case len(rest) > 1:
		return usagef("unexpected argument %q", rest[1])
	case len(rest) == 1:
		mf.model = rest[0]
	}
	switch {
	case eng == "" && prefill == "" && decode == "":
		return usagef("give --engine, or --prefill-engine and --decode-engine")
	case eng != "" && (prefill != "" || decode != ""):
		return usagef("--engine checks a collocated engine: do not combine it with --prefill-engine/--decode-engine")
	case (prefill == "") != (decode == ""):
		return usagef("--prefill-engine and --decode-engine go together")
	case longPrompts < 0:
		return usagef("--long-prompts must not be negative")
	case longPrompts > 0 && longToks < 16:
		return usagef("--long-prompt-tokens must be at least 16")
	case timeout <= 0:
		return usagef("--request-timeout must be positive")
	}
	m, err := mf.load(ctx)
	if err != nil {
		return err
	}
	gen, err := rf.generator(m)
	if err != nil {
		return err
	}
	der, err := (&derenderFlags{}).engine(m, &rf)
	if err != nil {
		return err
	}
	if servedName == "" {
		servedName = mf.model
	}
	rep, err := preflight.Run(ctx, preflight.Config{
		Engine: eng, PrefillEngine: prefill, DecodeEngine: decode, APIKey: apiKey,
		ModelName: servedName, Generator: gen, Derender: der,
		LongPrompts: longPrompts, LongPromptTokens: longToks, RequestTimeout: timeout,
		Logger: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return err
	}
	if asJSON {
		err = rep.WriteJSON(stdout)
	} else {
		err = rep.WriteText(stdout)
	}
	if err != nil {
		return err
	}
	if !rep.OK {
		return errPreflightFailed
	}
	return nil
}

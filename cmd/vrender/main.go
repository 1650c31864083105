// Command vrender serves vLLM's CPU tier (tokenize, render, detokenize and
// derender) as one Go binary, serves the OpenAI API over tokens-only vLLM
// engines, and offers the same operations on the command line. Run
// `vrender help` for the commands.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Exit statuses.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

func main() {
	// First, while nothing but the runtime runs: it may exec.
	execWithTimerSlack(os.Args[1:])
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usageText = `vrender serves vLLM's CPU tier (tokenize, render, derender) for a model, and the OpenAI API
over tokens-only vLLM engines (serve --engine).

Usage: vrender <command> [arguments]

Commands:
  serve        serve the HTTP API for a model
  render       chat request on stdin -> GenerateRequest (or prompt text) on stdout
  tokenize     text on stdin -> token IDs on stdout
  detokenize   token IDs on stdin -> text on stdout
  derender     engine output (DerenderChatRequest or golden line) on stdin -> chat response
  engine-sim   simulated tokens-only vLLM engine (/inference/v1/generate) for tests and benchmarks
  preflight    check real engines before taking traffic: version, one request end to end, KV transfers
  parity       compare vrender with a running vLLM server on your own requests (exit 1 on a difference)
  bench        measure throughput (vrender bench tokenize --help)
  version      print the version
  help         show help for a command: vrender help <command>

Options take vLLM's spelling (--max-model-len, --served-model-name).
`

// run executes one command line and returns the exit status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usageText)
		return exitUsage
	}
	name, rest := args[0], args[1:]
	var err error
	switch name {
	case "serve":
		err = runServe(ctx, rest, stdout, stderr)
	case "render":
		err = runRender(ctx, rest, stdin, stdout, stderr)
	case "tokenize":
		err = runTokenize(ctx, rest, stdin, stdout, stderr)
	case "detokenize":
		err = runDetokenize(ctx, rest, stdin, stdout, stderr)
	case "derender":
		err = runDerender(ctx, rest, stdin, stdout, stderr)
	case "bench":
		if len(rest) > 0 && benchKinds[rest[0]] != nil {
			name = "bench " + rest[0] // errors and their usage hint name the kind
		}
		err = runBench(ctx, rest, stdout, stderr)
	case "engine-sim":
		err = runEngineSim(ctx, rest, stdout, stderr)
	case "preflight":
		err = runPreflight(ctx, rest, stdout, stderr)
	case "parity":
		err = runParity(ctx, rest, stdout, stderr)
	case "version", "--version":
		err = runVersion(rest, stdout)
	case "help", "-h", "--help":
		return runHelp(ctx, rest, stdout, stderr)
	default:
		fmt.Fprintf(stderr, "vrender: unknown command %q\n\n%s", name, usageText)
		return exitUsage
	}
	return exitStatus(name, err, stderr)
}

// exitStatus reports err and maps it to an exit status.
func exitStatus(name string, err error, stderr io.Writer) int {
	var usage usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.As(err, &usage):
		fmt.Fprintf(stderr, "vrender %s: %v\nRun 'vrender %s --help' for usage.\n", name, err, name)
		return exitUsage
	default:
		fmt.Fprintf(stderr, "vrender %s: %v\n", name, err)
		return exitError
	}
}

// runHelp is `vrender help [command]`.
func runHelp(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stdout, usageText)
		return exitOK
	}
	switch args[0] {
	case "serve", "render", "tokenize", "detokenize", "derender", "engine-sim", "parity", "preflight", "version":
		return run(ctx, []string{args[0], "--help"}, nil, stdout, stderr)
	case "bench":
		if len(args) > 1 && benchKinds[args[1]] != nil {
			return run(ctx, []string{"bench", args[1], "--help"}, nil, stdout, stderr)
		}
		fmt.Fprint(stdout, benchUsage)
		return exitOK
	}
	fmt.Fprintf(stderr, "vrender help: unknown command %q\n\n%s", args[0], usageText)
	return exitUsage
}

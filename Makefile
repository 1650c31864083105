# vrender build, test and run targets. `make help` lists them.

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

GO ?= go
BIN := bin/vrender
# The version `vrender version` and GET /version report: the release tag, else devel+<commit>[-dirty]. Stamped at
# link time because Go's own VCS stamping is off under GOFLAGS=-buildvcs=false and in a git worktree (whose .git
# is a file, which the go command does not recognise as a checkout).
VERSION ?= $(shell git describe --tags --match 'v*' --dirty 2>/dev/null || \
	{ r=$$(git rev-parse --short=12 HEAD 2>/dev/null) && echo "devel+$$r$$(git diff --quiet HEAD 2>/dev/null || echo -dirty)"; })
# Tests find the models at <repo>/.cache (internal/testenv), so the cache location is not configurable here;
# scripts/fetch-models.sh alone honours VRENDER_CACHE (for testing the script against an empty cache).
CACHE := $(CURDIR)/.cache
MODELS_DIR := $(CACHE)/models
# The models scripts/fetch-models.sh knows by name.
MODELS := qwen3 llama3_1 deepseek_v3 gptoss gemma3
BENCH_MODELS := $(MODELS)
# The image bench's model: the tokenizer-only Qwen2.5-VL directory of ../shared/multimodal (beside the repository).
IMAGE_BENCH_MODEL ?= $(CURDIR)/../shared/multimodal/models/qwen2_5_vl

PORT ?= 8000
# The vision models by name: the tokenizer-only Qwen-VL directories of the shared specs beside the repository
# (../shared/multimodal/models; their tokenizer is Qwen3's, so the default parsers below fit them too).
VISION_MODELS := qwen2_5_vl qwen3_vl
VISION_DIR := $(abspath $(CURDIR)/../shared/multimodal)
# RUN_MODEL is a model of the cache by name (qwen3, gptoss, ...), a vision model by name (qwen2_5_vl, qwen3_vl)
# or a model directory; the parser flags and the served name follow the model (gpt-oss: vLLM's recipe,
# --tool-call-parser openai --enable-auto-tool-choice with the openai_gptoss reasoning parser).
RUN_MODEL ?= qwen3
RUN_DIR = $(if $(filter $(RUN_MODEL),$(MODELS)),$(MODELS_DIR)/$(RUN_MODEL),$(if $(filter $(RUN_MODEL),$(VISION_MODELS)),$(VISION_DIR)/models/$(RUN_MODEL),$(RUN_MODEL)))
RUN_NAME_gptoss := openai/gpt-oss-20b
RUN_PARSERS_gptoss := --reasoning-parser openai_gptoss --tool-call-parser openai --enable-auto-tool-choice
RUN_NAME_qwen2_5_vl := Qwen/Qwen2.5-VL-7B-Instruct
RUN_NAME_qwen3_vl := Qwen/Qwen3-VL-8B-Instruct
# A vision model may also read pictures by file: URL from the shared images (the demo's curl sends one).
RUN_MEDIA_FLAGS = $(if $(filter $(RUN_MODEL),$(VISION_MODELS)),--allowed-local-media-path $(VISION_DIR)/images)
RUN_NAME ?= $(or $(RUN_NAME_$(notdir $(RUN_DIR))),Qwen/Qwen3-8B)
RUN_PARSERS ?= $(or $(RUN_PARSERS_$(notdir $(RUN_DIR))),--reasoning-parser qwen3 --tool-call-parser hermes --enable-auto-tool-choice)
# sim: the built-in simulated engine; a URL points at a real tokens-only vLLM engine.
ENGINE ?= sim
# The simulated engine's time per generated token, about a GPU's single-stream decode, so a stream visibly
# streams. With tools in the prompt the simulated model always calls one, whatever tool_choice was (a tokens-only
# engine never sees tool_choice, and in vLLM a model may too); vLLM's --exclude-tools-when-tool-choice-none
# leaves the tools out of the prompt under "none", so the demo answers in prose then.
SIM_TOKEN_LATENCY ?= 20ms
RUN_SIM_FLAGS = $(if $(filter sim,$(ENGINE)),--sim-token-latency $(SIM_TOKEN_LATENCY) --exclude-tools-when-tool-choice-none)

# go test's timeout is per package test binary: the slowest one (tokenizer parity over five models) takes
# about a minute on 2 cores; the margin is for a loaded machine.
TEST_TIMEOUT ?= 10m
# Per fuzz target in `make test`: 91 targets took 6.5 minutes in all on the shared 2-core machine at load 8-15
# (91 s fuzzing, the rest starting each target and 14 instrumented package builds). The seed corpora also run
# as plain tests in unit-test; `make fuzz` is the long run.
FUZZTIME ?= 1s

export VRENDER_CACHE := $(CACHE)

.NOTPARALLEL:
.PHONY: help models run-models build run test vet staticcheck fmt-check unit-test fuzz-short fuzz bench soak clean distclean

help: ## List the targets.
	@echo "vrender make targets:"
	@grep -E '^[a-z][a-z-]*:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([a-z-]+):.*## /  \1\t/' | expand -t 14

models: ## Fetch the five test tokenizers, the reference binding and openai_harmony (wasm) into .cache (offline once cached).
	@scripts/fetch-models.sh

run-models: ## Fetch only RUN_MODEL's tokenizer (what `make run` needs: 11 MB for qwen3; vision models are in ../shared).
	@$(if $(filter $(RUN_MODEL),$(MODELS)),scripts/fetch-models.sh $(RUN_MODEL),true)
	@$(if $(filter $(RUN_MODEL),$(VISION_MODELS)),test -f $(RUN_DIR)/preprocessor_config.json || \
		{ echo "make run: $(RUN_DIR) is missing: the vision models live in ../shared/multimodal/models beside the repository"; exit 1; },true)

# JPEG decoding goes through the system's libjpeg-turbo (Pillow's own decoder: ~1.4x the pure-Go decoder's speed,
# and corrupt data repaired as Pillow repairs it; docs/compatibility.md "Image decoding") when cgo works and its
# header is installed (Debian: libjpeg62-turbo-dev); otherwise the pure-Go decoder, identical on valid images.
# JPEG_TAGS= (empty) forces the pure-Go decoder.
JPEG_TAGS ?= $(shell [ "$$($(GO) env CGO_ENABLED)" = 1 ] && printf '\#include <stdio.h>\n\#include <jpeglib.h>\n' | \
	$$($(GO) env CC) -E -x c - >/dev/null 2>&1 && echo libjpegturbo)

# PNG's IDAT stream is inflated by the system's libdeflate (whole-buffer inflate, ~3-4x compress/flate's speed)
# when cgo works and its header is installed (Debian: libdeflate-dev); otherwise by compress/flate. Either way only
# the inflater changes: the decoder and its checks are the same Go code. PNG_TAGS= (empty) forces compress/flate.
PNG_TAGS ?= $(shell [ "$$($(GO) env CGO_ENABLED)" = 1 ] && printf '\#include <stddef.h>\n\#include <libdeflate.h>\n' | \
	$$($(GO) env CC) -E -x c - >/dev/null 2>&1 && echo libdeflate)
BUILD_TAGS = $(strip $(JPEG_TAGS) $(PNG_TAGS))

build: ## Build bin/vrender (with libjpeg-turbo for JPEG and libdeflate for PNG when their headers are installed; JPEG_TAGS= PNG_TAGS= for pure Go).
	$(GO) build -tags '$(BUILD_TAGS)' -ldflags '$(if $(VERSION),-X main.version=$(VERSION))' -o $(BIN) ./cmd/vrender

# A fresh checkpoint-signing key per run unless VRENDER_STATE_KEY is set: one replica needs no shared key.
run: run-models build ## Serve Qwen3 on :8000 over the in-process simulated engine (PORT=, RUN_MODEL=qwen3|gptoss|qwen2_5_vl|qwen3_vl|DIR, RUN_NAME=, ENGINE=, SIM_TOKEN_LATENCY= override).
	@echo "vrender: serving $(RUN_MODEL) as $(RUN_NAME) on http://127.0.0.1:$(PORT) (engine: $(ENGINE)); try from another shell:"
	@echo "  curl -s http://127.0.0.1:$(PORT)/v1/chat/completions -H 'Content-Type: application/json' \\"
	@echo "       -d '{\"model\": \"$(RUN_NAME)\", \"messages\": [{\"role\": \"user\", \"content\": \"What is 2+2?\"}]}'"
	@echo "  curl -sN http://127.0.0.1:$(PORT)/v1/chat/completions -H 'Content-Type: application/json' \\"
	@echo "       -d '{\"model\": \"$(RUN_NAME)\", \"stream\": true, \"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}]}'"
	@echo "  curl -s http://127.0.0.1:$(PORT)/v1/chat/completions/render -H 'Content-Type: application/json' \\"
	@echo "       -d '{\"model\": \"$(RUN_NAME)\", \"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}]}'"
	@if [ -n "$(RUN_MEDIA_FLAGS)" ]; then \
		echo "  curl -s http://127.0.0.1:$(PORT)/v1/chat/completions -H 'Content-Type: application/json' -d '{\"model\": \"$(RUN_NAME)\","; \
		echo "       \"messages\": [{\"role\": \"user\", \"content\": [{\"type\": \"text\", \"text\": \"What is in this picture?\"},"; \
		echo "       {\"type\": \"image_url\", \"image_url\": {\"url\": \"file://$(VISION_DIR)/images/jpeg_444_1280x720.jpg\"}}]}]}'"; \
	fi
	@echo "  (README.md: the openai SDK, tools, streaming, pictures; Ctrl-C stops it.)"
	VRENDER_STATE_KEY=$${VRENDER_STATE_KEY:-$$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')} \
	$(BIN) serve $(RUN_DIR) --port $(PORT) --served-model-name $(RUN_NAME) --engine $(ENGINE) $(RUN_PARSERS) $(RUN_SIM_FLAGS) $(RUN_MEDIA_FLAGS)

test: models vet staticcheck fmt-check unit-test fuzz-short ## Everything CI runs: vet, staticcheck, gofmt, all tests, every fuzz target for FUZZTIME (1s).

vet:
	@echo "==> go vet ./... (about a minute on 2 cores; prints nothing when clean)"
	$(GO) vet ./...

# Pinned, fetched from the module proxy into Go's cache on first use (no install step).
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
staticcheck:
	@echo "==> staticcheck ./... (about a minute on 2 cores; prints nothing when clean)"
	$(GO) run $(STATICCHECK) ./...

fmt-check:
	@files=$$(find . \( -path ./.cache -o -path ./.git -o -name testdata \) -prune -o -name '*.go' -print); \
	bad=$$(gofmt -l $$files); \
	if [ -n "$$bad" ]; then echo "gofmt would change:"; echo "$$bad"; exit 1; fi; \
	echo "gofmt: ok"

# go test's own lines, then the skipped tests by reason (go test shows them only with -v) and a closing
# "N passed, N failed, N skipped" (internal/cmd/testsummary).
unit-test: models ## The tests alone, no vet, staticcheck or fuzzing (the quick mode of `make test`).
	@echo "==> go test ./... (-timeout $(TEST_TIMEOUT) per package)"
	$(GO) test -json -count=1 -timeout=$(TEST_TIMEOUT) ./... | $(GO) run ./internal/cmd/testsummary
	@if [ -n "$(BUILD_TAGS)" ]; then echo "==> go test -tags '$(BUILD_TAGS)' ./imaging/... (the cgo build make build ships)"; \
		$(GO) test -count=1 -tags '$(BUILD_TAGS)' ./imaging/...; fi

fuzz-short:
	@echo "==> every fuzz target for $(FUZZTIME) (make fuzz: 60s each)"
	@FUZZTIME=$(FUZZTIME) scripts/fuzz.sh

fuzz: models ## Run every fuzz target for 60s (FUZZTIME= overrides).
	@FUZZTIME=$(if $(filter command line environment,$(origin FUZZTIME)),$(FUZZTIME),60s) scripts/fuzz.sh

bench: models build ## Go benchmarks, then every `vrender bench` tool (tokenize per model, render, derender, images, serve, prefix routing with text and images).
	$(GO) test -run='^$$' -bench=. -benchmem ./...
	@for m in $(BENCH_MODELS); do \
		echo "== bench tokenize $$m"; \
		$(BIN) bench tokenize --model $(MODELS_DIR)/$$m; \
	done
	@echo "== bench tokenize qwen3 over HTTP"; $(BIN) bench tokenize --model $(MODELS_DIR)/qwen3 --http
	@echo "== bench render qwen3 (in process and over HTTP)"; $(BIN) bench render --model $(MODELS_DIR)/qwen3 --http
	@echo "== bench derender: qwen3 + hermes at 1k-16k tokens, then every parser family's format (in process and over HTTP)"; \
		$(BIN) bench derender --model $(MODELS_DIR)/qwen3 --models-dir $(MODELS_DIR) --http
	@echo "== bench images: Qwen2.5-VL image render over HTTP against Pillow + numpy (docs/benchmarks-images.md)"; \
		if [ -f $(IMAGE_BENCH_MODEL)/preprocessor_config.json ]; then $(BIN) bench images --model $(IMAGE_BENCH_MODEL); \
		elif [ "$${CI:-}" = true ]; then echo "bench images: $(IMAGE_BENCH_MODEL) missing" >&2; exit 1; \
		else echo "== SKIPPED bench images: $(IMAGE_BENCH_MODEL) missing (../shared/multimodal beside the repository)"; fi
	@echo "== bench serve (vrender + engine-sim, 500 concurrent streams)"; BIN=$(BIN) scripts/bench-serve.sh
	@echo "== bench serve: collocated pool vs prefill/decode pool (goodput)"; BIN=$(BIN) scripts/bench-pd.sh
	@echo "== bench serve: prefix-cache routing vs least-outstanding (multi-turn, 4 engines)"; BIN=$(BIN) scripts/bench-prefix.sh
	@echo "== bench serve: prefix-cache routing vs least-outstanding, image conversations (a 224x224 picture per session, 4 engines)"; \
		BIN=$(BIN) IMAGE_SIZE=224x224 POLICIES="least-outstanding prefix prefix-noevents prefix-shared-image" scripts/bench-prefix.sh

soak: models build ## Load and soak: 1,000 streams for 60s against engine-sim, one replica then three behind haproxy.
	@BIN=$(BIN) scripts/soak.sh

clean: ## Remove build outputs (bin/) and Go's test cache.
	rm -rf bin
	$(GO) clean -testcache

distclean: clean ## Also remove the model and reference cache (.cache).
	rm -rf $(CACHE)

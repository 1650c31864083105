# vrender build, test and run targets. `make help` lists them.

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

GO ?= go
BIN := bin/vrender
# Tests find the models at <repo>/.cache (internal/testenv), so the cache location is not configurable here;
# scripts/fetch-models.sh alone honours VRENDER_CACHE (for testing the script against an empty cache).
CACHE := $(CURDIR)/.cache
MODELS_DIR := $(CACHE)/models
BENCH_MODELS := qwen3 llama3_1 deepseek_v3 gptoss gemma3

PORT ?= 8000
RUN_MODEL ?= $(MODELS_DIR)/qwen3
RUN_NAME ?= Qwen/Qwen3-8B

# go test's timeout is per package test binary: the slowest one (tokenizer parity over five models) takes
# about a minute on 2 cores; the margin is for a loaded machine.
TEST_TIMEOUT ?= 10m
FUZZTIME ?= 5s

export VRENDER_CACHE := $(CACHE)

.NOTPARALLEL:
.PHONY: help models build run test vet fmt-check unit-test fuzz-short fuzz bench clean distclean

help: ## List the targets.
	@echo "vrender make targets:"
	@grep -E '^[a-z][a-z-]*:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([a-z-]+):.*## /  \1\t/' | expand -t 14

models: ## Fetch the five test tokenizers and the reference binding into .cache (offline once cached).
	@scripts/fetch-models.sh

build: ## Build bin/vrender.
	$(GO) build -o $(BIN) ./cmd/vrender

run: models build ## Serve the qwen3 tokenizer on :8000 as Qwen/Qwen3-8B (PORT=, RUN_MODEL=, RUN_NAME= override).
	@echo "vrender: serving $(RUN_MODEL) as $(RUN_NAME) on http://127.0.0.1:$(PORT); try from another shell:"
	@echo "  curl -s http://127.0.0.1:$(PORT)/v1/models"
	@echo "  curl -s http://127.0.0.1:$(PORT)/tokenize -H 'Content-Type: application/json' \\"
	@echo "       -d '{\"model\": \"$(RUN_NAME)\", \"prompt\": \"Hello, world!\"}'"
	@echo "  curl -s http://127.0.0.1:$(PORT)/detokenize -H 'Content-Type: application/json' \\"
	@echo "       -d '{\"model\": \"$(RUN_NAME)\", \"tokens\": [9707, 11, 1879, 0]}'"
	@echo "Ctrl-C stops it."
	$(BIN) serve $(RUN_MODEL) --port $(PORT) --served-model-name $(RUN_NAME)

test: models vet fmt-check unit-test fuzz-short ## Vet, gofmt check, all tests, then every fuzz target for FUZZTIME (5s).

vet:
	$(GO) vet ./...

fmt-check:
	@files=$$(find . \( -path ./.cache -o -path ./.git -o -name testdata \) -prune -o -name '*.go' -print); \
	bad=$$(gofmt -l $$files); \
	if [ -n "$$bad" ]; then echo "gofmt would change:"; echo "$$bad"; exit 1; fi; \
	echo "gofmt: ok"

unit-test:
	$(GO) test -count=1 -timeout=$(TEST_TIMEOUT) ./...

fuzz-short:
	@FUZZTIME=$(FUZZTIME) scripts/fuzz.sh

fuzz: models ## Run every fuzz target for 60s (FUZZTIME= overrides).
	@FUZZTIME=$(if $(filter command line environment,$(origin FUZZTIME)),$(FUZZTIME),60s) scripts/fuzz.sh

bench: models build ## Go benchmarks, then `vrender bench tokenize` against the reference for each model.
	$(GO) test -run='^$$' -bench=. -benchmem ./...
	@for m in $(BENCH_MODELS); do \
		echo "== bench tokenize $$m"; \
		$(BIN) bench tokenize --model $(MODELS_DIR)/$$m; \
	done
	@echo "== bench render qwen3"; $(BIN) bench render --model $(MODELS_DIR)/qwen3

clean: ## Remove build outputs (bin/) and Go's test cache.
	rm -rf bin
	$(GO) clean -testcache

distclean: clean ## Also remove the model and reference cache (.cache).
	rm -rf $(CACHE)

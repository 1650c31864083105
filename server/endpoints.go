package server

import (
	"net/http"
	"sync/atomic"

	"github.com/go-chi/chi/v5"
)

// endpoint indexes the per-endpoint counters: an array index, so that
// recording a request costs no label lookup beyond one map read of the
// route pattern.
type endpoint int

const (
	epHealth endpoint = iota
	epVersion
	epModels
	epTokenize
	epDetokenize
	epChatRender
	epCompletionRender
	epChatDerender
	epCompletionDerender
	epChat
	epCompletion
	epMetrics
	epMessagesRender
	epResponsesRender
	epMessages
	epResponses
	epMessagesCountTokens
	epOther // unrouted paths (404/405)
	numEndpoints
)

// endpointPaths are the endpoint label values: the route paths (set by
// init from routeTable), as vLLM's http_requests_total names its handlers.
var endpointPaths = [numEndpoints]string{epOther: "other"}

// endpointByPath finds an endpoint by its route pattern; read-only once
// init has filled it from routeTable.
var endpointByPath = make(map[string]endpoint, numEndpoints)

// routeEndpoint is the endpoint chi routed r to (after routing).
func routeEndpoint(r *http.Request) endpoint {
	if rc := chi.RouteContext(r.Context()); rc != nil {
		if ep, ok := endpointByPath[rc.RoutePattern()]; ok {
			return ep
		}
	}
	return epOther
}

// minCode and maxCode bound the status codes counted one by one; others
// are counted as 599's neighbour "other" would be, but net/http never
// writes them.
const (
	minCode = 100
	maxCode = 599
)

// serverMetrics are the HTTP layer's counters and gauges, all atomics.
type serverMetrics struct {
	// requests counts finished requests by endpoint and status code.
	requests [numEndpoints][maxCode - minCode + 1]atomic.Int64
	// prompt and generated count tokens by endpoint (the orchestrator
	// counts its own endpoints').
	prompt, generated [numEndpoints]atomic.Int64
	inflightRequests  atomic.Int64
	inflightStreams   atomic.Int64
	// unauthorized counts requests refused for a missing or wrong key.
	unauthorized atomic.Int64
	// limited counts requests refused by a size or count limit.
	limited atomic.Int64
}

func (m *serverMetrics) request(ep endpoint, code int) {
	if code < minCode || code > maxCode {
		code = maxCode
	}
	m.requests[ep][code-minCode].Add(1)
}

// Package media gets an image's bytes from the URL a client put in a
// request, as vLLM's MediaConnector does (vllm/multimodal/media/connector.py
// and vllm/connections.py at bf578e1), without its unsafe parts.
//
// A Fetcher reads three kinds of URL: `data:` URLs (base64 only, strictly
// decoded), `http(s)` URLs (limited to Config.AllowedMediaDomains when set,
// with vLLM's timeout, retry and redirect rules) and `file:` URLs (only
// below Config.AllowedLocalMediaPath). Beyond vLLM, every answer is capped at
// Config.MaxMediaBytes, and no connection reaches a loopback, private,
// link-local or otherwise non-public address unless
// Config.AllowPrivateMediaURLs is set: the check runs on the resolved
// address of every dial, redirects and DNS answers included.
//
// Every failure is an *Error carrying the HTTP status, error type and message
// vLLM answers with (or, for the checks vLLM lacks, the ones
// docs/compatibility.md names), so a server maps it without looking inside.
package media

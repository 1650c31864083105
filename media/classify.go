package media

import (
	"net/url"
	"strings"
)

type urlKind uint8

const (
	urlData urlKind = iota + 1
	urlHTTP         // any scheme starting with "http", as vLLM's test
	urlFile
	urlOther
)

// classified is a URL sorted the way MediaConnector.load_from_url sorts
// it: a case-insensitive "data:" prefix first (never parsed), then the
// parsed scheme.
type classified struct {
	kind urlKind
	u    *url.URL // nil for data: URLs
	host string   // lowercased hostname of an http(s) URL, as urllib3's
}

func classify(raw string) (classified, error) {
	if hasDataPrefix(raw) {
		return classified{kind: urlData}, nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		// urllib3's parse_url raises LocationParseError, a ValueError.
		return classified{}, badRequest(KindScheme, "Failed to parse: "+raw)
	}
	switch {
	case strings.HasPrefix(u.Scheme, "http"): // url.Parse lowercases the scheme, as urllib3
		return classified{kind: urlHTTP, u: u, host: strings.ToLower(u.Hostname())}, nil
	case u.Scheme == "file":
		return classified{kind: urlFile, u: u}, nil
	}
	return classified{kind: urlOther, u: u}, nil
}

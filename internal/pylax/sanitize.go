package pylax

import (
	"regexp"
	"strings"
)

// vLLM passes every error message through sanitize_message before sending
// it, so that memory addresses, tracebacks and file paths never reach a
// client. The same rewriting applies here so that messages match, including
// the odd cases (a served model named /home/me/m reads "<path>").
var (
	sanitizeAddr      = regexp.MustCompile(` at 0x[0-9a-f]+>`)
	sanitizeTraceback = regexp.MustCompile(`\n?\s*File "[^"]+", line \d+, in \S+(\n\s+.*)?`)
	sanitizeRootPath  = regexp.MustCompile(`/(?:home|usr|opt|var|tmp|root|lib|mnt|srv)(?:/[\p{L}\p{N}_.\-]+)+`)
	sanitizeFilePath  = regexp.MustCompile(`(?:/[\p{L}\p{N}_\-]+)+/[\p{L}\p{N}_\-]+\.[\p{L}\p{N}_]+`)
)

// SanitizeMessage rewrites an error message as vLLM's sanitize_message does.
func SanitizeMessage(msg string) string {
	msg = sanitizeAddr.ReplaceAllLiteralString(msg, ">")
	msg = sanitizeTraceback.ReplaceAllLiteralString(msg, "")
	msg = sanitizeRootPath.ReplaceAllLiteralString(msg, "<path>")
	msg = sanitizeFilePath.ReplaceAllLiteralString(msg, "<path>")
	return strings.TrimSpace(msg)
}

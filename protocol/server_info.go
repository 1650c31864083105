package protocol

// VersionResponse is the body of GET /version.
type VersionResponse struct {
	Version string `json:"version"`
}

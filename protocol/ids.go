package protocol

import (
	"crypto/rand"
	"encoding/hex"
)

// RandomUUID returns a random version-4 UUID as 32 lowercase hex digits,
// the form of vLLM's random_uuid() (uuid.uuid4().hex) used in request and
// permission IDs.
func RandomUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (it crashes the program instead)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return hex.EncodeToString(b[:])
}

package protocol

import (
	"errors"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/pylax"
)

func TestStopTokenIDsBeyondInt64(t *testing.T) {
	cases := []struct {
		ids, want string // want "" accepts
	}{
		{ids: `[9223372036854775807]`},
		{ids: `[-9223372036854775808]`},
		{ids: `[9223372036854775808]`, want: "Input should be less than or equal to 9223372036854775807"},
		{ids: `[18446744073709551616]`, want: "Input should be less than or equal to 9223372036854775807"},
		{ids: `[-9223372036854775809]`, want: "Input should be greater than or equal to -9223372036854775808"},
	}
	for _, tc := range cases {
		body := `{"messages":[{"role":"user","content":"x"}],"stop_token_ids":` + tc.ids + `}`
		r, err := DecodeChatCompletionRequest([]byte(body))
		if tc.want == "" {
			if err != nil || len(r.StopTokenIDs) != 1 || r.StopTokenIDs[0] == 0 {
				t.Errorf("%s: %v %v", tc.ids, r, err)
			}
			continue
		}
		var ve *pylax.ValidationError
		if !errors.As(err, &ve) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.ids, err, tc.want)
		}
	}
}

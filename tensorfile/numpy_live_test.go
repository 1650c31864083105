package tensorfile

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/testenv"
)

// TestNumpyLive is a differential test against numpy's np.load
// (testdata/numpy_live.py): on random arrays of every dtype torch takes, in
// both orders and all three format versions, whole, cut short and with a
// bent header, Load gives numpy's tensor or numpy's message. Where numpy
// loads a header Load refuses as outside its literal subset, the case is
// counted and must stay rare.
func TestNumpyLive(t *testing.T) {
	py := testenv.PillowPython(t)
	out, err := exec.Command(py, "testdata/numpy_live.py", "31").Output()
	if err != nil {
		t.Fatalf("numpy_live.py: %v", err)
	}
	var n, loaded, refused, subset int
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var c struct {
			B64   string `json:"b64"`
			DType string `json:"dtype"`
			Shape []int  `json:"shape"`
			Hex   string `json:"hex"`
			Error string `json:"error"`
			EType string `json:"etype"`
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		payload, _ := base64.StdEncoding.DecodeString(c.B64)
		n++
		got, err := Load(payload, 1<<20)
		switch {
		case c.Error == "" && err != nil:
			// numpy takes a few headers Load refuses (docs/compatibility.md):
			// literals outside the subset Load parses, and a descr with a
			// subarray count ('3u2'); anything else is a failure.
			if !strings.HasPrefix(err.Error(), "Cannot parse header") && !subarrayDescr.MatchString(err.Error()) {
				t.Errorf("%x: numpy loads it, Load: %v", payload[:min(len(payload), 80)], err)
			}
			subset++
		case c.Error == "":
			loaded++
			if got.DType.String() != c.DType || fmt.Sprint(got.Shape) != fmt.Sprint(c.Shape) && len(c.Shape)+len(got.Shape) > 0 ||
				hex.EncodeToString(got.Data) != c.Hex {
				t.Errorf("%x: Load %s %v, numpy %s %v", payload[:min(len(payload), 80)], got.DType, got.Shape, c.DType, c.Shape)
			}
		case err == nil:
			t.Errorf("%x: numpy refuses it (%s), Load took it", payload[:min(len(payload), 80)], c.Error)
		default:
			refused++
			// Only numpy's ValueErrors carry a message vLLM answers (400);
			// the tokenizer's errors on a bent header are its 500s.
			if c.EType == "ValueError" && (strings.HasPrefix(c.Error, "malformed node or string") &&
				strings.HasPrefix(err.Error(), "Cannot parse header") || subarrayDescr.MatchString(err.Error())) {
				// An expression Python parses and literal_eval refuses
				// (a call, an operator, an f-string): Load, which parses
				// literals alone, calls it unparsable; or a subarray descr,
				// which numpy refuses later. Both 400.
				subset++
				continue
			}
			if c.EType == "ValueError" && err.Error() != sanitize(c.Error) {
				t.Errorf("%x:\n Load  %q\n numpy %q", payload[:min(len(payload), 80)], err.Error(), c.Error)
			}
		}
	}
	if loaded < 60 || refused < 60 || subset > n/20 {
		t.Fatalf("%d cases: %d loaded, %d refused, %d outside the parsed subset", n, loaded, refused, subset)
	}
}

// sanitize is vLLM's sanitize_message on an error text: object addresses go.
func sanitize(msg string) string {
	return regexp.MustCompile(` at 0x[0-9a-f]+>`).ReplaceAllString(msg, ">")
}

// subarrayDescr is Load's refusal of a descr with a subarray count.
var subarrayDescr = regexp.MustCompile(`^descr is not a valid dtype descriptor: '[<>|=]?[0-9]`)

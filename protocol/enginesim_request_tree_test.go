package protocol

import (
	"bytes"
	"encoding/base64"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/internal/wire"
)

// generateTreeCases are bodies for the bytes/tree differential: the table
// of TestDecodeGenerateRequest's kinds (accepted, each kind of field error,
// the model validators) plus bodies the sim sees with pictures.
var generateTreeCases = []string{
	``, `null`, ` null `, `[]`, `1`, `"x"`, `{}`, "\ufeff{\"token_ids\":[1],\"sampling_params\":{}}",
	`{"token_ids":[1,2],"sampling_params":{}}`,
	`{"request_id":"x","token_ids":["1",2.0],"sampling_params":{"max_tokens":"16","n":2,"seed":3,"stop_token_ids":[7],"logprobs":1,"logit_bias":{"5":1.5}},"stream":1}`,
	`{"token_ids":[1],"sampling_params":{},"kv_transfer_params":{"do_remote_decode":true},"ec_transfer_params":null}`,
	`{"token_ids":[],"sampling_params":{}}`,
	`{"token_ids":[-1],"sampling_params":{}}`,
	`{"token_ids":[1],"sampling_params":3}`,
	`{"token_ids":[1],"sampling_params":{"n":0}}`,
	`{"token_ids":[1],"sampling_params":{"n":2,"temperature":0}}`,
	`{"token_ids":[1],"sampling_params":{},"cache_salt":""}`,
	`{"token_ids":[1],"sampling_params":{},"content_parts":[{"type":"image_url"}],"features":{"a":1}}`,
	`{"token_ids":[1],"sampling_params":{},"stream_options":[]}`,
	`{"token_ids":[1],"sampling_params":{"detokenize":false},"output_mode":"text"}`,
	`{"token_ids":[1],"sampling_params":{},"output_mode":"bytes","request_id":5,"priority":"x"}`,
	`{"token_ids":[[1]],"sampling_params":null,"token_offsets":[[0,1],[1],3,[0,"a"]]}`,
	`{"token_ids":[1],"sampling_params":{"logit_bias":{"x":1},"bad_words":["a"],"output_kind":3}}`,
	`{"token_ids":[1],"sampling_params":{},"reasoning_parser_kwargs":{"chat_template_kwargs":1,"other":2}}`,
	`{"token_ids":[1],"sampling_params":{},"token_ids":[2]}`,
	`{"token_ids":[1, 2],  "sampling_params" : { "structured_outputs":{"json":{"type":"object"}}} , "model":"m"}  `,
	generateImageBody(1 << 10),
}

// generateImageBody is a generate request as the orchestrator sends one
// with a picture: features whose one item's kwargs_data holds about
// payload bytes of base64.
func generateImageBody(payload int) string {
	pixels := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0x3c, 0x81, 0x07}, payload*3/4/3+1))
	ids := strings.Repeat("151655,", 255)
	return `{"request_id":"chatcmpl-1","token_ids":[151644,872,198,151652,` + ids + `151655,151653,151645],` +
		`"features":{"mm_hashes":{"image":["0123456789abcdef"]},"mm_placeholders":{"image":[{"offset":4,"length":256}]},` +
		`"kwargs_data":{"image":[{"pixel_values":{"type":"tensor","dtype":"bfloat16","shape":[1024,1176],"data":"` + pixels + `"},` +
		`"image_grid_thw":{"type":"tensor","dtype":"int64","shape":[3],"data":"AQAAAAAAAAAgAAAAAAAAACAAAAAAAAAA"}}]}},` +
		`"sampling_params":{"max_tokens":64,"temperature":0,"detokenize":false},"stream":true,"stream_options":{"include_usage":true}}`
}

func TestDecodeGenerateRequestTreeAsBytes(t *testing.T) {
	for _, body := range generateTreeCases {
		checkGenerateTreeAsBytes(t, []byte(body))
	}
}

// FuzzDecodeGenerateRequestTreeAsBytes: for every body that ParseJSONBody
// accepts (the bytes path's input), ParseJSONTree accepts it too and
// DecodeGenerateRequestTree gives the request DecodeGenerateRequest gives,
// or the same error, down to the bytes of the 400 body.
func FuzzDecodeGenerateRequestTreeAsBytes(f *testing.F) {
	for _, body := range generateTreeCases {
		f.Add([]byte(body))
	}
	f.Fuzz(checkGenerateTreeAsBytes)
}

func checkGenerateTreeAsBytes(t *testing.T, data []byte) {
	t.Helper()
	text, errBytes := ParseJSONBody(data)
	treeText, root, errTree := ParseJSONTree(data)
	if (errBytes == nil) != (errTree == nil) {
		t.Fatalf("%.200q: ParseJSONBody err %v, ParseJSONTree err %v", data, errBytes, errTree)
	}
	if errBytes != nil {
		if len(data) > 0 {
			return
		}
		// engine-sim hands an empty body on with no tree.
		text, treeText, root = data, data, nil
	}
	want, wantInfo, wantErr := DecodeGenerateRequest(text)
	got, gotInfo, gotErr := DecodeGenerateRequestTree(treeText, root)
	if wantErr != nil || gotErr != nil {
		if w, g := errorBody(t, wantErr), errorBody(t, gotErr); !bytes.Equal(w, g) {
			t.Fatalf("%.200q: errors differ:\nbytes %s\ntree  %s", data, w, g)
		}
		return
	}
	if _, named := root.Get("request_id"); !named { // each made its own UUID
		if len(got.RequestID) != 32 || len(want.RequestID) != 32 {
			t.Fatalf("%.200q: request ids %q, %q", data, want.RequestID, got.RequestID)
		}
		got.RequestID = want.RequestID
	}
	if !reflect.DeepEqual(got, want) || gotInfo != wantInfo {
		t.Fatalf("%.200q: tree gives %+v %+v\nbytes give %+v %+v", data, got, gotInfo, want, wantInfo)
	}
}

// errorBody is what engine-sim answers for a decoding error (nil: none).
func errorBody(t *testing.T, err error) []byte {
	if err == nil {
		return nil
	}
	var ve *pylax.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("non-validation error %T: %v", err, err)
	}
	b, err := MarshalJSON(NewValidationErrorResponse(ve))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// BenchmarkDecodeGenerateRequest decodes a 448x448 picture's request
// (3.2 MB of base64) as engine-sim did (the bytes path, after the body
// was parsed for its checks: ParseJSONTree + DecodeGenerateRequest) and
// does now (ParseJSONTree + DecodeGenerateRequestTree), and the bytes path
// alone.
func BenchmarkDecodeGenerateRequest(b *testing.B) {
	body := []byte(generateImageBody(3_200_000))
	for _, bc := range []struct {
		name   string
		decode func(text []byte, root *wire.Node) error
	}{
		{"sim-before", func(text []byte, _ *wire.Node) error {
			_, _, err := DecodeGenerateRequest(text)
			return err
		}},
		{"sim-after", func(text []byte, root *wire.Node) error {
			_, _, err := DecodeGenerateRequestTree(text, root)
			return err
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				text, root, err := ParseJSONTree(body)
				if err == nil {
					err = bc.decode(text, root)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("bytes", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if _, _, err := DecodeGenerateRequest(body); err != nil {
				b.Fatal(err)
			}
		}
	})
}

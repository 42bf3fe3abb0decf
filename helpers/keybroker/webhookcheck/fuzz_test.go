package webhookcheck

import (
	"bytes"
	"testing"
)

// FuzzReadRequest: the request reader, lnk-webhook's one parser of what
// the listener hands it, never panics, never takes a body past 1 MiB or
// a length it wasn't given, and reads back what WriteRequest wrote.
func FuzzReadRequest(f *testing.F) {
	f.Add([]byte("{\"method\":\"POST\",\"headers\":{\"webhook-id\":\"m\"},\"length\":2}\nhi"))
	f.Fuzz(func(t *testing.T, data []byte) {
		req, err := ReadRequest(bytes.NewReader(data))
		if err != nil {
			return
		}
		if len(req.Body) != req.Length || req.Length > MaxBody {
			t.Fatalf("a body of %d bytes for a length of %d", len(req.Body), req.Length)
		}
		var b bytes.Buffer
		if err := WriteRequest(&b, req); err != nil {
			t.Fatal(err)
		}
		again, err := ReadRequest(&b)
		if err != nil || !bytes.Equal(again.Body, req.Body) || again.Method != req.Method {
			t.Fatalf("did not read back: %v", err)
		}
	})
}

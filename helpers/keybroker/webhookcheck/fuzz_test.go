package webhookcheck

import (
	"bytes"
	"testing"
)

// FuzzFrameReader: the check reader, lnk-webhook's one parser of what
// the listener hands it, never panics, never takes a body past 1 MiB or
// a length it wasn't given, and reads back what WriteFrame wrote.
func FuzzFrameReader(f *testing.F) {
	f.Add([]byte("{\"seq\":1,\"method\":\"POST\",\"headers\":{\"webhook-id\":\"m\"},\"secrets\":5,\"length\":2}\nabcd\nhi"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fr := NewFrameReader(bytes.NewReader(data))
		for range 4 {
			seq, raw, req, err := fr.Next()
			if err != nil {
				return
			}
			if len(req.Body) != req.Length || req.Length > MaxBody || len(raw) == 0 || len(raw) > maxSecretsInput {
				t.Fatalf("a body of %d bytes for a length of %d, secrets of %d", len(req.Body), req.Length, len(raw))
			}
			s, err := ReadSecrets(bytes.NewReader(raw))
			if err != nil {
				continue // Keeper.Check refuses such a check 503
			}
			var b bytes.Buffer
			if err := WriteFrame(&b, seq, s, req); err != nil {
				t.Fatal(err)
			}
			seq2, raw2, again, err := NewFrameReader(&b).Next()
			if err != nil || seq2 != seq || !bytes.Equal(again.Body, req.Body) || again.Method != req.Method {
				t.Fatalf("did not read back: %v", err)
			}
			s2, err := ReadSecrets(bytes.NewReader(raw2))
			if err != nil || !bytes.Equal(s2.Current.Bytes(), s.Current.Bytes()) {
				t.Fatalf("the secrets did not read back: %v", err)
			}
			s.Destroy()
			s2.Destroy()
		}
	})
}

// FuzzVerdictReader: the listener's parser of what lnk-webhook answers
// (a process that read a stranger's post) never panics and passes only
// a verdict a check can give: a 200 with an id and a scheme, or a
// refusal with neither.
func FuzzVerdictReader(f *testing.F) {
	f.Add([]byte("{\"seq\":3,\"status\":200,\"id\":\"m\",\"scheme\":\"link\"}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		vr := NewVerdictReader(bytes.NewReader(data))
		for range 4 {
			_, v, err := vr.Next()
			if err != nil {
				return
			}
			switch v.Status {
			case StatusOK:
				if v.ID == "" || (v.Scheme != "link" && v.Scheme != "github") {
					t.Fatalf("a 200 without its id or scheme: %+v", v)
				}
			case StatusBadRequest, StatusUnauthorized, StatusServiceUnavailable:
				if v.ID != "" || v.Scheme != "" {
					t.Fatalf("a refusal with an id: %+v", v)
				}
			default:
				t.Fatalf("status %d passed", v.Status)
			}
			if len(v.Reason) > maxReason {
				t.Fatalf("a reason of %d bytes", len(v.Reason))
			}
		}
	})
}

package endpoint

import (
	"bytes"
	"net/http"
	"testing"

	"lnk.dev/lnk/internal/toolname"
)

// The owner's client reads what answers the agent's port: a stream that
// is cut, garbled or huge fails, never panics, and text is only what its
// events say.
func FuzzReadStream(f *testing.F) {
	f.Add([]byte("{\"text\":\"a\"}\n{\"done\":true,\"seq\":4}\n"))
	f.Add([]byte("{\"text\":\"a\"}\n"))
	f.Add([]byte("{\"error\":\"model off\"}\n"))
	f.Add([]byte("{\"error\":\"conversation x doesn't exist\",\"rule\":\"no-conversation\"}\n"))
	f.Add([]byte("{\"text\":1}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var got bytes.Buffer
		seq, err := readStream(bytes.NewReader(b), func(s string) { got.WriteString(s) })
		if err != nil && seq != 0 {
			t.Fatalf("failed with seq %d", seq)
		}
		if got.Len() > len(b) {
			t.Fatalf("more text (%d) than the stream held (%d)", got.Len(), len(b))
		}
	})
}

// The endpoint's message body: exactly {"thread","text"[,"new"]},
// nothing more.
func FuzzMessageBody(f *testing.F) {
	f.Add([]byte(`{"thread":"main","text":"hi"}`))
	f.Add([]byte(`{"thread":"work-1","text":"hi","new":true}`))
	f.Add([]byte(`{"thread":"work-1","text":"hi","new":true,"New":false}`))
	f.Add([]byte(`{"thread":"main","text":"hi","from":"x"}`))
	f.Add([]byte(`{"thread":"main","text":"hi"}{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, _ := http.NewRequest(http.MethodPost, "/", bytes.NewReader(b))
		m, err := decode[MessageRequest](r, maxBody)
		if err == nil && len(m.Text)+len(m.Thread) > len(b) {
			t.Fatal("decoded more than was sent")
		}
	})
}

// FuzzSubagentHeaders: Link-Tools and Link-Model are read strictly or
// refused: a list taken is never nil (none is [], never every tool), each
// name a tool's.
func FuzzSubagentHeaders(f *testing.F) {
	f.Fuzz(func(t *testing.T, tools, model string) {
		var ms []string
		if model != "" {
			ms = []string{model}
		}
		s, err := parseSubagent(tools, ms)
		if err != nil {
			return
		}
		if s.Tools == nil || len(s.Tools) > maxSubagentTools {
			t.Fatalf("taken %+v", s)
		}
		for _, n := range s.Tools {
			if toolname.CheckTool(n) != nil {
				t.Fatalf("took %q", n)
			}
		}
		if s.Model != "" && toolname.CheckModel(s.Model) != nil {
			t.Fatalf("took model %q", s.Model)
		}
	})
}

package localmodel

import (
	"testing"

	"lnk.dev/lnk/internal/textsafe"
)

// FuzzProbeAnswers: whatever a port answers, no parser panics, and every
// name kept is one printable line of at most 256 bytes; at most 1000 a
// runtime.
func FuzzProbeAnswers(f *testing.F) {
	f.Add([]byte(`{"models":[{"name":"llama3.2:latest","model":"llama3.2:latest"}]}`))
	f.Add([]byte(`{"object":"list","data":[{"id":"m.gguf","owned_by":"llamacpp"},{"id":"link-builtin","owned_by":"link"}]}`))
	f.Add([]byte(`{"model_path":"/models/gemma.gguf"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		check := func(names []string) {
			if len(names) > maxModels {
				t.Fatalf("%d names", len(names))
			}
			for _, n := range names {
				if n == "" || len(n) > maxName || textsafe.Line(n) != n {
					t.Fatalf("name %q kept", n)
				}
			}
		}
		names, _ := parseOllamaTags(b)
		check(names)
		names, _ = parseLlamaModels(b)
		check(names)
		if n, err := parseProps(b); err == nil {
			check([]string{n})
		}
		parseBuiltinModels(b)
	})
}

package secrets

import (
	"bytes"
	"slices"
	"testing"
)

// FuzzParse: the parser never panics, a file it accepts encodes to one it
// accepts with the same secrets, and a refusal never quotes a value.
func FuzzParse(f *testing.F) {
	f.Add([]byte("[secrets.A]\nvalue = \"x\"\nagents = []\n"))
	f.Add([]byte("[secrets.A]\nvalue = \"x\"\ninternet_host = \"a.example.com\"\nheaders = [\"x-api-key\"]\nagents = []\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		orig := bytes.Clone(data)
		file, err := Parse(data)
		if err != nil {
			if bytes.Contains(orig, []byte("value")) && len(err.Error()) > 400 {
				t.Fatalf("refusal too long: %v", err)
			}
			return
		}
		defer file.Destroy()
		again, err := Parse(file.Encode())
		if err != nil {
			t.Fatalf("re-encoded file refused: %v", err)
		}
		defer again.Destroy()
		for name, e := range file.Secrets {
			a := again.Secrets[name]
			if a == nil || !bytes.Equal(a.Value.Bytes(), e.Value.Bytes()) || a.InternetHost != e.InternetHost || !slices.Equal(a.Seal().Headers, e.Seal().Headers) || len(a.Agents) != len(e.Agents) {
				t.Fatalf("secret %s changed through Encode", name)
			}
		}
	})
}

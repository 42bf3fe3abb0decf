package secrets

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/testenv"
)

// A sealed secret's grant names the headers its value goes in: none
// means Authorization alone; named ones are kept in canonical form,
// written to the file and read back; a header that describes the
// request or its connection, a malformed or repeated name, or headers
// for a secret kept plain are refused, in Create and in Parse.
func TestSealedHeaders(t *testing.T) {
	home := testenv.Home(t)
	if err := Create(home, "GITHUB_TOKEN", val(t, "ghp_v"), "api.github.com"); err != nil {
		t.Fatal(err)
	}
	if err := Create(home, "MODEL_KEY_A", val(t, "sk-v"), "api.anthropic.com", "x-api-key", "Anthropic-Key"); err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]string{{"Host"}, {"content-length"}, {"Accept-Encoding"}, {"range"}, {"X Api"}, {"X-Api:"}, {""},
		{"X-A", "x-a"}, {"A", "B", "C", "D", "E", "F", "G", "H", "I"}} {
		if err := Create(home, "BAD", val(t, "v"), "api.example.com", bad...); !errors.Is(err, ErrSyntax) {
			t.Errorf("headers %q: %v", bad, err)
		}
	}
	if err := Create(home, "PLAIN", val(t, "v"), "", "X-Api-Key"); !errors.Is(err, ErrSyntax) {
		t.Errorf("headers for a plain secret: %v", err)
	}
	raw, err := os.ReadFile(filepath.Join(home, ".lnk", FileName))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), "[secrets.MODEL_KEY_A]\nvalue = \"sk-v\"\ninternet_host = \"api.anthropic.com\"\nheaders = [\"X-Api-Key\", \"Anthropic-Key\"]\n") ||
		strings.Count(string(raw), "headers =") != 1 || strings.Contains(string(raw), "BAD") || strings.Contains(string(raw), "PLAIN") {
		t.Fatalf("secrets.toml:\n%s", raw)
	}
	f, err := Load(home)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Destroy()
	if s := f.Secrets["GITHUB_TOKEN"].Seal(); s.Host != "api.github.com" || !slices.Equal(s.Headers, []string{"Authorization"}) {
		t.Errorf("the default: %+v", s)
	}
	if s := f.Secrets["MODEL_KEY_A"].Seal(); s.Host != "api.anthropic.com" || !slices.Equal(s.Headers, []string{"X-Api-Key", "Anthropic-Key"}) {
		t.Errorf("named headers: %+v", s)
	}
	l, err := List(home)
	if err != nil || len(l) != 2 || !slices.Equal(l[0].Headers, []string{"Authorization"}) || !slices.Equal(l[1].Headers, []string{"X-Api-Key", "Anthropic-Key"}) {
		t.Errorf("list: %+v %v", l, err)
	}
	for name, text := range map[string]string{
		"headers, plain":  "[secrets.A]\nvalue = \"x\"\nheaders = [\"X-Api-Key\"]\n",
		"reserved header": "[secrets.A]\nvalue = \"x\"\ninternet_host = \"a.example.com\"\nheaders = [\"Transfer-Encoding\"]\n",
		"header twice":    "[secrets.A]\nvalue = \"x\"\ninternet_host = \"a.example.com\"\nheaders = [\"X-K\", \"x-k\"]\n",
		"bad header":      "[secrets.A]\nvalue = \"x\"\ninternet_host = \"a.example.com\"\nheaders = [\"X-K\\r\\nHost: evil\"]\n",
		"not a list":      "[secrets.A]\nvalue = \"x\"\ninternet_host = \"a.example.com\"\nheaders = \"X-K\"\n",
	} {
		if f, err := Parse([]byte(text)); err == nil {
			f.Destroy()
			t.Errorf("%s: accepted", name)
		} else if strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: a refusal spans lines: %v", name, err)
		}
	}
}

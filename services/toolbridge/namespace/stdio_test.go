package namespace

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/secret"
	"lnk.dev/lnk/services/toolbridge/tooldef"
)

// TestProviderFoundOnlyOnItsOwnPATH: a provider named by a bare name
// that the bridge's PATH holds and its own does not is refused, never
// started from the bridge's PATH; with its folder on its own PATH (the
// positive control) it starts and answers.
func TestProviderFoundOnlyOnItsOwnPATH(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(exe, filepath.Join(dir, "lnk-ns-provider")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(filepath.ListSeparator)+os.Getenv("PATH")) // the bridge's PATH
	def := func(path string) *tooldef.Definition {
		d := &tooldef.Definition{Name: "alpha", Command: []string{"lnk-ns-provider"}, Env: map[string]*secret.Value{}}
		for _, kv := range []string{"LNK_TEST_NS_PROVIDER=alpha", "LNK_TEST_NS_VERSION=1", "PATH=" + path} {
			k, v, _ := strings.Cut(kv, "=")
			d.Env[k], _ = secret.FromString(v)
		}
		return d
	}
	ctx := context.Background()
	if s, err := StartStdio(ctx, def("/usr/bin:/bin")); err == nil {
		s.Close()
		t.Fatal("a provider off its own PATH was started from the bridge's")
	} else if !strings.Contains(err.Error(), "own PATH") {
		t.Errorf("refusal %q does not say why", err)
	}
	s, err := StartStdio(ctx, def(dir+":/usr/bin:/bin"))
	if err != nil {
		t.Fatalf("a provider on its own PATH: %v", err)
	}
	defer s.Close()
	if schemas, err := s.Schemas(ctx); err != nil || len(schemas) == 0 {
		t.Fatalf("its tools: %v, %v", schemas, err)
	}
}

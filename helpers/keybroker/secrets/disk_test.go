package secrets

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"lnk.dev/lnk/internal/secret"
	"lnk.dev/lnk/internal/testenv"
)

func val(t *testing.T, s string) *secret.Value {
	t.Helper()
	v, err := secret.FromString(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestCreateGrantRevokeRemove(t *testing.T) {
	home := testenv.Home(t)
	if err := Create(home, "GITHUB_TOKEN", val(t, "ghp_secretvalue"), "api.github.com"); err != nil {
		t.Fatal(err)
	}
	if err := Create(home, "GITHUB_TOKEN", val(t, "other"), ""); !errors.Is(err, ErrExists) {
		t.Fatalf("second create: %v", err)
	}
	if err := Grant(home, "GITHUB_TOKEN", agentA); err != nil {
		t.Fatal(err)
	}
	if err := Grant(home, "NOPE", agentA); !errors.Is(err, ErrNoSecret) {
		t.Fatalf("grant of a missing secret: %v", err)
	}
	if err := Grant(home, "GITHUB_TOKEN", "main"); !errors.Is(err, ErrSyntax) {
		t.Fatalf("grant by name, not ID: %v", err)
	}
	st, err := os.Lstat(filepath.Join(home, ".lnk", FileName))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("secrets.toml mode %v (%v), want 0600", st.Mode(), err)
	}
	if st, _ := os.Lstat(filepath.Join(home, ".lnk")); st.Mode().Perm() != 0o700 {
		t.Fatalf("~/.lnk mode %v, want 0700", st.Mode())
	}
	l, err := List(home)
	if err != nil || len(l) != 1 || !l[0].Sealed || l[0].Agents[0] != agentA || l[0].InternetHost != "api.github.com" {
		t.Fatalf("list: %+v %v", l, err)
	}
	if err := Revoke(home, "GITHUB_TOKEN", agentB); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("revoke from an agent without it: %v", err)
	}
	if err := Revoke(home, "GITHUB_TOKEN", agentA); err != nil {
		t.Fatal(err)
	}
	if err := Remove(home, "GITHUB_TOKEN"); err != nil {
		t.Fatal(err)
	}
	if err := Remove(home, "GITHUB_TOKEN"); !errors.Is(err, ErrNoSecret) {
		t.Fatalf("second remove: %v", err)
	}
	data, _ := os.ReadFile(filepath.Join(home, ".lnk", FileName))
	if strings.Contains(string(data), "ghp_secretvalue") {
		t.Fatal("a removed secret's value is still in the file")
	}
	ents, _ := os.ReadDir(filepath.Join(home, ".lnk"))
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".secrets.toml.") {
			t.Fatalf("temporary file %s left behind", e.Name())
		}
	}
}

// TestNeverThroughALink: a link at ~/.lnk or at secrets.toml is refused,
// and the file it points at is neither read nor written.
func TestNeverThroughALink(t *testing.T) {
	home := testenv.Home(t)
	target := filepath.Join(home, "elsewhere.toml")
	os.WriteFile(target, []byte("[secrets.A]\nvalue = \"x\"\n"), 0o600)
	os.Mkdir(filepath.Join(home, ".lnk"), 0o700)
	os.Symlink(target, filepath.Join(home, ".lnk", FileName))
	if _, err := Load(home); !errors.Is(err, ErrUnsafe) {
		t.Fatalf("load through a link: %v", err)
	}
	if err := Create(home, "B", val(t, "y"), ""); !errors.Is(err, ErrUnsafe) {
		t.Fatalf("create through a link: %v", err)
	}
	if b, _ := os.ReadFile(target); strings.Contains(string(b), "B") {
		t.Fatal("wrote through the link")
	}

	home2 := testenv.Home(t)
	os.Mkdir(filepath.Join(home2, "real"), 0o700)
	os.Symlink(filepath.Join(home2, "real"), filepath.Join(home2, ".lnk"))
	if err := Create(home2, "B", val(t, "y"), ""); !errors.Is(err, ErrUnsafe) {
		t.Fatalf("create through a linked ~/.lnk: %v", err)
	}
	if ents, _ := os.ReadDir(filepath.Join(home2, "real")); len(ents) != 0 {
		t.Fatal("wrote into a linked ~/.lnk")
	}
}

func TestRefusesUnsafeFiles(t *testing.T) {
	home := testenv.Home(t)
	dir := filepath.Join(home, ".lnk")
	os.Mkdir(dir, 0o700)
	p := filepath.Join(dir, FileName)
	os.WriteFile(p, []byte("[secrets.A]\nvalue = \"x\"\n"), 0o644)
	os.Chmod(p, 0o644)
	if _, err := Load(home); !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("a 0644 file: %v", err)
	}
	os.Remove(p)
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(home); !errors.Is(err, ErrUnsafe) {
		t.Fatalf("a fifo: %v", err) // and it returned: it did not block
	}
	os.Remove(p)
	os.Chmod(dir, 0o755)
	if _, err := Load(home); !errors.Is(err, ErrUnsafe) {
		t.Fatalf("a 0755 ~/.lnk: %v", err)
	}
}

// TestConcurrentUpdatesAllLand: the lock keeps two writers from losing
// each other's change.
func TestConcurrentUpdatesAllLand(t *testing.T) {
	home := testenv.Home(t)
	const n = 12
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			errs <- Create(home, fmt.Sprintf("S%d", i), val(t, fmt.Sprintf("v%d", i)), "")
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	l, err := List(home)
	if err != nil || len(l) != n {
		t.Fatalf("%d secrets after %d creates: %v", len(l), n, err)
	}
}

// TestLegacyKeysAreNamedNeverRead: a file an older layout kept keys in is
// named even when unreadable (so never opened), and left as it was.
func TestLegacyKeysAreNamedNeverRead(t *testing.T) {
	home := testenv.Home(t)
	old := filepath.Join(home, "Link", "Agent")
	os.MkdirAll(filepath.Join(old, "Harnesses", "claude"), 0o700)
	os.WriteFile(filepath.Join(old, "harness.toml"), []byte("model_key = \"sk-old\"\n"), 0o000)
	os.WriteFile(filepath.Join(old, "Harnesses", "claude", ".env"), []byte("KEY=sk-old\n"), 0o000)
	got := LegacyKeys(home)
	if len(got) != 2 || got[0].Path != filepath.Join(old, "Harnesses", "claude", ".env") || got[1].Path != filepath.Join(old, "harness.toml") {
		t.Fatalf("legacy keys: %+v", got)
	}
	for _, l := range got {
		if st, err := os.Lstat(l.Path); err != nil || st.Mode().Perm() != 0 {
			t.Fatalf("%s changed: %v", l.Path, err)
		}
	}
	if len(LegacyKeys(testenv.Home(t))) != 0 {
		t.Fatal("legacy keys in a fresh home")
	}
}

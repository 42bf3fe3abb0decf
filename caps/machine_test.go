package caps

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"lnk.dev/lnk/internal/testenv"
)

// TestLoadMachineMadeAtFirstUse: a 0600 file with a random 128-bit ID and
// the hostname, read back the same by the next call; the defaults are
// the spec's (no-sandbox allowed, nothing shared, 30 days).
func TestLoadMachineMadeAtFirstUse(t *testing.T) {
	home := testenv.Home(t)
	m, err := LoadMachine(home)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(home, ".lnk", "machine.toml")
	wantMode(t, path, 0o600)
	wantMode(t, filepath.Join(home, ".lnk"), os.ModeDir|0o700)
	host, _ := os.Hostname()
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(m.ID) || m.Name != host {
		t.Fatalf("machine %+v (host %q)", m, host)
	}
	if !m.NoSandboxAllowed() || m.SharedHarness || m.SharedBridge || m.KeepMoved != 30*24*time.Hour {
		t.Fatalf("defaults: %+v", m)
	}
	data, _ := os.ReadFile(path)
	m2, err := LoadMachine(home)
	if err != nil || m2.ID != m.ID || m2.Name != m.Name {
		t.Fatalf("second read: %+v %v", m2, err)
	}
	if again, _ := os.ReadFile(path); string(again) != string(data) {
		t.Fatalf("a second use rewrote the file:\n%s\n---\n%s", data, again)
	}
}

// TestLoadMachineKeepsADeploymentsLines: a file a deployment wrote with
// its own lines (and comments, without a final newline) keeps every byte;
// the id and name are appended once, and its settings read back.
func TestLoadMachineKeepsADeploymentsLines(t *testing.T) {
	home := testenv.Home(t)
	os.MkdirAll(filepath.Join(home, ".lnk"), 0o700)
	path := filepath.Join(home, ".lnk", "machine.toml")
	pre := "# written by the deployment\nunsandboxed = false\nshared_bridge = true\nkeep_moved = \"7d\"\nname = \"box-1\""
	if err := os.WriteFile(path, []byte(pre), 0o600); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	ids := make([]string, 4)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, err := LoadMachine(home)
			if err != nil {
				t.Error(err)
				return
			}
			ids[i] = m.ID
		}()
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] || id == "" {
			t.Fatalf("one machine, several IDs: %q", ids)
		}
	}
	data, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(data), pre+"\n") || strings.Count(string(data), "id = ") != 1 || strings.Count(string(data), "name = ") != 1 {
		t.Fatalf("the deployment's lines were not kept as written, or the id was added twice:\n%s", data)
	}
	m, err := LoadMachine(home)
	if err != nil {
		t.Fatal(err)
	}
	if m.NoSandboxAllowed() || !m.SharedBridge || m.SharedHarness || m.KeepMoved != 7*24*time.Hour || m.Name != "box-1" || m.ID != ids[0] {
		t.Fatalf("read back: %+v", m)
	}
}

// TestLoadMachineRefuses: a malformed file, an unknown key, a wrong type,
// a bad id or keep_moved, a link, a mode looser than 0600: each refused by
// rule machine-file with a hint, and the file left as it was.
func TestLoadMachineRefuses(t *testing.T) {
	for _, c := range []struct{ name, text string }{
		{"syntax", "unsandboxed = "},
		{"unknown key", "unsandboxed = false\nsandbox = false\n"},
		{"unknown table", "[storage]\nkind = \"sqlite\"\n"},
		{"wrong type", "unsandboxed = \"no\"\n"},
		{"bad id", "id = \"1234\"\n"},
		{"bad keep", "keep_moved = \"forever\"\n"},
		{"zero keep", "keep_moved = \"0d\"\n"},
		{"control in name", "name = \"a\\u001b[31mb\"\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			home := testenv.Home(t)
			os.MkdirAll(filepath.Join(home, ".lnk"), 0o700)
			path := filepath.Join(home, ".lnk", "machine.toml")
			os.WriteFile(path, []byte(c.text), 0o600)
			_, err := LoadMachine(home)
			hit(t, err, ErrMachineFile)
			var r *Refusal
			if !errors.As(err, &r) || !strings.Contains(r.Hint, "lnk machine show") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("want one line and a hint naming lnk machine show: %v", err)
			}
			if b, _ := os.ReadFile(path); string(b) != c.text {
				t.Fatalf("a refused file was changed: %q", b)
			}
		})
	}
	t.Run("link", func(t *testing.T) {
		home := testenv.Home(t)
		os.MkdirAll(filepath.Join(home, ".lnk"), 0o700)
		target := filepath.Join(t.TempDir(), "elsewhere.toml")
		os.WriteFile(target, []byte("unsandboxed = true\n"), 0o600)
		os.Symlink(target, filepath.Join(home, ".lnk", "machine.toml"))
		_, err := LoadMachine(home)
		hit(t, err, ErrMachineFile)
		if b, _ := os.ReadFile(target); string(b) != "unsandboxed = true\n" {
			t.Fatalf("written through the link: %q", b)
		}
	})
	t.Run("mode 0644, then 0600", func(t *testing.T) {
		home := testenv.Home(t)
		os.MkdirAll(filepath.Join(home, ".lnk"), 0o700)
		path := filepath.Join(home, ".lnk", "machine.toml")
		os.WriteFile(path, []byte("unsandboxed = false\n"), 0o644)
		os.Chmod(path, 0o644)
		_, err := LoadMachine(home)
		hit(t, err, ErrMachineFile)
		os.Chmod(path, 0o600)
		m, err := LoadMachine(home)
		if err != nil || m.NoSandboxAllowed() {
			t.Fatalf("the positive control: %+v %v", m, err)
		}
	})
}

// FuzzParseMachine: any text parses or is refused, never panics; what
// parses has a well-formed id (or none) and a positive keep_moved.
func FuzzParseMachine(f *testing.F) {
	for _, s := range []string{"", "unsandboxed = false\n", "id = \"0123456789abcdef0123456789abcdef\"\nname = \"x\"\n", "keep_moved = \"30d\"\n", "[storage]\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, _, _, err := ParseMachine(data)
		if err != nil {
			return
		}
		if m.ID != "" && !idPattern.MatchString(m.ID) || m.KeepMoved <= 0 || checkMachineName(m.Name) != nil && m.Name != "" {
			t.Fatalf("parsed %+v from %q", m, data)
		}
	})
}

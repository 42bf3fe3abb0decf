package caps

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"lnk.dev/lnk/internal/testenv"
)

// wantMode reads back path's mode and owner.
func wantMode(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	st, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode() != mode {
		t.Errorf("%s: mode %v, want %v", path, st.Mode(), mode)
	}
	if uid := st.Sys().(*syscall.Stat_t).Uid; int(uid) != os.Geteuid() {
		t.Errorf("%s: owner %d, want %d", path, uid, os.Geteuid())
	}
}

// TestEnsureLayoutMakesWhatIsMissing: after create, the check passes
// and changes nothing; each part removed is made again with its mode
// (sandbox.toml closed), and said so.
func TestEnsureLayoutMakesWhatIsMissing(t *testing.T) {
	home := testenv.Home(t)
	l := Layout{Home: home}
	if _, err := CreateAgent(home, "a"); err != nil {
		t.Fatal(err)
	}
	if err := SetHarness(home, "a", "claude"); err != nil {
		t.Fatal(err)
	}
	var notices []string
	old := Notice
	Notice = func(m string) { notices = append(notices, m) }
	t.Cleanup(func() { Notice = old })
	if err := EnsureLayout(home, "a"); err != nil {
		t.Fatal(err)
	}
	// The harness's home is the one part create cannot know of.
	if len(notices) != 1 || !strings.Contains(notices[0], "Harnesses/claude") {
		t.Fatalf("notices after create: %q", notices)
	}
	notices = nil
	own := l.OwnDir("a")
	for _, p := range []string{own + "/skills", own + "/schedule", l.AgentDir("a") + "/Harnesses", l.LogsDir("a"), l.SandboxFile("a")} {
		if err := os.RemoveAll(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := EnsureLayout(home, "a"); err != nil {
		t.Fatal(err)
	}
	dir := os.ModeDir | 0o700
	for p, m := range map[string]os.FileMode{
		own: dir, own + "/skills": dir, own + "/schedule": dir, own + "/memory": dir,
		l.AgentDir("a") + "/Harnesses": dir, l.AgentDir("a") + "/Harnesses/claude": dir,
		l.LogsDir("a"): dir, filepath.Dir(l.LogsDir("a")): dir, l.Settings() + "/agents": dir,
		l.ConfigDir("a"): dir, l.SandboxFile("a"): 0o600, l.AgentFile("a"): 0o600,
	} {
		wantMode(t, p, m)
	}
	s, err := ReadSpecFile(l.SandboxFile("a"))
	if err != nil || s.Internet == nil || s.Internet.On == nil || *s.Internet.On || s.Files == nil || len(s.Files.Write) != 0 {
		t.Fatalf("sandbox.toml made again is not closed: %+v %v", s, err)
	}
	if len(notices) != 5 {
		t.Fatalf("want one notice a part made again, got %q", notices)
	}
	if err := EnsureLayout(home, "nope"); !errors.Is(err, ErrNoAgent) {
		t.Fatalf("a missing agent: %v, want ErrNoAgent (a start never makes one)", err)
	}
	if _, err := os.Stat(l.AgentDir("nope")); !os.IsNotExist(err) {
		t.Fatalf("the check made a missing agent's folder: %v", err)
	}
}

// TestEnsureLayoutRefuses: a part that is a link, looser than its mode,
// or (as root) another user's is refused by rule layout, nothing made
// through it; after the part is put right, the same check passes.
func TestEnsureLayoutRefuses(t *testing.T) {
	type fix struct {
		name   string
		break_ func(t *testing.T, l Layout, elsewhere string)
		undo   func(t *testing.T, l Layout)
		root   bool // needs root (chown to another user)
	}
	linkTo := func(path string) func(t *testing.T, l Layout, elsewhere string) {
		return func(t *testing.T, l Layout, elsewhere string) {
			if err := os.RemoveAll(path); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(elsewhere, path); err != nil {
				t.Fatal(err)
			}
		}
	}
	rm := func(path string) func(t *testing.T, l Layout) {
		return func(t *testing.T, l Layout) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		}
	}
	chmod := func(path string, m os.FileMode) func(t *testing.T, l Layout, _ string) {
		return func(t *testing.T, l Layout, _ string) {
			if err := os.Chmod(path, m); err != nil {
				t.Fatal(err)
			}
		}
	}
	home := testenv.Home(t)
	l := Layout{Home: home}
	if _, err := CreateAgent(home, "a"); err != nil {
		t.Fatal(err)
	}
	own := l.OwnDir("a")
	for _, c := range []fix{
		{"chats a link", linkTo(own + "/chats"), rm(own + "/chats"), false},
		{"Agent a link", linkTo(own), rm(own), false},
		{"Harnesses a link", linkTo(l.AgentDir("a") + "/Harnesses"), rm(l.AgentDir("a") + "/Harnesses"), false},
		{"logs a link", linkTo(l.LogsDir("a")), rm(l.LogsDir("a")), false},
		{"sandbox.toml a link", linkTo(l.SandboxFile("a")), rm(l.SandboxFile("a")), false},
		{"agent.toml a link", linkTo(l.AgentFile("a")), rm(l.AgentFile("a")), false},
		{"memory 0755", chmod(own+"/memory", 0o755), func(t *testing.T, l Layout) { os.Chmod(own+"/memory", 0o700) }, false},
		{"Config 0750", chmod(l.ConfigDir("a"), 0o750), func(t *testing.T, l Layout) { os.Chmod(l.ConfigDir("a"), 0o700) }, false},
		{"sandbox.toml 0644", chmod(l.SandboxFile("a"), 0o644), func(t *testing.T, l Layout) { os.Chmod(l.SandboxFile("a"), 0o600) }, false},
		{"agent.toml 0640", chmod(l.AgentFile("a"), 0o640), func(t *testing.T, l Layout) { os.Chmod(l.AgentFile("a"), 0o600) }, false},
		{"logs 0711", chmod(l.LogsDir("a"), 0o711), func(t *testing.T, l Layout) { os.Chmod(l.LogsDir("a"), 0o700) }, false},
		{"Home writable by others", chmod(l.FilesDir("a"), 0o777), func(t *testing.T, l Layout) { os.Chmod(l.FilesDir("a"), 0o700) }, false},
		{"schedule another user's", func(t *testing.T, l Layout, _ string) {
			if err := os.Chown(own+"/schedule", 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}, func(t *testing.T, l Layout) { os.Chown(own+"/schedule", os.Geteuid(), os.Getegid()) }, true},
	} {
		if c.root && os.Geteuid() != 0 {
			continue // chown to another user needs root; the other parts still run
		}
		t.Run(c.name, func(t *testing.T) {
			elsewhere := t.TempDir()
			c.break_(t, l, elsewhere)
			err := EnsureLayout(home, "a")
			hit(t, err, ErrLayout)
			var r *Refusal
			if !errors.As(err, &r) || r.Hint == "" {
				t.Fatalf("no hint: %v", err)
			}
			if ents, _ := os.ReadDir(elsewhere); len(ents) != 0 {
				t.Fatalf("made something through the link: %v", ents)
			}
			c.undo(t, l)
			if err := EnsureLayout(home, "a"); err != nil {
				t.Fatalf("after the fix: %v", err)
			}
		})
	}
}

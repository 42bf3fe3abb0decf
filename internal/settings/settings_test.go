package settings

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/internal/resolve"
	"lnk.dev/lnk/internal/testenv"
)

func writeSettings(t *testing.T, home, text string, mode os.FileMode) {
	t.Helper()
	os.MkdirAll(filepath.Join(home, ".lnk"), 0o700)
	p := filepath.Join(home, File)
	if err := os.WriteFile(p, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
	os.Chmod(p, mode)
}

func TestMissingFileGivesTheSpecsDefaults(t *testing.T) {
	s, err := Load(testenv.Home(t))
	if err != nil || s != Defaults {
		t.Fatalf("%+v %v", s, err)
	}
	if Defaults.AskWait != 2*time.Minute || Defaults.ToolSessions != 8 || Defaults.ToolIdle != 5*time.Minute || Defaults.ToolStarts != 2 {
		t.Fatalf("defaults %+v are not the spec's", Defaults)
	}
}

func TestValuesAreRead(t *testing.T) {
	home := testenv.Home(t)
	writeSettings(t, home, "ask_wait = \"10m\"\ntool_sessions = 4\ntool_idle = \"30s\"\ntool_starts = 1\n", 0o600)
	s, err := Load(home)
	want := Settings{AskWait: 10 * time.Minute, ToolSessions: 4, ToolIdle: 30 * time.Second, ToolStarts: 1}
	if err != nil || s != want {
		t.Fatalf("%+v %v", s, err)
	}
}

func TestRefusals(t *testing.T) {
	for text, want := range map[string]string{
		"ask_wait = \"25h\"\n":           "ask_wait",
		"ask_wait = 5\n":                 "",
		"tool_sessions = 0\n":            "tool_sessions",
		"tool_starts = 100\n":            "tool_starts",
		"tool_idle = \"soon\"\n":         "tool_idle",
		"tool_session = 3\n":             "unknown key tool_session",
		"[sandbox]\nask_wait = \"1m\"\n": "unknown key",
		"ask_wait = \n":                  ":1:",
	} {
		_, err := Parse([]byte(text))
		if !errors.Is(err, ErrSettings) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error naming %q", text, err, want)
		}
	}
}

func TestFileThatIsALinkOrLooseIsRefused(t *testing.T) {
	home := testenv.Home(t)
	writeSettings(t, home, "tool_starts = 1\n", 0o666)
	if _, err := Load(home); err == nil || !strings.Contains(err.Error(), "writable by others") {
		t.Errorf("a file others may write: %v", err)
	}
	os.Remove(filepath.Join(home, File))
	elsewhere := filepath.Join(home, "elsewhere.toml")
	os.WriteFile(elsewhere, []byte("tool_starts = 1\n"), 0o600)
	os.Symlink(elsewhere, filepath.Join(home, File))
	if _, err := Load(home); !errors.Is(err, resolve.ErrLink) {
		t.Errorf("a file that is a link: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("ask_wait = \"10m\"\ntool_sessions = 4\n"))
	f.Add([]byte("tool_idle = \"-1s\"\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Parse(b)
		if err != nil {
			return
		}
		if s.AskWait < time.Second || s.AskWait > 24*time.Hour || s.ToolSessions < 1 || s.ToolSessions > 64 || s.ToolStarts < 1 || s.ToolStarts > 16 || s.ToolIdle < time.Second {
			t.Fatalf("accepted out-of-bounds settings %+v from %q", s, b)
		}
	})
}

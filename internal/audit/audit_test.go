package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// newDir makes a fake ~/.lnk and returns it with its log folder's handle.
func newDir(t *testing.T) (string, *os.File) {
	t.Helper()
	lnk := filepath.Join(t.TempDir(), ".lnk")
	if err := os.Mkdir(lnk, 0o700); err != nil {
		t.Fatal(err)
	}
	h, err := os.Open(lnk)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	d, err := OpenDir(h, true)
	if err != nil {
		t.Fatal(err)
	}
	return lnk, d
}

func TestWriteAppendsOneCleanJSONLinePerEntry(t *testing.T) {
	lnk, d := newDir(t)
	l, err := Open(d, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Write(Entry{Kind: KindRefuse, Agent: "ev\x1b[2Jil\u202e", Reason: "unknown handle\nforged line"}); err != nil {
		t.Fatal(err)
	}
	if err := l.Write(Entry{Kind: KindUse, Agent: "main", Cap: "ab12cd34", Route: "fs"}); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(lnk, DirName, FileName)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 lines, got %d: %q", len(lines), b)
	}
	var e Entry
	if err := json.Unmarshal([]byte(lines[0]), &e); err != nil {
		t.Fatal(err)
	}
	if e.Agent != "ev[2Jil" || e.Reason != "unknown handleforged line" || e.Kind != KindRefuse {
		t.Errorf("entry not cleaned: %+v", e)
	}
	st, _ := os.Stat(p)
	if st.Mode().Perm() != 0o600 {
		t.Errorf("log mode %o, want 600", st.Mode().Perm())
	}
}

func TestOpenRefusesALinkAFifoALooserModeAndAHardLink(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, logDir string)
	}{
		{"link to a file of the owner's", func(t *testing.T, logDir string) {
			target := filepath.Join(t.TempDir(), "zshrc")
			os.WriteFile(target, []byte("x"), 0o600)
			if err := os.Symlink(target, filepath.Join(logDir, FileName)); err != nil {
				t.Fatal(err)
			}
		}},
		{"fifo", func(t *testing.T, logDir string) {
			if err := syscall.Mkfifo(filepath.Join(logDir, FileName), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"looser mode", func(t *testing.T, logDir string) {
			p := filepath.Join(logDir, FileName)
			os.WriteFile(p, nil, 0o600)
			os.Chmod(p, 0o644)
		}},
		{"hard link", func(t *testing.T, logDir string) {
			other := filepath.Join(logDir, "other")
			os.WriteFile(other, nil, 0o600)
			if err := os.Link(other, filepath.Join(logDir, FileName)); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lnk, d := newDir(t)
			tc.plant(t, filepath.Join(lnk, DirName))
			l, err := Open(d, Options{})
			if err == nil {
				l.Close()
				t.Fatal("opened a planted log")
			}
			if !errors.Is(err, ErrNotOurs) {
				t.Fatalf("want ErrNotOurs, got %v", err)
			}
		})
	}
}

func TestOpenDirRefusesALinkedLogFolder(t *testing.T) {
	lnk := filepath.Join(t.TempDir(), ".lnk")
	os.Mkdir(lnk, 0o700)
	elsewhere := t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(lnk, DirName)); err != nil {
		t.Fatal(err)
	}
	h, _ := os.Open(lnk)
	defer h.Close()
	if d, err := OpenDir(h, true); !errors.Is(err, ErrNotOurs) {
		if d != nil {
			d.Close()
		}
		t.Fatalf("want ErrNotOurs for a linked log folder, got %v", err)
	}
}

func TestRotateKeepsTheCapAndTheNewestLines(t *testing.T) {
	lnk, d := newDir(t)
	l, err := Open(d, Options{MaxBytes: 4096, Keep: 2})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 200; i++ {
		if err := l.Write(Entry{Kind: KindUse, Agent: "main", Count: i}); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	dir := filepath.Join(lnk, DirName)
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
		st, _ := os.Stat(filepath.Join(dir, e.Name()))
		if st.Size() > 4096 {
			t.Errorf("%s is %d bytes, past the 4096 cap", e.Name(), st.Size())
		}
	}
	if strings.Join(names, ",") != "audit.log,audit.log.1,audit.log.2" {
		t.Errorf("files %v, want audit.log and two rotated", names)
	}
	b, _ := os.ReadFile(filepath.Join(dir, FileName))
	if !bytes.Contains(b, []byte(`"count":199`)) {
		t.Errorf("the newest line is not in audit.log")
	}
}

package moveentry_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/moveentry"
	"lnk.dev/lnk/internal/moveentry/movetest"
)

var (
	homeAreas  = []string{"home"}
	agentAreas = []string{"chats", "instructions", "skills"}
)

// readTar reads every entry and file of a backup archive, returning the
// entries, the files' bytes and the first error (io.EOF when whole).
func readTar(data []byte, areas []string, links bool) ([]moveentry.Entry, map[string][]byte, error) {
	r := moveentry.NewTarReader(bytes.NewReader(data), int64(len(data)), areas, links)
	var out []moveentry.Entry
	files := map[string][]byte{}
	for {
		e, err := r.Next()
		if err != nil {
			return out, files, err
		}
		if e.Kind == moveentry.KindFile {
			b, err := io.ReadAll(r.Body())
			if err != nil {
				return out, files, err
			}
			files[e.Path] = b
		}
		out = append(out, *e)
	}
}

// TestTarReaderReadsAGoodArchive is the positive control: a well-formed
// archive reads whole, its setuid bit dropped, its link carried as a
// link where links are allowed.
func TestTarReaderReadsAGoodArchive(t *testing.T) {
	ents, files, err := readTar(movetest.GoodHomeTar(), homeAreas, true)
	if err != io.EOF {
		t.Fatalf("the good archive: %v, want io.EOF", err)
	}
	modes := map[string]uint32{}
	for _, e := range ents {
		modes[e.Path] = e.Mode
		if e.Kind == moveentry.KindLink && e.Target != "notes.md" {
			t.Errorf("the link's target: %q", e.Target)
		}
	}
	if modes["home/run.sh"] != 0o755 {
		t.Errorf("home/run.sh's mode %o, want 0755: permission bits only", modes["home/run.sh"])
	}
	if string(files["home/state/notes.md"]) != "restored notes\n" {
		t.Errorf("notes.md: %q", files["home/state/notes.md"])
	}
}

// TestTarReaderRefusesHostileArchives reads each hostile archive: each is
// refused with its own reason on one line.
func TestTarReaderRefusesHostileArchives(t *testing.T) {
	check := func(name string, h movetest.HostileTar, areas []string, links bool) {
		_, _, err := readTar(h.Data, areas, links)
		if !errors.Is(err, h.Want) {
			t.Errorf("%s: %v, want %v", name, err, h.Want)
		}
		if err != nil && strings.ContainsAny(err.Error(), "\n\x1b") {
			t.Errorf("%s: the refusal is not one plain line: %q", name, err)
		}
	}
	for name, h := range movetest.HostileHomeTars() {
		check(name, h, homeAreas, true)
	}
	for name, h := range movetest.HostileAgentTars() {
		check(name, h, agentAreas, false)
	}
	// A full restore refuses the good archive's symbolic link.
	check("full-restore-symlink", movetest.HostileTar{Data: movetest.GoodHomeTar(), Want: moveentry.ErrArchiveLink}, homeAreas, false)
}

// TestTarReaderDepth32IsAllowed: 32 folders under an area read; 33 are
// refused (HostileHomeTars' 33-deep).
func TestTarReaderDepth32IsAllowed(t *testing.T) {
	b := movetest.NewTar().Dir("home", 0o700)
	p := "home"
	for i := 0; i < moveentry.MaxDepth; i++ {
		p += "/d"
		b.Dir(p, 0o700)
	}
	b.File(p+"/f", 0o600, []byte("deep"))
	if _, _, err := readTar(b.Bytes(), homeAreas, false); err != io.EOF {
		t.Fatalf("32 deep: %v, want a whole archive", err)
	}
}

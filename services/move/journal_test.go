package move_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/ownerfile"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/move"
)

const jid = "0123456789abcdef0123456789abcdef"

// journalOf is a journal of a receive of agent main (jid) with lines.
func journalOf(lines ...string) string {
	return `{"format":"lnk-placing/v1","kind":"receive","id":"` + jid + `","name":"main","staging":".moving/` + jid + `","new":true,"settings_new":true}` + "\n" +
		strings.Join(lines, "\n") + "\n"
}

var (
	jRename  = `{"step":0,"op":"rename","src":".moving/` + jid + `/files","src_dir":{"dev":1,"ino":2},"sname":"a.txt","dst":"main/Home","dst_dir":{"dev":1,"ino":3},"dname":"a.txt","moved":{"dev":1,"ino":4}}`
	jMkdir   = `{"step":1,"op":"mkdir","dst":"main","dst_dir":{"dev":1,"ino":5},"dname":"Harnesses"}`
	jSecrets = `{"step":2,"op":"secrets","added":["AGENT_MAIN_MODEL_KEY"],"granted":["SHARED_KEY"]}`
	jConf    = `{"step":3,"op":"conf"}`
	jNote    = `{"step":4,"op":"note","note":"id = \"` + jid + `\"\nname = \"main\"\nto = \"box\"\nwhen = \"2026-01-01T00:00:00Z\"\n"}`
)

// TestPlacingJournalRefusals: the journal a recovery reads back is
// parsed strictly: each line Link would not write refuses the whole of
// it (ErrJournal), never a guess. The positive controls: a journal of
// every op, with an undo begun, reads back, and so does one whose last
// line a crash cut short (that step was never taken).
func TestPlacingJournalRefusals(t *testing.T) {
	whole := journalOf(jRename, jMkdir, jSecrets, jConf, jNote, `{"undone":4}`, `{"undone":3}`)
	if err := move.ParseJournalForTest([]byte(whole)); err != nil {
		t.Fatalf("a journal Link writes: %v", err)
	}
	if err := move.ParseJournalForTest([]byte(whole + `{"undone":2`)); err != nil {
		t.Fatalf("a journal whose last line is cut short: %v", err)
	}
	notUTF8 := journalOf(strings.Replace(jRename, `"dname":"a.txt"`, `"dname":{"bytes":"Y2Fm6S50eHQ="}`, 1))
	if err := move.ParseJournalForTest([]byte(notUTF8)); err != nil {
		t.Fatalf("a name that is not UTF-8, as bytes: %v", err)
	}
	bad := map[string]string{
		"empty":              "",
		"no head":            "\n",
		"another format":     strings.Replace(whole, "lnk-placing/v1", "lnk-placing/v2", 1),
		"unknown field":      strings.Replace(whole, `"op":"conf"`, `"op":"conf","more":1`, 1),
		"a line cut midway":  strings.Replace(whole, jMkdir, jMkdir[:20], 1),
		"steps out of order": journalOf(jRename, jSecrets),
		"undo out of order":  journalOf(jRename, jMkdir, `{"undone":0}`),
		"a step after undo":  journalOf(jRename, `{"undone":0}`, strings.Replace(jMkdir, `"step":1`, `"step":1`, 1)),
		"both step and undo": journalOf(strings.Replace(jRename, `{"step":0,`, `{"step":0,"undone":0,`, 1)),
		"unknown op":         journalOf(strings.Replace(jRename, `"op":"rename"`, `"op":"unlink"`, 1)),
		"dot dot":            journalOf(strings.Replace(jRename, `"dst":"main/Home"`, `"dst":"main/../other"`, 1)),
		"another agent":      journalOf(strings.Replace(jRename, `"dst":"main/Home"`, `"dst":"other/Home"`, 1)),
		"absolute":           journalOf(strings.Replace(jRename, `"dst":"main/Home"`, `"dst":"/etc"`, 1)),
		"slash in a name":    journalOf(strings.Replace(jRename, `"dname":"a.txt"`, `"dname":"x/a.txt"`, 1)),
		"no inode":           journalOf(strings.Replace(jRename, `,"moved":{"dev":1,"ino":4}`, ``, 1)),
		"exchange, no was":   journalOf(strings.Replace(jRename, `"dname":"a.txt"`, `"dname":"a.txt","exchange":true`, 1)),
		"bad secret name":    journalOf(jRename, jMkdir, strings.Replace(jSecrets, "SHARED_KEY", "shared key", 1)),
		"another's note":     journalOf(jRename, jMkdir, jSecrets, jConf, strings.Replace(jNote, `id = \"`+jid, `id = \"fedcba9876543210fedcba9876543210`, 1)),
		"UTF-8 as bytes":     journalOf(strings.Replace(jRename, `"dname":"a.txt"`, `"dname":{"bytes":"YS50eHQ="}`, 1)),
		"bytes, more":        journalOf(strings.Replace(jRename, `"dname":"a.txt"`, `"dname":{"bytes":"Y2Fm6S50eHQ=","x":1}`, 1)),
		"raw bytes":          journalOf(strings.Replace(jRename, `"dname":"a.txt"`, "\"dname\":\"caf\xe9.txt\"", 1)),
		"bad id":             strings.Replace(whole, jid, "../../etc", 1),
		"staging elsewhere":  strings.Replace(whole, `"staging":".moving/`+jid+`"`, `"staging":".moving/fedcba9876543210fedcba9876543210"`, 1),
		"conf, agent here":   strings.Replace(whole, `,"new":true,"settings_new":true`, ``, 1),
		"restore with secrets": `{"format":"lnk-placing/v1","kind":"restore","id":"` + jid + `","name":"main","staging":".restoring-00112233445566778899aabbccddeeff"}` + "\n" +
			strings.Replace(jSecrets, `"step":2`, `"step":0`, 1) + "\n",
	}
	for name, b := range bad {
		err := move.ParseJournalForTest([]byte(b))
		t.Logf("%s: %v", name, err)
		if !errors.Is(err, move.ErrJournal) {
			t.Errorf("%s: %v, want ErrJournal", name, err)
		}
	}
}

// FuzzPlacingJournal: no journal makes the parser panic, and one it
// reads back is one a recovery may act on.
func FuzzPlacingJournal(f *testing.F) {
	f.Add([]byte(journalOf(jRename, jMkdir, jSecrets, jConf, jNote, `{"undone":4}`)))
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := move.ParseJournalForTest(b); err != nil && !errors.Is(err, move.ErrJournal) {
			t.Fatalf("a refusal that is not ErrJournal: %v", err)
		}
	})
}

// TestRecoveryRefusesAnotherFolder: a journal naming a rename into the
// agent's files folder is undone from it (the file moved back to the
// staging folder: the positive control); the same journal, with the
// folder not the one it names (another inode), or the journal a link,
// is refused, and nothing is moved.
func TestRecoveryRefusesAnotherFolder(t *testing.T) {
	for _, tc := range []string{"undone", "another folder", "a link"} {
		home := testenv.Home(t)
		a := makeAgent(t, home, "main")
		l := caps.Layout{Home: home}
		stage := filepath.Join(l.Agents(), ".moving", a.ID)
		write(t, filepath.Join(stage, "files", "keep"), "x", 0o600)
		write(t, filepath.Join(l.FilesDir("main"), "a.txt"), "came\n", 0o600)
		id := func(p string) string {
			var st syscall.Stat_t
			if err := syscall.Lstat(p, &st); err != nil {
				t.Fatal(err)
			}
			ino := st.Ino
			if tc == "another folder" && p == l.FilesDir("main") {
				ino++
			}
			return fmt.Sprintf(`{"dev":%d,"ino":%d}`, st.Dev, ino)
		}
		j := `{"format":"lnk-placing/v1","kind":"receive","id":"` + a.ID + `","name":"main","staging":".moving/` + a.ID + `"}` + "\n" +
			`{"step":0,"op":"rename","src":".moving/` + a.ID + `/files","src_dir":` + id(filepath.Join(stage, "files")) +
			`,"sname":"a.txt","dst":"main/Home","dst_dir":` + id(l.FilesDir("main")) + `,"dname":"a.txt","moved":` + id(filepath.Join(l.FilesDir("main"), "a.txt")) + "}\n"
		jp := filepath.Join(home, ".lnk", "moving", a.ID+".placing")
		os.MkdirAll(filepath.Dir(jp), 0o700)
		if tc == "a link" {
			write(t, filepath.Join(home, "elsewhere"), j, 0o600)
			if err := os.Symlink(filepath.Join(home, "elsewhere"), jp); err != nil {
				t.Fatal(err)
			}
		} else {
			write(t, jp, j, 0o600)
		}
		left, err := move.PlacingLeft(home, a.ID)
		if err != nil || !left {
			t.Fatalf("%s: PlacingLeft %v, %v", tc, left, err)
		}
		rec, err := move.Recover(home, a.ID, func(string) error { return nil })
		_, back := os.Lstat(filepath.Join(stage, "files", "a.txt"))
		switch tc {
		case "undone":
			if err != nil || rec == nil || rec.Steps != 1 {
				t.Fatalf("%s: %+v, %v", tc, rec, err)
			}
			if _, err := os.Lstat(filepath.Join(l.FilesDir("main"), "a.txt")); !os.IsNotExist(err) {
				t.Errorf("the rename is not undone: %v", err)
			}
			for _, p := range []string{jp, stage} {
				if _, err := os.Lstat(p); !os.IsNotExist(err) {
					t.Errorf("%s is left: %v", p, err)
				}
			}
		case "another folder":
			if !errors.Is(err, move.ErrPlacingLeft) || back == nil {
				t.Fatalf("%s: %v (moved back: %v), want refused, nothing moved", tc, err, back)
			}
			if _, err := os.Lstat(jp); err != nil {
				t.Errorf("the journal is gone after a refusal: %v", err)
			}
		case "a link":
			if !errors.Is(err, ownerfile.ErrLink) || back == nil {
				t.Fatalf("%s: %v (moved back: %v), want refused as a link", tc, err, back)
			}
		}
	}
}

// TestSweepKeepsAJournaledStaging: a restoring folder past StaleAfter,
// marked by a placing whose journal is there, is kept by the sweep (the
// undo needs what it holds); with no journal it goes (the control).
func TestSweepKeepsAJournaledStaging(t *testing.T) {
	home := testenv.Home(t)
	a := makeAgent(t, home, "main")
	l := caps.Layout{Home: home}
	dir := filepath.Join(l.Agents(), ".restoring-00112233445566778899aabbccddeeff")
	write(t, filepath.Join(dir, ".placing"), a.ID, 0o600)
	old := time.Now().Add(-move.StaleAfter - time.Hour)
	os.Chtimes(dir, old, old)
	jp := filepath.Join(home, ".lnk", "moving", a.ID+".placing")
	write(t, jp, "{}\n", 0o600)
	if err := move.SweepRestoring(home); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(dir); err != nil {
		t.Fatalf("a staging folder a journal names was swept: %v", err)
	}
	os.Remove(jp)
	if err := move.SweepRestoring(home); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Fatalf("a stale restoring folder with no journal is kept: %v", err)
	}
}

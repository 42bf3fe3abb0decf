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

const testID = "0123456789abcdef0123456789abcdef"

// readAll reads every entry and every file's bytes, returning the entries
// and the first error (io.EOF for a whole stream).
func readAll(data []byte) ([]moveentry.Entry, map[string][]byte, error) {
	r, err := moveentry.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, nil, err
	}
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

func TestWriterReaderRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w, err := moveentry.NewWriter(&buf, moveentry.Head{ID: testID, Name: "main"})
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	big := bytes.Repeat([]byte("0123456789"), 100_000)
	must(w.Phase(moveentry.PhaseCopy))
	must(w.Dir("files", 0o755))
	must(w.File("files/big.bin", 0o644, int64(len(big)), bytes.NewReader(big)))
	must(w.Link("files/up", "../../etc/passwd"))
	must(w.Phase(moveentry.PhaseSwitch))
	must(w.Settings(moveentry.Settings{Agent: []byte("a"), Sandbox: []byte("s"), Secrets: []byte("k"), Buckets: []byte("b")}))
	must(w.Dir("chats", 0o700))
	must(w.File("chats/c.jsonl", 0o600, 3, strings.NewReader("abc")))
	must(w.End())
	ents, files, err := readAll(buf.Bytes())
	if err != io.EOF {
		t.Fatalf("a whole stream: %v, want io.EOF", err)
	}
	if len(ents) != 10 {
		t.Errorf("%d entries, want 10", len(ents))
	}
	if !bytes.Equal(files["files/big.bin"], big) || string(files["chats/c.jsonl"]) != "abc" {
		t.Error("a file's bytes changed on the way")
	}
	if s := ents[6].Settings; s == nil || string(s.Secrets) != "k" || string(s.Buckets) != "b" {
		t.Errorf("the settings came back as %+v", s)
	}
	if ents[4].Kind != moveentry.KindLink || ents[4].Target != "../../etc/passwd" {
		t.Errorf("a link is carried as it is: got %+v", ents[4])
	}
}

func TestWriterRefusesWhatAReaderWould(t *testing.T) {
	w, _ := moveentry.NewWriter(io.Discard, moveentry.Head{ID: testID, Name: "main"})
	w.Phase(moveentry.PhaseCopy)
	for _, p := range []string{"../x", "/etc", "files/../x", "home", "files//x"} {
		if err := w.Dir(p, 0o700); !errors.Is(err, moveentry.ErrPath) {
			t.Errorf("Dir(%q): %v, want ErrPath", p, err)
		}
	}
	if err := w.File("files/short", 0o600, 10, strings.NewReader("abc")); err == nil {
		t.Error("a file shorter than its size was written")
	}
}

func TestHostileStreamsRefused(t *testing.T) {
	// The positive control: the same builder's well-formed stream reads
	// whole.
	if _, _, err := readAll(movetest.Good(testID, "main").End().B.Bytes()); err != io.EOF {
		t.Fatalf("the good stream: %v, want io.EOF", err)
	}
	want := map[string]error{
		"dotdot": moveentry.ErrPath, "dotdot-area": moveentry.ErrPath, "absolute": moveentry.ErrPath,
		"link-then-file": moveentry.ErrPath, "link-then-folder": moveentry.ErrPath,
		"hard-link-out": moveentry.ErrEntry, "area-not-its-phase": moveentry.ErrPath,
		"wrong-hash": moveentry.ErrHash, "33-deep": moveentry.ErrDepth, "twice": moveentry.ErrPath,
		"file-before-folder": moveentry.ErrOrder, "missing-end": moveentry.ErrEnd,
		"truncated": moveentry.ErrEnd, "extended": moveentry.ErrEnd, "end-miscounted": moveentry.ErrEnd,
		"switch-first": moveentry.ErrOrder, "other-format": moveentry.ErrFormat,
		"older-format": moveentry.ErrFormat,
	}
	hostile := movetest.Hostile(testID, "main")
	if len(hostile) != len(want) {
		t.Fatalf("%d hostile streams, %d expectations", len(hostile), len(want))
	}
	for name, data := range hostile {
		_, _, err := readAll(data)
		if !errors.Is(err, want[name]) {
			t.Errorf("%s: %v, want %v", name, err, want[name])
		}
		if err != nil && strings.ContainsAny(err.Error(), "\n\x1b") {
			t.Errorf("%s: the refusal is not one plain line: %q", name, err)
		}
	}
}

func TestDepth32IsAllowed(t *testing.T) {
	r := movetest.NewRaw(testID, "main").Phase('c').Dir("files", 0o700)
	p := "files"
	for i := 0; i < moveentry.MaxDepth; i++ {
		p += "/d"
		r.Dir(p, 0o700)
	}
	r.File(p+"/f", 0o600, []byte("deep"))
	r.Phase('s').Settings(movetest.Agent(testID, "main"), nil, nil).End()
	if _, _, err := readAll(r.B.Bytes()); err != io.EOF {
		t.Fatalf("32 folders deep: %v, want a whole stream", err)
	}
}

func TestModeKeepsPermissionBitsOnly(t *testing.T) {
	r := movetest.NewRaw(testID, "main").Phase('c').Dir("files", 0o1777).
		File("files/suid", 0o4755, []byte("#!/bin/sh\n")).File("files/sgid", 0o2700, nil)
	r.Phase('s').Settings(movetest.Agent(testID, "main"), nil, nil).End()
	ents, _, err := readAll(r.B.Bytes())
	if err != io.EOF {
		t.Fatal(err)
	}
	got := map[string]uint32{}
	for _, e := range ents {
		got[e.Path] = e.Mode
	}
	if got["files"] != 0o777 || got["files/suid"] != 0o755 || got["files/sgid"] != 0o700 {
		t.Errorf("modes %v, want permission bits only", got)
	}
}

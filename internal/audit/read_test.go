package audit

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTailReadsTheLastLinesFromAtMost4MiB(t *testing.T) {
	lnk, d := newDir(t)
	defer d.Close()
	p := filepath.Join(lnk, DirName, FileName)
	var b bytes.Buffer
	line := strings.Repeat("x", 1000)
	for i := 0; b.Len() < ReadChunk+(1<<20); i++ {
		fmt.Fprintf(&b, "%08d %s\n", i, line)
	}
	if err := os.WriteFile(p, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	lines, fl, err := Tail(d, 200)
	if err != nil {
		t.Fatal(err)
	}
	defer fl.Close()
	if len(lines) != 200 {
		t.Fatalf("got %d lines, want 200", len(lines))
	}
	all := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if lines[199] != all[len(all)-1] || lines[0] != all[len(all)-200] {
		t.Errorf("tail is not the last 200 lines")
	}
	if fl.off != int64(b.Len()) {
		t.Errorf("follower at %d, want the end %d", fl.off, b.Len())
	}
}

func TestFollowCutsALineWithoutAnEndAndReadsAtMost4MiB(t *testing.T) {
	lnk, d := newDir(t)
	defer d.Close()
	p := filepath.Join(lnk, DirName, FileName)
	os.WriteFile(p, []byte("first\n"), 0o600)
	_, fl, err := Tail(d, 10)
	if err != nil {
		t.Fatal(err)
	}
	defer fl.Close()
	f, _ := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	burst := bytes.Repeat([]byte("y"), 5*MaxPiece+10) // no newline
	f.Write(burst)
	f.Write([]byte("\nafter\n"))
	f.Close()
	var got [][]byte
	if err := fl.Poll(func(l []byte) { got = append(got, append([]byte(nil), l...)) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 7 {
		t.Fatalf("got %d pieces, want 5 pieces of 64 KiB, the rest, and \"after\"", len(got))
	}
	for i := 0; i < 5; i++ {
		if len(got[i]) != MaxPiece {
			t.Errorf("piece %d is %d bytes, want %d", i, len(got[i]), MaxPiece)
		}
	}
	if len(got[5]) != 10 || string(got[6]) != "after" {
		t.Errorf("tail pieces %d %q", len(got[5]), got[6])
	}
	if cap(fl.buf) > ReadChunk || cap(fl.sp.partial) > 2*MaxPiece {
		t.Errorf("follower holds %d + %d bytes", cap(fl.buf), cap(fl.sp.partial))
	}
}

func TestFollowCrossesARotation(t *testing.T) {
	_, d := newDir(t)
	l, err := Open(d, Options{MaxBytes: 600, Keep: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, fl, err := Tail(d, 10)
	if err != nil {
		t.Fatal(err)
	}
	defer fl.Close()
	seen := map[string]bool{}
	for i := 0; i < 20; i++ {
		l.Write(Entry{Kind: KindUse, Agent: fmt.Sprintf("a%d", i)})
		if err := fl.Poll(func(b []byte) { seen[string(b)] = true }); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	for k := range seen {
		if strings.Contains(k, `"agent":"a`) {
			n++
		}
	}
	if n != 20 {
		t.Errorf("followed %d of 20 lines across rotations", n)
	}
}

package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/testenv"
)

// One build's resolver finds a script's whole chain (the script, its #!
// interpreter and that one's ELF interpreter), links resolved, and reads
// a program shared by several (ld.so) once.
func TestResolverChainsAndReadsOnce(t *testing.T) {
	sh, err := filepath.EvalSymlinks("/bin/sh")
	testenv.Require(t, err == nil, "/bin/sh")
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "tool")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := newResolver()
	files, err := r.execFiles(script)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 3 || files[0] != script || files[1] != sh {
		t.Fatalf("chain of %s: %q, want the script, %s, then its ELF interpreter", script, files, sh)
	}
	ldso := files[2]
	cat, err := lookPath("cat", "/")
	testenv.Require(t, err == nil, "cat")
	more, err := r.execFiles(cat)
	if err != nil || !slices.Contains(more, ldso) {
		t.Fatalf("chain of cat: %q, %v; want %s in it", more, err, ldso)
	}
	if _, ok := r.interp[ldso]; !ok {
		t.Fatalf("%s not remembered", ldso)
	}
	// What the agent wrote stays the agent's: a changed script is read
	// afresh by the next build's resolver.
	if err := os.WriteFile(script, []byte("#!"+cat+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	again, err := newResolver().execFiles(script)
	if err != nil || len(again) < 2 || again[1] != cat {
		t.Fatalf("rewritten script: %q, %v; want %s as its interpreter", again, err, cat)
	}
}

// A #! line naming a FIFO the agent made cannot stall lnk: the resolver
// opens without blocking, reads nothing, and names the FIFO alone.
func TestResolverFIFOInterpreter(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "tool")
	if err := os.WriteFile(script, []byte("#!"+fifo+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	done := make(chan []string, 1)
	go func() {
		files, _ := newResolver().execFiles(script)
		done <- files
	}()
	select {
	case files := <-done:
		if !slices.Equal(files, []string{script, fifo}) {
			t.Fatalf("chain: %q, want the script and the FIFO", files)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("resolving a script whose interpreter is a FIFO blocked")
	}
}

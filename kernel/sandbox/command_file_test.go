package sandbox_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/kernel/sandbox"
)

// A program named by its path (--command /abs/prog) in a folder the
// sandbox is not granted runs: the file itself is read where it is, by
// its own path, and never the folder it's in (security.txt), so a file
// beside it can be neither read nor listed. Named by a link, the link's
// path leads to it.
func TestAProgramNamedByItsPathRunsWithoutItsFolder(t *testing.T) {
	w := newWorld(t)
	tools := filepath.Join(w.home, "tools")
	if err := os.Mkdir(tools, 0o700); err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(tools, "prog")
	script := "#!/bin/sh\n" +
		`echo "ran $0"` + "\n" +
		`if read line < "${0%/*}/neighbour"; then echo "read: $line"; else echo "neighbour unreadable"; fi` + "\n" +
		`for f in "${0%/*}"/*; do echo "has ${f##*/}"; done` + "\n"
	if err := os.WriteFile(prog, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(tools, "neighbour"), "neighbour-secret\n")
	link := filepath.Join(tools, "link")
	if err := os.Symlink("prog", link); err != nil {
		t.Fatal(err)
	}
	for _, named := range []string{prog, link} {
		c := compile(t, w, caps.Grants{Commands: []string{named}})
		code, out, errOut := run(t, c, sandbox.Options{}, named)
		if code != 0 || !strings.Contains(out, "ran "+named+"\n") {
			t.Fatalf("%s: exit %d: %s%s", named, code, out, errOut)
		}
		if strings.Contains(out, "neighbour-secret") || !strings.Contains(out, "neighbour unreadable") || strings.Contains(out, "has neighbour") {
			t.Errorf("%s: the program's folder was reached: %s", named, out)
		}
	}
	// Not granted, it is refused at once, the hint naming its path.
	_, err := sandbox.Build(compile(t, w, caps.Grants{}), sandbox.Options{Argv: []string{prog}, InitPath: "/nonexistent"})
	var nac *sandbox.NotACommandError
	if !errors.As(err, &nac) || nac.Hint() != "grant it: lnk sandbox run --command "+prog+" …, or add it to [commands]" {
		t.Errorf("a program not granted: %v", err)
	}
	// A system program named by a path through a linked folder (/bin as
	// /usr/bin where /usr is merged) is the system's, as it was.
	c := compile(t, w, caps.Grants{Commands: []string{"/bin/sh"}})
	if code, out, errOut := run(t, c, sandbox.Options{}, "/bin/sh", "-c", "echo system"); code != 0 || out != "system\n" {
		t.Fatalf("/bin/sh: exit %d: %s%s", code, out, errOut)
	}
}

package procstat

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestReadSelfAndAChild: this process's own stat reads its parent, and a
// child's start time is after ours and stays the same while it lives; a
// pid gone is ErrGone.
func TestReadSelfAndAChild(t *testing.T) {
	me, err := Read(os.Getpid())
	if err != nil || me.PPID != os.Getppid() || me.Start == 0 {
		t.Fatalf("self: %+v %v", me, err)
	}
	c := exec.Command("sleep", "30")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	a, err := Read(c.Process.Pid)
	if err != nil || a.PPID != os.Getpid() || a.Start < me.Start {
		t.Fatalf("child: %+v %v (self %+v)", a, err, me)
	}
	if b, _ := Read(c.Process.Pid); b.Start != a.Start {
		t.Fatalf("start time changed: %d then %d", a.Start, b.Start)
	}
	c.Process.Kill()
	c.Wait()
	if _, err := Read(c.Process.Pid); !errors.Is(err, ErrGone) {
		t.Fatalf("a reaped child: %v", err)
	}
}

// TestParseSkipsTheCommand: a command holding ") 1 2 3" and spaces does
// not shift the fields; a short or broken stat is refused.
func TestParseSkipsTheCommand(t *testing.T) {
	tail := " S 10 20 30 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 777 0 0"
	for _, name := range []string{"(a) 1 2 3 (b)", "(a) b) (c d)", "(x\nS 1 2)"} {
		s, err := Parse([]byte("42 " + name + tail))
		if err != nil || s.State != 'S' || s.PPID != 10 || s.PGID != 20 || s.SID != 30 || s.Start != 777 {
			t.Fatalf("%q: %+v %v", name, s, err)
		}
	}
	for _, bad := range []string{"", "42 (x", "42 (x) S 1 2", "42 (x)" + strings.Replace(tail, "777", "x", 1), "42 (x)" + strings.Replace(tail, " 10 ", " -1 ", 1)} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestBootID(t *testing.T) {
	a, err := BootID()
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := BootID(); a != b {
		t.Fatalf("boot id changed: %s %s", a, b)
	}
}

// FuzzParse: no input panics, a parsed stat's pids are never negative,
// and a command name that plays at being the fields after it moves no
// field (the same fields behind any name read the same).
func FuzzParse(f *testing.F) {
	f.Add([]byte("1 (init) S 0 1 1 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Parse(b)
		if err != nil {
			return
		}
		if s.PPID < 0 || s.PGID < 0 || s.SID < 0 {
			t.Fatalf("%+v", s)
		}
		i := bytes.LastIndexByte(b, ')')
		again, err := Parse(append([]byte("1 (a) b) c"), b[i:]...))
		if err != nil || again != s {
			t.Fatalf("a name moved the fields: %+v, then %+v (%v)", s, again, err)
		}
	})
}

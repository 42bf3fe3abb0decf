package netbroker

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/testenv"
)

// killed is what a run killed outright leaves: its socket's file, with
// nothing bound to it any more, and its folder, a one-run folder as old
// as the socket bound in it.
func killed(t *testing.T, s *Socket, age time.Duration) {
	t.Helper()
	s.File.Close()
	unix.Close(s.dirFD)
	unix.Close(s.parentFD)
	setAge(t, s.Path, age)
	if s.oneRun {
		setAge(t, s.Dir, age)
	}
}

func setAge(t *testing.T, path string, age time.Duration) {
	t.Helper()
	then := unix.NsecToTimespec(time.Now().Add(-age).UnixNano())
	if err := unix.UtimesNanoAt(unix.AT_FDCWD, path, []unix.Timespec{then, then}, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		t.Fatal(err)
	}
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func TestRemoveSweepsWhatKilledRunsLeft(t *testing.T) {
	home := testenv.Home(t)
	agent := strings.Repeat("0f", 16)
	listen := func(id string) *Socket {
		s, err := Listen(home, id)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	old := listen(agent) // an agent's run, killed an hour ago
	killed(t, old, time.Hour)
	oneRun := listen("") // a run with no agent, killed an hour ago
	killed(t, oneRun, time.Hour)
	young := listen(agent) // killed a moment ago: spared for now
	killed(t, young, 0)
	alive := listen(agent) // still served, an hour old
	setAge(t, alive.Path, time.Hour)

	net := filepath.Join(home, ".lnk", "agents", ".net")
	// Names Link makes, which are not what they seem: a regular file
	// named as a socket, and a link named as a one-run folder to a
	// folder holding a stale socket. Neither is touched or followed.
	decoy := filepath.Join(net, agent, "proxy-0123456789abcdef.sock")
	if err := os.WriteFile(decoy, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	setAge(t, decoy, time.Hour)
	elsewhere := t.TempDir()
	outside := listen(strings.Repeat("ab", 16))
	killed(t, outside, time.Hour)
	moved := filepath.Join(elsewhere, filepath.Base(outside.Path))
	if err := os.Rename(outside.Path, moved); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(net, "run-"+strings.Repeat("cd", 12))
	if err := os.Symlink(elsewhere, link); err != nil {
		t.Fatal(err)
	}

	listen(agent).Remove() // a run that ends sweeps

	for _, gone := range []string{old.Path, oneRun.Path, oneRun.Dir} {
		if exists(gone) {
			t.Errorf("%s is left after a sweep", gone)
		}
	}
	for _, kept := range []string{young.Path, alive.Path, decoy, moved, link} {
		if !exists(kept) {
			t.Errorf("%s was removed by a sweep", kept)
		}
	}
	alive.Remove()
	if exists(alive.Path) {
		t.Errorf("%s is left after its Remove", alive.Path)
	}
}

// A run starting makes its one-run folder, then binds its socket in it:
// a sweep between the two must leave the folder, empty as it is, or the
// bind fails. And a sweep with no socket old enough to be stale never
// reads which sockets are bound.
func TestSweepSparesAFolderARunHasJustMade(t *testing.T) {
	home := testenv.Home(t)
	netDir, err := OpenNetDir(home)
	if err != nil {
		t.Fatal(err)
	}
	defer netDir.Close()
	starting := filepath.Join(netDir.Name(), "run-"+strings.Repeat("5a", 12))
	if err := os.Mkdir(starting, 0o700); err != nil {
		t.Fatal(err)
	}
	young, err := Listen(home, "")
	if err != nil {
		t.Fatal(err)
	}
	defer young.Remove()
	asked := 0
	bound := func() map[string]bool { asked++; return boundSockets() }
	sweepStale(int(netDir.Fd()), bound, staleAfter)
	if !exists(starting) {
		t.Fatalf("a sweep removed %s, the folder a run has just made", starting)
	}
	if asked != 0 {
		t.Errorf("with no socket older than %v, the sweep read the bound sockets %d times", staleAfter, asked)
	}
	// Left an hour ago, it goes; a socket as old makes the sweep ask,
	// once, and spares it while it is bound.
	setAge(t, starting, time.Hour)
	setAge(t, young.Path, time.Hour)
	sweepStale(int(netDir.Fd()), bound, staleAfter)
	if exists(starting) {
		t.Errorf("%s, empty for an hour, is left after a sweep", starting)
	}
	if asked != 1 {
		t.Errorf("the sweep read the bound sockets %d times, not once", asked)
	}
	if !exists(young.Path) {
		t.Errorf("%s, bound, was removed by a sweep", young.Path)
	}
}

func TestSocketNames(t *testing.T) {
	s, err := Listen(testenv.Home(t), "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Remove()
	if !isSocketName(filepath.Base(s.Path)) || !isRunName(filepath.Base(s.Dir)) {
		t.Fatalf("the sweep does not know the names Listen makes: %s", s.Path)
	}
	if !boundSockets()[filepath.Base(s.Path)] {
		t.Fatalf("/proc/net/unix does not show %s as bound", s.Path)
	}
	for _, bad := range []string{"proxy-0123456789ABCDEF.sock", "proxy-0123456789abcde.sock", "proxy-0123456789abcdef.sockx", "run-" + strings.Repeat("a", 23), "run-../" + strings.Repeat("a", 21)} {
		if isSocketName(bad) || isRunName(bad) {
			t.Errorf("%q taken for a name Link makes", bad)
		}
	}
}

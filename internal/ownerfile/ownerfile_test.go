package ownerfile

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func root(t *testing.T) (string, int) {
	t.Helper()
	dir := t.TempDir()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return dir, fd
}

func sameFile(t *testing.T, fd int, path string) bool {
	t.Helper()
	var a, b unix.Stat_t
	if err := unix.Fstat(fd, &a); err != nil {
		t.Fatal(err)
	}
	if err := unix.Stat(path, &b); err != nil {
		t.Fatal(err)
	}
	return a.Dev == b.Dev && a.Ino == b.Ino
}

// openers runs each test through openat2 and through the walk kept for a
// kernel without it, so the fallback is held to the same refusals.
var openers = map[string]func(root int, rel string, flags int) (int, error){
	"openat2": OpenDir,
	"walk": func(root int, rel string, flags int) (int, error) {
		if strings.HasPrefix(rel, "/") {
			return -1, unix.EXDEV
		}
		return walk(root, rel, flags|unix.O_DIRECTORY)
	},
}

func TestOpenDirRefusesALinkAnywhereOnTheWay(t *testing.T) {
	for how, open := range openers {
		t.Run(how, func(t *testing.T) {
			dir, rfd := root(t)
			os.MkdirAll(filepath.Join(dir, "a", "b"), 0o700)
			os.MkdirAll(filepath.Join(dir, "elsewhere", "b"), 0o700)
			os.Symlink("elsewhere", filepath.Join(dir, "l"))
			os.Symlink("b", filepath.Join(dir, "a", "lb"))
			fd, err := open(rfd, "a/b", unix.O_RDONLY)
			if err != nil || !sameFile(t, fd, filepath.Join(dir, "a", "b")) {
				t.Fatalf("a/b (the positive control): %v", err)
			}
			unix.Close(fd)
			for _, rel := range []string{"l/b", "l", "a/lb", "a/lb/."} {
				if fd, err := open(rfd, rel, unix.O_RDONLY); err == nil {
					unix.Close(fd)
					t.Errorf("%s was opened through a link", rel)
				} else if how == "openat2" && !errors.Is(err, ErrLink) {
					t.Errorf("%s: %v, not ErrLink", rel, err)
				}
			}
			for _, rel := range []string{"../" + filepath.Base(dir), "a/../../x", "/etc"} {
				if fd, err := open(rfd, rel, unix.O_RDONLY); err == nil {
					unix.Close(fd)
					t.Errorf("%s left the root", rel)
				}
			}
		})
	}
}

func TestOpenPathRefusesALinkInAnyComponent(t *testing.T) {
	dir, _ := root(t)
	os.MkdirAll(filepath.Join(dir, "a"), 0o700)
	os.WriteFile(filepath.Join(dir, "a", "f"), []byte("x"), 0o600)
	os.Symlink("a", filepath.Join(dir, "l"))
	f, err := OpenFilePath(filepath.Join(dir, "a", "f"), Rule{})
	if err != nil {
		t.Fatalf("the positive control: %v", err)
	}
	f.Close()
	if _, err := OpenFilePath(filepath.Join(dir, "l", "f"), Rule{}); !errors.Is(err, ErrLink) {
		t.Errorf("through a link: %v", err)
	}
	if _, err := OpenPath("relative", unix.O_RDONLY); err == nil {
		t.Error("a relative path was taken")
	}
}

func TestOpenFileRefusesLinkFifoFolderAndLooseFile(t *testing.T) {
	dir, rfd := root(t)
	os.WriteFile(filepath.Join(dir, "ok"), []byte("x"), 0o600)
	os.WriteFile(filepath.Join(dir, "loose"), []byte("x"), 0o600)
	os.Chmod(filepath.Join(dir, "loose"), 0o644)
	os.Symlink("ok", filepath.Join(dir, "link"))
	unix.Mkfifo(filepath.Join(dir, "fifo"), 0o600)
	os.Mkdir(filepath.Join(dir, "dir"), 0o700)
	os.Link(filepath.Join(dir, "ok"), filepath.Join(dir, "hard"))
	os.WriteFile(filepath.Join(dir, "one"), []byte("x"), 0o600)

	if b, err := ReadFile(rfd, "one", Rule{Type: unix.S_IFREG, Forbid: 0o077, OneLink: true}, 10); err != nil || string(b) != "x" {
		t.Fatalf("the positive control: %q %v", b, err)
	}
	if _, err := ReadFile(rfd, "loose", Rule{}, 10); err != nil {
		t.Errorf("a zero rule asks only for a regular file: %v", err)
	}
	for name, r := range map[string]Rule{"link": {}, "fifo": {}, "dir": {}, "loose": Private, "hard": {OneLink: true}, "a/b": {}, "..": {}} {
		if f, err := OpenFile(rfd, name, r); err == nil {
			f.Close()
			t.Errorf("%s was opened", name)
		}
	}
	if _, err := OpenFile(rfd, "loose", Private); !errors.Is(err, ErrNotOwners) || !strings.Contains(err.Error(), "644") {
		t.Errorf("loose: %v", err)
	}
	if _, err := ReadFile(rfd, "ok", Rule{}, 0); err == nil {
		t.Error("a file over the limit was read")
	}
}

func TestMakeDirMakesAPrivateFolderAndRefusesALink(t *testing.T) {
	dir, rfd := root(t)
	fd, err := MakeDir(rfd, "new", unix.O_PATH, PrivateDir)
	if err != nil {
		t.Fatal(err)
	}
	unix.Close(fd)
	if fi, _ := os.Lstat(filepath.Join(dir, "new")); fi == nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("new: %v", fi)
	}
	os.Mkdir(filepath.Join(dir, "out"), 0o700)
	os.Symlink("out", filepath.Join(dir, "ln"))
	if _, err := MakeDir(rfd, "ln", unix.O_PATH, PrivateDir); !errors.Is(err, ErrLink) {
		t.Errorf("through a link: %v", err)
	}
	os.Mkdir(filepath.Join(dir, "open"), 0o700)
	os.Chmod(filepath.Join(dir, "open"), 0o755)
	if _, err := MakeDir(rfd, "open", unix.O_PATH, PrivateDir); !errors.Is(err, ErrNotOwners) {
		t.Errorf("a folder others can enter: %v", err)
	}
	if fd, err := MakeDir(rfd, "open", unix.O_PATH, Rule{Forbid: 0o022}); err != nil {
		t.Errorf("the looser rule's positive control: %v", err)
	} else {
		unix.Close(fd)
	}
}

func TestWriteAtomicReplacesOrNotAndRefusesALinkInPlace(t *testing.T) {
	dir, rfd := root(t)
	p := filepath.Join(dir, "f")
	if err := WriteAtomic(rfd, "f", []byte("one"), Write{}); err != nil {
		t.Fatal(err)
	}
	if err := WriteAtomic(rfd, "f", []byte("two"), Write{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "two" {
		t.Errorf("replaced: %q", b)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
	if err := WriteAtomic(rfd, "f", []byte("three"), Write{NoReplace: true}); !errors.Is(err, unix.EEXIST) {
		t.Errorf("no-replace over a file: %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "two" {
		t.Errorf("no-replace changed the file: %q", b)
	}
	if err := WriteAtomic(rfd, "g", []byte("x"), Write{NoReplace: true, Mode: 0o640}); err != nil {
		t.Errorf("no-replace where nothing is: %v", err)
	}
	if fi, _ := os.Stat(filepath.Join(dir, "g")); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode asked 0640: %v", fi.Mode())
	}
	os.WriteFile(filepath.Join(dir, "target"), []byte("kept"), 0o600)
	os.Symlink("target", filepath.Join(dir, "ln"))
	os.Mkdir(filepath.Join(dir, "d"), 0o700)
	for _, name := range []string{"ln", "d"} {
		if err := WriteAtomic(rfd, name, []byte("x"), Write{}); err == nil {
			t.Errorf("%s was replaced", name)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "target")); string(b) != "kept" {
		t.Errorf("written through the link: %q", b)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("a temporary file was left: %s", e.Name())
		}
	}
}

// TestLinkSwapRace swaps a folder on the path for a link to another
// folder, over and over, while the routine opens beneath the root and
// writes there: no open may land in the other folder, no file appear in
// it.
func TestLinkSwapRace(t *testing.T) {
	for how, open := range openers {
		t.Run(how, func(t *testing.T) {
			dir, rfd := root(t)
			out := filepath.Join(dir, "out")
			os.MkdirAll(filepath.Join(out, "b"), 0o700)
			real := filepath.Join(dir, "real")
			os.MkdirAll(filepath.Join(real, "b"), 0o700)
			a := filepath.Join(dir, "a")
			os.Rename(real, a)
			var stop atomic.Bool
			done := make(chan struct{})
			go func() {
				defer close(done)
				for !stop.Load() {
					os.Rename(a, real)
					os.Symlink("out", a)
					os.Remove(a)
					os.Rename(real, a)
				}
			}()
			// At least 3000 tries and 50 opens of the real folder: on a
			// busy machine the swapper can sit descheduled with the link
			// in place for a whole burst of tries, so the loop goes on
			// until the race has been run both ways, or 20 seconds pass.
			opened := 0
			deadline := time.Now().Add(20 * time.Second)
			for i := 0; (i < 3000 || opened < 50) && time.Now().Before(deadline); i++ {
				fd, err := open(rfd, "a/b", unix.O_RDONLY)
				if err != nil {
					continue
				}
				opened++
				if sameFile(t, fd, filepath.Join(out, "b")) {
					t.Error("opened the folder behind the link")
				}
				WriteAtomic(fd, "f", []byte("x"), Write{NoSync: true})
				unix.Close(fd)
			}
			stop.Store(true)
			<-done
			if ents, _ := os.ReadDir(filepath.Join(out, "b")); len(ents) != 0 {
				t.Errorf("written behind the link: %v", ents)
			}
			if opened == 0 {
				t.Error("the real folder was never opened: the race proves nothing")
			}
		})
	}
}

// TestConcurrentReaderSeesOldOrNew reads while another goroutine writes:
// every read is one whole version.
func TestConcurrentReaderSeesOldOrNew(t *testing.T) {
	_, rfd := root(t)
	v := func(c byte) []byte { return bytes.Repeat([]byte{c}, 1<<16) }
	WriteAtomic(rfd, "f", v('a'), Write{NoSync: true})
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; !stop.Load(); i++ {
			WriteAtomic(rfd, "f", v(byte('a'+i%26)), Write{NoSync: true})
		}
	}()
	for i := 0; i < 2000; i++ {
		b, err := ReadFile(rfd, "f", Rule{}, 1<<17)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) != 1<<16 || !bytes.Equal(b, v(b[0])) {
			t.Fatalf("read %d bytes, not one whole version", len(b))
		}
	}
	stop.Store(true)
	<-done
}

// TestCrashLeavesOldOrNew kills (SIGKILL) a process in the middle of its
// writes, many times: what is on disk after is always one whole version.
func TestCrashLeavesOldOrNew(t *testing.T) {
	if dir := os.Getenv("OWNERFILE_CRASH_DIR"); dir != "" {
		crashWriter(dir)
		return
	}
	dir, rfd := root(t)
	v := func(c byte) []byte { return bytes.Repeat([]byte{c}, 1<<18) }
	WriteAtomic(rfd, "f", v('a'), Write{})
	for round := 0; round < 8; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashLeavesOldOrNew$")
		cmd.Env = append(os.Environ(), "OWNERFILE_CRASH_DIR="+dir)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(20+round*15) * time.Millisecond)
		cmd.Process.Kill()
		cmd.Wait()
		b, err := ReadFile(rfd, "f", Private, 1<<19)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) != 1<<18 || !bytes.Equal(b, v(b[0])) {
			t.Fatalf("round %d: %d bytes on disk, not one whole version", round, len(b))
		}
	}
}

func crashWriter(dir string) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		os.Exit(2)
	}
	for i := 0; ; i++ {
		WriteAtomic(fd, "f", bytes.Repeat([]byte{byte('a' + i%26)}, 1<<18), Write{})
	}
}

// TestALinkAsTheLastComponentIsELOOP: with O_PATH (which would open a
// link as itself) and with O_DIRECTORY, a link at the end is refused as a
// link, by openat2 and by the walk alike; the real folder opens.
func TestALinkAsTheLastComponentIsELOOP(t *testing.T) {
	dir, _ := root(t)
	os.Mkdir(filepath.Join(dir, "real"), 0o700)
	os.Symlink("real", filepath.Join(dir, "ln"))
	for how, open := range map[string]func(string, int) (int, error){
		"openat2": OpenPath,
		"walk":    func(p string, fl int) (int, error) { return walk(unix.AT_FDCWD, p, fl) },
	} {
		for _, fl := range []int{unix.O_PATH, unix.O_PATH | unix.O_DIRECTORY, unix.O_RDONLY | unix.O_DIRECTORY} {
			fd, err := open(filepath.Join(dir, "real"), fl)
			if err != nil {
				t.Errorf("%s %#x: the real folder: %v", how, fl, err)
			} else {
				unix.Close(fd)
			}
			if fd, err := open(filepath.Join(dir, "ln"), fl); err == nil {
				unix.Close(fd)
				t.Errorf("%s %#x: the link was opened", how, fl)
			} else if !errors.Is(err, unix.ELOOP) {
				t.Errorf("%s %#x: %v, not ELOOP", how, fl, err)
			}
		}
	}
}

// TestRenameTakesOneNameEachAndSyncDirAnOPathHandle: a name with a '/'
// or ".." is refused before any rename; RENAME_NOREPLACE keeps what is
// there; SyncDir works from an O_PATH handle, which fsync itself refuses.
func TestRenameTakesOneNameEachAndSyncDirAnOPathHandle(t *testing.T) {
	dir, rfd := root(t)
	os.WriteFile(filepath.Join(dir, "a"), []byte("a"), 0o600)
	os.WriteFile(filepath.Join(dir, "b"), []byte("b"), 0o600)
	for _, bad := range [][2]string{{"a", "sub/c"}, {"../a", "c"}, {"a", ".."}, {"", "c"}} {
		if err := Rename(rfd, bad[0], rfd, bad[1], 0); err == nil {
			t.Errorf("%q -> %q was renamed", bad[0], bad[1])
		}
	}
	if err := Rename(rfd, "a", rfd, "b", unix.RENAME_NOREPLACE); !errors.Is(err, unix.EEXIST) {
		t.Errorf("no-replace over b: %v", err)
	}
	if err := Rename(rfd, "a", rfd, "c", 0); err != nil {
		t.Errorf("the positive control: %v", err)
	}
	pfd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(pfd)
	if unix.Fsync(pfd) == nil {
		t.Log("fsync took an O_PATH handle here")
	}
	if err := SyncDir(pfd); err != nil {
		t.Errorf("SyncDir of an O_PATH handle: %v", err)
	}
}

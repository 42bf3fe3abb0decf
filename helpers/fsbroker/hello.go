package fsbroker

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/resolve"
	"lnk.dev/lnk/internal/wire"
)

// HelloState is what the broker carries across its own re-exec (landlock
// without TSYNC): the hello's id, and each root's name, right and fd.
type HelloState struct {
	ID    uint64      `json:"id"`
	Roots []HelloRoot `json:"roots"`
	FDs   []int       `json:"fds"`
}

// EnvHello names the variable that carries a [HelloState] across the
// re-exec. It holds no secret: names, rights and fd numbers.
const EnvHello = "LNK_FSBROKER_HELLO"

// ParseHello checks the first record: a hello request whose roots match
// its fds one to one, each a folder, each name unique and non-empty. On
// error the files are closed.
func ParseHello(rec wire.Record, files []*os.File) (HelloState, error) {
	fail := func(format string, a ...any) (HelloState, error) {
		wire.CloseFiles(files)
		return HelloState{}, fmt.Errorf("first request: "+format, a...)
	}
	if rec.Kind != wire.KindRequest || rec.Type != SpecHello.Type {
		return fail("kind %d type %d, want a hello", rec.Kind, rec.Type)
	}
	var h Hello
	if err := wire.Unmarshal(rec.Body, &h); err != nil {
		return fail("%v", err)
	}
	if len(files) < 1 || len(files) > MaxRoots || len(h.Roots) != len(files) {
		return fail("%d roots and %d fds (1–%d, one fd per root)", len(h.Roots), len(files), MaxRoots)
	}
	st := HelloState{ID: rec.ID, Roots: h.Roots}
	seen := map[string]bool{}
	for i, r := range h.Roots {
		if r.Name == "" || seen[r.Name] {
			return fail("root name %q is empty or given twice", r.Name)
		}
		seen[r.Name] = true
		var s unix.Stat_t
		if err := unix.Fstat(int(files[i].Fd()), &s); err != nil || s.Mode&unix.S_IFMT != unix.S_IFDIR {
			closeFDs(st.FDs)
			return fail("root %q is not a folder", r.Name)
		}
		// A bare fd of our own: an *os.File's finalizer would close it.
		fd, err := unix.FcntlInt(files[i].Fd(), unix.F_DUPFD_CLOEXEC, 4)
		if err != nil {
			closeFDs(st.FDs)
			return fail("root %q: %v", r.Name, err)
		}
		st.FDs = append(st.FDs, fd)
	}
	wire.CloseFiles(files)
	return st, nil
}

// Inheritable clears close-on-exec on the state's fds, so a re-exec keeps
// them, and records the state in the environment.
func (st HelloState) Inheritable() error {
	for _, fd := range st.FDs {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, 0); err != nil {
			return fmt.Errorf("root fd %d: %w", fd, err)
		}
	}
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return os.Setenv(EnvHello, string(b))
}

// HelloFromEnv reads the state a re-exec carried, checking each fd is
// still a folder.
func HelloFromEnv(s string) (HelloState, error) {
	var st HelloState
	if err := wire.Unmarshal([]byte(s), &st); err != nil {
		return st, fmt.Errorf("%s: %v", EnvHello, err)
	}
	if len(st.FDs) != len(st.Roots) || len(st.FDs) == 0 || len(st.FDs) > MaxRoots {
		return st, fmt.Errorf("%s: %d roots for %d fds", EnvHello, len(st.Roots), len(st.FDs))
	}
	for _, fd := range st.FDs {
		var s unix.Stat_t
		if fd <= 3 || unix.Fstat(fd, &s) != nil || s.Mode&unix.S_IFMT != unix.S_IFDIR {
			return st, fmt.Errorf("%s: fd %s is not a folder", EnvHello, strconv.Itoa(fd))
		}
	}
	return st, nil
}

// Open makes the served roots from the state, marking each fd
// close-on-exec again, and sweeps each writable root for the temporary
// files a broker killed mid-write left ([resolve.Root.SweepTemps]:
// Link's own temporary files only, older than [resolve.TempMinAge]). The
// broker calls it once confined and before it answers the hello, so a
// caller whose hello was answered sees the sweep done. A sweep that fails
// is no reason not to serve: a leftover is untidy, not harmful.
func (st HelloState) Open() ([]*Root, error) {
	var out []*Root
	for i, fd := range st.FDs {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC); err != nil {
			return nil, err
		}
		r, err := resolve.NewRoot(fd)
		if err != nil {
			return nil, fmt.Errorf("root %q: %w", st.Roots[i].Name, err)
		}
		if st.Roots[i].Write {
			r.SweepTemps(".", resolve.SweepOptions{})
		}
		out = append(out, &Root{Name: st.Roots[i].Name, Write: st.Roots[i].Write, R: r})
	}
	return out, nil
}

func closeFDs(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

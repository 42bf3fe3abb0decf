package runtool

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerdir"
	"lnk.dev/lnk/internal/ownerfile"
)

// store is the agent's background folder outside its files folder,
// ~/.lnk/agents/<agent id>/background (0700): records, their locks and
// their endings, where nothing the agent runs reaches.
type store struct{ dir *os.File }

func (a *Agent) openStore() (*store, error) {
	if !validAgentID(a.ID) {
		return nil, fmt.Errorf("agent ID %q is not 32 hex digits", a.ID)
	}
	d, err := ownerdir.Open(a.Home, ".lnk", "agents", a.ID, "background")
	if err != nil {
		return nil, fmt.Errorf("the agent's background folder: %w", err)
	}
	return &store{dir: d}, nil
}

// hasStore reports whether the agent's background folder exists (a
// link there counts: opening it is refused then, never followed).
func (a *Agent) hasStore() bool {
	_, err := os.Lstat(filepath.Join(a.Home, ".lnk", "agents", a.ID, "background"))
	return !errors.Is(err, os.ErrNotExist)
}

func validAgentID(id string) bool {
	if len(id) != 32 {
		return false
	}
	for _, c := range id {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func (s *store) Close() error { return s.dir.Close() }
func (s *store) fd() int      { return int(s.dir.Fd()) }

func (s *store) read(id string) (*Record, error) {
	b, err := ownerfile.ReadFile(s.fd(), id+".json", ownerfile.Private, maxRecord)
	if err != nil {
		return nil, err
	}
	r, err := ParseRecord(b)
	if err == nil && r.ID != id {
		err = fmt.Errorf("record %s names %s", id, r.ID)
	}
	return r, err
}

// write replaces the record atomically (0600).
func (s *store) write(r *Record) error {
	return ownerfile.WriteAtomic(s.fd(), r.ID+".json", r.encode(), ownerfile.Write{Mode: 0o600})
}

// ids lists the records' IDs, sorted.
func (s *store) ids() ([]string, error) {
	// A duplicate of the held folder, read from its start: the listing
	// never names the folder again by a path.
	fd, err := unix.FcntlInt(s.dir.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	d := os.NewFile(uintptr(fd), s.dir.Name())
	if _, err := d.Seek(0, 0); err != nil {
		d.Close()
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, n := range names {
		if id, ok := strings.CutSuffix(n, ".json"); ok && validID(id) {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids, nil
}

// lock opens the record's lock file, <id>.lock (0600, never replaced),
// and takes it: exclusive, waiting or not. A running supervisor holds its
// command's lock for its whole life; a lock that is free names a
// supervisor that is gone. ok is false when another holds it.
func (s *store) lock(id string, wait bool) (f *os.File, ok bool, err error) {
	fd, err := ownerfile.Open(s.fd(), id+".lock", unix.O_RDWR|unix.O_CREAT, 0o600)
	if err != nil {
		return nil, false, fmt.Errorf("%s.lock: %w", id, err)
	}
	f = os.NewFile(uintptr(fd), id+".lock")
	if err := ownerfile.Check(fd, ownerfile.Private); err != nil {
		f.Close()
		return nil, false, err
	}
	how := unix.LOCK_EX
	if !wait {
		how |= unix.LOCK_NB
	}
	for {
		err = unix.Flock(fd, how)
		if err != unix.EINTR {
			break
		}
	}
	if errors.Is(err, unix.EWOULDBLOCK) {
		f.Close()
		return nil, false, nil
	}
	if err != nil {
		f.Close()
		return nil, false, err
	}
	return f, true, nil
}

// lockAll takes the folder's own lock, .lock, which orders starts (the
// counts at once and a day) and sweeps.
func (s *store) lockAll() (*os.File, error) {
	f, ok, err := s.lock(".all", true)
	if err == nil && !ok {
		err = errors.New("the background folder's lock was not taken")
	}
	return f, err
}

// remove removes names of the folder that exist; a missing one is fine.
func (s *store) remove(names ...string) error {
	for _, n := range names {
		if err := unix.Unlinkat(s.fd(), n, 0); err != nil && err != unix.ENOENT {
			return fmt.Errorf("removing %s: %w", n, err)
		}
	}
	return nil
}

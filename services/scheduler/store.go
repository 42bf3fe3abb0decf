package scheduler

import (
	"encoding/json"
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

// Store is an agent's jobs: ~/Link/Agents/<agent>/Agent/schedule (0700),
// a file each (<id>.json, 0600, written whole through internal/ownerfile,
// never through a link).
type Store struct {
	dir *os.File
}

// OpenStore opens (making it 0700 where missing) agent name's schedule
// folder under home. One there is opened by its whole path, through no
// link (openat2 RESOLVE_NO_SYMLINKS), and must be the owner's 0700
// folder: a confined scheduler may open nothing above it.
func OpenStore(home, name string) (*Store, error) {
	path := filepath.Join(home, "Link", "Agents", name, "Agent", "schedule")
	fd, err := ownerfile.OpenPath(path, unix.O_RDONLY|unix.O_DIRECTORY)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, os.ErrNotExist) {
		d, err := ownerdir.Open(home, "Link", "Agents", name, "Agent", "schedule")
		if err != nil {
			return nil, fmt.Errorf("the agent's schedule folder: %w", err)
		}
		return &Store{dir: d}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("the agent's schedule folder: %w", err)
	}
	if err := ownerfile.Check(fd, ownerfile.PrivateDir); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("the agent's schedule folder: %w", err)
	}
	return &Store{dir: os.NewFile(uintptr(fd), path)}, nil
}

// Fd is the folder's descriptor (for a landlock rule).
func (s *Store) Fd() int { return int(s.dir.Fd()) }

// Close closes the folder.
func (s *Store) Close() error { return s.dir.Close() }

// List reads every job, oldest first. A job file that can't be read
// fails the list: a job unread is never "no job".
func (s *Store) List() ([]*Job, error) {
	fd, err := unix.FcntlInt(s.dir.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	d := os.NewFile(uintptr(fd), s.dir.Name())
	defer d.Close()
	if _, err := d.Seek(0, 0); err != nil {
		return nil, err
	}
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	var jobs []*Job
	for _, n := range names {
		id, ok := strings.CutSuffix(n, ".json")
		if !ok || !validID(id) {
			continue // the atomic writer's temporaries, anything else
		}
		j, err := s.read(id)
		if errors.Is(err, os.ErrNotExist) {
			continue // removed meanwhile
		}
		if err != nil {
			return nil, fmt.Errorf("job %s: %w", id, err)
		}
		jobs = append(jobs, j)
	}
	sort.Slice(jobs, func(a, b int) bool { return jobs[a].Created.Before(jobs[b].Created) })
	return jobs, nil
}

func (s *Store) read(id string) (*Job, error) {
	b, err := ownerfile.ReadFile(s.Fd(), id+".json", ownerfile.Private, maxJob)
	if err != nil {
		return nil, err
	}
	j, err := ParseJob(b)
	if err != nil {
		return nil, err
	}
	if j.ID != id {
		return nil, fmt.Errorf("the file names job %s", j.ID)
	}
	return j, nil
}

// Write writes j whole, 0600.
func (s *Store) Write(j *Job) error {
	if err := j.check(); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(j, "", "  ")
	return ownerfile.WriteAtomic(s.Fd(), j.ID+".json", append(b, '\n'), ownerfile.Write{Mode: 0o600})
}

// Remove removes job id; gone already is fine.
func (s *Store) Remove(id string) error {
	if !validID(id) {
		return fmt.Errorf("%q is not a job's ID", id)
	}
	if err := unix.Unlinkat(s.Fd(), id+".json", 0); err != nil && err != unix.ENOENT {
		return err
	}
	return nil
}

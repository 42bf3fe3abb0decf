package move

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/ownerfile"
)

// ErrNotArchive refuses an archive that is not a regular file of its own
// (a link, a pipe, a folder, a hard link to another file): never opened
// for reading, or never read.
var ErrNotArchive = errors.New("backup: the archive is not a regular file of its own")

// Archives are a backup's archives, each opened as a regular file: what
// a restore reads. A bucket pull hands its own, opened from the private
// folder it pulled into, in place of OpenBackup's.
type Archives struct {
	Harness string   // the harness Harness is the state of
	Home    *os.File // <harness>.tar, or nil
	Agent   *os.File // Agent.tar, or nil
}

// Close closes what is open.
func (a *Archives) Close() {
	for _, f := range []*os.File{a.Home, a.Agent} {
		if f != nil {
			f.Close()
		}
	}
}

// OpenBackup opens agent name's archives in its files folder's
// .lnk-backup: the folder and each archive opened without following a
// link, each archive refused unless it is a regular file with no other
// name (a link to another agent's backup, a pipe, a hard link: never
// read). A missing archive is nil; both missing is ErrNoBackup.
func OpenBackup(home, name string) (*Archives, error) {
	home, err := filepath.EvalSymlinks(home)
	if err != nil {
		return nil, fmt.Errorf("HOME: %w", err)
	}
	a, err := caps.LoadAgent(home, name)
	if err != nil {
		return nil, err
	}
	agent, err := ownerfile.OpenPath(caps.Layout{Home: home}.AgentDir(a.Name), unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return nil, fmt.Errorf("opening agent %s's folder: %w", a.Name, err)
	}
	defer unix.Close(agent)
	dir, err := ownerfile.OpenDir(agent, "Home/"+BackupDir, unix.O_PATH)
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil, fmt.Errorf("%w: its files folder has no %s", ErrNoBackup, BackupDir)
	case errors.Is(err, ownerfile.ErrLink):
		return nil, fmt.Errorf("%w: %s is a link or not a folder: %v", ErrNotArchive, BackupDir, err)
	case err != nil:
		return nil, fmt.Errorf("opening %s: %w", BackupDir, err)
	}
	defer unix.Close(dir)
	out := &Archives{}
	if a.RunsLinkHarness() {
		out.Harness = caps.LinkHarness
		if out.Home, err = openArchive(dir, HarnessArchive(caps.LinkHarness)); err != nil {
			return nil, err
		}
	}
	if out.Agent, err = openArchive(dir, AgentArchive); err != nil {
		out.Close()
		return nil, err
	}
	if out.Home == nil && out.Agent == nil {
		return nil, fmt.Errorf("%w: %s holds no archive of it", ErrNoBackup, BackupDir)
	}
	return out, nil
}

// openArchive opens name in dir through no link, without blocking on a
// pipe, and refuses it unless it is a regular file with one name.
func openArchive(dir int, name string) (*os.File, error) {
	fd, err := ownerfile.Open(dir, name, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil, nil
	case errors.Is(err, ownerfile.ErrLink):
		return nil, fmt.Errorf("%w: %s/%s is a link, never followed", ErrNotArchive, BackupDir, name)
	case errors.Is(err, unix.ENXIO):
		return nil, fmt.Errorf("%w: %s/%s is a socket", ErrNotArchive, BackupDir, name)
	case err != nil:
		return nil, fmt.Errorf("opening %s/%s: %w", BackupDir, name, err)
	}
	if err := ownerfile.Check(fd, ownerfile.Rule{Type: unix.S_IFREG, OneLink: true}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("%w: %s/%s: %v", ErrNotArchive, BackupDir, name, err)
	}
	return os.NewFile(uintptr(fd), name), nil
}

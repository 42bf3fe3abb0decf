package bucket

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerfile"
)

// AgentArchive is the backup of the agent's own folder, beside its
// harness's <harness>.tar in .lnk-backup.
const AgentArchive = "Agent.tar"

// ErrNotInBucket is returned, wrapped, when no bucket holds the backup.
var ErrNotInBucket = errors.New("no backup in the agent's buckets")

var harnessRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// Pulled is a backup pulled from a bucket: the archives, opened as
// regular files through no link, in Dir, a folder made new (700) for
// this pull alone. Close closes them and removes Dir.
type Pulled struct {
	Bucket  string
	Dir     string
	Harness *os.File // .lnk-backup/<harness>.tar
	Agent   *os.File // .lnk-backup/Agent.tar, or nil when the bucket has none

	home *os.File // the rclone HOME holding Dir
	name string   // Dir's name in it
}

// Close closes the archives and removes the pull's folder.
func (p *Pulled) Close() error {
	if p.Harness != nil {
		p.Harness.Close()
	}
	if p.Agent != nil {
		p.Agent.Close()
	}
	err := ownerfile.RemoveAll(int(p.home.Fd()), p.name)
	p.home.Close()
	return err
}

// PullBackup copies .lnk-backup/<harness>.tar and Agent.tar from bucket
// name (or from the first of the agent's buckets holding it, when name is
// "") into a folder made new, ~/.lnk/agents/<agent id>/rclone/pull-<random>
// (700), and returns them opened. A pull that fails (a wrong key or
// password, no such archive) removes that folder: nothing is left.
func (a *Agent) PullBackup(ctx context.Context, harness, name string) (*Pulled, error) {
	if !harnessRE.MatchString(harness) {
		return nil, fmt.Errorf("harness %q: lowercase letters, digits, '_' and '-'", harness)
	}
	c, f, err := a.load()
	if err != nil {
		return nil, err
	}
	defer c.destroy()
	if f != nil {
		defer f.Close()
	}
	var names []string
	if name != "" {
		names = []string{name}
	}
	pick, err := a.pick(c, names)
	if err != nil {
		return nil, err
	}
	r, h, err := a.runner(f, c)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	// A stale folder is the owner's, private: one not removed is no
	// reason to refuse this pull, which makes its own.
	_ = sweepPulls(h, time.Now())
	var errs []error
	for _, e := range pick {
		p, err := a.pullFrom(ctx, r, h, e, harness)
		if err == nil {
			return p, nil
		}
		errs = append(errs, err)
	}
	if len(errs) == 1 {
		return nil, errs[0]
	}
	return nil, fmt.Errorf("%w: %w", ErrNotInBucket, errors.Join(errs...))
}

// pullFrom pulls harness's archives from bucket name into a new folder
// of h; on error that folder is gone.
func (a *Agent) pullFrom(ctx context.Context, r *runner, h *os.File, e *entry, harness string) (p *Pulled, err error) {
	name := e.Name
	var rnd [8]byte
	rand.Read(rnd[:])
	dirName := "pull-" + hex.EncodeToString(rnd[:])
	dfd, err := ownerfile.MakeDir(int(h.Fd()), dirName, unix.O_RDONLY, ownerfile.PrivateDir)
	if err != nil {
		return nil, fmt.Errorf("making the pull's folder: %w", err)
	}
	defer unix.Close(dfd)
	defer func() {
		if err != nil {
			ownerfile.RemoveAll(int(h.Fd()), dirName)
		}
	}()
	dir := filepath.Join(h.Name(), dirName)
	tar := harness + ".tar"
	args := append([]string{"copy", name + ":files/.lnk-backup", dir, "--max-depth", "1", "--include", "/" + tar, "--include", "/" + AgentArchive}, rcloneFlags...)
	if err := a.runRouted(ctx, r, e, reach{write: dir}, args...); err != nil {
		return nil, fmt.Errorf("pulling agent %s's backup from bucket %s: %w", a.Name, name, err)
	}
	p = &Pulled{Bucket: name, Dir: dir, name: dirName}
	switch p.Harness, err = ownerfile.OpenFile(dfd, tar, ownerfile.Rule{Type: unix.S_IFREG, OneLink: true}); {
	case errors.Is(err, unix.ENOENT):
		return nil, fmt.Errorf("%w: bucket %s has no .lnk-backup/%s (or it was pushed with another encryption password)", ErrNotInBucket, name, tar)
	case err != nil:
		return nil, fmt.Errorf("bucket %s's .lnk-backup/%s: %w", name, tar, err)
	}
	switch p.Agent, err = ownerfile.OpenFile(dfd, AgentArchive, ownerfile.Rule{Type: unix.S_IFREG, OneLink: true}); {
	case errors.Is(err, unix.ENOENT):
		p.Agent, err = nil, nil
	case err != nil:
		p.Harness.Close()
		return nil, fmt.Errorf("bucket %s's %s: %w", name, AgentArchive, err)
	}
	hd, err := unix.FcntlInt(h.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		p.Harness.Close()
		if p.Agent != nil {
			p.Agent.Close()
		}
		return nil, err
	}
	p.home = os.NewFile(uintptr(hd), h.Name())
	return p, nil
}

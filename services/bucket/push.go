package bucket

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"sort"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerfile"
	"lnk.dev/lnk/internal/refusal"
)

// ErrNoBuckets refuses a push or pull for an agent with no bucket.
var ErrNoBuckets = refusal.Sentinel("no-buckets", "the agent has no bucket")

// maxDepth is the deepest folder a push walks to name its links; a
// deeper one refuses the push, as a move refuses one past 32.
const maxDepth = 32

// Pushed is what a push did: the buckets it mirrored the files folder
// to, and the links (and other non-regular files) it left out.
type Pushed struct {
	Buckets []string `json:"buckets"`
	Left    []string `json:"left_out"`
}

// rcloneFlags are every transfer's: a link is never followed nor
// carried (no --links, no --copy-links; --skip-links only quiets rclone's
// notice, since Link names each itself), no other file system (-x), and
// a few retries.
var rcloneFlags = []string{"--skip-links", "--one-file-system", "--retries", "2", "--low-level-retries", "3", "--stats", "0"}

// Push mirrors the files folder filesDir (its .lnk-backup with it) into
// each of names (every bucket of the agent's when none), as
// NAME:files: rclone sync, what it replaces or deletes kept under
// NAME:replaced/<UTC time>. filesDir is opened through no link first, and
// its links are walked for (never followed) and named in Pushed.Left. It
// stops at the first bucket that fails.
func (a *Agent) Push(ctx context.Context, filesDir string, names ...string) (*Pushed, error) {
	c, f, err := a.load()
	if err != nil {
		return nil, err
	}
	defer c.destroy()
	if f != nil {
		defer f.Close()
	}
	pick, err := a.pick(c, names)
	if err != nil {
		return nil, err
	}
	dfd, err := ownerfile.OpenPath(filesDir, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return nil, fmt.Errorf("opening agent %s's files folder %s (a link is never followed): %w", a.Name, filesDir, err)
	}
	p := &Pushed{}
	err = leftOut(dfd, "", 0, &p.Left)
	unix.Close(dfd)
	if err != nil {
		return nil, err
	}
	r, h, err := a.runner(f, c)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	stamp := time.Now().UTC().Format("20060102T150405Z")
	for _, e := range pick {
		args := append([]string{"sync", filesDir, e.Name + ":files", "--backup-dir", e.Name + ":replaced/" + stamp}, rcloneFlags...)
		if err := a.runRouted(ctx, r, e, reach{read: filesDir}, args...); err != nil {
			return p, fmt.Errorf("pushing agent %s's files to bucket %s: %w", a.Name, e.Name, err)
		}
		p.Buckets = append(p.Buckets, e.Name)
	}
	return p, nil
}

// runRouted runs rclone for bucket e with rw, reaching e's endpoint only
// by the route openRoute checked and opened for this one run: a refused
// endpoint starts no child, and a refusal of the proxy's fails the run.
func (a *Agent) runRouted(ctx context.Context, r *runner, e *entry, rw reach, args ...string) error {
	rt, err := a.openRoute(ctx, e)
	if err != nil {
		return err
	}
	rw.port, rw.env = rt.port, rt.env()
	_, err = r.run(ctx, nil, rw, args...)
	rt.Close()
	if refused := rt.errRefused(e); refused != nil {
		if err != nil {
			return fmt.Errorf("%w (%v)", refused, err)
		}
		return refused
	}
	return err
}

// pick is the entries of c named (all when none), each refused unless
// the agent has it.
func (a *Agent) pick(c *conf, names []string) ([]*entry, error) {
	if len(c.entries) == 0 {
		return nil, &refusal.Refusal{Reason: "agent " + a.Name + " has no bucket", Rule: "no-buckets",
			Hint: "lnk agent bucket add " + a.Name + " NAME --s3 https://HOST --bucket B", Err: ErrNoBuckets}
	}
	if len(names) == 0 {
		return c.entries, nil
	}
	var out []*entry
	for _, n := range names {
		_, e := c.find(n)
		if e == nil {
			return nil, fmt.Errorf("%w: agent %s has no bucket %s", ErrNoBucket, a.Name, n)
		}
		out = append(out, e)
	}
	return out, nil
}

// leftOut walks the folder dfd (rel below the files folder), each
// folder opened from the one before through no link, and appends every
// name a push leaves out: a link, a fifo, a socket, a device.
func leftOut(dfd int, rel string, depth int, out *[]string) error {
	if depth > maxDepth {
		return fmt.Errorf("the files folder is more than %d folders deep at %s: a push refuses it", maxDepth, rel)
	}
	// Read from a duplicate: dfd stays its caller's.
	d, err := unix.FcntlInt(uintptr(dfd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(d), orDot(rel))
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return fmt.Errorf("reading %s: %w", orDot(rel), err)
	}
	sort.Strings(names)
	for _, n := range names {
		name := path.Join(rel, n)
		var st unix.Stat_t
		if err := unix.Fstatat(dfd, n, &st, unix.AT_SYMLINK_NOFOLLOW); errors.Is(err, unix.ENOENT) {
			continue // gone meanwhile
		} else if err != nil {
			return fmt.Errorf("looking at %s: %w", name, err)
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFREG:
		case unix.S_IFDIR:
			sub, err := ownerfile.OpenDir(dfd, n, unix.O_RDONLY)
			if errors.Is(err, ownerfile.ErrLink) {
				*out = append(*out, name) // swapped for a link meanwhile
				continue
			}
			if err != nil {
				return fmt.Errorf("opening %s: %w", name, err)
			}
			err = leftOut(sub, name, depth+1, out)
			unix.Close(sub)
			if err != nil {
				return err
			}
		default:
			*out = append(*out, name)
		}
	}
	return nil
}

func orDot(rel string) string {
	if rel == "" {
		return "."
	}
	return rel
}

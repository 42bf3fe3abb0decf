package move

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/ownerfile"
)

// BackupDir is the backup folder, in the agent's files folder.
const BackupDir = ".lnk-backup"

// AgentArchive holds the agent's instructions, skills and conversations.
const AgentArchive = "Agent.tar"

// agentAreas are what Agent.tar holds of the agent's own folder: never
// memory's index, nor schedule/ (its jobs), so nothing restored acts by
// itself.
var agentAreas = []area{{"chats", "Agent/chats", false}, {"instructions", "Agent/instructions", false}, {"skills", "Agent/skills", false}}

// HarnessArchive is the name of harness's archive in the backup folder.
func HarnessArchive(harness string) string { return harness + ".tar" }

// Backup options.
type Backup struct {
	Home string
	Name string
	// Note is told, one line each, what was not backed up and why.
	Note func(string)
}

// BackedUp says what a backup wrote.
type BackedUp struct {
	Harness string   // the harness whose state was written, "" for none
	Written []string // each archive's path, in the backup folder
}

// Run writes agent b.Name's backup: Link Harness's state (its home as a
// move sends it, never its .env) to .lnk-backup/link.tar and its
// instructions, skills and conversations to .lnk-backup/Agent.tar, each
// replacing the one before atomically, then the record of what it wrote
// (~/.lnk/agents/<agent>/backup.json), which a restore checks the
// archives against. A bucket push belongs after it returns, of the
// paths written.
func (b *Backup) Run(ctx context.Context) (*BackedUp, error) {
	if b.Note == nil {
		b.Note = func(string) {}
	}
	home, err := filepath.EvalSymlinks(b.Home)
	if err != nil {
		return nil, fmt.Errorf("HOME: %w", err)
	}
	a, err := caps.LoadAgent(home, b.Name)
	if err != nil {
		return nil, err
	}
	unlock, err := lockMove(home, a.ID)
	if err != nil {
		return nil, err
	}
	defer unlock()
	l := caps.Layout{Home: home}
	agent, err := ownerfile.OpenPath(l.AgentDir(a.Name), unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return nil, fmt.Errorf("opening agent %s's folder: %w", a.Name, err)
	}
	defer unix.Close(agent)
	dir, err := makeBackupDir(agent)
	if err != nil {
		return nil, err
	}
	defer unix.Close(dir)
	sending, err := openSending(l)
	if err != nil {
		return nil, err
	}
	defer unix.Close(sending)

	now := time.Now().UTC()
	out := &BackedUp{}
	rec := &record{ID: a.ID, Made: now.Format(time.RFC3339)}
	t := &tree{ctx: ctx, sending: sending, note: b.Note}
	if a.RunsLinkHarness() {
		out.Harness = caps.LinkHarness
		sum, err := writeArchive(t, agent, dir, HarnessArchive(caps.LinkHarness), []area{homeArea}, now)
		if err != nil {
			return nil, err
		}
		rec.Archives = append(rec.Archives, *sum)
	} else {
		b.Note("harness " + a.Harness + "'s home is not backed up: this Link names no state of a harness from outside it")
	}
	sum, err := writeArchive(t, agent, dir, AgentArchive, agentAreas, now)
	if err != nil {
		return nil, err
	}
	rec.Archives = append(rec.Archives, *sum)
	if err := writeRecord(home, a.Name, rec); err != nil {
		return nil, err
	}
	for _, s := range rec.Archives {
		out.Written = append(out.Written, filepath.Join(l.FilesDir(a.Name), BackupDir, s.Name))
	}
	return out, nil
}

// makeBackupDir opens the files folder's .lnk-backup (0700), made when
// missing. The agent writes the files folder: anything but a folder in
// its place (a link among them) is removed first, never followed, and
// the folder is then opened through no link, so one swapped in after is
// refused, and what is written goes through this handle alone.
func makeBackupDir(agent int) (int, error) {
	files, err := ownerfile.OpenDir(agent, "Home", unix.O_PATH)
	if err != nil {
		return -1, fmt.Errorf("opening the agent's files folder: %w", err)
	}
	defer unix.Close(files)
	var st unix.Stat_t
	err = unix.Fstatat(files, BackupDir, &st, unix.AT_SYMLINK_NOFOLLOW)
	if err == nil && st.Mode&unix.S_IFMT != unix.S_IFDIR {
		if err := unix.Unlinkat(files, BackupDir, 0); err != nil && !errors.Is(err, unix.ENOENT) {
			return -1, fmt.Errorf("removing what stands in %s's place: %w", BackupDir, err)
		}
	}
	fd, err := ownerfile.MakeDir(files, BackupDir, unix.O_RDONLY, ownerfile.Rule{})
	if err != nil {
		return -1, fmt.Errorf("opening %s: %w", BackupDir, err)
	}
	// Its mode set through the handle, never by its name again.
	if err := unix.Fchmod(fd, 0o700); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// writeArchive writes areas of the agent's folder, read as a move's send
// reads them, as the archive name in dir, replacing the one there only
// once it is whole. It returns the archive's size and SHA-256.
func writeArchive(t *tree, agent, dir int, name string, areas []area, now time.Time) (*archiveSum, error) {
	rep, err := ownerfile.NewReplacement(dir, name, 0o600)
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	cw := &countHash{h: h}
	bw := bufio.NewWriterSize(io.MultiWriter(rep, cw), copyBuf)
	tw := newTarEntries(bw, now)
	t.w = tw
	err = func() error {
		for _, ar := range areas {
			if err := t.area(agent, ar); err != nil {
				return err
			}
		}
		if err := tw.Close(); err != nil {
			return err
		}
		return bw.Flush()
	}()
	if err != nil {
		rep.Abort()
		return nil, fmt.Errorf("backing up %s: %w", name, err)
	}
	if err := rep.Commit(); err != nil {
		return nil, err
	}
	return &archiveSum{Name: name, Size: cw.n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// countHash hashes and counts what is written.
type countHash struct {
	h hash.Hash
	n int64
}

func (c *countHash) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return c.h.Write(p)
}

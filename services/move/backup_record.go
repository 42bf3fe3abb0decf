package move

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerdir"
	"lnk.dev/lnk/internal/ownerfile"
)

// recordName is the note of the last backup made here, in
// ~/.lnk/agents/<agent>/: out of every sandbox's reach, unlike the
// archives, which sit in the files folder the agent may write.
const recordName = "backup.json"

// ErrNotLastBackup refuses an archive whose bytes are not those lnk agent
// backup wrote here last.
var ErrNotLastBackup = errors.New("backup: the archive is not the one lnk agent backup wrote here last")

// ErrNoBackup is a restore with no backup to go back to.
var ErrNoBackup = errors.New("backup: no backup of this agent was made here")

// archiveSum is one archive as written: its name, size and SHA-256.
type archiveSum struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// record is the last backup made here of an agent.
type record struct {
	ID       string       `json:"id"`
	Made     string       `json:"made"`
	Archives []archiveSum `json:"archives"`
}

func (r *record) sum(name string) *archiveSum {
	for i := range r.Archives {
		if r.Archives[i].Name == name {
			return &r.Archives[i]
		}
	}
	return nil
}

// openRecordDir opens ~/.lnk/agents/<name> (0700, made when missing).
func openRecordDir(home, name string) (int, error) {
	d, err := ownerdir.Open(home, ".lnk", "agents", name)
	if err != nil {
		return -1, err
	}
	fd, err := unix.FcntlInt(d.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	d.Close()
	return fd, err
}

// writeRecord writes the record of a backup just made, atomically.
func writeRecord(home, name string, rec *record) error {
	dir, err := openRecordDir(home, name)
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	return ownerfile.WriteAtomic(dir, recordName, append(b, '\n'), ownerfile.Write{})
}

// readRecord reads the record of the last backup made here of agent
// name, whose ID must be id.
func readRecord(home, name, id string) (*record, error) {
	dir, err := openRecordDir(home, name)
	if err != nil {
		return nil, err
	}
	defer unix.Close(dir)
	fd, err := ownerfile.Open(dir, recordName, unix.O_RDONLY, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil, ErrNoBackup
	}
	if err != nil {
		return nil, fmt.Errorf("reading ~/.lnk/agents/%s/%s: %w", name, recordName, err)
	}
	f := fileOf(fd, recordName)
	defer f.Close()
	if err := ownerfile.Check(fd, ownerfile.Private); err != nil {
		return nil, fmt.Errorf("~/.lnk/agents/%s/%s: %w", name, recordName, err)
	}
	b, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return nil, err
	}
	var rec record
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("~/.lnk/agents/%s/%s: %w", name, recordName, err)
	}
	if rec.ID != id {
		return nil, fmt.Errorf("%w: the record here is of agent ID %s, not %s", ErrNoBackup, rec.ID, id)
	}
	return &rec, nil
}

package builtin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerdir"
	"lnk.dev/lnk/internal/ownerfile"
)

// Record is what a running `lnk model builtin` leaves in
// ~/.lnk/models/builtin.json (600), so `lnk model list` finds it.
type Record struct {
	URL      string `json:"url"` // http://127.0.0.1:<port>/v1
	Port     int    `json:"port"`
	PID      int    `json:"pid"`
	Obedient bool   `json:"obedient,omitempty"`
}

// RecordName is the record's file name in ~/.lnk/models.
const RecordName = "builtin.json"

// maxRecord is the most of a record read.
const maxRecord = 4096

// BaseURL is the OpenAI-compatible base URL of the built-in on port.
func BaseURL(port int) string { return "http://127.0.0.1:" + strconv.Itoa(port) + "/v1" }

func (r Record) check() error {
	if r.Port < 1 || r.Port > 65535 {
		return fmt.Errorf("port %d is not a TCP port", r.Port)
	}
	if r.URL != BaseURL(r.Port) {
		return fmt.Errorf("url %q is not %s", r.URL, BaseURL(r.Port))
	}
	if r.PID < 1 {
		return fmt.Errorf("pid %d is not a process", r.PID)
	}
	return nil
}

// WriteRecord writes r atomically as ~/.lnk/models/builtin.json, 600,
// the folders made 700 where missing, never through a link. home is
// $HOME.
func WriteRecord(home string, r Record) error {
	if err := r.check(); err != nil {
		return fmt.Errorf("the built-in model's record: %w", err)
	}
	dir, err := ownerdir.Open(home, ".lnk", "models")
	if err != nil {
		return err
	}
	defer dir.Close()
	b, _ := json.MarshalIndent(r, "", "  ")
	return ownerfile.WriteAtomic(int(dir.Fd()), RecordName, append(b, '\n'), ownerfile.Write{Mode: 0o600})
}

// ReadRecord reads the record: never through a link, only the owner's,
// 600 in a 700 folder, decoded strictly and naming a loopback port. No
// record is an error that is os.ErrNotExist.
func ReadRecord(home string) (Record, error) {
	var r Record
	dir, err := openModels(home)
	if err != nil {
		return r, err
	}
	defer unix.Close(dir)
	b, err := ownerfile.ReadFile(dir, RecordName, ownerfile.Rule{Type: unix.S_IFREG, Forbid: 0o077, OneLink: true}, maxRecord)
	if err != nil {
		return r, fmt.Errorf("the built-in model's record: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return Record{}, fmt.Errorf("the built-in model's record does not decode: %w", err)
	}
	if err := r.check(); err != nil {
		return Record{}, fmt.Errorf("the built-in model's record: %w", err)
	}
	return r, nil
}

// RemoveRecord removes the record if it still names pid; another's, or
// none, is left as it is.
func RemoveRecord(home string, pid int) error {
	r, err := ReadRecord(home)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return err
	}
	if r.PID != pid {
		return nil
	}
	dir, err := openModels(home)
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	if err := unix.Unlinkat(dir, RecordName, 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("removing the built-in model's record: %w", err)
	}
	return nil
}

// openModels opens ~/.lnk/models through no link, refused unless the
// owner's and 700; it makes nothing.
func openModels(home string) (int, error) {
	if !filepath.IsAbs(home) {
		return -1, errors.New("HOME is not an absolute path")
	}
	fd, err := ownerfile.OpenPath(filepath.Join(home, ".lnk", "models"), unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return -1, fmt.Errorf("opening ~/.lnk/models: %w", err)
	}
	if err := ownerfile.Check(fd, ownerfile.PrivateDir); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("~/.lnk/models must be the owner's and mode 0700: %w", err)
	}
	return fd, nil
}

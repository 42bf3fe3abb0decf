package agentlife

import (
	"encoding/json"
	"errors"
	"os"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/ownerfile"
)

// Status is what lnk agent status says of an agent's life.
type Status struct {
	Running bool    `json:"running"`
	Record  *Record `json:"record,omitempty"` // the supervisor's latest, when there is one
	// Background is each record the run tool keeps of a background
	// command, in ~/.lnk/agents/<agent id>/background/<id>.json.
	Background []map[string]any `json:"background"`
}

// maxBackground bounds how many background records status reads.
const maxBackground = 256

// ReadStatus reads agent a's status: running is whether its supervisor
// holds its lock now.
func ReadStatus(home string, a *caps.Agent) (*Status, error) {
	sd, err := stateDir(home, a.ID)
	if err != nil {
		return nil, err
	}
	defer sd.Close()
	held, err := lockHeld(int(sd.Fd()))
	if err != nil {
		return nil, err
	}
	rec, err := ReadRecord(home, a.ID)
	if err != nil {
		return nil, err
	}
	bg, err := readBackground(int(sd.Fd()))
	if err != nil {
		return nil, err
	}
	return &Status{Running: held, Record: rec, Background: bg}, nil
}

// readBackground reads the background commands' records, if any.
func readBackground(dirfd int) ([]map[string]any, error) {
	out := []map[string]any{}
	fd, err := ownerfile.OpenDir(dirfd, "background", unix.O_RDONLY)
	if errors.Is(err, unix.ENOENT) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	d := os.NewFile(uintptr(fd), "background")
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	for _, n := range names {
		if !isRecordName(n) {
			continue // the day's count, an ending, a lock, a write under way
		}
		if len(out) == maxBackground {
			break
		}
		b, err := ownerfile.ReadFile(fd, n, ownerfile.Private, maxRecord)
		if errors.Is(err, unix.ENOENT) {
			continue // removed meanwhile
		}
		if err != nil {
			return nil, err
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, errors.New("background/" + n + ": " + err.Error())
		}
		out = append(out, m)
	}
	return out, nil
}

// isRecordName is whether n names a background command's record,
// <id>.json with the run tool's 16 lowercase hex digits: beside the
// records the folder holds their endings (<id>.ending.json), locks, the
// day's count (starts.json) and writes under way (.<name>.tmp-N).
func isRecordName(n string) bool {
	id, ok := strings.CutSuffix(n, ".json")
	if !ok || len(id) != 16 {
		return false
	}
	for _, c := range id {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

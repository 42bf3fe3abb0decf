package caps

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerdir"
	"lnk.dev/lnk/internal/ownerfile"
	"lnk.dev/lnk/internal/textsafe"
)

// ~/.lnk/machine.toml (security.txt, "Where Link keeps an agent's
// things"): this machine's ID and name and what it allows every agent.
// Made at first use; a deployment may write it first with only its own
// lines, which are kept: only a missing id or name is added, appended,
// the whole file then written again atomically under a lock, so two lnk
// never give one machine two IDs. A file that is malformed, has an
// unknown key, a link, another user's or looser than 0600 is refused:
// nothing that reads it runs on a guess.

// ErrMachineFile is the refusal of ~/.lnk/machine.toml.
var ErrMachineFile = rule("machine-file", "~/.lnk/machine.toml is not a valid machine file (keys: id, name, unsandboxed, shared_harness, shared_bridge, keep_moved), or is a link, another user's or looser than 0600")

// DefaultKeepMoved is how long ~/Link/History/Agents keeps what left
// when machine.toml says nothing: 30 days.
const DefaultKeepMoved = 30 * 24 * time.Hour

// maxKeepMoved bounds keep_moved (ten years): a larger figure is a typo.
const maxKeepMoved = 3650 * 24 * time.Hour

// maxMachineFile bounds what is read of machine.toml.
const maxMachineFile = 64 << 10

// MachineFile is machine.toml's name in ~/.lnk.
const MachineFile = "machine.toml"

// Machine is ~/.lnk/machine.toml.
type Machine struct {
	ID   string `json:"id"`   // 32 lowercase hex digits, random
	Name string `json:"name"` // the hostname when unsaid
	// Unsandboxed is false where no agent may run without a sandbox;
	// absent (nil) or true allows an agent to start with --no-sandbox.
	Unsandboxed   *bool         `json:"unsandboxed,omitempty"`
	SharedHarness bool          `json:"shared_harness"`
	SharedBridge  bool          `json:"shared_bridge"`
	KeepMoved     time.Duration `json:"-"`
}

// NoSandboxAllowed says whether an agent may run without a sandbox here.
func (m *Machine) NoSandboxAllowed() bool { return m.Unsandboxed == nil || *m.Unsandboxed }

// machineFile is the file's keys as written.
type machineFile struct {
	ID            *string `toml:"id"`
	Name          *string `toml:"name"`
	Unsandboxed   *bool   `toml:"unsandboxed"`
	SharedHarness *bool   `toml:"shared_harness"`
	SharedBridge  *bool   `toml:"shared_bridge"`
	KeepMoved     *string `toml:"keep_moved"`
}

var idPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

// ParseMachine parses machine.toml's text. missingID and missingName say
// which of the two lines a first use adds.
func ParseMachine(data []byte) (m *Machine, missingID, missingName bool, err error) {
	var f machineFile
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&f)
	if err != nil {
		return nil, false, false, errors.New(oneLine(err.Error()))
	}
	if u := md.Undecoded(); len(u) > 0 {
		return nil, false, false, fmt.Errorf("unknown key %q", textsafe.Line(u[0].String()))
	}
	m = &Machine{Unsandboxed: f.Unsandboxed, KeepMoved: DefaultKeepMoved}
	if f.ID != nil {
		if !idPattern.MatchString(*f.ID) {
			return nil, false, false, fmt.Errorf("id %q is not 32 lowercase hex digits", textsafe.Line(*f.ID))
		}
		m.ID = *f.ID
	}
	if f.Name != nil {
		if err := checkMachineName(*f.Name); err != nil {
			return nil, false, false, err
		}
		m.Name = *f.Name
	}
	m.SharedHarness = f.SharedHarness != nil && *f.SharedHarness
	m.SharedBridge = f.SharedBridge != nil && *f.SharedBridge
	if f.KeepMoved != nil {
		d, err := ParseKeep(*f.KeepMoved)
		if err != nil {
			return nil, false, false, err
		}
		m.KeepMoved = d
	}
	return m, f.ID == nil, f.Name == nil, nil
}

// checkMachineName refuses an empty name, one over 253 bytes, and one
// with a character textsafe removes.
func checkMachineName(n string) error {
	if n == "" || len(n) > 253 || textsafe.Line(n) != n {
		return fmt.Errorf("name %q is not 1 to 253 printable characters", textsafe.Line(n))
	}
	return nil
}

// ParseKeep reads keep_moved: a number of days ("30d") or a Go duration
// ("720h"), more than zero and at most ten years.
func ParseKeep(s string) (time.Duration, error) {
	var d time.Duration
	var err error
	if days, ok := strings.CutSuffix(s, "d"); ok {
		var n int64
		n, err = strconv.ParseInt(days, 10, 32)
		d = time.Duration(n) * 24 * time.Hour
	} else {
		d, err = time.ParseDuration(s)
	}
	if err != nil || d <= 0 || d > maxKeepMoved {
		return 0, fmt.Errorf("keep_moved %q is not a duration from 1s to 3650d (e.g. \"30d\" or \"720h\")", textsafe.Line(s))
	}
	return d, nil
}

// LoadMachine reads ~/.lnk/machine.toml under home, making it, or adding
// a missing id or name to a deployment's file, at first use.
func LoadMachine(home string) (*Machine, error) {
	l, err := layoutFor(home)
	if err != nil {
		return nil, err
	}
	path := l.Settings() + "/" + MachineFile
	dir, err := ownerdir.Open(l.Home, ".lnk")
	if err != nil {
		return nil, at(ErrMachineFile, quote(l.Settings())+": "+err.Error(), "~/.lnk must be your own folder, mode 0700, not a link: chmod 700 ~/.lnk, then lnk machine show")
	}
	defer dir.Close()
	dfd := int(dir.Fd())
	m, addID, addName, data, err := readMachine(dfd, path)
	if err != nil || !addID && !addName {
		return m, err
	}
	// First use: under a lock on ~/.lnk, read again (another lnk may have
	// added the lines meanwhile), append what is still missing, write.
	if err := unix.Flock(dfd, unix.LOCK_EX); err != nil {
		return nil, fmt.Errorf("locking %s: %w", l.Settings(), err)
	}
	defer unix.Flock(dfd, unix.LOCK_UN)
	m, addID, addName, data, err = readMachine(dfd, path)
	if err != nil || !addID && !addName {
		return m, err
	}
	out := append([]byte(nil), data...)
	if len(out) == 0 {
		out = append(out, machineHeader...)
	} else if out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	if addID {
		out = append(out, "id = "+strconv.Quote(NewID())+"\n"...)
	}
	if addName {
		out = append(out, "name = "+strconv.Quote(hostName())+"\n"...)
	}
	if err := ownerfile.WriteAtomic(dfd, MachineFile, out, ownerfile.Write{Mode: 0o600}); err != nil {
		return nil, at(ErrMachineFile, quote(path)+": "+err.Error(), machineHint)
	}
	m, _, _, _, err = readMachine(dfd, path)
	return m, err
}

const machineHint = "edit ~/.lnk/machine.toml (keys: id, name, unsandboxed, shared_harness, shared_bridge, keep_moved; mode 0600), then lnk machine show"

const machineHeader = `# This machine, for Link. Lines a deployment writes are kept.
# unsandboxed = false     # no agent may run without a sandbox
# shared_harness = true   # one harness serves an owner's agents
# shared_bridge = true    # one bridge carries every agent's connections
# keep_moved = "30d"      # how long ~/Link/History/Agents keeps what left
`

// readMachine reads and parses machine.toml in dfd; a missing file is
// empty, missing both lines.
func readMachine(dfd int, path string) (m *Machine, addID, addName bool, data []byte, err error) {
	data, err = ownerfile.ReadFile(dfd, MachineFile, ownerfile.Private, maxMachineFile)
	if errors.Is(err, unix.ENOENT) {
		data, err = nil, nil
	}
	if err != nil {
		return nil, false, false, nil, at(ErrMachineFile, quote(path)+": "+oneLine(err.Error()), machineHint)
	}
	m, addID, addName, err = ParseMachine(data)
	if err != nil {
		return nil, false, false, nil, at(ErrMachineFile, quote(path)+": "+err.Error(), machineHint)
	}
	return m, addID, addName, data, nil
}

// hostName is this machine's hostname, or "localhost" where it has none
// Link can print.
func hostName() string {
	h, err := os.Hostname()
	if err != nil || checkMachineName(h) != nil {
		return "localhost"
	}
	return h
}

package agentlife

import (
	"errors"
	"fmt"
	"os"

	"github.com/BurntSushi/toml"
	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerdir"
	"lnk.dev/lnk/internal/ownerfile"
)

// This file reads the one key of ~/.lnk/machine.toml a start needs,
// unsandboxed; it gives way to the machine file's own reader once there
// is one.

const maxMachineFile = 64 << 10

// ErrNoUnsandboxed refuses an agent's sandbox off on a machine whose
// machine.toml says unsandboxed = false.
var ErrNoUnsandboxed = errors.New("this machine runs no agent without a sandbox (unsandboxed = false in ~/.lnk/machine.toml)")

// UnsandboxedAllowed says whether ~/.lnk/machine.toml lets an agent run
// without its sandbox: yes when the file or the key is absent; a file
// that can't be read or parsed refuses (fail closed).
func UnsandboxedAllowed(home string) error {
	d, err := ownerdir.Open(home, ".lnk")
	if err != nil {
		return err
	}
	defer d.Close()
	b, err := ownerfile.ReadFile(int(d.Fd()), "machine.toml", ownerfile.Private, maxMachineFile)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("~/.lnk/machine.toml, read to know whether an agent may run without a sandbox: %w", err)
	}
	var m struct {
		Unsandboxed *bool `toml:"unsandboxed"`
	}
	if _, err := toml.Decode(string(b), &m); err != nil {
		return fmt.Errorf("~/.lnk/machine.toml, read to know whether an agent may run without a sandbox: %v", err)
	}
	if m.Unsandboxed != nil && !*m.Unsandboxed {
		return ErrNoUnsandboxed
	}
	return nil
}

package caps

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/testenv"
)

// TestSandboxOff: an agent's no-sandbox setting is off unless set; set,
// it holds where machine.toml allows it (no file, no key, or
// unsandboxed = true) and is refused by rule where it says false, with
// a hint naming the command that turns the sandbox back on; a
// machine.toml that cannot be read refuses too, never "allowed".
func TestSandboxOff(t *testing.T) {
	home := testenv.Home(t)
	a, err := CreateAgent(home, "mine")
	if err != nil {
		t.Fatal(err)
	}
	machine := filepath.Join(home, ".lnk", "machine.toml")
	os.WriteFile(machine, []byte("unsandboxed = false\n"), 0o600)
	if off, err := a.SandboxOff(home); err != nil || off {
		t.Fatalf("the setting unset, on a machine that refuses it: off %v, %v", off, err)
	}
	a.NoSandbox = true
	off, err := a.SandboxOff(home)
	if !errors.Is(err, ErrNoSandboxRefused) || off {
		t.Fatalf("unsandboxed = false: off %v, %v", off, err)
	}
	var r *Refusal
	if !errors.As(err, &r) || !strings.Contains(r.Hint, "lnk agent start --sandbox mine") || !strings.Contains(err.Error(), "unsandboxed = false") {
		t.Fatalf("the refusal says neither why nor what to run: %+v", r)
	}
	if err := CheckNoSandbox(home); !errors.Is(err, ErrNoSandboxRefused) {
		t.Fatalf("CheckNoSandbox with unsandboxed = false: %v", err)
	}
	// Positive controls: allowed, the setting holds.
	for _, text := range []string{"unsandboxed = true\n", "shared_bridge = true\n"} {
		os.WriteFile(machine, []byte(text), 0o600)
		if off, err := a.SandboxOff(home); err != nil || !off {
			t.Fatalf("%q: off %v, %v", text, off, err)
		}
	}
	// Unreadable (looser than 0600, or malformed): refused, not allowed.
	os.Chmod(machine, 0o644)
	if off, err := a.SandboxOff(home); !errors.Is(err, ErrMachineFile) || off {
		t.Fatalf("a machine.toml of mode 0644: off %v, %v", off, err)
	}
	os.Chmod(machine, 0o600)
	os.WriteFile(machine, []byte("unsandboxed = \"no\"\n"), 0o600)
	if off, err := a.SandboxOff(home); !errors.Is(err, ErrMachineFile) || off {
		t.Fatalf("a malformed machine.toml: off %v, %v", off, err)
	}
}

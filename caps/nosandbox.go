package caps

import "errors"

// An agent's sandbox off (security.txt, "No sandbox"): its one setting,
// lnk agent start --no-sandbox kept until --sandbox, and the machine's
// word on it, machine.toml's unsandboxed. Every caller that decides how
// an agent runs (lnk agent start, the supervisor at each start of the
// harness, lnk agent harness run and check) learns it here.

// ErrNoSandboxRefused refuses an agent's sandbox off on a machine whose
// machine.toml says unsandboxed = false.
var ErrNoSandboxRefused = rule("no-sandbox-refused", "this machine runs no agent without a sandbox (unsandboxed = false in ~/.lnk/machine.toml)")

// CheckNoSandbox refuses a sandbox off where ~/.lnk/machine.toml says
// unsandboxed = false (ErrNoSandboxRefused); a machine file that cannot
// be read refuses too (fail closed).
func CheckNoSandbox(home string) error {
	m, err := LoadMachine(home)
	if err != nil {
		return err
	}
	if !m.NoSandboxAllowed() {
		return at(ErrNoSandboxRefused, "an agent's sandbox off", "lnk agent start NAME runs an agent in its sandbox; lnk agent start --sandbox NAME turns its sandbox back on")
	}
	return nil
}

// SandboxOff says whether agent a runs without its sandbox: its
// no-sandbox setting, checked against the machine's. The setting on a
// machine that refuses it is an error (ErrNoSandboxRefused), never a
// start with the sandbox either way in silence.
func (a *Agent) SandboxOff(home string) (bool, error) {
	if !a.NoSandbox {
		return false, nil
	}
	if err := CheckNoSandbox(home); err != nil {
		if errors.Is(err, ErrNoSandboxRefused) {
			return false, at(ErrNoSandboxRefused, "agent "+a.Name+"'s sandbox off", "lnk agent start --sandbox "+a.Name+" turns its sandbox back on")
		}
		return false, err
	}
	return true, nil
}

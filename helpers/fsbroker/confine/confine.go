// Package confine is lnk-fsbroker's confinement, as data: what landlock
// allows (exactly the folders its hello handed over, read or read and
// write as handed) and what seccomp refuses (exec, every socket, ptrace
// and the rest of internal/seccomp's deny list).
//
// # Security
//
// Holds nothing; it turns the broker's root fds into rules and loads
// them. May: restrict the calling process (landlock, then seccomp) and,
// where the kernel lacks landlock's TSYNC (ABI < 8), re-execute it once
// from the confined thread (internal/landlock). Refuses to report success
// on a kernel without landlock or seccomp: the broker does not serve then.
package confine

import (
	"lnk.dev/lnk/internal/landlock"
	"lnk.dev/lnk/internal/seccomp"
)

// Folder is one root fd and whether it was handed over writable.
type Folder struct {
	FD    int
	Write bool
}

// Policy is the seccomp policy: no exec, no socket of any family. The
// broker's channel was made before it starts; it never makes another.
var Policy = seccomp.Policy{Exec: false, Sockets: seccomp.SocketsNone}

// Rules are the landlock rules for folders: read beneath each, and write
// beneath those handed over writable. Nothing else on the filesystem.
func Rules(folders []Folder) []landlock.Rule {
	rules := make([]landlock.Rule, 0, len(folders))
	for _, f := range folders {
		r := landlock.Read
		if f.Write {
			r |= landlock.Write
		}
		rules = append(rules, landlock.Beneath(f.FD, r))
	}
	return rules
}

// Landlock restricts the process to folders. Where the kernel needs it,
// this re-executes the program (see internal/landlock): the caller must
// have left the fds it needs without close-on-exec and its state where
// the new program finds it. It returns the kernel's landlock ABI.
func Landlock(folders []Folder) (int, error) {
	st, err := landlock.Restrict(Rules(folders)...)
	return st.ABI, err
}

// Seccomp loads [Policy] on every thread.
func Seccomp() error { return seccomp.ConfineBroker(Policy) }

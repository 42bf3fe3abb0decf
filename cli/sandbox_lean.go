package cli

import (
	"context"
	"os"
)

// `lnk sandbox run` is on the path of every sandboxed start, so lnk
// builds only that command for it, not the whole tree: each of the
// tree's commands allocates its flags (a grant flag's default alone is
// rendered through a 4 KiB CSV buffer), and on this kind of machine every
// fresh page is a fault that costs more than the work on it.

// IsSandboxRun reports whether args (os.Args[1:]) run `lnk sandbox run`,
// the command RunSandboxRun serves alone.
func IsSandboxRun(args []string) bool {
	return len(args) >= 2 && args[0] == "sandbox" && args[1] == "run"
}

// RunSandboxRun is Run for a command line IsSandboxRun accepts: the same
// root, flags, errors and exit codes, with only `lnk sandbox run` in the
// tree. It is for a process's entry point only (cmd/lnk): it keeps that
// one registration and drops the others for the rest of the process.
func RunSandboxRun() {
	registrations = []registration{{parent: "sandbox", make: newSandboxRun}}
	os.Exit(Main(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

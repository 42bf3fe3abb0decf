package cli

// Exit codes of lnk. README.md lists them too; `lnk sandbox run` returns
// its command's own status instead (128+N for a signal N).
const (
	ExitOK        = 0 // done
	ExitFailure   = 1 // something failed: a file, the kernel, a broker
	ExitUsage     = 2 // the command line is wrong: unknown flag, missing argument
	ExitRefused   = 3 // a rule refused what was asked (a grant, a path, a secret)
	ExitMissing   = 4 // the named agent, secret or tool does not exist
	ExitNoSandbox = 5 // this kernel lacks what the sandbox needs (landlock, seccomp, namespaces)
)

package sandboxrun

import (
	"path/filepath"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/beside"
	"lnk.dev/lnk/kernel/sandbox"
)

// Build builds the sandbox for argv from comp, in the folder dir, with
// lnk-init at initPath and the run's proxy (nil: none), the options
// adjusted by with (nil: as they are); extra are host programs bound in
// executable (the probes). lnk-init is checked present once the grants
// and the command are taken, so that a refusal of what was asked comes
// before a fault of the install.
func Build(comp *caps.Compiled, argv []string, dir, initPath string, degraded bool, proxy *sandbox.Proxy, with func(*sandbox.Options), extra ...string) (*sandbox.Sandbox, error) {
	opt := sandbox.Options{
		Argv: argv, Dir: dir, InitPath: initPath,
		Degraded: degraded, ExtraExec: extra,
	}
	if proxy != nil {
		opt.RelayChannel, proxy.Relay = proxy.Relay, nil // Build takes it
		opt.ToolRoute = proxy.ToolRoute                  // the tool bridge's, when there is one
		opt.Proxy = proxy                                // its secret and sealed secrets
	}
	if with != nil {
		with(&opt)
	}
	s, err := sandbox.Build(comp, opt)
	if err != nil {
		return nil, err
	}
	if _, err := beside.In(filepath.Dir(initPath), filepath.Base(initPath)); err != nil {
		s.Close()
		return nil, &InstallError{Err: err}
	}
	return s, nil
}

// InstallError is a program of Link's missing where it should be.
type InstallError struct{ Err error }

func (e *InstallError) Error() string { return e.Err.Error() }
func (e *InstallError) Unwrap() error { return e.Err }

// Hint is how to put it back.
func (e *InstallError) Hint() string { return beside.Hint }

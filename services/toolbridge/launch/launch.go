package launch

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"lnk.dev/lnk/services/toolbridge/tooldef"
)

// Command is the command that starts def's server with the environment
// env (the definition's own, or a filtered copy of it): the program
// resolved by [Resolve] on env's PATH, its argv as the definition names
// it, run in / in a process group of its own with a SIGKILL parent-death
// signal. Its stdin, stdout and stderr are the caller's to set.
func Command(def *tooldef.Definition, env []string) (*exec.Cmd, error) {
	if len(def.Command) == 0 {
		return nil, &ProgramError{Tool: def.Name, Err: errors.New("no command"), hint: "lnk sandbox tool add " + def.Name + " -- COMMAND ARGS..."}
	}
	prog, err := Resolve(def.Command[0], envValue(env, "PATH"))
	if err != nil {
		return nil, &ProgramError{Tool: def.Name, Err: err,
			hint: "lnk sandbox tool add " + def.Name + " -- /ABSOLUTE/PATH/TO/" + filepath.Base(def.Command[0]) + " ARGS..."}
	}
	// Built whole, not by exec.Command, which would look a bare name up
	// on this process's PATH.
	return &exec.Cmd{
		Path:        prog,
		Args:        append([]string(nil), def.Command...),
		Dir:         "/",
		Env:         env,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL},
	}, nil
}

// A ProgramError is a tool whose program the launcher will not start:
// why, and the lnk command that would name it so that it can.
type ProgramError struct {
	Tool string
	Err  error
	hint string
}

func (e *ProgramError) Error() string { return "tool " + e.Tool + ": " + e.Err.Error() }
func (e *ProgramError) Unwrap() error { return e.Err }

// Hint is the lnk command that would give the tool a program it can run.
func (e *ProgramError) Hint() string { return e.hint }

// Resolve is the program name names: name itself if absolute, else the
// first executable regular file of that name in an absolute folder of
// path (the definition's PATH). A relative path, or a name path does not
// hold, is an error: never a look-up on the caller's own PATH.
func Resolve(name, path string) (string, error) {
	if filepath.IsAbs(name) {
		return name, nil
	}
	if name == "" || strings.Contains(name, "/") {
		return "", fmt.Errorf("program %q is neither an absolute path nor a bare name", name)
	}
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			continue // a relative PATH entry would be relative to the resolver's folder
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("program %q is not on the tool's own PATH (%q), and the bridge's PATH is never searched", name, path)
}

func envValue(env []string, k string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, k+"="); ok {
			return v
		}
	}
	return ""
}

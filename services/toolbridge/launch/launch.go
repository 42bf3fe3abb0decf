package launch

import (
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
		return nil, fmt.Errorf("tool %s has no command\nhint: lnk sandbox tool add %s -- COMMAND ARGS...", def.Name, def.Name)
	}
	prog, err := Resolve(def.Command[0], envValue(env, "PATH"))
	if err != nil {
		return nil, fmt.Errorf("tool %s: %w\nhint: lnk sandbox tool add %s -- /ABSOLUTE/PATH/TO/%s ARGS...", def.Name, err, def.Name, filepath.Base(def.Command[0]))
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

package runtool

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"lnk.dev/lnk/caps"
)

// Agent is the agent a run tool serves: where its things are, and the
// lnk that starts its sandboxes.
type Agent struct {
	Home string // the owner's HOME, its links resolved
	Name string
	ID   string // from Config/agent.toml
	// Lnk is the lnk beside the run tool: every call runs as
	// `lnk sandbox run --agent NAME -- ARGV`, the CLI's own path.
	Lnk string
}

// LoadAgent reads agent name under home. lnk is the lnk binary's path.
func LoadAgent(home, name, lnk string) (*Agent, error) {
	real, err := filepath.EvalSymlinks(filepath.Clean(home))
	if err != nil {
		return nil, fmt.Errorf("HOME: %w", err)
	}
	a, err := caps.LoadAgent(real, name)
	if err != nil {
		return nil, err
	}
	if !filepath.IsAbs(lnk) {
		return nil, errors.New("the path given for Link's own program is not absolute")
	}
	return &Agent{Home: real, Name: a.Name, ID: a.ID, Lnk: lnk}, nil
}

// FilesDir is the agent's files folder (Home).
func (a *Agent) FilesDir() string { return caps.Layout{Home: a.Home}.FilesDir(a.Name) }

// grants compiles the agent's grants now: a change to its sandbox file
// applies from the next call.
func (a *Agent) grants() (*caps.Compiled, error) { return caps.CompileAgent(a.Home, a.Name) }

// RunLimits are the agent's [tool.run] limits, read now.
func (a *Agent) RunLimits() (caps.RunLimits, error) {
	comp, err := a.grants()
	if err != nil {
		return caps.RunLimits{}, err
	}
	return comp.Limits.Run, nil
}

// sandboxArgv is the command that runs argv in the agent's sandbox.
func (a *Agent) sandboxArgv(argv []string) []string {
	return append([]string{a.Lnk, "sandbox", "run", "--agent", a.Name, "--"}, argv...)
}

// KeepOnlyChildEnv makes this process's environment childEnv: the kernel
// it may start on demand, and the sandboxes and supervisors it starts,
// get nothing more of what a harness's launcher handed it.
func (a *Agent) KeepOnlyChildEnv() error {
	env := a.childEnv()
	os.Clearenv()
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if err := os.Setenv(k, v); err != nil {
			return err
		}
	}
	return nil
}

// childEnv is what lnk sandbox run is started with: enough to find the
// owner's HOME and programs, and nothing of the run tool's own (a
// harness's launcher may have handed it more).
func (a *Agent) childEnv() []string {
	env := []string{"HOME=" + a.Home, "PATH=" + pathOr("/usr/local/bin:/usr/bin:/bin")}
	for _, k := range []string{"USER", "LOGNAME", "LANG", "LC_ALL", "TMPDIR", "XDG_RUNTIME_DIR", "LNK_REQUIRE_SANDBOX"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

func pathOr(def string) string {
	if p := os.Getenv("PATH"); p != "" {
		return p
	}
	return def
}

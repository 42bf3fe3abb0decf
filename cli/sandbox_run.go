package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/beside"
	"lnk.dev/lnk/internal/cloexec"
	"lnk.dev/lnk/kernel/proto"
	"lnk.dev/lnk/kernel/sandbox"
	"lnk.dev/lnk/services/sandboxrun"
)

// lnk sandbox run [spec flags | --agent NAME | --sandbox-file FILE] -- COMMAND...

// sandboxSpec is the flags that choose a sandbox's grants, shared by run
// and check.
type sandboxSpec struct {
	g        caps.Grants
	internet bool
	ask      string
	agent    string
	file     string
	degraded bool
	tools    toolNames      // every --tool given (tool_flag.go)
	harness  harnessProfile // lnk agent harness run|check: the harness's own sandbox (agent_harness.go)
	// unconfined: lnk agent harness run with the agent's sandbox off
	// (agent_harness_off.go).
	unconfined bool
}

func (s *sandboxSpec) bind(c *cobra.Command) {
	grantFlags(c, &s.g, &s.internet, &s.ask)
	f := c.Flags()
	countTools(f, &s.tools, &s.g.Tool)
	f.StringVar(&s.agent, "agent", "", "run under agent NAME's grants")
	f.StringVar(&s.file, "sandbox-file", "", "run under a sandbox spec file's grants")
	f.BoolVar(&s.degraded, "degraded", false, "run even where landlock or seccomp is missing (said at every start)")
	linkHarnessFlag(c, s) // link_harness.go
	f.SetInterspersed(false)
}

// compile turns the flags into checked grants.
func (s *sandboxSpec) compile(c *cobra.Command) (*caps.Compiled, error) {
	if c.Flags().Changed("internet") {
		s.g.Internet = &s.internet
	}
	if err := askFlag(s.ask, &s.g, "lnk sandbox run --tool NAME --ask none -- COMMAND"); err != nil {
		return nil, err
	}
	if err := s.tools.oneTool("lnk agent allow NAME", " to an agent, and run it with lnk sandbox run --agent NAME -- COMMAND"); err != nil {
		return nil, err
	}
	home := os.Getenv("HOME")
	cwd, _ := os.Getwd()
	if cwd == "/" {
		// A relative path from / names a folder of the system's (tmp:
		// /tmp, the host's): refused, as a grant written without a base.
		cwd = ""
		comp, err := s.compileFrom(c, home, cwd)
		if errors.Is(err, caps.ErrBadPath) {
			return nil, Refused(fmt.Errorf("%w: a relative path from / is refused", err),
				"name the folder absolute (lnk sandbox run --read /path/to/folder …), or cd to the folder that holds it first")
		}
		return comp, err
	}
	return s.compileFrom(c, home, cwd)
}

// compileFrom compiles with relative paths taken against cwd ("":
// refused).
func (s *sandboxSpec) compileFrom(c *cobra.Command, home, cwd string) (*caps.Compiled, error) {
	switch {
	case s.harness.isLinkHarness() && s.agent == "":
		return nil, Usage("--link-harness runs an agent's sandbox: it needs --agent NAME", "lnk agent start NAME runs Link Harness")
	case s.agent != "" && (s.file != "" || !s.g.Empty()):
		return nil, Usage("--agent takes no other grants", "change the agent's grants with lnk agent allow "+s.agent+" …")
	case s.file != "" && !s.g.Empty():
		return nil, Usage("--sandbox-file takes no other grants", "write them into the file")
	case s.agent != "":
		comp, err := s.harness.compile(home, s.agent)
		if errors.Is(err, caps.ErrNoAgent) {
			return nil, Fail(ExitMissing, err, "lnk agent list shows the agents")
		}
		if err == nil {
			nameLegacyKeys(c.ErrOrStderr(), home, s.agent)
		}
		return comp, err
	case s.file != "":
		return caps.CompileFile(home, cwd, s.file)
	default:
		return caps.CompileFlags(home, cwd, s.g)
	}
}

// buildSandbox builds the sandbox for argv, mapping refusals to exit codes.
func buildSandbox(comp *caps.Compiled, argv []string, degraded bool, proxy *sandbox.Proxy, extra ...string) (*sandbox.Sandbox, error) {
	return buildSandboxWith(comp, argv, degraded, proxy, nil, extra...)
}

// buildSandboxWith is buildSandbox with the options adjusted by with
// (nil: as they are) before the sandbox is built (sandboxrun.Build, the
// agent's run's own), with lnk-init beside lnk.
func buildSandboxWith(comp *caps.Compiled, argv []string, degraded bool, proxy *sandbox.Proxy, with func(*sandbox.Options), extra ...string) (*sandbox.Sandbox, error) {
	initPath, err := beside.Path("lnk-init")
	if err != nil {
		return nil, err
	}
	cwd, _ := os.Getwd()
	s, err := sandboxrun.Build(comp, argv, cwd, initPath, degraded, proxy, with, extra...)
	var missing *sandboxrun.InstallError
	if errors.As(err, &missing) {
		return nil, Fail(ExitFailure, err, missing.Hint())
	}
	return s, buildErr(err)
}

// buildErr maps a build's refusal to lnk's exit codes (err as it is
// otherwise).
func buildErr(err error) error {
	var missing *sandbox.MissingError
	switch {
	case errors.As(err, &missing):
		return Fail(ExitNoSandbox, err, missing.Hint())
	case errors.Is(err, sandbox.ErrFolderChanged):
		return Refused(err, "check the folder, then run again")
	}
	return err
}

// lockForChildren keeps the calling goroutine on its OS thread from the
// first process lnk starts and waits beside (tool bridge, key broker,
// proxy, bubblewrap itself): each gets PR_SET_PDEATHSIG from that thread (see
// sandbox.StartProxy), so the thread must live as long as lnk. Locked
// only then: a run that starts none spares the runtime's template thread
// LockOSThread would start (about 19 page faults).
func lockForChildren() { runtime.LockOSThread() }

func init() { register("sandbox", newSandboxRun) }

// newSandboxRun makes `lnk sandbox run` (RunSandboxRun builds it alone).
func newSandboxRun() *cobra.Command { return sandboxRunCommand(new(sandboxSpec)) }

// sandboxRunCommand is `lnk sandbox run` with its grants in spec; lnk
// agent harness run runs its RunE with a harness's (agent_harness.go).
func sandboxRunCommand(spec *sandboxSpec) *cobra.Command {
	var jsonStatus bool
	c := &cobra.Command{
		Use:   "run [spec flags | --agent NAME | --sandbox-file FILE] -- COMMAND...",
		Short: "Run a command confined to exactly what the grants say",
		Long: `Runs COMMAND in Link's sandbox: bubblewrap namespaces, then landlock,
seccomp and NO_NEW_PRIVS, with only the granted folders, programs and
network. Returns the command's exit status (128+N for signal N).`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			// lnk holds the proxy's secret and the tools' settings
			// for the whole run: out of core dumps and out of reach
			// of the owner's other processes (/proc/PID/mem, ptrace).
			// Its children are dumpable again once they exec.
			if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
				return fmt.Errorf("prctl(PR_SET_DUMPABLE): %w", err)
			}
			// Only what the sandbox is handed passes to the proxy
			// and bwrap, never what lnk's own parent left open.
			cloexec.MarkInherited()
			comp, err := spec.compile(c)
			if err != nil {
				return auditRefusal(spec.request("sandbox run"), spec.logName(), err) // sandbox_audit.go
			}
			var status func(sandbox.Status)
			if jsonStatus {
				status = func(st sandbox.Status) {
					b, _ := json.Marshal(st)
					fmt.Fprintf(c.ErrOrStderr(), "%s\n", b)
				}
			}
			if spec.agent != "" {
				return runInKernel(c, spec, comp, args, status, nil)
			}
			if sandbox.NeedsProxy(comp) || len(comp.Tools) > 0 {
				// Its brokers are the kernel's children, as an
				// agent's are: the kernel compiles the same grants.
				g, err := spec.runGrants()
				if err != nil {
					return err
				}
				return runInKernel(c, spec, comp, args, status, g)
			}
			return runGrants(c, spec, comp, args, status, jsonStatus)
		},
	}
	spec.bind(c)
	c.Flags().BoolVar(&jsonStatus, "json-status", false, "print the sandbox's pid and what it enforces as one JSON line on stderr")
	return c
}

// runInKernel runs args through the kernel by services/sandboxrun, the
// one orchestrator of a run: the kernel compiles its grants (the
// agent's, or with g those of the flags or the sandbox file), holds its
// folders and starts its brokers as its children; lnk hosts the tool
// bridge (sandbox_bridge.go).
func runInKernel(c *cobra.Command, spec *sandboxSpec, comp *caps.Compiled, args []string, status func(sandbox.Status), g *proto.RunGrants) error {
	cl, err := kernelClient(c.Context())
	if err != nil {
		return err
	}
	initPath, err := beside.Path("lnk-init")
	if err != nil {
		cl.Close()
		return err
	}
	cwd, _ := os.Getwd()
	var extra []string
	if spec.harness.isLinkHarness() {
		if extra, err = linkHarnessExec(); err != nil {
			cl.Close()
			return err
		}
	}
	lockForChildren() // bubblewrap's PR_SET_PDEATHSIG comes from this thread
	var bridge *sandboxBridge
	defer func() { bridge.Close() }()
	code, err := sandboxrun.Run(c.Context(), sandboxrun.Options{
		Client: cl, Comp: comp, Agent: spec.agent, Harness: sandboxrun.Harness{Name: spec.harness.name, Profile: spec.harness.profile}, Grants: g,
		Request: spec.request("sandbox run"), LogName: spec.logName(),
		Argv: args, Dir: cwd, InitPath: initPath, Degraded: spec.degraded, ExtraExec: extra,
		Stdin: os.Stdin, Stdout: c.OutOrStdout(), Stderr: c.ErrOrStderr(), Status: status,
		Bridge: func(br *sandboxrun.Brokers) (*sandbox.ToolBridge, func(), error) {
			var err error
			if bridge, err = startBridge(comp, spec.degraded, br); err != nil { // nil without [tools]
				return nil, nil, err
			}
			hook, err := bridge.hook()
			return hook, nil, err
		},
		Notices: func(ns []string) {
			for _, n := range ns {
				fmt.Fprintf(c.ErrOrStderr(), "lnk: %s\n", n)
			}
		},
	})
	var be *sandboxrun.BrokerError
	switch {
	case errors.As(err, &be):
		// The command ran, its connections through the proxy refused
		// or its brokers ended: its status stands, but never as success.
		if code == 0 {
			code = ExitFailure
		}
		return &ExitError{Code: code, Err: err}
	case err != nil:
		return runErr(err, spec.agent)
	}
	return &ExitError{Code: code, Silent: true, Err: fmt.Errorf("exit %d", code)}
}

// runGrants runs args in a sandbox of flag grants or a sandbox file
// that needs no broker: lnk execs bubblewrap (or, for --json-status,
// waits beside it), and the kernel has nothing to hold.
func runGrants(c *cobra.Command, spec *sandboxSpec, comp *caps.Compiled, args []string, status func(sandbox.Status), jsonStatus bool) error {
	s, err := buildSandbox(comp, args, spec.degraded, nil)
	if err != nil {
		return auditRefusal(spec.request("sandbox run"), spec.logName(), err)
	}
	for _, n := range s.Notices {
		fmt.Fprintf(c.ErrOrStderr(), "lnk: %s\n", n)
	}
	auditNotices(spec.request("sandbox run"), spec.logName(), s.Notices)
	if !jsonStatus {
		return s.Exec() // nothing of Link's needs to outlive this process
	}
	lockForChildren() // bubblewrap's PR_SET_PDEATHSIG comes from this thread
	code, err := s.Start(os.Stdin, c.OutOrStdout(), c.ErrOrStderr(), status)
	if err != nil {
		return err
	}
	return &ExitError{Code: code, Silent: true, Err: fmt.Errorf("exit %d", code)}
}

// runGrants is what the kernel compiles for a run of flag grants or a
// sandbox file: the flags as compile adjusted them, or the file's path
// made absolute, and the folder relative paths start from (as compile
// took it: "" from /).
func (s *sandboxSpec) runGrants() (*proto.RunGrants, error) {
	cwd, _ := os.Getwd()
	if cwd == "/" {
		cwd = ""
	}
	g := &proto.RunGrants{Dir: cwd}
	if s.file != "" {
		abs, err := filepath.Abs(s.file)
		if err != nil {
			return nil, err
		}
		g.File = abs
		return g, nil
	}
	b, err := json.Marshal(s.g)
	if err != nil {
		return nil, err
	}
	g.Flags = b
	return g, nil
}

package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/beside"
	"lnk.dev/lnk/internal/cloexec"
	"lnk.dev/lnk/kernel/sandbox"
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
// (nil: as they are) before the sandbox is built.
func buildSandboxWith(comp *caps.Compiled, argv []string, degraded bool, proxy *sandbox.Proxy, with func(*sandbox.Options), extra ...string) (*sandbox.Sandbox, error) {
	initPath, err := beside.Path("lnk-init")
	if err != nil {
		return nil, err
	}
	cwd, _ := os.Getwd()
	opt := sandbox.Options{
		Argv: argv, Dir: cwd, InitPath: initPath,
		Degraded: degraded, ExtraExec: extra,
	}
	if proxy != nil {
		opt.RelayChannel, proxy.Relay = proxy.Relay, nil // Build takes it
		opt.ToolRoute = proxy.ToolRoute                  // the tool bridge's, when there is one (sandbox_bridge.go)
		opt.Proxy = proxy                                // its secret and sealed secrets (sandbox_sealed.go)
	}
	if with != nil {
		with(&opt)
	}
	s, err := sandbox.Build(comp, opt)
	var missing *sandbox.MissingError
	switch {
	case errors.As(err, &missing):
		return nil, Fail(ExitNoSandbox, err, missing.Hint())
	case errors.Is(err, sandbox.ErrFolderChanged):
		return nil, Refused(err, "check the folder, then run again")
	case err == nil:
		// Checked once the grants and the command are taken, so that a
		// refusal of what was asked comes before a fault of the install.
		if _, err := besideLnk("lnk-init"); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, err
}

// startProxy starts the grants' proxy when they need one; nil when not.
// It never waits for the proxy to serve: lnk made its socket, and a
// connection made before the proxy serves waits in its backlog.
func startProxy(comp *caps.Compiled, degraded bool, bridge *sandbox.ToolBridge, sealed ...*sandbox.SealedKeys) (*sandbox.Proxy, error) {
	p, launch, err := newProxy(nil, comp, degraded, bridge, sealed...)
	if p == nil || err != nil {
		return nil, err
	}
	if err := launch(); err != nil {
		return nil, err
	}
	return p, nil
}

// newProxy readies the grants' proxy when they need one (nil when not),
// and returns the function that starts it: lnk sandbox run builds and
// starts the sandbox first, and starts the proxy beside bubblewrap's own
// setup (Sandbox.Started), from the thread lockForChildren locked. For
// an agent's start in the kernel (kr) the kernel starts it, at once, as
// its child, and there is nothing for lnk to start (launch is nil).
func newProxy(kr *kernelRun, comp *caps.Compiled, degraded bool, bridge *sandbox.ToolBridge, sealed ...*sandbox.SealedKeys) (*sandbox.Proxy, func() error, error) {
	if kr != nil {
		p, err := kr.proxy(comp, degraded, bridge)
		return p, nil, err
	}
	var sk *sandbox.SealedKeys
	if len(sealed) > 0 {
		sk = sealed[0]
	}
	if !sandbox.NeedsProxy(comp) && sk == nil {
		return nil, nil, nil
	}
	lockForChildren()
	netbroker, err := besideLnk("lnk-netbroker")
	if err != nil {
		return nil, nil, err
	}
	stderr, err := proxyStderr(comp.Home, comp.LogName())
	if err != nil {
		return nil, nil, err
	}
	p, err := sandbox.NewProxy(comp, netbroker, degraded, stderr, bridge, sk)
	if err != nil {
		proxyLogs.Wait()
		return nil, nil, err
	}
	launch := func() error {
		err := p.Launch() // closes lnk's copy of stderr: the proxy holds its own
		if err != nil {
			proxyLogs.Wait() // what the proxy said comes before lnk's own line
		}
		return err
	}
	return p, launch, nil
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
			// An agent's sandbox runs with what the kernel holds
			// (sandbox_kernel.go); the kernel logs its own refusals.
			var ks *kernelStart
			var held func(*sandbox.Options)
			if spec.agent != "" {
				if ks, err = startInKernel(c.Context(), comp, spec.agent, spec.harness); err != nil {
					return err
				}
				defer ks.close(context.Background())
				held = func(o *sandbox.Options) { o.Held = ks.held }
			}
			if spec.harness.isLinkHarness() {
				if held, err = linkHarnessExec(held); err != nil {
					return err
				}
			}
			// An agent's brokers are the kernel's children, its start's
			// (sandbox_kernel_run.go); nil for flag grants.
			kr := beginKernelRun(ks, comp)
			bridge, err := startBridge(comp, spec.degraded, kr) // nil without [tools] (sandbox_bridge.go)
			if err != nil {
				return err
			}
			defer bridge.Close()
			keys, err := startSealed(comp, spec.degraded, kr) // nil without sealed secrets
			if err != nil {
				return auditRefusal(spec.request("sandbox run"), spec.logName(), err)
			}
			defer keys.Close()
			// lnk readies the proxy (its socket, secret and relay
			// channel), builds and starts the sandbox, and starts the
			// proxy beside bubblewrap's own setup, never waiting for it
			// to serve.
			hook, err := bridge.hook()
			if err != nil {
				return err
			}
			proxy, launch, err := newProxy(kr, comp, spec.degraded, hook, keys.sealedKeys())
			if err != nil {
				return err // a refusal is logged once, by whoever made it
			}
			if proxy != nil {
				defer stopProxy(proxy)
			}
			s, err := buildSandboxWith(comp, args, spec.degraded, proxy, held)
			ks.dropHeld() // the sandbox holds its own copies of the kernel's handles
			if err != nil {
				return auditRefusal(spec.request("sandbox run"), spec.logName(), err)
			}
			if launch != nil {
				s.Started = launch // the proxy starts beside bubblewrap's setup
			}
			for _, n := range s.Notices {
				fmt.Fprintf(c.ErrOrStderr(), "lnk: %s\n", n)
			}
			auditNotices(spec.request("sandbox run"), spec.logName(), s.Notices)
			if !jsonStatus && proxy == nil && ks == nil {
				return s.Exec() // nothing of Link's needs to outlive this process
			}
			if ks != nil {
				ks.hook(c.Context(), s) // the kernel records it, and may end it
			}
			var status func(sandbox.Status)
			if jsonStatus {
				status = func(st sandbox.Status) {
					b, _ := json.Marshal(st)
					fmt.Fprintf(c.ErrOrStderr(), "%s\n", b)
				}
			}
			// With a proxy, lnk waits and then stops it itself.
			lockForChildren() // bubblewrap's PR_SET_PDEATHSIG comes from this thread
			code, err := s.Start(os.Stdin, c.OutOrStdout(), c.ErrOrStderr(), status)
			var perr error
			if proxy != nil {
				perr = stopProxy(proxy) // its own lines come first
			}
			if err != nil {
				return err
			}
			// The brokers' end is read before the start's own end, which
			// ends them too.
			berr := kr.endedErr()
			if kerr := ks.finish(context.Background()); kerr != nil {
				return kerr // the kernel ended it: the status is not the command's
			}
			if berr != nil {
				perr = berr // its brokers ended under the command
			}
			if perr != nil {
				// The command ran, its connections through the proxy
				// refused: its status stands, but never as success.
				if code == 0 {
					code = ExitFailure
				}
				return &ExitError{Code: code, Err: perr}
			}
			return &ExitError{Code: code, Silent: true, Err: fmt.Errorf("exit %d", code)}
		},
	}
	spec.bind(c)
	c.Flags().BoolVar(&jsonStatus, "json-status", false, "print the sandbox's pid and what it enforces as one JSON line on stderr")
	return c
}

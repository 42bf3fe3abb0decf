package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/audit"
	"lnk.dev/lnk/kernel/sandbox"
	"lnk.dev/lnk/services/sandboxrun"
)

// lnk agent harness run with the agent's sandbox off (its no-sandbox
// setting, lnk agent start --no-sandbox until --sandbox): security.txt
// ("Running a command in its sandbox") says it warns and runs the command
// unconfined, as the harness does, beside a proxy of its own on a free
// port. The run is a start of the kernel's with no sandbox
// (kernel/start_unconfined.go): the kernel reads the setting itself,
// starts the proxy (lnk-netbroker, confined as every proxy is) as its
// child with the harness's rules, compiled from the agent's and the
// harness's grants, listening on 127.0.0.1 alone and logging the
// command's calls under the harness's own name (AGENT/HARNESS-run), and
// records the command by its pidfd: lnk kernel status lists it, lnk
// kernel end (lnk agent stop) kills it and revokes the start. The
// command is told the proxy as a sandbox is ($ALL_PROXY with the
// proxy's secret), and runs with the harness's home as HOME.
// Unconfined, it may go around the proxy: that is what the sandbox off
// means, and the warning says so at every run.

// runUnconfined runs argv with no sandbox beside the kernel's loopback
// proxy.
func runUnconfined(c *cobra.Command, spec *sandboxSpec, argv []string) error {
	// lnk holds the proxy's secret for the run.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_DUMPABLE): %w", err)
	}
	home := os.Getenv("HOME")
	comp, err := spec.harness.compile(home, spec.agent)
	if err != nil {
		return auditRefusal(spec.request("sandbox run"), spec.logName(), err)
	}
	lockForChildren() // the command's PR_SET_PDEATHSIG comes from this thread
	ctx := context.Background()
	cl, err := kernelClient(ctx)
	if err != nil {
		return err
	}
	ks, err := sandboxrun.StartUnconfined(ctx, cl, spec.agent, sandboxrun.Harness{Name: spec.harness.name, Profile: spec.harness.profile})
	if err != nil {
		return runErr(err, spec.agent)
	}
	ks.Log = writeSandboxAudit
	finished := false
	defer func() {
		if !finished {
			ks.Finish(ctx)
		}
	}()
	p, err := sandboxrun.UnconfinedBrokers(ks, comp).Proxy(comp, spec.degraded, nil)
	if err != nil {
		return runErr(err, spec.agent)
	}
	warn := fmt.Sprintf("warning: agent %s runs WITHOUT its sandbox: this command runs unconfined, as its harness does, and may do whatever your user may; only its proxy (127.0.0.1:%d) holds it to the harness's rules, if it uses it", spec.agent, p.Port)
	fmt.Fprintf(c.ErrOrStderr(), "lnk: %s\n  hint: lnk agent start --sandbox %s turns its sandbox back on\n", warn, spec.agent)
	writeSandboxAudit(audit.Entry{Kind: audit.KindWarn, Agent: spec.logName(), Request: spec.request("sandbox run"), Reason: warn})

	told := map[string]string{}
	sandbox.ProxyEnv(told, p)
	env := make([]string, 0, len(os.Environ())+len(told)+1)
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if _, ours := told[k]; ours || k == "HOME" {
			continue
		}
		env = append(env, kv)
	}
	for k, v := range told {
		env = append(env, k+"="+v)
	}
	env = append(env, "HOME="+comp.HarnessHome)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, c.OutOrStdout(), c.ErrOrStderr()
	pidfd := -1
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, PidFD: &pidfd}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		return Fail(ExitFailure, fmt.Errorf("starting %s: %w", argv[0], err))
	}
	pf := os.NewFile(uintptr(pidfd), "command-pidfd")
	// The kernel records the command by its pidfd: none runs unrecorded.
	ended := make(chan error, 1)
	if err := ks.AttachCommand(ctx, pf, func(why error) { ended <- why; unix.PidfdSendSignal(pidfd, unix.SIGKILL, nil, 0) }); err != nil {
		unix.PidfdSendSignal(pidfd, unix.SIGKILL, nil, 0)
		cmd.Wait()
		pf.Close()
		return runErr(err, spec.agent)
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				cmd.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	err = cmd.Wait()
	close(done)
	pf.Close()
	finished = true
	if ferr := ks.Finish(ctx); ferr != nil { // the kernel ended the run (lnk kernel end): its status is not its own
		return runErr(ferr, spec.agent)
	}
	select {
	case why := <-ended:
		return runErr(why, spec.agent)
	default:
	}
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		} else {
			code = ee.ExitCode()
		}
	case err != nil:
		return err
	}
	return &ExitError{Code: code, Silent: true, Err: fmt.Errorf("exit %d", code)}
}

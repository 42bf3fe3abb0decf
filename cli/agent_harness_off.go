package cli

import (
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
)

// lnk agent harness run with the agent's sandbox off (its no-sandbox
// setting, lnk agent start --no-sandbox until --sandbox): security.txt
// ("Running a command in its sandbox") says it warns and runs the command
// unconfined, as the harness does, beside a proxy of its own on a free
// port. The proxy (lnk-netbroker, confined as every proxy is) holds the
// harness's rules, compiled from the agent's and the harness's grants,
// listens on 127.0.0.1 alone, and logs the command's calls under the
// harness's own name (AGENT/HARNESS-run); the command is told it as a
// sandbox is ($ALL_PROXY with the proxy's secret), and runs with the
// harness's home as HOME. Unconfined, it may go around the proxy: that
// is what the sandbox off means, and the warning says so at every run.

// runUnconfined runs argv with no sandbox beside a loopback proxy.
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
	lockForChildren() // the proxy's PR_SET_PDEATHSIG comes from this thread
	netbroker, err := besideLnk("lnk-netbroker")
	if err != nil {
		return err
	}
	stderr, err := proxyStderr(comp.Home, comp.LogName())
	if err != nil {
		return err
	}
	p, err := sandbox.NewLoopbackProxy(comp, netbroker, spec.degraded, stderr)
	if err != nil {
		proxyLogs.Wait()
		return err
	}
	if err := p.Launch(); err != nil {
		proxyLogs.Wait()
		return err
	}
	defer stopProxy(p)
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
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		return Fail(ExitFailure, fmt.Errorf("starting %s: %w", argv[0], err))
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
	if perr := stopProxy(p); perr != nil {
		if code == 0 {
			code = ExitFailure
		}
		return &ExitError{Code: code, Err: perr}
	}
	return &ExitError{Code: code, Silent: true, Err: fmt.Errorf("exit %d", code)}
}

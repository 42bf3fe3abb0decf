package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"

	"github.com/spf13/cobra"

	"lnk.dev/lnk/kernel/sandbox"
	"lnk.dev/lnk/kernel/sandbox/probe"
	"lnk.dev/lnk/services/sandboxrun"
)

// lnk sandbox check [spec flags | --agent NAME | --sandbox-file FILE] [--json]

func init() {
	register("sandbox", func() *cobra.Command {
		var spec sandboxSpec
		var asJSON bool
		c := &cobra.Command{
			Use:   "check [spec flags | --agent NAME | --sandbox-file FILE]",
			Short: "Try every way out of the sandbox from inside it; exit 1 if one that should be closed is open",
			Args:  cobra.NoArgs,
			RunE: func(c *cobra.Command, args []string) error {
				comp, err := spec.compile(c)
				if err != nil {
					return auditRefusal("sandbox check", spec.agent, err) // sandbox_audit.go
				}
				results, err := runProbes(c, &spec, comp)
				if err != nil {
					return auditRefusal("sandbox check", spec.agent, err)
				}
				return reportProbes(c, results, asJSON)
			},
		}
		spec.bind(c)
		c.Flags().BoolVar(&asJSON, "json", false, "print the results as JSON")
		return c
	})
}

// reportProbes prints the probes' results, as JSON or a table, and
// exits 1 when one found a way out that should be closed open.
func reportProbes(c *cobra.Command, results []probe.Result, asJSON bool) error {
	if asJSON {
		if err := writeJSON(c.OutOrStdout(), results); err != nil {
			return err
		}
	} else {
		probe.Table(c.OutOrStdout(), results)
	}
	if probe.Failed(results) {
		return &ExitError{Code: ExitFailure, Silent: true, Err: fmt.Errorf("a probe found the sandbox open")}
	}
	return nil
}

// runProbes sets up what the probes reach for outside (loopback TCP and
// UDP ports, an abstract socket) and reads the host's facts they compare
// against, runs `lnk sandbox probe` in the sandbox, reads its results and
// judges what only the host sees.
func runProbes(c *cobra.Command, spec *sandboxSpec, comp any) ([]probe.Result, error) {
	cc := comp.(*capsCompiled)
	outside, err := probe.Listen()
	if err != nil {
		return nil, err
	}
	defer outside.Close()
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	runtime.LockOSThread()
	// The check's sandbox is a start of the kernel's, as a run's is: an
	// agent's with the kernel's folder handles, one of flag grants or a
	// sandbox file when it needs a proxy; the kernel starts the proxy as
	// its child (sandboxrun's brokers), never lnk.
	var ks *sandboxrun.Start
	switch {
	case spec.agent != "":
		ks, err = startInKernel(c.Context(), cc, spec.agent, spec.harness)
	case sandbox.NeedsProxy(cc):
		ks, err = startGrantsInKernel(c.Context(), spec, cc)
	}
	if err != nil {
		return nil, err
	}
	if ks != nil {
		defer ks.Close(context.Background())
	}
	var proxy *sandbox.Proxy
	if br := sandboxrun.BeginBrokers(ks, cc); br != nil {
		if proxy, err = br.Proxy(cc, spec.degraded, nil); err != nil {
			return nil, runErr(err, spec.agent)
		}
		if proxy != nil {
			defer proxy.Stop()
		}
	}
	// The check's own sandbox has a memory bound of checkMemory at
	// most, which its probe fills: the run's (half the machine's) would
	// take that much of the owner's memory first.
	s, err := buildSandboxWith(cc, []string{exe, "sandbox", "probe"}, spec.degraded, proxy,
		func(o *sandbox.Options) {
			o.MemoryMax = checkMemory
			if ks != nil {
				o.Held = ks.Held
			}
		}, exe)
	ks.DropHeld()
	if err != nil {
		return nil, err
	}
	if ks != nil {
		ks.Hook(c.Context(), s)
	}
	for _, n := range s.Notices {
		fmt.Fprintf(c.ErrOrStderr(), "lnk: %s\n", n)
	}
	auditNotices(spec.request("sandbox check"), spec.logName(), s.Notices)
	h := outside.Host
	h.HostNet = cc.NetworkMode == "host"
	if s.Plan.Relay != nil {
		h.RelayPort = int(s.Plan.Relay.Port)
	}
	h.MaxProcs = s.Enforced.Processes.Max
	h.MaxMemory, h.NoMemory = int64(s.Enforced.Memory.Max), s.Enforced.Memory.Why
	in, err := json.Marshal(probe.List(cc, h))
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	code, err := s.Start(bytes.NewReader(in), &out, c.ErrOrStderr(), nil)
	if err != nil {
		return nil, err
	}
	if err := ks.Finish(context.Background()); err != nil {
		return nil, err
	}
	var results []probe.Result
	if err := json.Unmarshal(out.Bytes(), &results); err != nil || code != 0 {
		return nil, fmt.Errorf("the probes did not run in the sandbox (exit %d): %.200s", code, out.String())
	}
	outside.Settle(results)
	return results, nil
}

// checkMemory bounds the memory of lnk sandbox check's sandbox, enough for
// its thread probe's 4,096 threads.
const checkMemory = 512 << 20

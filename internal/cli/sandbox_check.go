package cli

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"runtime"
	"sort"

	"github.com/spf13/cobra"

	"lnk.dev/lnk/kernel/sandbox/probe"
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
			},
		}
		spec.bind(c)
		c.Flags().BoolVar(&asJSON, "json", false, "print the results as JSON")
		return c
	})
}

// runProbes sets up what the probes reach for outside (a loopback port,
// an abstract socket), runs `lnk sandbox probe` in the sandbox and reads
// its results.
func runProbes(c *cobra.Command, spec *sandboxSpec, comp any) ([]probe.Result, error) {
	cc := comp.(*capsCompiled)
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	defer tcp.Close()
	var b [8]byte
	rand.Read(b[:])
	abstract := "lnk-check-" + hex.EncodeToString(b[:])
	ab, err := net.Listen("unix", "@"+abstract)
	if err != nil {
		return nil, err
	}
	defer ab.Close()
	go acceptAll(tcp)
	go acceptAll(ab)
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	runtime.LockOSThread()
	proxy, err := startProxy(cc, spec.degraded, nil)
	if err != nil {
		return nil, err
	}
	if proxy != nil {
		defer stopProxy(proxy)
	}
	s, err := buildSandbox(cc, []string{exe, "sandbox", "probe"}, spec.degraded, proxy, exe)
	if err != nil {
		return nil, err
	}
	for _, n := range s.Notices {
		fmt.Fprintf(c.ErrOrStderr(), "lnk: %s\n", n)
	}
	auditNotices("sandbox check", spec.agent, s.Notices)
	h := probe.Host{TCPPort: tcp.Addr().(*net.TCPAddr).Port, Abstract: abstract, LnkPid: os.Getpid(),
		HostNet: cc.NetworkMode == "host"}
	if s.Plan.Relay != nil {
		h.RelayPort = int(s.Plan.Relay.Port)
	}
	var keys []string
	for k := range s.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	in, err := json.Marshal(probe.List(cc, h, keys))
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	code, err := s.Start(bytes.NewReader(in), &out, c.ErrOrStderr(), nil)
	if err != nil {
		return nil, err
	}
	var results []probe.Result
	if err := json.Unmarshal(out.Bytes(), &results); err != nil || code != 0 {
		return nil, fmt.Errorf("the probes did not run in the sandbox (exit %d): %.200s", code, out.String())
	}
	return results, nil
}

func acceptAll(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		c.Close()
	}
}

package cli

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/helpers/keybroker"
	"lnk.dev/lnk/internal/audit"
	"lnk.dev/lnk/internal/brokerproc"
	"lnk.dev/lnk/internal/wire"
	"lnk.dev/lnk/kernel/sandbox"
)

// A sandbox of an agent holding sealed secrets (lnk secret create NAME
// --internet-host HOST; lnk secret add NAME --agent AGENT) is told only
// their placeholders and routes; its proxy takes each value from an
// lnk-keybroker this run starts, over a channel handed to the proxy as
// an fd. lnk itself reads no secret: the keybroker tells it the names
// its agent holds, never a value.

// runKeys is the keybroker a run started for its proxy.
type runKeys struct {
	keys   *sandbox.SealedKeys
	proc   *brokerproc.Proc
	wire   *wire.Client
	logged chan struct{} // closed once its log is all written
}

// Close ends the keybroker and closes the channels.
func (k *runKeys) Close() error {
	if k == nil {
		return nil
	}
	if k.keys != nil {
		k.keys.Channel.Close()
	}
	k.wire.Close()
	k.proc.Kill()
	select { // its last lines reach the wire's log
	case <-k.logged:
	case <-time.After(5 * time.Second):
	}
	return nil
}

// startSealed starts lnk-keybroker (beside lnk) for comp's agent alone
// (--agent: it keeps only that agent's sealed secrets) and has it take
// the proxy's channel, bound to that agent; the keybroker answers with
// the names of the secrets it will serve. lnk opens secrets.toml only to
// hand it over: it never reads a value, nor another agent's names. Nil
// when the agent holds none. A sandbox with no proxy of its own to hold
// them ([network] mode = "host") is refused: security.txt says an agent
// whose harness runs without a proxy of its own doesn't start with a
// secret, rather than start without it. With kr (an agent's start in
// the kernel) lnk starts nothing: the kernel starts the key broker
// beside the proxy (kernel/start_proxy.go), and this returns nil.
func startSealed(comp *caps.Compiled, degraded bool, kr *kernelRun) (*runKeys, error) {
	if comp.AgentID == "" || kr != nil {
		return nil, nil
	}
	files, err := keybroker.StartFiles(comp.Home)
	if err != nil {
		return nil, err
	}
	if len(files) < 2 { // no secrets.toml: no secret to serve
		for _, f := range files {
			f.Close()
		}
		return nil, nil
	}
	lockForChildren() // the key broker's parent thread (sandbox_run.go)
	keybrokerPath, err := besideLnk("lnk-keybroker")
	if err != nil {
		for _, f := range files {
			f.Close()
		}
		return nil, err
	}
	args := []string{"--agent", comp.AgentID}
	if degraded {
		args = append(args, "--degraded")
	}
	logw, logged, err := keybrokerLog(comp)
	if err != nil {
		for _, f := range files {
			f.Close()
		}
		return nil, err
	}
	proc, err := brokerproc.Start(brokerproc.Options{Path: keybrokerPath, Args: args, Files: files, Log: logw})
	logw.Close() // the keybroker holds its own copy
	for _, f := range files {
		f.Close()
	}
	if err != nil {
		return nil, err
	}
	wc, err := wire.NewClient(proc.Chan)
	if err != nil {
		proc.Kill()
		return nil, err
	}
	k := &runKeys{proc: proc, wire: wc, logged: logged}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		k.Close()
		return nil, err
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "netbroker-keys"), os.NewFile(uintptr(fds[1]), "keybroker-net")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	names, err := keybroker.NewClient(wc).NetChannel(ctx, comp.AgentID, theirs)
	theirs.Close()
	if err != nil {
		ours.Close()
		k.Close()
		return nil, fmt.Errorf("the keybroker (lnk-keybroker) did not take the proxy's channel: %w", err)
	}
	if len(names) == 0 {
		ours.Close()
		k.Close()
		return nil, nil
	}
	if comp.NetworkMode == "host" {
		ours.Close()
		k.Close()
		return nil, noProxyForSealed(comp, names)
	}
	k.keys = &sandbox.SealedKeys{Names: names, Channel: ours}
	return k, nil
}

// keybrokerLog is the keybroker's stderr: each line it says (a secret
// handed, a refusal with its reason; never a value) becomes a line of
// the wire's log, kind use or refuse, request "sealed secret".
// done closes once the keybroker's last line is written.
func keybrokerLog(comp *caps.Compiled) (*os.File, chan struct{}, error) {
	return brokerLog(comp, "lnk-keybroker: ", func(line string) audit.Entry {
		e := audit.Entry{Kind: audit.KindUse, Agent: comp.LogName(), Request: "sealed secret", Route: "keybroker", Reason: line}
		if strings.HasPrefix(line, "refused") {
			e.Kind = audit.KindRefuse
		}
		return e
	})
}

// sealedKeys is what the proxy is handed; nil without a keybroker.
func (k *runKeys) sealedKeys() *sandbox.SealedKeys {
	if k == nil {
		return nil
	}
	return k.keys
}

// noProxyForSealed refuses a run of an agent granted sealed secrets with
// no proxy to add them, naming the two commands that would let it run:
// the network back behind its proxy, or each secret taken from it.
func noProxyForSealed(comp *caps.Compiled, names []string) error {
	agent := comp.AgentName
	if agent == "" {
		agent = comp.AgentID
	}
	hints := []string{"lnk agent deny " + agent + " --network-mode host"}
	for _, n := range names {
		hints = append(hints, "lnk secret remove "+n+" --agent "+agent)
	}
	return Refused(fmt.Errorf("agent %s holds sealed secrets (%s) and [network] mode = \"host\" leaves it no proxy to add them: it does not start without them", agent, strings.Join(names, ", ")), hints...)
}

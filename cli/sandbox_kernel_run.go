package cli

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/helpers/askbroker"
	"lnk.dev/lnk/helpers/askbroker/askproc"
	"lnk.dev/lnk/helpers/keybroker"
	"lnk.dev/lnk/internal/connpass"
	"lnk.dev/lnk/internal/settings"
	"lnk.dev/lnk/internal/wire"
	"lnk.dev/lnk/kernel/client"
	"lnk.dev/lnk/kernel/proto"
	"lnk.dev/lnk/kernel/sandbox"
)

// A run for an agent (lnk sandbox run --agent) starts none of Link's
// brokers itself: on the start the kernel made from the agent's own
// grants (sandbox_kernel.go, on its connection), it starts, as its
// children, the run's
// proxy with the key broker of its sealed secrets, and its ask broker
// with the dialog launcher (kernel/start_brokers.go). lnk is handed only
// what the sandbox and the tool bridge use: the proxy's relay channel
// (lnk made it and keeps the sending end), what the sandbox is told of
// the proxy, and the ask broker's channel. The brokers end with the
// start (lnk ends it, or is gone); one that dies ends the start, and
// the kernel kills the sandbox through its pidfd and answers its watch
// with why (sandbox_kernel.go). A run of flag grants (no --agent) still
// starts its proxy and ask broker in lnk (SECURITY.md, known gaps).

// kernelRun is the brokers of an agent's start the kernel holds for
// this run; c is the start's connection (kernelStart's), not its own.
type kernelRun struct {
	c     *client.Client
	agent string
	home  string
	start uint64
	// ended is closed once the kernel has closed the run's lifeline:
	// the start's brokers ended (one died: the run ends closed), or the
	// kernel is gone. why is what it said.
	ended chan struct{}
	why   string
}

// beginKernelRun readies the brokers of the agent's start ks (made by
// startInKernel, on its connection) when its run needs one: a proxy, a
// sealed secret or a tool. Nil when it needs none, or for a run of flag
// grants (no start).
func beginKernelRun(ks *kernelStart, comp *caps.Compiled) *kernelRun {
	if ks == nil || !(sandbox.NeedsProxy(comp) || len(comp.Tools) > 0 || holdsSecretsFile(comp.Home)) {
		return nil
	}
	return &kernelRun{c: ks.cl, agent: ks.agent, home: comp.Home, start: ks.start, ended: make(chan struct{})}
}

// holdsSecretsFile reports whether secrets.toml is there (a sealed
// secret may be granted); what cannot be learned says yes: the kernel
// then looks.
func holdsSecretsFile(home string) bool {
	files, err := keybroker.StartFiles(home)
	if err != nil {
		return true
	}
	wire.CloseFiles(files)
	return len(files) >= 2
}

// endedErr says why the run's brokers ended under its command, or nil:
// read before lnk ends the start itself, which ends them too.
func (r *kernelRun) endedErr() error {
	if r == nil {
		return nil
	}
	select {
	case <-r.ended:
		return fmt.Errorf("the kernel ended the run (%s); the sandbox was stopped and its connections refused", r.why)
	default:
		return nil
	}
}

// proxy has the kernel start the run's proxy; nil when it needs none.
// sk is never set: the kernel holds the sealed secrets' key broker.
func (r *kernelRun) proxy(comp *caps.Compiled, degraded bool, bridge *sandbox.ToolBridge) (*sandbox.Proxy, error) {
	lr, lw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer lw.Close() // the kernel holds its own copy
	relayRecv, relaySend, err := connpass.Pair()
	if err != nil {
		lr.Close()
		return nil, err
	}
	defer relayRecv.Close() // likewise
	files := []*os.File{lw, relayRecv}
	req := &proto.RunProxyRequest{Agent: r.agent, Start: r.start, Degraded: degraded}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var rep proto.RunProxyReply
	if _, err := r.c.Call(ctx, proto.RunProxy, req, &rep, files...); err != nil {
		lr.Close()
		relaySend.Close()
		return nil, kernelErr(err)
	}
	go r.watch(lr)
	if !rep.Proxy {
		relaySend.Close()
		if len(rep.Sealed) > 0 {
			return nil, auditRefusal("sandbox run", r.agent, noProxyForSealed(comp, rep.Sealed))
		}
		return nil, nil
	}
	if len(rep.Placeholders) == 0 {
		rep.Placeholders = nil
	}
	p := sandbox.KernelProxy(rep.Socket, rep.Secret, rep.Placeholders, relaySend)
	if bridge != nil {
		p.ToolRoute = bridge.Route
	}
	return p, nil
}

// watch reads the lifeline until the kernel closes it.
func (r *kernelRun) watch(lr *os.File) {
	defer lr.Close()
	var said []string
	sc := bufio.NewScanner(lr)
	for sc.Scan() {
		said = append(said, sc.Text())
	}
	r.why = strings.Join(said, "; ")
	if r.why == "" {
		r.why = "the kernel is gone"
	}
	close(r.ended)
}

// startAsk has the kernel start the run's ask broker (with its dialog
// launcher where the desktop shows one), asking on the owner's terminal
// when lnk has one; it returns lnk's copy of the broker's channel.
func (r *kernelRun) startAsk(wait time.Duration, degraded bool) (*os.File, error) {
	if wait == 0 {
		wait = askbroker.DefaultWait
	}
	req := &proto.RunAskRequest{Agent: r.agent, Start: r.start, Degraded: degraded, Wait: wait.String(),
		Desktop: askproc.DesktopEnv(os.Environ())}
	if req.Desktop == nil {
		req.Desktop = []string{}
	}
	var files []*os.File
	if tty := askproc.OpenTerminal(); tty != nil {
		defer tty.Close() // the broker holds its own copy
		files = append(files, tty)
		req.Terminal = true
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got, err := r.c.Call(ctx, proto.RunAsk, req, &proto.Empty{}, files...)
	if err != nil {
		return nil, kernelErr(err)
	}
	return got[0], nil
}

// bridge has the kernel start the run's tool bridge (lnk-toolbridge,
// confined, its child) after the run's ask broker, on which the bridge
// asks; it returns the route the sandbox reaches its tools at. The
// kernel hands the proxy the bridge's channel itself (RunProxy).
func (r *kernelRun) bridge(degraded bool) (string, error) {
	set, err := settings.Load(r.home)
	if err != nil {
		return "", Fail(ExitFailure, err, "fix ~/"+settings.File+" (its keys: ask_wait, tool_sessions, tool_idle, tool_starts)")
	}
	ch, err := r.startAsk(set.AskWait, degraded)
	if err != nil {
		return "", err
	}
	// The bridge holds its own copy of the ask broker's channel: this one
	// is closed, never shut down (which would end the broker).
	ch.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var rep proto.RunBridgeReply
	if _, err := r.c.Call(ctx, proto.RunBridge, &proto.RunBridgeRequest{Agent: r.agent, Start: r.start, Degraded: degraded}, &rep); err != nil {
		return "", kernelErr(err)
	}
	return rep.Route, nil
}

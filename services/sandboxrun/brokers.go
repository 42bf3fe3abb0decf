package sandboxrun

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/helpers/askbroker"
	"lnk.dev/lnk/helpers/askbroker/askproc"
	"lnk.dev/lnk/internal/connpass"
	"lnk.dev/lnk/internal/settings"
	"lnk.dev/lnk/internal/wire"
	"lnk.dev/lnk/kernel/client"
	"lnk.dev/lnk/kernel/proto"
	"lnk.dev/lnk/kernel/sandbox"
)

// Brokers are the brokers of an agent's start the kernel holds for one
// run, on the start's own connection: the kernel starts them as its
// children (kernel/start_brokers.go) and hands the caller only what the
// sandbox and the tool bridge use: the proxy's relay channel (the caller
// made it and keeps the sending end), what the sandbox is told of the
// proxy, and the ask broker's channel. They end with the start; one that
// dies ends the start, and the kernel kills the sandbox through its
// pidfd and answers its watch with why.
type Brokers struct {
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

// BeginBrokers readies the brokers of the agent's start ks when its run
// needs one: a proxy, a sealed secret or a tool. Nil when it needs none.
func BeginBrokers(ks *Start, comp *caps.Compiled) *Brokers {
	if ks == nil || !(sandbox.NeedsProxy(comp) || len(comp.Tools) > 0 || (comp.AgentID != "" && holdsSecretsFile(comp.Home))) {
		return nil
	}
	return &Brokers{c: ks.cl, agent: ks.Agent, home: comp.Home, start: ks.ID, ended: make(chan struct{})}
}

// UnconfinedBrokers are the brokers of an unconfined start
// (StartUnconfined): its proxy alone, on a loopback port.
func UnconfinedBrokers(ks *Start, comp *caps.Compiled) *Brokers {
	return &Brokers{c: ks.cl, agent: ks.Agent, home: comp.Home, start: ks.ID, ended: make(chan struct{})}
}

// holdsSecretsFile reports whether ~/.lnk/secrets.toml is there (a
// sealed secret may be granted): only whether to ask the kernel, which
// opens it itself and decides. What cannot be learned says yes.
func holdsSecretsFile(home string) bool {
	_, err := os.Lstat(filepath.Join(home, ".lnk", "secrets.toml"))
	return err == nil || !errors.Is(err, fs.ErrNotExist)
}

// EndedErr says why the run's brokers ended under its command, or nil:
// read before the caller ends the start itself, which ends them too.
func (r *Brokers) EndedErr() error {
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

// SealedError refuses a run of an agent granted sealed secrets with no
// proxy to add them ([network] mode = "host"): security.txt says it does
// not start without them, rather than start without them.
type SealedError struct {
	Agent string
	Names []string
}

func (e *SealedError) Error() string {
	return fmt.Sprintf("agent %s holds sealed secrets (%s) and [network] mode = \"host\" leaves it no proxy to add them: it does not start without them", e.Agent, strings.Join(e.Names, ", "))
}

// Hints are the commands that would let it run: the network back behind
// its proxy, or each secret taken from it.
func (e *SealedError) Hints() []string {
	hints := []string{"lnk agent deny " + e.Agent + " --network-mode host"}
	for _, n := range e.Names {
		hints = append(hints, "lnk secret remove "+n+" --agent "+e.Agent)
	}
	return hints
}

// Proxy has the kernel start the run's proxy (with the key broker of
// its sealed secrets); nil when it needs none. bridge is the tool
// bridge's channel and route, passed to the kernel as it is, or nil.
func (r *Brokers) Proxy(comp *caps.Compiled, degraded bool, bridge *sandbox.ToolBridge) (*sandbox.Proxy, error) {
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
		return nil, err
	}
	go r.watch(lr)
	if !rep.Proxy {
		relaySend.Close()
		if len(rep.Sealed) > 0 {
			agent := comp.AgentName
			if agent == "" {
				agent = comp.AgentID
			}
			return nil, &SealedError{Agent: agent, Names: rep.Sealed}
		}
		return nil, nil
	}
	if len(rep.Placeholders) == 0 {
		rep.Placeholders = nil
	}
	if rep.Port != 0 { // an unconfined start's: no sandbox hands it a listener
		relaySend.Close()
		p := sandbox.KernelProxy("", rep.Secret, nil, nil)
		p.Port = rep.Port
		return p, nil
	}
	p := sandbox.KernelProxy(rep.Socket, rep.Secret, rep.Placeholders, relaySend)
	if bridge != nil {
		p.ToolRoute = bridge.Route
	}
	return p, nil
}

// watch reads the lifeline until the kernel closes it.
func (r *Brokers) watch(lr *os.File) {
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

// Ask has the kernel start the run's ask broker (with its dialog
// launcher where the desktop shows one), asking on the owner's terminal
// when the caller has one; it returns the asker and what ends it.
func (r *Brokers) Ask(wait time.Duration, degraded bool) (*askbroker.Remote, func(), error) {
	ch, err := r.startAsk(wait, degraded)
	if err != nil {
		return nil, nil, err
	}
	wc, err := wire.NewClient(ch)
	if err != nil {
		ch.Close()
		return nil, nil, err
	}
	return &askbroker.Remote{C: wc}, func() { wc.Close() }, nil
}

// startAsk has the kernel start the run's ask broker and returns the
// caller's copy of the broker's channel.
func (r *Brokers) startAsk(wait time.Duration, degraded bool) (*os.File, error) {
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
		return nil, err
	}
	return got[0], nil
}

// Bridge has the kernel start the run's tool bridge (lnk-toolbridge,
// confined, its child) after the run's ask broker, on which the bridge
// asks; it returns the route the sandbox reaches its tools at. The
// kernel hands the proxy the bridge's channel itself (RunProxy).
func (r *Brokers) Bridge(degraded bool) (string, error) {
	set, err := settings.Load(r.home)
	if err != nil {
		return "", fmt.Errorf("~/%s (its keys: ask_wait, tool_sessions, tool_idle, tool_starts): %w", settings.File, err)
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
		return "", err
	}
	return rep.Route, nil
}

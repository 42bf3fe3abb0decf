package kernel

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/audit"
	"lnk.dev/lnk/internal/beside"
	"lnk.dev/lnk/internal/connpass"
	"lnk.dev/lnk/internal/ownerdir"
	"lnk.dev/lnk/internal/settings"
	"lnk.dev/lnk/internal/wire"
	"lnk.dev/lnk/kernel/proto"
	"lnk.dev/lnk/kernel/sandbox"
)

// handleRunBridge starts the tool bridge of an agent's start
// (lnk-toolbridge, confined, as the kernel's child): the one process
// that parses what the sandbox sends its tools. It is handed its channel
// to the kernel (on which it asks for servers, bridge_tools.go), the
// receiving end of the proxy's tool-route channel (the kernel keeps the
// sending end for the proxy, RunProxy), a channel to the start's ask
// broker (RunAsk comes first) and the tools' definitions folder, which
// alone it may read; its grants, limits and route secret on its stdin.
// The caller is told the route alone.
func (k *Kernel) handleRunBridge(ctx context.Context, c *call, req *proto.RunBridgeRequest) (*proto.RunBridgeReply, []*os.File, error) {
	refuse := func(why string) error {
		k.refuse(audit.Entry{Peer: &c.conn.peer, Agent: req.Agent, Start: req.Start, Request: "run-bridge", Reason: why})
		return wire.Errorf(proto.CodeRefused, "%s", why)
	}
	r, err := k.runOf(c, "run-bridge", req.Agent, req.Start)
	if err != nil {
		return nil, nil, err
	}
	comp := r.comp
	switch {
	case len(comp.Tools) == 0:
		return nil, nil, refuse("the start's grants name no tool")
	case r.unconfined:
		return nil, nil, refuse("the start runs with no sandbox: its command is given no tool bridge")
	case !sandbox.NeedsProxy(comp):
		return nil, nil, refuse(`the start has no proxy to reach its tools through ([network] mode = "host")`)
	}
	r.mu.Lock()
	bridged, asked := r.bridged, r.asked
	r.bridged = true
	r.mu.Unlock()
	switch {
	case bridged:
		return nil, nil, refuse("the start has its tool bridge already")
	case !asked:
		r.mu.Lock()
		r.bridged = false
		r.mu.Unlock()
		return nil, nil, refuse("the start has no ask broker for its tool bridge (run-ask first)")
	}
	fail := func(what string, err error) error {
		k.refuse(audit.Entry{Peer: &c.conn.peer, Agent: req.Agent, Start: req.Start, Request: "run-bridge", Route: "tool bridge", Reason: what + ": " + err.Error()})
		return wire.Errorf(proto.CodeFailed, "the start's tool bridge: %s: %v", what, err)
	}
	if k.opts.Tools == nil {
		return nil, nil, fail("tool servers", errors.New("this kernel starts none (lnk kernel run wires them)"))
	}
	bin, err := k.brokerPath("lnk-toolbridge")
	if err != nil {
		return nil, nil, fail("its program", err)
	}
	// The limits are Link's settings (~/.lnk/settings.toml), never
	// anything a sandbox can write.
	set, err := settings.Load(comp.Home)
	if err != nil {
		return nil, nil, fail("Link's settings", err)
	}
	ask, err := k.askChannel(ctx, req.Start)
	if err != nil {
		return nil, nil, fail("the ask broker's channel", err)
	}
	defs, err := ownerdir.Open(comp.Home, ".lnk", "sandbox", "tools")
	if err != nil {
		ask.Close()
		return nil, nil, fail("the tools' folder", err)
	}
	recv, send, err := connpass.Pair()
	if err != nil {
		ask.Close()
		defs.Close()
		return nil, nil, err
	}
	name := comp.AgentName
	if name == "" {
		name = "run"
	}
	cfg := proto.BridgeConfig{Home: comp.Home, Agent: comp.AgentName, LogName: comp.LogName(),
		Sandbox: name + "-" + randomHex(4), Secret: randomHex(16), Grants: map[string]proto.BridgeTool{},
		Sessions: set.ToolSessions, Idle: set.ToolIdle.String(), Starts: set.ToolStarts}
	for t, g := range comp.Tools {
		cfg.Grants[t] = proto.BridgeTool{Allow: append([]string{}, g.Allow...), AskNone: g.AskNone}
	}
	if own := ownToolsOf(comp); own.AgentID != "" {
		bin, err := beside.Dir()
		if err != nil {
			wire.CloseFiles([]*os.File{ask, defs, recv, send})
			return nil, nil, err
		}
		cfg.OwnID, cfg.OwnName, cfg.Bin, cfg.Path = own.AgentID, own.AgentName, bin, ownToolsPath()
	}
	stdin, err := json.Marshal(cfg)
	if err != nil {
		wire.CloseFiles([]*os.File{ask, defs, recv, send})
		return nil, nil, err
	}
	var args []string
	if req.Degraded {
		args = append(args, "--degraded")
	}
	files := []*os.File{recv, ask, defs} // fd 4, 5, 6
	bname := runName("tools", req.Start)
	_, err = k.addBroker(ctx, req.Start, r, BrokerSpec{
		Name: bname, Path: bin, Args: args, Stdin: append(stdin, '\n'),
		Files: func(*Kernel) ([]*os.File, error) {
			fs := files
			files = nil
			if fs == nil {
				return nil, errors.New("a start's tool bridge is started once")
			}
			return fs, nil
		},
		Log: k.brokerLog(r, bname, "lnk-toolbridge: ", func(line []byte) (audit.Entry, bool) {
			return bridgeEntry(line, cfg.LogName, cfg.Sandbox)
		}),
		Connect: func(_ context.Context, ch *os.File) (io.Closer, error) {
			return k.serveBridge(ch, req.Start, r)
		},
	})
	wire.CloseFiles(files) // if it never started
	if err != nil {
		send.Close()
		return nil, nil, err
	}
	r.mu.Lock()
	r.bridgeSend = send // the proxy's, at RunProxy
	// Twice the sessions the bridge keeps (tool_sessions): room for one
	// ending while its place is taken again, never a compromised
	// bridge's flood of servers.
	r.maxServers = 2 * max(set.ToolSessions, 1)
	r.mu.Unlock()
	return &proto.RunBridgeReply{Route: "/_link/s/" + cfg.Secret + "/mcp/"}, nil, nil
}

// askChannel is a copy of the start's ask broker's channel, for its tool
// bridge: the broker ends once every copy is closed.
func (k *Kernel) askChannel(ctx context.Context, start uint64) (*os.File, error) {
	cl, err := k.bro.client(ctx, runName("ask", start))
	if err != nil {
		return nil, err
	}
	ch, ok := cl.(chanCloser)
	if !ok {
		return nil, errors.New("the ask broker holds no channel")
	}
	dup, err := unix.FcntlInt(ch.f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(dup), "bridge-ask-channel"), nil
}

// bridgeEntry is the audit-log line of one event the bridge said (a
// proto.BridgeEvent, read strictly): the tool, the call's name and its
// outcome, never its arguments or answer; the agent and sandbox are the
// kernel's, never the bridge's. Any other line is no event.
func bridgeEntry(line []byte, agent, sandbox string) (audit.Entry, bool) {
	var ev proto.BridgeEvent
	if len(line) == 0 || line[0] != '{' || wire.Unmarshal(line, &ev) != nil {
		return audit.Entry{}, false
	}
	kind, reason := audit.KindUse, ev.Outcome
	if r, ok := strings.CutPrefix(ev.Outcome, "refused: "); ok {
		kind, reason = audit.KindRefuse, r
	}
	req := "mcp"
	if ev.Call != "" {
		req += " " + ev.Call
	}
	return audit.Entry{Kind: kind, Agent: agent, Request: req,
		Route: "tool " + ev.Tool + " (sandbox " + sandbox + ")", Reason: reason}, true
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err)) // never: Go's reader does not fail
	}
	return hex.EncodeToString(b)
}

package kernel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/audit"
	"lnk.dev/lnk/internal/wire"
	"lnk.dev/lnk/kernel/proto"
)

// ToolServers starts tools' servers for a start's tool bridge, outside
// every sandbox and unconfined, as their definitions say: that is their
// contract. lnk kernel run wires in the one launcher
// (services/toolbridge/kernelstart's Servers over services/toolbridge/launch),
// which a lower layer cannot import; the kernel decides which tool may
// start, the launcher only how.
type ToolServers interface {
	// Start starts the server of tool (not a shared one) from its
	// definition under home, or, with own set, from the agent's own
	// tools' (run-<id>, file-<id>) when tool is one of them.
	Start(home, tool string, own OwnTools) (*ToolServer, error)
	// Dial connects to shared tool's hub, starting it if none listens,
	// and returns the connection and its definition's digest.
	Dial(ctx context.Context, home, tool string) (*os.File, string, error)
}

// ToolServer is a server Start started: the bridge's ends of its stdio,
// its definition's digest, and how it is stopped.
type ToolServer struct {
	Stdin, Stdout, Stderr *os.File
	Pid                   int
	Digest                string
	URL                   bool
	// Stop kills the server's whole process group and reaps it.
	Stop func()
}

// serveBridge serves the bridge's channel: its requests for servers,
// through the table below, each checked against the start's compiled
// tools. A request outside the table, or malformed, closes the channel
// (wire.Server), and the bridge can then start none.
func (k *Kernel) serveBridge(ch *os.File, start uint64, r *startRun) (io.Closer, error) {
	srv, err := wire.NewServer(ch, k.bridgeTable(start, r), nil)
	if err != nil {
		return nil, err
	}
	srv.OneOfMany()
	srv.OnViolation(func(err error) {
		agent, _ := k.caps.Agent(start)
		k.refuse(audit.Entry{Agent: agent, Start: start, Request: "tool bridge", Route: "tool bridge", Reason: "its channel closed: " + err.Error()})
	})
	go srv.Serve(context.Background())
	return serverCloser{srv}, nil
}

type serverCloser struct{ s *wire.Server }

func (c serverCloser) Close() error { c.s.Close(); return nil }

// bridgeTable is the request table of a start's bridge channel.
func (k *Kernel) bridgeTable(start uint64, r *startRun) map[wire.Type]*wire.Route {
	return wire.Table(
		wire.Handle(proto.ToolStart, func(ctx context.Context, _ *wire.Request, req *proto.ToolRequest) (*proto.ToolReply, []*os.File, error) {
			return k.toolStart(start, r, req)
		}),
		wire.Handle(proto.ToolDial, func(ctx context.Context, _ *wire.Request, req *proto.ToolRequest) (*proto.ToolReply, []*os.File, error) {
			return k.toolDial(ctx, start, r, req)
		}),
	)
}

// ErrToolNotGranted refuses a bridge's request for a tool the start's
// grants do not name.
var ErrToolNotGranted = errors.New("not granted to the start")

// grantedTool checks a bridge's request against the start's compiled
// tools: the name must be exactly one of them, or it is refused.
func grantedTool(comp *caps.Compiled, req *proto.ToolRequest) (string, error) {
	if comp == nil {
		return "", ErrToolNotGranted
	}
	if _, ok := comp.Tools[req.Tool]; !ok {
		return "", fmt.Errorf("tool %s: %w", strconv.QuoteToASCII(clip(req.Tool, 64)), ErrToolNotGranted)
	}
	return req.Tool, nil
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// toolCheck refuses, logged once, a request for a tool not granted, or
// one made after the start ended.
func (k *Kernel) toolCheck(start uint64, r *startRun, request string, req *proto.ToolRequest) (string, error) {
	agent, _ := k.caps.Agent(start)
	tool, err := grantedTool(r.comp, req)
	r.mu.Lock()
	ended := r.ended
	r.mu.Unlock()
	if err == nil && ended {
		err = errors.New("the start has ended")
	}
	if err != nil {
		k.refuse(audit.Entry{Agent: agent, Start: start, Request: request, Route: "tool bridge", Reason: err.Error()})
		return "", wire.Errorf(proto.CodeRefused, "%s", err)
	}
	return tool, nil
}

// toolStart starts a granted tool's server through the one launcher and
// hands the bridge its stdio and its life: once the bridge closes that
// (or dies, or is stopped with the start), the server's process group
// is killed and reaped.
func (k *Kernel) toolStart(start uint64, r *startRun, req *proto.ToolRequest) (*proto.ToolReply, []*os.File, error) {
	tool, err := k.toolCheck(start, r, "tool-start", req)
	if err != nil {
		return nil, nil, err
	}
	r.mu.Lock()
	full := r.servers >= r.maxServers
	if !full {
		r.servers++
	}
	r.mu.Unlock()
	if full {
		agent, _ := k.caps.Agent(start)
		why := fmt.Sprintf("tool %s: the start's bridge runs %d servers already, its most", tool, r.maxServers)
		k.refuse(audit.Entry{Agent: agent, Start: start, Request: "tool-start", Route: "tool bridge", Reason: why})
		return nil, nil, wire.Errorf(proto.CodeRefused, "%s", why)
	}
	done := func() {
		r.mu.Lock()
		r.servers--
		r.mu.Unlock()
	}
	lr, lw, err := os.Pipe()
	if err != nil {
		done()
		return nil, nil, err
	}
	ts, err := k.opts.Tools.Start(r.comp.Home, tool, ownToolsOf(r.comp))
	if err != nil {
		done()
		lr.Close()
		lw.Close()
		agent, _ := k.caps.Agent(start)
		k.record(audit.Entry{Kind: audit.KindKernel, Agent: agent, Start: start, Request: "tool-start", Route: "tool " + tool, Reason: "not started: " + err.Error()})
		return nil, nil, wire.Errorf(proto.CodeFailed, "%v", err)
	}
	k.toolServers.add(ts.Pid)
	go func() {
		io.Copy(io.Discard, lr) // until every copy of the write end is closed
		lr.Close()
		done() // before it is killed: the bridge's place frees only after
		ts.Stop()
		k.toolServers.remove(ts.Pid) // reaped by Stop: its pid may be another's now
	}()
	return &proto.ToolReply{Digest: ts.Digest, URL: ts.URL}, []*os.File{ts.Stdin, ts.Stdout, ts.Stderr, lw}, nil
}

// toolDial connects the bridge to a granted shared tool's hub.
func (k *Kernel) toolDial(ctx context.Context, start uint64, r *startRun, req *proto.ToolRequest) (*proto.ToolReply, []*os.File, error) {
	tool, err := k.toolCheck(start, r, "tool-dial", req)
	if err != nil {
		return nil, nil, err
	}
	c, digest, err := k.opts.Tools.Dial(ctx, r.comp.Home, tool)
	if err != nil {
		return nil, nil, wire.Errorf(proto.CodeFailed, "%v", err)
	}
	return &proto.ToolReply{Digest: digest}, []*os.File{c}, nil
}

// OwnTools names the agent whose own run and file tools a start's bridge
// reaches: Link Harness's own sandbox's (caps.CompileLinkHarness grants
// them); zero for every other start, whose tools are the owner's added
// ones alone.
type OwnTools struct {
	AgentID, AgentName string
	Path               string // their servers' PATH (ownToolsPath)
}

// ownToolsOf is comp's OwnTools.
func ownToolsOf(comp *caps.Compiled) OwnTools {
	if comp.Harness != caps.LinkHarness || comp.Profile != "" || comp.AgentID == "" {
		return OwnTools{}
	}
	return OwnTools{AgentID: comp.AgentID, AgentName: comp.AgentName, Path: ownToolsPath()}
}

// ownToolsPath is the PATH the agent's own tools' servers run with: the
// kernel's own, told to its bridge so both make one definition.
func ownToolsPath() string {
	if p := os.Getenv("PATH"); p != "" {
		return p
	}
	return "/usr/local/bin:/usr/bin:/bin"
}

// serverSet is the pids of the tools' servers the kernel started for
// its bridges and has not reaped. A tool's server runs outside every
// sandbox with the owner's rights, as its definition says; Link's own
// (the run tool, the file tool) start their calls' sandboxes through the
// kernel, as lnk sandbox run would. So such a server, and what runs
// below it unconfined (the run tool's background supervisor), is the
// owner's client: the kernel's brokers never are, and a confined process
// never is (peer.go).
type serverSet struct {
	mu   sync.Mutex
	pids map[int]bool
}

func (s *serverSet) add(pid int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pids == nil {
		s.pids = map[int]bool{}
	}
	s.pids[pid] = true
}

func (s *serverSet) remove(pid int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pids, pid)
}

// has says whether pid is a tool's server the kernel runs.
func (s *serverSet) has(pid int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pids[pid]
}

package kernel

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/audit"
	"lnk.dev/lnk/internal/ownerdir"
	"lnk.dev/lnk/internal/ownerfile"
	"lnk.dev/lnk/internal/wire"
	"lnk.dev/lnk/kernel/proto"
)

// agentName is caps' rule for a name: letters, digits, '-', '_', '.'.
// Compiled at first use: every program linking the kernel (lnk's whole
// command line) would otherwise pay for it at start.
var agentName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`) })

func (k *Kernel) handlePing(ctx context.Context, c *call, _ *proto.Empty) (*proto.Empty, []*os.File, error) {
	return &proto.Empty{}, nil, nil
}

func (k *Kernel) handleStatus(ctx context.Context, c *call, _ *proto.Empty) (*proto.StatusReply, []*os.File, error) {
	r := &proto.StatusReply{PID: os.Getpid(), UID: os.Geteuid(), Socket: filepath.Join(k.opts.Home, ".lnk", "run", SocketName),
		Started: k.started.UTC().Format(time.RFC3339), Caps: k.caps.Len(), Requests: k.requests.Load(),
		Starts: []proto.StartInfo{}, Brokers: k.bro.info()}
	for s, v := range k.caps.Starts() {
		r.Starts = append(r.Starts, proto.StartInfo{Agent: v[0].(string), Start: s, Caps: v[1].(int), PID: k.sbx.pid(s), Unconfined: k.sbx.unconfined(s)})
	}
	sort.Slice(r.Starts, func(i, j int) bool { return r.Starts[i].Start < r.Starts[j].Start })
	return r, nil, nil
}

func (k *Kernel) handleStop(ctx context.Context, c *call, _ *proto.Empty) (*proto.Empty, []*os.File, error) {
	c.after = k.Stop // once this answer is written
	return &proto.Empty{}, nil, nil
}

func (k *Kernel) handleStart(ctx context.Context, c *call, req *proto.StartRequest) (*proto.StartReply, []*os.File, error) {
	if req.Grants != nil {
		return k.startGrants(ctx, c, req)
	}
	if !agentName().MatchString(req.Agent) || req.Agent == "." || req.Agent == ".." {
		k.refuse(audit.Entry{Peer: &c.conn.peer, Agent: req.Agent, Request: "start", Reason: "agent name is not letters, digits, '-', '_' and '.'"})
		return nil, nil, wire.Errorf(proto.CodeRefused, "agent name %q is not letters, digits, '-', '_' and '.'", req.Agent)
	}
	adir, err := ownerdir.OpenRoot(k.roots.Agents, req.Agent, false, loose)
	if errors.Is(err, unix.ENOENT) {
		k.refuse(audit.Entry{Peer: &c.conn.peer, Agent: req.Agent, Request: "start", Reason: "no such agent"})
		return nil, nil, wire.Errorf(proto.CodeMissing, "no agent %s", req.Agent)
	}
	if err != nil {
		k.refuse(audit.Entry{Peer: &c.conn.peer, Agent: req.Agent, Request: "start", Reason: "agent folder: " + err.Error()})
		return nil, nil, wire.Errorf(proto.CodeRefused, "agent %s's folder: %v", req.Agent, err)
	}
	var comp *caps.Compiled // the kernel's own compile: its run's brokers
	var hidden []string     // what the sandbox hides: only for the kernel's own compile
	if !req.Compile && (req.Harness != "" || req.Profile != "") {
		adir.Close()
		return nil, nil, wire.Errorf(proto.CodeRefused, "a harness's start is one the kernel compiles")
	}
	if req.Unconfined && (!req.Compile || req.Harness == "" || req.Profile != "run") {
		adir.Close()
		k.refuse(audit.Entry{Peer: &c.conn.peer, Agent: req.Agent, Request: "start", Reason: "an unconfined start is only a harness's run (lnk agent harness run) the kernel compiles"})
		return nil, nil, wire.Errorf(proto.CodeRefused, "an unconfined start is only a harness's run (lnk agent harness run) the kernel compiles")
	}
	if req.Compile {
		if len(req.Folders) > 0 || req.AgentID != "" {
			adir.Close()
			return nil, nil, wire.Errorf(proto.CodeRefused, "a start the kernel compiles names no folders and no agent ID")
		}
		comp, err = compileStart(k.opts.Home, req)
		if err != nil {
			adir.Close()
			k.refuse(audit.Entry{Peer: &c.conn.peer, Agent: req.Agent, Request: "start", Reason: "grants: " + err.Error()})
			return nil, nil, wire.Errorf(proto.CodeRefused, "%s's grants: %v", req.Agent, err)
		}
		req.AgentID = comp.AgentID
		hidden = comp.Hidden
		if req.Unconfined {
			if err := sandboxOff(k.opts.Home, req); err != nil {
				adir.Close()
				k.refuse(audit.Entry{Peer: &c.conn.peer, Agent: req.Agent, Request: "start", Reason: err.Error()})
				return nil, nil, wire.Errorf(proto.CodeRefused, "%v", err)
			}
			return k.begin(ctx, c, req, comp, nil, adir) // no sandbox: no folder to bind
		}
		for _, f := range comp.Folders {
			req.Folders = append(req.Folders, proto.Folder{Path: f.Path, Read: f.Access.Read || f.Access.Write, Write: f.Access.Write})
		}
	}
	return k.begin(ctx, c, req, comp, hidden, adir)
}

// begin makes the start of req: its folders' capabilities, the agent's
// key, the file broker's program checked, and (comp not nil) the run's
// brokers readied; adir is the agent's folder (nil for a start of no
// agent), held until the start ends.
func (k *Kernel) begin(ctx context.Context, c *call, req *proto.StartRequest, comp *caps.Compiled, hidden []string, adir *os.File) (*proto.StartReply, []*os.File, error) {
	start := k.caps.Begin(req.Agent)
	k.mu.Lock()
	if adir != nil {
		k.agentDirs[start] = adir
	}
	k.mu.Unlock()
	reply := &proto.StartReply{Start: start, Caps: []proto.CapInfo{}}
	served := 0 // folders the fsbroker serves: every one but a bind-only
	for _, f := range req.Folders {
		ci, err := k.grantFolder(req.Agent, start, f, hidden)
		if err != nil {
			k.endStart(start)
			k.refuse(audit.Entry{Peer: &c.conn.peer, Agent: req.Agent, Request: "start", Route: f.Path, Reason: err.Error()})
			return nil, nil, wire.Errorf(proto.CodeRefused, "%v", err)
		}
		reply.Caps = append(reply.Caps, ci)
		if ci.Rights != RightBind.String() {
			served++
		}
	}
	if err := k.makeAgentKey(ctx, start, req.Agent, req.AgentID); err != nil {
		k.endStart(start)
		k.refuse(audit.Entry{Peer: &c.conn.peer, Agent: req.Agent, Request: "start", Route: "agent key", Reason: err.Error()})
		return nil, nil, err
	}
	if served > 0 {
		// The start's file broker starts at its first file request
		// (fsClient): a sandbox binds its folders itself and may never
		// ask. Its program is checked now, so a start that could not be
		// served is refused here, not at its first use.
		if _, err := k.brokerPath("lnk-fsbroker"); err != nil {
			k.endStart(start)
			k.refuse(audit.Entry{Peer: &c.conn.peer, Agent: req.Agent, Request: "start", Route: "file broker", Reason: err.Error()})
			return nil, nil, wire.Errorf(proto.CodeFailed, "the start's file broker: %v", err)
		}
	}
	if comp != nil {
		k.beginRun(start, comp, req.Unconfined) // its proxy and ask broker (start_brokers.go)
	}
	c.conn.addStart(start) // revoked when this connection closes
	k.sbx.begin(start, req.Agent, c.conn, req.Unconfined)
	return reply, nil, nil
}

// grantFolder opens one granted folder, never through a link, and makes
// it a capability of the start. A read-only folder that holds Link's
// settings or the agents' folders, each of which hidden names (what the
// kernel's compile says its sandbox hides), is granted bind-only
// (RightBind, bindonly.go); with hidden nil it is refused.
func (k *Kernel) grantFolder(agent string, start uint64, f proto.Folder, hidden []string) (proto.CapInfo, error) {
	if !filepath.IsAbs(f.Path) || filepath.Clean(f.Path) != f.Path {
		return proto.CapInfo{}, fmt.Errorf("folder %q is not an absolute, clean path", f.Path)
	}
	bind := !f.Write && k.holdsOnlyHidden(f.Path, hidden)
	if !bind {
		if err := k.checkFolder(agent, f.Path); err != nil {
			return proto.CapInfo{}, err
		}
	}
	var rights Rights
	if f.Read {
		rights |= RightRead
	}
	if f.Write {
		rights |= RightWrite
	}
	if bind && rights != 0 {
		rights = RightBind
	}
	if rights == 0 {
		return proto.CapInfo{}, fmt.Errorf("folder %s is granted no right", f.Path)
	}
	fd, err := ownerfile.OpenPath(f.Path, unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			return proto.CapInfo{}, fmt.Errorf("folder %s is reached through a link: %w", f.Path, ErrBadRoot)
		}
		return proto.CapInfo{}, fmt.Errorf("open folder %s: %w", f.Path, err)
	}
	dir := os.NewFile(uintptr(fd), f.Path)
	if root, err := k.heldRoot(fd); err != nil || (root != "" && !bind) {
		dir.Close()
		if err != nil {
			return proto.CapInfo{}, fmt.Errorf("folder %s: where it lies cannot be learned: %w", f.Path, err)
		}
		return proto.CapInfo{}, fmt.Errorf("folder %s holds %s, which no agent is granted", f.Path, root)
	}
	h, err := k.caps.Grant(agent, start, f.Path, rights, dir)
	if err != nil {
		dir.Close()
		return proto.CapInfo{}, err
	}
	k.record(audit.Entry{Kind: audit.KindGrant, Agent: agent, Start: start, Cap: h.Short(), Rights: rights.String(), Route: f.Path})
	return proto.CapInfo{Handle: h.String(), Route: f.Path, Rights: rights.String()}, nil
}

// endStart revokes a start's capabilities and lets go of its agent folder.
func (k *Kernel) endStart(start uint64) int {
	k.sbx.end(start, "its start ended") // kills its sandbox, if one still runs
	// Revoked before its file broker goes, under fsMu: no file request
	// can start a broker for it after (fsClient).
	k.fsMu.Lock()
	n := k.caps.Revoke(start)
	k.fsMu.Unlock()
	k.bro.remove(fsBrokerName(start))
	k.dropAgentKey(start)
	k.mu.Lock()
	if d := k.agentDirs[start]; d != nil {
		d.Close()
		delete(k.agentDirs, start)
	}
	k.mu.Unlock()
	k.endRun(start, "the start ended") // its lifeline closes last (start_brokers.go)
	return n
}

func (k *Kernel) handleEnd(ctx context.Context, c *call, req *proto.EndRequest) (*proto.EndReply, []*os.File, error) {
	if why := c.conn.takeEnded(req.Start); why != "" {
		return &proto.EndReply{Ended: why}, nil, nil // the kernel ended it (end-agent), and logged so
	}
	agent, ok := k.caps.Agent(req.Start)
	if !ok || agent != req.Agent {
		k.refuse(audit.Entry{Peer: &c.conn.peer, Agent: req.Agent, Start: req.Start, Request: "end", Reason: "no such start of this agent's"})
		return nil, nil, wire.Errorf(proto.CodeMissing, "agent %s has no start %d", req.Agent, req.Start)
	}
	if !c.conn.takeStart(req.Start) {
		k.refuse(audit.Entry{Peer: &c.conn.peer, Agent: req.Agent, Start: req.Start, Request: "end", Reason: "the start was made on another connection"})
		return nil, nil, wire.Errorf(proto.CodeRefused, "start %d of agent %s was made on another connection, which alone ends it", req.Start, req.Agent)
	}
	n := k.endStart(req.Start)
	k.record(audit.Entry{Kind: audit.KindRevoke, Agent: req.Agent, Start: req.Start, Count: n})
	return &proto.EndReply{Revoked: n}, nil, nil
}

func (k *Kernel) handleCheck(ctx context.Context, c *call, req *proto.CapRequest) (*proto.CapInfo, []*os.File, error) {
	return &proto.CapInfo{Handle: c.cap.Handle.String(), Route: c.cap.Route, Rights: c.cap.Rights.String()}, nil, nil
}

// handleHold (testing only) writes one byte to the socket it was handed,
// then waits for that socket's end or the drain bound, then answers.
func (k *Kernel) handleHold(ctx context.Context, c *call, _ *proto.Empty) (*proto.Empty, []*os.File, error) {
	f := c.files[0]
	if _, err := f.Write([]byte{1}); err != nil {
		return nil, nil, err
	}
	done := make(chan struct{})
	go func() {
		var b [1]byte
		for {
			if n, err := f.Read(b[:]); n == 0 || err != nil {
				break
			}
		}
		close(done)
	}()
	select {
	case <-done:
	case <-k.drainExpired:
	}
	return &proto.Empty{}, nil, nil
}

// compileStart compiles the grants of a start the kernel compiles: the
// agent's own sandbox, or with a harness and profile that harness's own
// (caps.CompileHarness checks both names).
func compileStart(home string, req *proto.StartRequest) (*caps.Compiled, error) {
	if req.Harness == "" && req.Profile == "" {
		return caps.CompileAgent(home, req.Agent)
	}
	if req.Harness == caps.LinkHarness && req.Profile == "" { // the agent's own, run by Link Harness
		return caps.CompileLinkHarness(home, req.Agent)
	}
	return caps.CompileHarness(home, req.Agent, req.Harness, req.Profile)
}

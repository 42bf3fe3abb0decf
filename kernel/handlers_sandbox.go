package kernel

import (
	"context"
	"fmt"
	"os"
	"sort"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/audit"
	"lnk.dev/lnk/internal/procstat"
	"lnk.dev/lnk/internal/wire"
	"lnk.dev/lnk/kernel/proto"
)

// The requests of a sandbox the kernel holds the capabilities of
// (sandboxes.go): open-folder, attach, watch and end-agent.

// handleOpenFolder hands a duplicate of one folder capability's handle
// of a start this connection made: the folder lnk binds into the
// sandbox is the one the kernel opened and checked, never a path walked
// again.
func (k *Kernel) handleOpenFolder(ctx context.Context, c *call, req *proto.OpenFolderRequest) (*proto.CapInfo, []*os.File, error) {
	if k.sbx.get(req.Start, c.conn) == nil {
		return nil, nil, k.refuseStart(c, "open-folder", req.Start, "no start of this connection's")
	}
	agent, _ := k.caps.Agent(req.Start)
	h, err := ParseHandle(req.Handle)
	if err != nil {
		return nil, nil, k.refuseStart(c, "open-folder", req.Start, err.Error())
	}
	cp, dir, err := k.caps.OpenDir(h, agent, 0)
	if err == nil && cp.Rights&(RightRead|RightBind) == 0 {
		dir.Close()
		err = capRefused(ErrNoRight, h.Short())
	}
	if err == nil && cp.Start != req.Start {
		dir.Close()
		err = capRefused(ErrOtherStart, h.Short())
	}
	if err != nil {
		return nil, nil, k.refuseStart(c, "open-folder", req.Start, err.Error())
	}
	k.record(audit.Entry{Kind: audit.KindUse, Agent: agent, Start: req.Start, Request: "open-folder",
		Cap: h.Short(), Rights: cp.Rights.String(), Route: cp.Route, Reason: "bound into the start's sandbox"})
	return &proto.CapInfo{Handle: h.String(), Route: cp.Route, Rights: cp.Rights.String()}, []*os.File{dir}, nil
}

// handleAttach takes the pidfd of a start's sandbox (bubblewrap): a
// pidfd of a live child of the process that made the start, once per
// start. The kernel then lists its pid and kills it when the start ends.
func (k *Kernel) handleAttach(ctx context.Context, c *call, req *proto.StartRef) (*proto.Empty, []*os.File, error) {
	if k.sbx.get(req.Start, c.conn) == nil {
		return nil, nil, k.refuseStart(c, "attach", req.Start, "no start of this connection's")
	}
	fd := int(c.files[0].Fd())
	pid, err := pidfdPid(fd)
	if err != nil {
		return nil, nil, k.refuseStart(c, "attach", req.Start, err.Error())
	}
	st, err := procstat.Read(pid)
	parent := st.PPID
	if err != nil {
		return nil, nil, k.refuseStart(c, "attach", req.Start, fmt.Sprintf("pid %d's parent cannot be learned: %v", pid, err))
	}
	if parent != c.conn.peer.PID {
		return nil, nil, k.refuseStart(c, "attach", req.Start, fmt.Sprintf("pid %d is not a child of the process that made the start", pid))
	}
	// What was read is pid's own only if the pidfd still names a live
	// process: then the pid was not another's.
	if err := unix.PidfdSendSignal(fd, 0, nil, 0); err != nil {
		return nil, nil, k.refuseStart(c, "attach", req.Start, fmt.Sprintf("pid %d is gone", pid))
	}
	dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	if !k.sbx.attach(req.Start, c.conn, pid, os.NewFile(uintptr(dup), "sandbox-pidfd")) {
		return nil, nil, k.refuseStart(c, "attach", req.Start, "the start ended, or has its sandbox already")
	}
	agent, _ := k.caps.Agent(req.Start)
	k.record(audit.Entry{Kind: audit.KindKernel, Peer: &c.conn.peer, Agent: agent, Start: req.Start, Request: "attach",
		Reason: fmt.Sprintf("the start's sandbox runs as pid %d", pid)})
	return &proto.Empty{}, nil, nil
}

// handleWatch answers when a start this connection made ends: with why
// when the kernel ended it (its sandbox is then killed), "stopping" when
// the kernel stops. lnk kills the sandbox on any answer, and on the
// connection's end.
func (k *Kernel) handleWatch(ctx context.Context, c *call, req *proto.StartRef) (*proto.WatchReply, []*os.File, error) {
	r := k.sbx.get(req.Start, c.conn)
	if r == nil {
		if why := c.conn.endedWhy(req.Start); why != "" {
			return &proto.WatchReply{Reason: why}, nil, nil // ended before the watch came
		}
		return nil, nil, k.refuseStart(c, "watch", req.Start, "no start of this connection's")
	}
	select {
	case <-r.ended:
		return &proto.WatchReply{Reason: r.reason}, nil, nil
	case <-c.conn.gone:
		return nil, nil, wire.Errorf(proto.CodeStopping, "the kernel is stopping")
	case <-ctx.Done(): // the connection went
		return nil, nil, ctx.Err()
	}
}

// handleEndAgent ends every start of an agent, whichever connection made
// it: each start's sandbox is killed through its pidfd and its
// capabilities revoked; one revocation line each in the audit log.
func (k *Kernel) handleEndAgent(ctx context.Context, c *call, req *proto.EndAgentRequest) (*proto.EndAgentReply, []*os.File, error) {
	if !agentName().MatchString(req.Agent) || req.Agent == "." || req.Agent == ".." {
		k.refuse(audit.Entry{Peer: &c.conn.peer, Agent: req.Agent, Request: "end-agent", Reason: "agent name is not letters, digits, '-', '_' and '.'"})
		return nil, nil, wire.Errorf(proto.CodeRefused, "agent name %q is not letters, digits, '-', '_' and '.'", req.Agent)
	}
	starts := k.sbx.ofAgent(req.Agent)
	order := make([]uint64, 0, len(starts))
	for s := range starts {
		order = append(order, s)
	}
	sort.Slice(order, func(i, j int) bool { return order[i] < order[j] })
	reply := &proto.EndAgentReply{}
	why := "agent " + req.Agent + " was ended (lnk kernel end " + req.Agent + ")"
	for _, start := range order {
		starts[start].markEnded(start, why) // its connection's End is told why
		killed := k.sbx.end(start, why)
		n := k.endStart(start)
		reason := why
		if killed != 0 {
			reason += fmt.Sprintf("; its sandbox, pid %d, killed", killed)
			reply.Killed++
		}
		k.record(audit.Entry{Kind: audit.KindRevoke, Peer: &c.conn.peer, Agent: req.Agent, Start: start, Count: n, Reason: reason})
		reply.Starts++
		reply.Revoked += n
	}
	return reply, nil, nil
}

// refuseStart logs a refusal of a sandbox request once and returns it.
func (k *Kernel) refuseStart(c *call, request string, start uint64, why string) error {
	agent, _ := k.caps.Agent(start)
	k.refuse(audit.Entry{Peer: &c.conn.peer, Agent: agent, Start: start, Request: request, Reason: why})
	return wire.Errorf(proto.CodeRefused, "%s of start %d: %s", request, start, why)
}

package kernel

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/helpers/netbroker"
	"lnk.dev/lnk/internal/audit"
	"lnk.dev/lnk/internal/wire"
	"lnk.dev/lnk/kernel/proto"
	"lnk.dev/lnk/kernel/sandbox"
)

// An unconfined start is lnk agent harness run with the agent's sandbox
// off (security.txt, "Running a command in its sandbox": it warns and
// runs the command unconfined, as the harness runs, beside a proxy of
// its own). The kernel reads the agent's setting itself and refuses the
// start unless its sandbox is off, grants no folder (nothing is bound:
// the command reaches the owner's files as the owner does), and its one
// broker is the proxy, lnk-netbroker confined as every proxy is, as its
// child: it listens on a free port of 127.0.0.1 the kernel makes, with
// no sealed secret and no tool bridge. lnk attaches the command's pidfd
// as a sandbox's, so lnk kernel status lists it and lnk kernel end (lnk
// agent stop) kills it and revokes the start.

// sandboxOff refuses an unconfined start of an agent whose sandbox is
// on, or whose setting cannot be read (fail closed).
func sandboxOff(home string, req *proto.StartRequest) error {
	a, err := caps.LoadAgent(home, req.Agent)
	if err != nil {
		return fmt.Errorf("agent %s: %w", req.Agent, err)
	}
	off, err := a.SandboxOff(home)
	if err != nil {
		return err
	}
	if !off {
		return fmt.Errorf("agent %s runs in its sandbox (its no-sandbox setting is off): a start with no sandbox is refused", req.Agent)
	}
	return nil
}

// unconfinedProxy starts an unconfined start's proxy on a loopback port
// (handleRunProxy, once its lifeline is taken): the relay channel the
// caller sent stays unused, as no sandbox hands a listener.
func (k *Kernel) unconfinedProxy(ctx context.Context, c *call, req *proto.RunProxyRequest, r *startRun) (*proto.RunProxyReply, []*os.File, error) {
	comp := r.comp
	bin, err := k.brokerPath("lnk-netbroker")
	if err != nil {
		k.refuse(audit.Entry{Peer: &c.conn.peer, Agent: req.Agent, Start: req.Start, Request: "run-proxy", Route: "proxy", Reason: err.Error()})
		return nil, nil, wire.Errorf(proto.CodeFailed, "the start's proxy: %v", err)
	}
	grants, err := json.Marshal(sandbox.NetGrants(comp))
	if err != nil {
		return nil, nil, err
	}
	reply := &proto.RunProxyReply{Placeholders: map[string]string{}, Sealed: []string{}, Secret: netbroker.NewSecret()}
	told, err := json.Marshal(netbroker.Told{Secret: reply.Secret})
	if err != nil {
		return nil, nil, err
	}
	ln, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, nil, fmt.Errorf("the proxy's port: %w", err)
	}
	lf, err := ln.File() // a copy, close-on-exec
	reply.Port = uint16(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("the proxy's port: %w", err)
	}
	args := []string{"--home", comp.Home, "--listen-fd", "4"} // fd 3 is the kernel's channel
	if req.Degraded {
		args = append(args, "--degraded")
	}
	if err := k.addProxy(ctx, req.Start, r, bin, args, append(append(grants, '\n'), append(told, '\n')...), []*os.File{lf}); err != nil {
		return nil, nil, err
	}
	reply.Proxy = true
	return reply, nil, nil
}

package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/helpers/keybroker"
	"lnk.dev/lnk/helpers/netbroker"
	"lnk.dev/lnk/internal/audit"
	"lnk.dev/lnk/internal/wire"
	"lnk.dev/lnk/kernel/proto"
	"lnk.dev/lnk/kernel/sandbox"
)

// handleRunProxy starts the proxy of an agent's start (lnk-netbroker, as
// the kernel's child) and, when the agent holds sealed secrets, the key
// broker that hands it their values (lnk-keybroker --agent ID, for that
// agent alone). The proxy is handed its socket (made here), the relay
// channel's receiving end, the key broker's channel and the sending end
// of the start's tool bridge's channel (made at RunBridge, before; never
// the caller's). The caller is told its socket, secret and placeholders,
// and keeps only the relay's sending end. The lifeline the caller sent is
// held until the start's brokers end.
func (k *Kernel) handleRunProxy(ctx context.Context, c *call, req *proto.RunProxyRequest) (*proto.RunProxyReply, []*os.File, error) {
	refuse := func(why string) error {
		k.refuse(audit.Entry{Peer: &c.conn.peer, Agent: req.Agent, Start: req.Start, Request: "run-proxy", Reason: why})
		return wire.Errorf(proto.CodeRefused, "%s", why)
	}
	if req.ToolBridge || len(c.files) == 3 {
		// The bridge is the kernel's child (RunBridge): a caller's own
		// would parse what the sandbox sends outside every confinement.
		return nil, nil, refuse("a tool bridge's channel from the caller: the start's tool bridge is the kernel's (run-bridge)")
	}
	if err := checkPipeWriter(c.files[0]); err != nil {
		return nil, nil, refuse("the lifeline: " + err.Error())
	}
	for i := 1; i < len(c.files); i++ {
		if err := checkChannel(c.files[i]); err != nil {
			return nil, nil, refuse("a channel: " + err.Error())
		}
	}
	r, err := k.runOf(c, "run-proxy", req.Agent, req.Start)
	if err != nil {
		return nil, nil, err
	}
	r.mu.Lock()
	if r.proxied {
		r.mu.Unlock()
		return nil, nil, refuse("the start has its proxy already")
	}
	r.proxied = true
	r.life = c.take(0)
	r.mu.Unlock()
	if r.unconfined {
		return k.unconfinedProxy(ctx, c, req, r) // start_unconfined.go
	}
	comp := r.comp
	reply := &proto.RunProxyReply{Placeholders: map[string]string{}, Sealed: []string{}}

	keys, names, err := k.runSealed(ctx, req, r)
	if err != nil {
		return nil, nil, err
	}
	reply.Sealed = names
	if comp.NetworkMode == "host" || (!sandbox.NeedsProxy(comp) && len(names) == 0) {
		// No proxy: none is needed, or none may run ([network] mode =
		// "host"), and the caller refuses a run whose sealed secrets
		// nothing would add. The key broker is not kept.
		if keys != nil {
			keys.Close()
		}
		if len(names) > 0 {
			k.bro.remove(runName("keys", req.Start))
		}
		return reply, nil, nil
	}
	bin, err := k.brokerPath("lnk-netbroker")
	if err != nil {
		if keys != nil {
			keys.Close()
		}
		k.refuse(audit.Entry{Peer: &c.conn.peer, Agent: req.Agent, Start: req.Start, Request: "run-proxy", Route: "proxy", Reason: err.Error()})
		return nil, nil, wire.Errorf(proto.CodeFailed, "the start's proxy: %v", err)
	}
	grants, err := json.Marshal(sandbox.NetGrants(comp))
	if err != nil {
		return nil, nil, err
	}
	reply.Secret = netbroker.NewSecret()
	for _, n := range names {
		reply.Placeholders[n] = netbroker.NewPlaceholder(n)
	}
	told, err := json.Marshal(netbroker.Told{Secret: reply.Secret, Placeholders: reply.Placeholders})
	if err != nil {
		return nil, nil, err
	}
	sock, err := netbroker.Listen(comp.Home, comp.AgentID)
	if err != nil {
		if keys != nil {
			keys.Close()
		}
		return nil, nil, fmt.Errorf("the proxy's socket: %w", err)
	}
	r.mu.Lock()
	r.sock = sock
	r.mu.Unlock()
	reply.Socket = sock.Path

	// Handed fds, numbered from 4 (fd 3 is the kernel's channel): the
	// tool bridge's channel, the key broker's, the socket, the relay.
	args := []string{"--home", comp.Home}
	if req.Degraded {
		args = append(args, "--degraded")
	}
	var files []*os.File
	fd := func(f *os.File) string {
		files = append(files, f)
		return strconv.Itoa(3 + len(files))
	}
	r.mu.Lock()
	bridge := r.bridgeSend
	r.bridgeSend = nil
	r.mu.Unlock()
	if bridge != nil {
		args = append(args, "--tool-bridge-fd", fd(bridge))
	}
	if keys != nil {
		args = append(args, "--sealed", strings.Join(names, ","), "--keys-fd", fd(keys))
	}
	args = append(args, "--listen-fd", fd(sock.File))
	sock.File = nil // the proxy alone accepts on it
	args = append(args, "--relay-fd", fd(c.take(1)))
	if err := k.addProxy(ctx, req.Start, r, bin, args, append(append(grants, '\n'), append(told, '\n')...), files); err != nil {
		return nil, nil, err
	}
	reply.Proxy = true
	return reply, nil, nil
}

// addProxy starts the start's proxy, lnk-netbroker at bin with args,
// its grants and what its sandbox is told on stdin and files from fd 4,
// as the start's broker net/START, its lines logged under the start's
// name (a harness's run's own). The files are closed either way.
func (k *Kernel) addProxy(ctx context.Context, start uint64, r *startRun, bin string, args []string, stdin []byte, files []*os.File) error {
	name := runName("net", start)
	_, err := k.addBroker(ctx, start, r, BrokerSpec{
		Name: name, Path: bin, Args: args, Stdin: stdin,
		Files: func(*Kernel) ([]*os.File, error) {
			fs := files
			files = nil
			if fs == nil {
				return nil, errors.New("a start's proxy is started once")
			}
			return fs, nil
		},
		Log: k.brokerLog(r, name, "lnk-netbroker: ", func(line []byte) (audit.Entry, bool) {
			return sandbox.ProxyLogEntry(line, r.comp.LogName())
		}),
		Connect: func(_ context.Context, ch *os.File) (io.Closer, error) { return chanCloser{ch}, nil },
	})
	wire.CloseFiles(files) // if it never started
	return err
}

// runSealed starts the key broker of the start's agent when it holds
// sealed secrets, and has it take the proxy's channel: their names, and
// the proxy's end of that channel (nil, nil when it holds none).
func (k *Kernel) runSealed(ctx context.Context, req *proto.RunProxyRequest, r *startRun) (*os.File, []string, error) {
	comp := r.comp
	if comp.AgentID == "" {
		return nil, []string{}, nil
	}
	bin, err := k.brokerPath("lnk-keybroker")
	if err != nil {
		k.refuse(audit.Entry{Agent: req.Agent, Start: req.Start, Request: "run-proxy", Route: "key broker", Reason: err.Error()})
		return nil, nil, wire.Errorf(proto.CodeFailed, "the start's key broker: %v", err)
	}
	probe, err := keybroker.StartFiles(comp.Home)
	if err != nil {
		return nil, nil, err
	}
	wire.CloseFiles(probe)
	if len(probe) < 2 { // no secrets.toml: no secret to serve
		return nil, []string{}, nil
	}
	args := []string{"--agent", comp.AgentID}
	if req.Degraded {
		args = append(args, "--degraded")
	}
	name := runName("keys", req.Start)
	cl, err := k.addBroker(ctx, req.Start, r, BrokerSpec{
		Name: name, Path: bin, Args: args,
		Files: func(k *Kernel) ([]*os.File, error) { return keybroker.StartFiles(comp.Home) },
		Log: k.brokerLog(r, name, "lnk-keybroker: ", func(line []byte) (audit.Entry, bool) {
			e := audit.Entry{Kind: audit.KindUse, Agent: comp.LogName(), Request: "sealed secret", Route: "keybroker", Reason: string(line)}
			if strings.HasPrefix(string(line), "refused") {
				e.Kind = audit.KindRefuse
			}
			return e, true
		}),
		Connect: func(ctx context.Context, ch *os.File) (io.Closer, error) {
			w, err := wire.NewClient(ch)
			if err != nil {
				return nil, err
			}
			return keyClient{keybroker.NewClient(w), w}, nil
		},
	})
	if err != nil {
		return nil, nil, err
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "netbroker-keys"), os.NewFile(uintptr(fds[1]), "keybroker-net")
	names, err := cl.(keyClient).NetChannel(ctx, comp.AgentID, theirs)
	theirs.Close()
	if err != nil {
		ours.Close()
		return nil, nil, brokerErr("key", err)
	}
	if len(names) == 0 {
		ours.Close()
		k.bro.remove(name)
		return nil, []string{}, nil
	}
	return ours, names, nil
}

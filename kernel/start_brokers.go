package kernel

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/helpers/netbroker"
	"lnk.dev/lnk/internal/audit"
	"lnk.dev/lnk/internal/connpass"
	"lnk.dev/lnk/internal/wire"
	"lnk.dev/lnk/kernel/proto"
)

// A start the kernel compiled (StartRequest.Compile) may have brokers of
// its own, the kernel's children like every broker: its proxy
// (lnk-netbroker) and the key broker of its sealed secrets (start_proxy.go),
// its ask broker and the ask broker's dialog launcher (start_ask.go). The
// caller is handed only the channels its sandbox and its tool bridge use.
//
// They live exactly as long as the start: its end (End, its connection
// closing, the kernel stopping) stops them, newest first. They are never
// started again: the proxy was handed the sandbox's listener once, and
// the key broker's channel to it, which a new one could not be. So one
// that dies ends its start closed instead: the start's capabilities are
// revoked, its other brokers stopped, and its lifeline (a pipe the
// caller handed, RunProxy) gets the reason and is closed, on which the
// caller ends its sandbox. A sandbox's only way out was its proxy: with
// the proxy gone its connections are refused, never let through.

// startRun is the brokers of one compiled start.
type startRun struct {
	comp *caps.Compiled // the grants the kernel compiled at Start
	// unconfined: a harness's run with the agent's sandbox off
	// (start_unconfined.go): its proxy listens on a loopback port.
	unconfined bool

	mu      sync.Mutex
	brokers []string          // supervised for this start, in the order started
	life    *os.File          // the lifeline's write end (RunProxy), closed at the end
	sock    *netbroker.Socket // the proxy's socket, removed at the end
	proxied bool              // RunProxy was answered
	asked   bool              // RunAsk was answered
	bridged bool              // RunBridge was asked
	// bridgeSend is the sending end of the tool bridge's channel until
	// the proxy takes it (RunProxy).
	bridgeSend *os.File
	// servers counts the tool servers the kernel started for the start's
	// bridge that still run; maxServers caps them (bridge_tools.go).
	servers, maxServers int
	ended               bool
	why                 string // why it ends, when not the start's own end
	said                map[string]*brokerSaid
	// launcher is the dialog launcher's channel until the ask broker
	// takes it (start_ask.go).
	launcher *os.File
}

// beginRun records the grants a compiled start runs under.
func (k *Kernel) beginRun(start uint64, comp *caps.Compiled, unconfined bool) {
	k.mu.Lock()
	k.runs[start] = &startRun{comp: comp, unconfined: unconfined}
	k.mu.Unlock()
}

// runOf is c's compiled start named by agent and start, refused unless
// this connection made it and it has not ended.
func (k *Kernel) runOf(c *call, request, agent string, start uint64) (*startRun, error) {
	refuse := func(why string) error {
		k.refuse(audit.Entry{Peer: &c.conn.peer, Agent: agent, Start: start, Request: request, Reason: why})
		return wire.Errorf(proto.CodeRefused, "start %d of agent %s: %s", start, agent, why)
	}
	if a, ok := k.caps.Agent(start); !ok || a != agent {
		return nil, refuse("no such start of this agent's")
	}
	if !c.conn.ownsStart(start) {
		return nil, refuse("the start was made on another connection")
	}
	k.mu.Lock()
	r := k.runs[start]
	k.mu.Unlock()
	if r == nil {
		return nil, refuse("the kernel compiled no grants for it (start it with compile)")
	}
	r.mu.Lock()
	ended := r.ended
	r.mu.Unlock()
	if ended {
		return nil, refuse("its brokers have ended")
	}
	return r, nil
}

// addBroker supervises one of the start's brokers; its death ends the
// start. It returns once the broker is up (its client), or why not.
func (k *Kernel) addBroker(ctx context.Context, start uint64, r *startRun, s BrokerSpec) (io.Closer, error) {
	s.OnExit = func(err error) { k.runBrokerDied(start, s.Name, err) }
	r.mu.Lock()
	if r.ended {
		r.mu.Unlock()
		return nil, wire.Errorf(proto.CodeRefused, "start %d has ended", start)
	}
	r.brokers = append(r.brokers, s.Name)
	r.mu.Unlock()
	k.bro.add(s)
	cl, err := k.bro.client(ctx, s.Name)
	if err != nil {
		return nil, err
	}
	return cl, nil
}

// runBrokerDied ends the start closed when one of its brokers died: the
// caller's lifeline says why, every capability is revoked.
func (k *Kernel) runBrokerDied(start uint64, name string, err error) {
	k.mu.Lock()
	r := k.runs[start]
	k.mu.Unlock()
	if r == nil {
		return
	}
	r.mu.Lock()
	ended := r.ended
	r.mu.Unlock()
	if ended {
		return // its start is ending: the kernel stopped it
	}
	why := fmt.Sprintf("its broker %s ended (%v)", name, err)
	if last := r.lastSaid(name); last != "" {
		why += ": " + last
	}
	r.mu.Lock()
	r.why = why
	r.mu.Unlock()
	agent, _ := k.caps.Agent(start)
	// As an end of its agent does (handleEndAgent): the connection's End
	// and its watch are told why, and the sandbox is killed through its
	// pidfd, here, not left to lnk.
	closed := "the start ended closed: " + why
	if c := k.sbx.connOf(start); c != nil {
		c.markEnded(start, closed)
	}
	if pid := k.sbx.end(start, closed); pid != 0 {
		closed += fmt.Sprintf("; its sandbox, pid %d, killed", pid)
	}
	n := k.endStart(start)
	k.record(audit.Entry{Kind: audit.KindRevoke, Agent: agent, Start: start, Count: n, Reason: closed})
}

// endRun stops a start's brokers, newest first, and removes its proxy's
// socket; then it tells the lifeline why (r.why when set) and closes it:
// once the caller sees it close, nothing of the start runs.
func (k *Kernel) endRun(start uint64, why string) {
	k.mu.Lock()
	r := k.runs[start]
	delete(k.runs, start)
	k.mu.Unlock()
	if r == nil {
		return
	}
	r.mu.Lock()
	r.ended = true
	names, life, sock, launcher, bridgeSend := r.brokers, r.life, r.sock, r.launcher, r.bridgeSend
	r.brokers, r.life, r.sock, r.launcher, r.bridgeSend = nil, nil, nil, nil, nil
	if r.why != "" {
		why = r.why
	}
	r.mu.Unlock()
	for i := len(names) - 1; i >= 0; i-- {
		k.bro.remove(names[i])
	}
	r.drainLogs() // their last lines logged before the lifeline says the end
	if launcher != nil {
		launcher.Close()
	}
	if bridgeSend != nil {
		bridgeSend.Close()
	}
	if sock != nil {
		sock.Remove()
	}
	if life != nil {
		// A short line on a pipe: never blocks. A caller gone makes
		// it fail (EPIPE), which changes nothing.
		fmt.Fprintf(life, "%s\n", strings.ReplaceAll(why, "\n", " "))
		life.Close()
	}
}

// ownsStart reports whether this connection made start.
func (c *conn) ownsStart(start uint64) bool {
	c.smu.Lock()
	defer c.smu.Unlock()
	return c.starts[start]
}

// take takes the request's i-th fd from the call (which would close it
// after the handler): the handler owns it now.
func (c *call) take(i int) *os.File {
	f := c.files[i]
	c.files[i] = nil
	return f
}

// checkPipeWriter refuses an fd that is not the write end of a pipe.
func checkPipeWriter(f *os.File) error {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFIFO {
		return fmt.Errorf("it is no pipe")
	}
	fl, err := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0)
	if err != nil {
		return err
	}
	if fl&unix.O_ACCMODE != unix.O_WRONLY {
		return fmt.Errorf("it is not a pipe's write end")
	}
	return nil
}

// checkChannel refuses an fd that is not a SOCK_SEQPACKET unix socket.
func checkChannel(f *os.File) error { return connpass.IsChannel(int(f.Fd())) }

// chanCloser is a broker's channel as the supervisor holds it: closing it
// ends a broker that serves nothing on it (the proxy).
type chanCloser struct{ f *os.File }

func (c chanCloser) Close() error { return c.f.Close() }

// runName names a start's broker.
func runName(kind string, start uint64) string { return kind + "/" + strconv.FormatUint(start, 10) }

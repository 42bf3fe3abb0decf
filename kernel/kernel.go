package kernel

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/audit"
	"lnk.dev/lnk/internal/peercred"
	"lnk.dev/lnk/internal/refusal"
	"lnk.dev/lnk/internal/wire"
	"lnk.dev/lnk/kernel/proto"
)

// Options configure a kernel.
type Options struct {
	Home    string        // the owner's HOME
	Drain   time.Duration // how long in-flight requests may run after SIGTERM (default 10 s)
	Testing bool          // serve the Hold request (LNK_KERNEL_TESTING=1)
	BinDir  string        // where the broker binaries are (default: beside this program)
	// Ready, if set, is called once the socket listens.
	Ready func(socket string)
	// Logf gets the kernel's own messages (default: stderr).
	Logf func(format string, a ...any)
	// Brokers are the kernel-wide brokers to start and keep up (nil: the
	// key broker, when lnk-keybroker is in BinDir).
	Brokers []BrokerSpec
	// Tools starts the tools' servers a start's tool bridge asks for
	// (bridge_tools.go); nil: a start gets no tool bridge.
	Tools ToolServers
}

// Kernel is one running kernel.
type Kernel struct {
	opts   Options
	roots  *Roots
	log    *audit.Log
	caps   *CapTable
	routes map[wire.Type]*wire.Route
	ln     *listener
	bro    *brokers

	started      time.Time
	requests     atomic.Uint64
	draining     atomic.Bool
	drainExpired chan struct{}
	stopOnce     sync.Once
	stopCh       chan struct{}

	mu    sync.Mutex         // guards conns, agentDirs and the drain flag's setting
	fsMu  sync.Mutex         // orders a start's revocation before a lazy start of its file broker (fsClient)
	conns map[*conn]struct{} // open connections
	// toolServers are the tools' servers it started for its bridges:
	// the owner's clients, as lnk is (bridge_tools.go).
	toolServers serverSet
	connWG      sync.WaitGroup
	// agentDirs hold each running start's agent folder
	// (~/Link/Agents/<agent>), a root of its own while the start runs.
	agentDirs map[uint64]*os.File
	// agentIDs are the agent IDs whose key the key broker made, by start.
	agentIDs map[uint64]string
	// runs are the compiled starts' brokers, by start (start_brokers.go).
	runs map[uint64]*startRun
	// sbx are the starts' sandboxes (sandboxes.go).
	sbx sandboxes
}

// Run runs a kernel until ctx ends, SIGTERM or SIGINT arrives, or a stop
// request is answered; then it stops in order (see the package doc).
func Run(ctx context.Context, opts Options) error {
	if opts.Drain <= 0 {
		opts.Drain = 10 * time.Second
		if opts.Testing {
			// A test holds a request in flight by an event; on a loaded
			// machine the bound must never be what ends it.
			opts.Drain = 60 * time.Second
		}
	}
	if opts.Logf == nil {
		opts.Logf = func(f string, a ...any) { fmt.Fprintf(os.Stderr, "lnk kernel: "+f+"\n", a...) }
	}
	syscall.Umask(0o077)
	// It holds every capability, and what each start's proxy is told (its
	// secret): out of core dumps and out of reach of the owner's other
	// processes (/proc/PID/mem, ptrace), as lnk is. Its brokers are
	// dumpable again once they exec, and each says for itself.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_DUMPABLE): %w", err)
	}
	if err := markInheritedCloexec(); err != nil {
		return err
	}
	roots, err := OpenRoots(opts.Home)
	if err != nil {
		return err
	}
	defer roots.Close()
	logDir, err := audit.OpenDir(roots.Lnk, true)
	if err != nil {
		return err
	}
	log, err := audit.Open(logDir, audit.Options{})
	if err != nil {
		return err
	}
	defer log.Close()
	ln, err := listen(roots.Run)
	if err != nil {
		return err
	}
	k := &Kernel{opts: opts, roots: roots, log: log, caps: NewCapTable(), ln: ln,
		started: time.Now(), drainExpired: make(chan struct{}), stopCh: make(chan struct{}),
		conns: map[*conn]struct{}{}, agentDirs: map[uint64]*os.File{}, agentIDs: map[uint64]string{},
		runs: map[uint64]*startRun{}}
	k.routes = k.table()
	k.bro = newBrokers(k)
	k.record(audit.Entry{Kind: audit.KindKernel, Reason: fmt.Sprintf("kernel started, pid %d", os.Getpid())})
	k.bro.startAll()

	sigc := make(chan os.Signal, 2)
	signal.Notify(sigc, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sigc)

	acceptDone := make(chan struct{})
	go func() { defer close(acceptDone); k.accept(ctx) }()
	if opts.Ready != nil {
		opts.Ready(procPath(roots.Run, SocketName))
	}
	why := "stop request"
	select {
	case <-ctx.Done():
		why = "context ended"
	case s := <-sigc:
		why = s.String()
	case <-k.stopCh:
	}
	k.shutdown(why)
	<-acceptDone
	return nil
}

// Stop asks the kernel to stop, as a stop request does.
func (k *Kernel) Stop() { k.stopOnce.Do(func() { close(k.stopCh) }) }

// shutdown stops in order: no new connection; every connection shut for
// reading; in-flight requests answered (bounded by Drain); brokers
// stopped; capabilities revoked; socket removed.
func (k *Kernel) shutdown(why string) {
	k.record(audit.Entry{Kind: audit.KindKernel, Reason: "kernel stopping: " + why})
	k.mu.Lock()
	k.draining.Store(true)
	k.ln.ln.Close()
	for c := range k.conns {
		c.drain()
	}
	k.mu.Unlock()
	timer := time.AfterFunc(k.opts.Drain, func() { close(k.drainExpired) })
	k.connWG.Wait()
	timer.Stop()
	k.mu.Lock()
	var started []uint64
	for s := range k.agentIDs {
		started = append(started, s)
	}
	k.mu.Unlock()
	for _, s := range started {
		k.dropAgentKey(s)
	}
	k.bro.stopAll()
	k.caps.RevokeAll()
	k.mu.Lock()
	for s, d := range k.agentDirs {
		d.Close()
		delete(k.agentDirs, s)
	}
	k.mu.Unlock()
	k.ln.remove()
	k.record(audit.Entry{Kind: audit.KindKernel, Reason: "kernel stopped"})
}

// accept takes connections until the listener closes.
func (k *Kernel) accept(ctx context.Context) {
	for {
		uc, err := k.ln.ln.AcceptUnix()
		if err != nil {
			if k.draining.Load() || errors.Is(err, os.ErrClosed) {
				return
			}
			k.opts.Logf("accept: %v", err)
			time.Sleep(10 * time.Millisecond)
			continue
		}
		// SO_PEERCRED and SO_PEERPIDFD (Linux 6.5+), read through
		// internal/peercred: a pidfd held for the connection's life pins
		// the peer's identity, so its pid is never another's.
		cred, err := peercred.Of(uc)
		if err != nil {
			uc.Close()
			continue
		}
		peer := audit.Peer{UID: int(cred.Uid), PID: int(cred.Pid)}
		if int(cred.Uid) != os.Geteuid() {
			k.refuse(audit.Entry{Peer: &peer, Reason: fmt.Sprintf("connection from uid %d, not the owner's", cred.Uid)})
			uc.Close()
			continue
		}
		pidfd := peercred.PidFD(uc)
		f, err := uc.File()
		uc.Close()
		if err != nil {
			k.opts.Logf("accept: %v", err)
			if pidfd != nil {
				pidfd.Close()
			}
			continue
		}
		f.Fd() // Fd puts it in blocking mode: its reader waits in recvmsg
		// Only the owner's own clients: not a process Link confined
		// (a compromised broker or proxy), whatever its uid.
		if why := confinedPeer(int(cred.Pid), pidfd, k.toolServers.has); why != "" {
			k.refuse(audit.Entry{Peer: &peer, Reason: "connection from pid " + strconv.Itoa(int(cred.Pid)) + ", not the owner's own client: " + why})
			if pidfd != nil {
				pidfd.Close()
			}
			f.Close()
			continue
		}
		k.mu.Lock()
		if k.draining.Load() {
			k.mu.Unlock()
			f.Close()
			if pidfd != nil {
				pidfd.Close()
			}
			return
		}
		c, err := k.newConn(f, peer, pidfd)
		if err != nil {
			k.mu.Unlock()
			k.opts.Logf("accept: %v", err)
			if pidfd != nil {
				pidfd.Close()
			}
			continue
		}
		k.conns[c] = struct{}{}
		k.connWG.Add(1)
		k.mu.Unlock()
		go func() {
			defer k.connWG.Done()
			c.serve(ctx)
			k.mu.Lock()
			delete(k.conns, c)
			k.mu.Unlock()
		}()
	}
}

// record appends e to the audit log; a log that fails is said on stderr.
func (k *Kernel) record(e audit.Entry) {
	if err := k.log.Write(e); err != nil {
		k.opts.Logf("audit log: %v", err)
	}
}

// refuse logs a refusal once, with its reason.
func (k *Kernel) refuse(e audit.Entry) {
	e.Kind = audit.KindRefuse
	k.record(e)
}

// dispatch runs one request's kernel part around its handler (serve):
// the capability it needs first, refused and logged once if it does not
// hold; then the handler; then the use (or the handler's refusal) in the
// audit log. What it returns is the answer the record server writes.
func (k *Kernel) dispatch(ctx context.Context, spec wire.Spec, needs need, cl *call, body any, serve func() ([]*os.File, error)) ([]*os.File, error) {
	k.requests.Add(1)
	if needs != needNothing {
		agent, hs := body.(capRef).CapRef()
		cp, dir, err := k.useCap(needs, agent, hs)
		if err != nil {
			k.refuse(audit.Entry{Peer: &cl.conn.peer, Agent: agent, Request: spec.Name, Cap: shortOf(hs), Reason: err.Error()})
			return nil, wire.Errorf(proto.CodeRefused, "%v", err)
		}
		cl.cap, cl.dir = cp, dir
		defer func() {
			if cl.dir != nil {
				cl.dir.Close()
			}
		}()
	}
	files, err := serve()
	if needs != needNothing {
		e := audit.Entry{Kind: audit.KindUse, Agent: cl.cap.Agent, Start: cl.cap.Start, Request: spec.Name,
			Cap: cl.cap.Handle.Short(), Rights: cl.cap.Rights.String(), Route: cl.cap.Route}
		if err != nil {
			// A refusal that names its rule is logged by it: a path
			// refused inside a folder is an argument, not for the log.
			e.Kind, e.Reason = audit.KindRefuse, err.Error()
			if rule := refusal.RuleOf(err); rule != "" {
				e.Reason = rule
			}
		}
		k.record(e)
	}
	return files, answerError(err)
}

// answerError is what the peer is told of a handler's error: a
// [*wire.Error] as its own code, any other refusal as "refused",
// anything else as "failed"; the message is the whole error.
func answerError(err error) error {
	var we *wire.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &we):
		return err
	}
	if _, ok := refusal.Of(err); ok {
		return wire.Errorf(proto.CodeRefused, "%v", err)
	}
	return &wire.Error{Code: proto.CodeFailed, Message: err.Error()}
}

// useCap looks up the capability a request names, with the rights needs.
func (k *Kernel) useCap(needs need, agent, hs string) (Cap, *os.File, error) {
	h, err := ParseHandle(hs)
	if err != nil {
		return Cap{}, nil, capRefused(err, shortOf(hs))
	}
	switch needs {
	case needRead:
		return k.caps.OpenDir(h, agent, RightRead)
	case needWrite:
		return k.caps.OpenDir(h, agent, RightWrite)
	}
	c, err := k.caps.Lookup(h, agent)
	return c, nil, err
}

// shortOf is what the log says of a handle as given: at most 8 characters.
func shortOf(hs string) string {
	if len(hs) > 8 {
		return hs[:8]
	}
	return hs
}

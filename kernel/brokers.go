package kernel

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"lnk.dev/lnk/internal/audit"
	"lnk.dev/lnk/internal/brokerproc"
	"lnk.dev/lnk/internal/wire"
	"lnk.dev/lnk/kernel/proto"
)

// BrokerSpec says how to start one broker.
type BrokerSpec struct {
	Name string
	Path string   // the binary
	Args []string // after argv[0]
	Env  []string // KEY=value added to brokerproc's fixed environment
	// Files returns the fds the broker is handed after its channel (fd 4,
	// 5, …), fresh for each start; the kernel closes them once it has.
	Files func(k *Kernel) ([]*os.File, error)
	// Connect wraps the broker's channel (it becomes the client's) and
	// runs the broker's start handshake. Default: a bare [wire.Client].
	Connect func(ctx context.Context, ch *os.File) (io.Closer, error)
	// Stdin, if set, is written to the broker's stdin (the proxy's grants).
	Stdin []byte
	// Log, if set, returns the broker's stderr for this start (the write
	// end of a pipe whose lines the kernel logs); closed once handed.
	Log func() (*os.File, error)
	// OnExit, if set, makes the broker one of a start's: it is never
	// started again (what it was handed, a sandbox's listener, cannot be
	// handed twice), and OnExit runs (in a goroutine of its own) when it
	// dies or fails to start, unless the kernel was stopping it.
	OnExit func(err error)
}

// The restart backoff: the first restart is at once; a broker that dies
// again within backoffReset of its start waits twice as long, up to
// backoffMax.
const (
	backoffFirst = 0
	backoffStep  = 20 * time.Millisecond
	backoffMax   = 5 * time.Second
	backoffReset = 10 * time.Second
	brokerWait   = 10 * time.Second // how long a request waits for a broker to be up
)

// broker is one supervised broker.
type broker struct {
	k    *Kernel
	spec BrokerSpec

	stop chan struct{} // closed to stop supervising it
	done chan struct{} // closed when its supervisor has returned

	mu       sync.Mutex
	cl       io.Closer // the broker's client; nil while down
	proc     *brokerproc.Proc
	up       chan struct{} // closed when cl is set; replaced when it dies
	restarts int
	stopping bool
}

// brokers are the kernel's broker children, by name: the kernel-wide
// ones of [Options].Brokers, and a file broker per running start from its first file request.
type brokers struct {
	k *Kernel

	mu      sync.Mutex
	byName  map[string]*broker
	stopped bool
}

func newBrokers(k *Kernel) *brokers {
	return &brokers{k: k, byName: map[string]*broker{}}
}

func (b *brokers) startAll() {
	specs := b.k.opts.Brokers
	if specs == nil {
		specs = b.k.defaultBrokers()
	}
	for _, s := range specs {
		b.add(s)
	}
}

// has reports whether a broker of that name is supervised.
func (b *brokers) has(name string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.byName[name] != nil
}

// add starts supervising a broker.
func (b *brokers) add(s BrokerSpec) {
	br := &broker{k: b.k, spec: s, up: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	b.mu.Lock()
	if b.stopped || b.byName[s.Name] != nil {
		b.mu.Unlock()
		return
	}
	b.byName[s.Name] = br
	b.mu.Unlock()
	go func() { defer close(br.done); br.supervise(br.stop) }()
}

// remove stops a broker and waits until it has ended.
func (b *brokers) remove(name string) {
	b.mu.Lock()
	br := b.byName[name]
	delete(b.byName, name)
	b.mu.Unlock()
	if br != nil {
		close(br.stop)
		<-br.done
	}
}

// stopAll closes every broker's channel, which ends it, and kills one
// that has not ended within two seconds.
func (b *brokers) stopAll() {
	b.mu.Lock()
	b.stopped = true
	var names []string
	for n := range b.byName {
		names = append(names, n)
	}
	b.mu.Unlock()
	for _, n := range names {
		b.remove(n)
	}
}

func (b *brokers) info() []proto.BrokerInfo {
	out := []proto.BrokerInfo{}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, br := range b.byName {
		br.mu.Lock()
		bi := proto.BrokerInfo{Name: br.spec.Name, Restarts: br.restarts}
		if br.proc != nil && br.cl != nil {
			bi.PID = br.proc.Pid()
		}
		br.mu.Unlock()
		out = append(out, bi)
	}
	return out
}

// client returns a live channel to the named broker, waiting (bounded)
// while it is being started again.
func (b *brokers) client(ctx context.Context, name string) (io.Closer, error) {
	b.mu.Lock()
	br, ok := b.byName[name]
	b.mu.Unlock()
	if !ok {
		return nil, wire.Errorf(proto.CodeBroker, "no %s broker runs in this kernel", name)
	}
	ctx, cancel := context.WithTimeout(ctx, brokerWait)
	defer cancel()
	for {
		br.mu.Lock()
		cl, up := br.cl, br.up
		br.mu.Unlock()
		if cl != nil {
			return cl, nil
		}
		select {
		case <-up:
		case <-br.done: // a start's broker that ended is not started again
			return nil, wire.Errorf(proto.CodeBroker, "the %s broker has ended", name)
		case <-ctx.Done():
			return nil, wire.Errorf(proto.CodeBroker, "the %s broker is not up", name)
		}
	}
}

// brokerErr turns a failed broker call into the caller's error: a dead
// broker is a broker error, never a hang.
func brokerErr(name string, err error) error {
	var we *wire.Error
	if errors.As(err, &we) {
		return err
	}
	if errors.Is(err, wire.ErrClosed) {
		return wire.Errorf(proto.CodeBroker, "the %s broker died mid-request; it is being started again", name)
	}
	return wire.Errorf(proto.CodeBroker, "the %s broker: %v", name, err)
}

// supervise starts the broker, and again each time it dies, until stop.
func (br *broker) supervise(stop <-chan struct{}) {
	delay := time.Duration(backoffFirst)
	for {
		started := time.Now()
		proc, cl, err := br.start()
		if err != nil && br.spec.OnExit != nil {
			br.exited(fmt.Errorf("did not start: %w", err))
			return
		}
		if err == nil {
			br.mu.Lock()
			br.proc, br.cl = proc, cl
			close(br.up)
			br.mu.Unlock()
			select {
			case <-proc.Done():
				err = fmt.Errorf("exited: %v", proc.Err())
			case <-stop:
				br.shutdown(proc, cl)
				return
			}
			br.mu.Lock()
			br.cl = nil
			br.up = make(chan struct{})
			br.restarts++
			br.mu.Unlock()
			cl.Close() // every call waiting on it gets ErrClosed
			if br.spec.OnExit != nil {
				br.exited(err)
				return
			}
		}
		if time.Since(started) > backoffReset {
			delay = backoffFirst
		}
		br.k.record(audit.Entry{Kind: audit.KindKernel, Route: br.spec.Name,
			Reason: fmt.Sprintf("broker %s %v; starting it again in %v", br.spec.Name, err, delay)})
		select {
		case <-time.After(delay):
		case <-stop:
			return
		}
		delay = min(max(2*delay, backoffStep), backoffMax)
	}
}

// exited logs a start's broker's end, which is never restarted, and
// runs its OnExit.
func (br *broker) exited(err error) {
	br.k.record(audit.Entry{Kind: audit.KindKernel, Route: br.spec.Name,
		Reason: fmt.Sprintf("broker %s %v; a start's broker is not started again: its start ends", br.spec.Name, err)})
	go br.spec.OnExit(err)
}

// start starts one instance and runs its handshake.
func (br *broker) start() (*brokerproc.Proc, io.Closer, error) {
	var files []*os.File
	if br.spec.Files != nil {
		fs, err := br.spec.Files(br.k)
		if err != nil {
			return nil, nil, fmt.Errorf("its files: %w", err)
		}
		files = fs
	}
	o := brokerproc.Options{Path: br.spec.Path, Args: br.spec.Args, Env: br.spec.Env, Files: files}
	if br.spec.Stdin != nil {
		o.Stdin = bytes.NewReader(br.spec.Stdin)
	}
	if br.spec.Log != nil {
		logw, err := br.spec.Log()
		if err != nil {
			wire.CloseFiles(files)
			return nil, nil, fmt.Errorf("its log: %w", err)
		}
		defer logw.Close() // the broker holds its own copy
		o.Log = logw
	}
	proc, err := brokerproc.Start(o)
	wire.CloseFiles(files)
	if err != nil {
		return nil, nil, err
	}
	connect := br.spec.Connect
	if connect == nil {
		connect = func(_ context.Context, ch *os.File) (io.Closer, error) { return wire.NewClient(ch) }
	}
	ctx, cancel := context.WithTimeout(context.Background(), brokerWait)
	cl, err := connect(ctx, proc.Chan)
	cancel()
	if err != nil {
		proc.Kill()
		return nil, nil, fmt.Errorf("handshake: %w", err)
	}
	return proc, cl, nil
}

// shutdown closes the channel (a broker ends when it does) and kills the
// broker if it has not ended within two seconds.
func (br *broker) shutdown(proc *brokerproc.Proc, cl io.Closer) {
	br.mu.Lock()
	br.stopping = true
	br.cl = nil
	br.mu.Unlock()
	cl.Close()
	select {
	case <-proc.Done():
	case <-time.After(2 * time.Second):
		proc.Kill()
	}
}

// handleBrokerHold (testing only) passes its fd to the test broker's hold.
func (k *Kernel) handleBrokerHold(ctx context.Context, c *call, _ *proto.Empty) (*proto.Empty, []*os.File, error) {
	cl, err := k.bro.client(ctx, "test")
	if err != nil {
		return nil, nil, err
	}
	if _, err := cl.(*wire.Client).Call(ctx, proto.TestBrokerHold, &proto.Empty{}, &proto.Empty{}, c.files[0]); err != nil {
		return nil, nil, brokerErr("test", err)
	}
	return &proto.Empty{}, nil, nil
}

// handleBrokerFDs (testing only) asks the test broker what it inherited.
func (k *Kernel) handleBrokerFDs(ctx context.Context, c *call, _ *proto.Empty) (*proto.FDsReply, []*os.File, error) {
	cl, err := k.bro.client(ctx, "test")
	if err != nil {
		return nil, nil, err
	}
	var r proto.FDsReply
	if _, err := cl.(*wire.Client).Call(ctx, proto.TestBrokerFDs, &proto.Empty{}, &r); err != nil {
		return nil, nil, brokerErr("test", err)
	}
	return &r, nil, nil
}

package kernel

import (
	"context"
	"errors"
	"fmt"
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
	// Hello, if set, is the broker's start handshake on its new channel.
	Hello func(ctx context.Context, k *Kernel, c *wire.Client) error
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

	mu       sync.Mutex
	cl       *wire.Client // nil while down
	proc     *brokerproc.Proc
	up       chan struct{} // closed when cl is set; replaced when it dies
	restarts int
	stopping bool
}

// brokers are the kernel's broker children, by name.
type brokers struct {
	k      *Kernel
	byName map[string]*broker
	stop   chan struct{}
	wg     sync.WaitGroup
}

func newBrokers(k *Kernel) *brokers {
	b := &brokers{k: k, byName: map[string]*broker{}, stop: make(chan struct{})}
	for _, s := range k.opts.Brokers {
		b.byName[s.Name] = &broker{k: k, spec: s, up: make(chan struct{})}
	}
	return b
}

func (b *brokers) startAll() {
	for _, br := range b.byName {
		b.wg.Add(1)
		go func() { defer b.wg.Done(); br.supervise(b.stop) }()
	}
}

// stopAll closes every broker's channel, which ends it, and kills one
// that has not ended within two seconds.
func (b *brokers) stopAll() {
	close(b.stop)
	b.wg.Wait()
}

func (b *brokers) info() []proto.BrokerInfo {
	out := []proto.BrokerInfo{}
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
func (b *brokers) client(ctx context.Context, name string) (*wire.Client, error) {
	br, ok := b.byName[name]
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

// start starts one instance and runs its handshake.
func (br *broker) start() (*brokerproc.Proc, *wire.Client, error) {
	var files []*os.File
	if br.spec.Files != nil {
		fs, err := br.spec.Files(br.k)
		if err != nil {
			return nil, nil, fmt.Errorf("its files: %w", err)
		}
		files = fs
	}
	proc, err := brokerproc.Start(brokerproc.Options{Path: br.spec.Path, Args: br.spec.Args, Env: br.spec.Env, Files: files})
	wire.CloseFiles(files)
	if err != nil {
		return nil, nil, err
	}
	cl, err := wire.NewClient(proc.Chan)
	if err != nil {
		proc.Kill()
		return nil, nil, err
	}
	if br.spec.Hello != nil {
		ctx, cancel := context.WithTimeout(context.Background(), brokerWait)
		err := br.spec.Hello(ctx, br.k, cl)
		cancel()
		if err != nil {
			cl.Close()
			proc.Kill()
			return nil, nil, fmt.Errorf("handshake: %w", err)
		}
	}
	return proc, cl, nil
}

// shutdown closes the channel (a broker ends when it does) and kills the
// broker if it has not ended within two seconds.
func (br *broker) shutdown(proc *brokerproc.Proc, cl *wire.Client) {
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

func (k *Kernel) handleRead(ctx context.Context, c *call, req *proto.FileRequest) (*proto.Empty, []*os.File, error) {
	return nil, nil, wire.Errorf(proto.CodeBroker, "the file broker is not available")
}

func (k *Kernel) handleWrite(ctx context.Context, c *call, req *proto.FileRequest) (*proto.Empty, []*os.File, error) {
	return nil, nil, wire.Errorf(proto.CodeBroker, "the file broker is not available")
}

// handleBrokerHold (testing only) passes its fd to the test broker's hold.
func (k *Kernel) handleBrokerHold(ctx context.Context, c *call, _ *proto.Empty) (*proto.Empty, []*os.File, error) {
	cl, err := k.bro.client(ctx, "test")
	if err != nil {
		return nil, nil, err
	}
	if _, err := cl.Call(ctx, proto.TestBrokerHold, &proto.Empty{}, &proto.Empty{}, c.files[0]); err != nil {
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
	if _, err := cl.Call(ctx, proto.TestBrokerFDs, &proto.Empty{}, &r); err != nil {
		return nil, nil, brokerErr("test", err)
	}
	return &r, nil, nil
}

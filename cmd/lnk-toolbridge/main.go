// Command lnk-toolbridge is one start's tool bridge (services/toolbridge)
// in a process of its own: the kernel's child, started confined for a
// start whose grants name tools (kernel/start_bridge.go), the one process
// that parses what the sandbox sends its tools.
//
// It takes: fd 3, its channel to the kernel (internal/wire: it asks for
// a granted tool's server there, proto.ToolStart and ToolDial, and the
// kernel starts it); fd 4, the receiving end of the proxy's tool-route
// channel (internal/connpass: each tool call's connection, passed on);
// fd 5, its channel to the start's ask broker (askbroker.AskSpec, …);
// fd 6, the tools' definitions folder ~/.lnk/sandbox/tools, the one
// folder it may read. On stdin: the start's grants, limits and the
// route's secret (proto.BridgeConfig), never on its command line. Each
// call's outcome is one JSON line on stderr (proto.BridgeEvent), which
// the kernel writes to the audit log with the start's agent.
//
// Before it reads anything it confines itself (confine.go): landlock to
// reading the definitions folder, no exec, no socket at all, and
// undumpable. Without landlock or seccomp it refuses to start unless
// given --degraded.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/helpers/askbroker"
	"lnk.dev/lnk/internal/brokerproc/child"
	"lnk.dev/lnk/internal/connpass"
	"lnk.dev/lnk/internal/wire"
	"lnk.dev/lnk/kernel/proto"
	"lnk.dev/lnk/services/owntools"
	"lnk.dev/lnk/services/toolbridge"
)

const (
	channelFD = child.ChannelFD // 3
	proxyFD   = 4
	askFD     = 5
	defsFD    = 6
	extraFDs  = 3
)

func main() {
	degraded := flag.Bool("degraded", false, "run without landlock or seccomp where the kernel lacks them")
	probe := flag.Bool("probe-confinement", false, "confine, then try what the confinement refuses, print each outcome and exit (for tests)")
	flag.Parse()
	if err := run(*degraded, *probe); err != nil {
		fmt.Fprintf(os.Stderr, "lnk-toolbridge: %s\n", err)
		os.Exit(1)
	}
}

// takeFDs takes the channel and the extra fds once: in the first run,
// closing any stray fd; after landlock's re-exec (a kernel without
// TSYNC) as they were left.
func takeFDs() error {
	n := 0
	if os.Getenv(landlockReexecMarker) == "" {
		_, extra, err := child.Channel(false)
		if err != nil {
			return err
		}
		n = len(extra)
	} else {
		var err error
		if n, err = strconv.Atoi(os.Getenv(child.EnvFDs)); err != nil {
			return fmt.Errorf("%s=%q is not a count of fds", child.EnvFDs, os.Getenv(child.EnvFDs))
		}
	}
	if n != extraFDs {
		return fmt.Errorf("was handed %d fds after its channel, wants %d: the proxy's channel (fd 4), the ask broker's (fd 5), the tools' folder (fd 6)", n, extraFDs)
	}
	return nil
}

func run(degraded, probe bool) error {
	logf := func(l string) { fmt.Fprintf(os.Stderr, "lnk-toolbridge: %s\n", l) }
	if err := takeFDs(); err != nil {
		return err
	}
	if err := confine([]int{channelFD, proxyFD, askFD, defsFD}, degraded, logf); err != nil {
		return err
	}
	// Out of core dumps and out of reach of the owner's other processes
	// (/proc/PID/mem, ptrace): it holds the route's secret and each
	// call's arguments. After landlock's re-exec, which would make it
	// dumpable again.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_DUMPABLE): %w", err)
	}
	if probe {
		return probeConfinement()
	}
	cfg, err := readConfig(os.Stdin)
	if err != nil {
		return fmt.Errorf("reading its grants on stdin: %w", err)
	}
	for _, fd := range []int{channelFD, proxyFD, askFD, defsFD} {
		unix.CloseOnExec(fd)
	}
	kc, err := wire.NewClient(os.NewFile(channelFD, "kernel"))
	if err != nil {
		return err
	}
	defer kc.Close()
	ac, err := wire.NewClient(os.NewFile(askFD, "ask"))
	if err != nil {
		return err
	}
	defer ac.Close()
	proxy, err := connpass.Channel(os.NewFile(proxyFD, "proxy"))
	if err != nil {
		return fmt.Errorf("fd %d: %w", proxyFD, err)
	}
	defer proxy.Close()
	unix.Close(defsFD) // its landlock rule holds the folder; a path opens it

	b, err := newBridge(cfg, kc, ac)
	if err != nil {
		return err
	}
	defer b.Close()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- (&toolbridge.Server{Bridge: b, Secret: cfg.Secret}).ServePassed(proxy) }()
	select {
	case err = <-served: // the proxy is gone
	case <-kc.Done(): // the kernel ends the bridge (the start's end), or is gone
	case <-ctx.Done():
	}
	return err
}

// readConfig reads the kernel's proto.BridgeConfig, strictly.
func readConfig(r io.Reader) (*proto.BridgeConfig, error) {
	b, err := io.ReadAll(io.LimitReader(r, 1<<20))
	if err != nil {
		return nil, err
	}
	defer clear(b) // the route's secret
	var cfg proto.BridgeConfig
	if err := wire.Unmarshal(b, &cfg); err != nil {
		return nil, err
	}
	if cfg.Secret == "" || cfg.Home == "" || cfg.Sandbox == "" || len(cfg.Grants) == 0 {
		return nil, errors.New("its secret, HOME, sandbox or grants are missing")
	}
	return &cfg, nil
}

// newBridge is the start's bridge: its servers the kernel's, its
// questions the ask broker's, each outcome a line for the kernel.
func newBridge(cfg *proto.BridgeConfig, kc, ac *wire.Client) (*toolbridge.Bridge, error) {
	idle := time.Duration(0)
	if cfg.Idle != "" {
		var err error
		if idle, err = time.ParseDuration(cfg.Idle); err != nil {
			return nil, fmt.Errorf("idle %q: %w", cfg.Idle, err)
		}
	}
	grants := map[string]caps.Tool{}
	for t, g := range cfg.Grants {
		grants[t] = caps.Tool{Allow: g.Allow, AskNone: g.AskNone}
	}
	asker := &askbroker.Remote{C: ac}
	enc := json.NewEncoder(os.Stderr) // one Write per line: lines never interleave
	return &toolbridge.Bridge{Agent: cfg.Agent, Grants: grants, Defs: owntools.Store{Home: cfg.Home, Bin: cfg.Bin, Own: caps.Agent{ID: cfg.OwnID, Name: cfg.OwnName}, PATH: cfg.Path},
		Asker: &toolbridge.OwnerAsker{Broker: asker, Sandbox: cfg.Sandbox},
		Log: func(e toolbridge.Event) {
			enc.Encode(proto.BridgeEvent{Tool: e.Tool, Call: e.Call, Outcome: e.Outcome})
		},
		OnRefusal:  func() { asker.CountRefusal(cfg.Sandbox) },
		Settings:   toolbridge.Settings{Sessions: cfg.Sessions, Idle: idle, Starts: cfg.Starts},
		AdaptProcs: true,
		Kernel:     &toolbridge.KernelChannel{C: kc}}, nil
}

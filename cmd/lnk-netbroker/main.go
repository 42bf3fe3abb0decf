// Command lnk-netbroker is one sandbox's filtering proxy (package
// helpers/netbroker) in a process of its own.
//
// It reads the sandbox's network grants (netbroker.Grants as JSON, at
// most 1 MiB, unknown fields refused: never caps.Compiled, which it does
// not link) on stdin, confines itself — landlock to
// the resolver's and CA files, any TCP port, and ~/.lnk/agents/.net only
// when it makes its own socket there (no --listen-fd); undumpable;
// seccomp with no exec and only inet sockets, no unix socket (it makes
// its own socket first), loaded once it has opened the rtnetlink socket
// on which it learns this machine's own addresses and their changes
// (netbroker.OwnWatch; it refuses to start without them) — then prints
// the socket's path on stdout and serves until SIGTERM or SIGINT, or
// until the process that started it is gone. Its log
// (one JSON line per connection) goes to stderr. Without landlock or
// seccomp it refuses to start unless given --degraded, and says so.
//
// With --listen-fd N, lnk has made the socket (netbroker.Listen) and
// hands it as fd N, listening already: lnk starts the sandbox at once,
// and what the sandbox sends waits in the socket's backlog until this
// process accepts it. lnk then also chooses the proxy's secret and the
// placeholders and writes them (netbroker.Told) on stdin after the
// grants, strictly decoded; this process prints nothing on stdout.
//
// Otherwise, after the socket's path it prints one JSON line (netbroker.Told): the
// proxy's own secret, the SOCKS5 password and sealed routes' path
// secret, and a placeholder per sealed secret. With --sealed NAMES (the
// sealed secrets granted to the agent) and --keys-fd N (its channel to
// lnk-keybroker, a SOCK_SEQPACKET socket) it serves their routes, taking
// each value from the keybroker at each request; never from argv, the
// environment or stdin. The system's CA files are readable for them.
//
// With --tool-bridge-fd N it passes each request on the tools' mcp route,
// its connection and the bytes read of it, to the sandbox's tool bridge
// on the channel handed to it as fd N (internal/connpass, a
// SOCK_SEQPACKET socket): it reaches the bridge through nothing else.
//
// With --relay-fd N it takes the sandbox's listener on 127.0.0.1, handed
// once by the sandbox's first stage on the channel at fd N (a
// SOCK_SEQPACKET socket only the two hold), and accepts the sandbox's
// connections on it as on its socket, holding the lifeline that came
// with it until it stops.
//
// Started by Link's kernel (internal/brokerproc: LNK_BROKER_FDS is set),
// fd 3 is the kernel's channel to it: it says nothing on it, and stops
// once the kernel closes it (the agent's start ended), as on SIGTERM.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/helpers/netbroker"
	"lnk.dev/lnk/internal/brokerproc/child"
	"lnk.dev/lnk/internal/connpass"
	"lnk.dev/lnk/internal/landlock"
)

func main() {
	home := flag.String("home", os.Getenv("HOME"), "the owner's HOME")
	degraded := flag.Bool("degraded", false, "run without landlock or seccomp where the kernel lacks them")
	bridge := flag.Int("tool-bridge-fd", 0, "the channel to the tool bridge (SOCK_SEQPACKET)")
	relay := flag.Int("relay-fd", 0, "the channel on which the sandbox hands its listener (SOCK_SEQPACKET)")
	flag.StringVar(&sealedNames, "sealed", "", "the sealed secrets granted, comma-separated; their values come from the keybroker at --keys-fd")
	flag.IntVar(&keysFD, "keys-fd", 0, "the channel to lnk-keybroker (SOCK_SEQPACKET)")
	flag.IntVar(&listenFD, "listen-fd", 0, "the proxy's listening socket, made by lnk; its secret and placeholders follow the grants on stdin")
	flag.Parse()
	if err := run(*home, *degraded, *bridge, *relay); err != nil {
		fmt.Fprintf(os.Stderr, "lnk-netbroker: %s\n", err)
		os.Exit(1)
	}
}

// netDirEnv carries the sockets' folder's fd across landlock's re-exec
// (on a kernel without landlock TSYNC), which opening HOME again could
// not survive: the domain no longer holds HOME. lnk, which starts this
// program already confined on such a kernel, hands it the same way.
const netDirEnv = netbroker.NetDirEnv

func run(home string, degraded bool, bridge, relay int) error {
	parent := os.Getppid() // before anything: see the end
	kernelCh, err := kernelChannel()
	if err != nil {
		return err
	}
	if err := checkChannelFD("--tool-bridge-fd", bridge); err != nil {
		return err
	}
	if err := checkChannelFD("--relay-fd", relay); err != nil {
		return err
	}
	prepareAttack(home) // only in a test's build (attack.go); nothing otherwise
	// Handed its socket (--listen-fd), the proxy needs no sockets'
	// folder: it holds none and its landlock leaves it out, so it can list
	// no agent's ID there. Else it makes its socket there itself.
	var netDir *os.File
	fd := -1
	if listenFD != 0 {
		if err := dropNetDir(); err != nil {
			return err
		}
	} else {
		var err error
		if netDir, err = openNetDir(home); err != nil {
			return err
		}
		defer netDir.Close()
		// Inheritable only for the re-exec, close-on-exec again after.
		fd = int(netDir.Fd())
		unix.FcntlInt(uintptr(fd), unix.F_SETFD, 0)
		os.Setenv(netDirEnv, strconv.Itoa(fd))
	}
	err = confineFiles(fd, degraded)
	if fd >= 0 {
		unix.CloseOnExec(fd)
	}
	if bridge > 0 {
		unix.CloseOnExec(bridge) // kept open across landlock's re-exec only
	}
	if relay > 0 {
		unix.CloseOnExec(relay) // likewise
	}
	if keysFD > 0 {
		unix.CloseOnExec(keysFD) // likewise
	}
	if listenFD > 0 {
		unix.CloseOnExec(listenFD) // likewise
	}
	if kernelCh != nil {
		unix.CloseOnExec(child.ChannelFD) // likewise
	}
	os.Unsetenv(netDirEnv)
	os.Unsetenv(envChannelTaken)
	if err != nil {
		return err
	}
	// Out of core dumps and out of reach of the owner's other processes
	// (/proc/PID/mem, ptrace): it holds the proxy's secret, and sealed
	// secrets' values while it adds them. After landlock's re-exec, which
	// would make it dumpable again.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_DUMPABLE): %w", err)
	}
	dec := json.NewDecoder(io.LimitReader(os.Stdin, 1<<20))
	c, err := netbroker.ReadGrants(dec)
	if err != nil {
		return fmt.Errorf("reading the grants on stdin: %w", err)
	}
	ln, told, err := starterSocket(dec)
	if err != nil {
		return err
	}
	// This machine's own addresses, learned (and kept current) on an
	// rtnetlink socket opened now: the filter below forbids opening one,
	// and is not widened for it (netbroker.OwnWatch says why). Where they
	// cannot be learned the proxy does not start, --degraded or not.
	ownAddrs, err := netbroker.WatchOwnAddrs()
	if err != nil {
		return err
	}
	defer ownAddrs.Close()
	// Without --listen-fd this process makes its own socket, now: its
	// filter lets it make no unix socket once loaded.
	var own *netbroker.Socket
	var r *netbroker.Running
	if ln == nil {
		if own, err = netbroker.ListenIn(netDir, home, c.AgentID); err != nil {
			return err
		}
		defer func() {
			if r == nil { // never served; else the proxy's Close removes it
				own.Remove()
			}
		}()
	}
	if err := loadFilter(); err != nil {
		if !degraded {
			return fmt.Errorf("seccomp: %w (--degraded runs without it)", err)
		}
		fmt.Fprintf(os.Stderr, "lnk-netbroker: degraded: no seccomp: %s\n", err)
	}
	sealed, err := sealedOptions()
	if err != nil {
		return err
	}
	attack(home, sealed) // only in a test's build (attack.go); nothing otherwise
	toolBridge, err := channel("--tool-bridge-fd", bridge)
	if err != nil {
		return err
	}
	relayCh, err := channel("--relay-fd", relay)
	if err != nil {
		return err
	}
	r, err = netbroker.Start(c, netbroker.Options{Home: home, NetDir: netDir, Sealed: sealed,
		Listener: ln, Socket: own, Placeholders: told.Placeholders, Relay: relayCh,
		Config: netbroker.Config{Resolver: &net.Resolver{PreferGo: true}, Own: ownAddrs, ToolBridge: toolBridge, SOCKSSecret: told.Secret, AdaptProcs: true}})
	if err != nil {
		return err
	}
	// SIGTERM is caught before the socket is told: a starter may stop
	// the proxy as soon as it knows the socket.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if ln == nil { // else lnk made the socket and chose what is told
		b, _ := json.Marshal(r.Told())
		fmt.Printf("%s\n%s\n", r.Socket, b)
	}
	if kernelCh != nil {
		go func() {
			// The kernel ends the proxy by closing its channel: EOF, or
			// an error, is the end (nothing is ever sent on it).
			b := make([]byte, 1)
			for {
				if n, err := kernelCh.Read(b); n == 0 || err != nil {
					break
				}
			}
			stop()
		}()
	}
	go func() {
		// A proxy outlives no sandbox: once the process that started it
		// is gone (it was reparented), it stops, SIGTERM or not.
		for os.Getppid() == parent {
			time.Sleep(time.Second)
		}
		stop()
	}()
	<-ctx.Done()
	return r.Close()
}

// envChannelTaken marks a run after landlock's re-exec (a kernel
// without TSYNC): the first run took the kernel's channel and closed
// every stray fd, and /proc/self/fd, which that listed, is outside the
// domain now.
const envChannelTaken = "LNK_NETBROKER_CHANNEL_TAKEN"

// kernelChannel is the kernel's channel (fd 3) when the kernel started
// this proxy (internal/brokerproc: LNK_BROKER_FDS is set), every stray
// inherited fd closed; nil when lnk started it. Kept inheritable across
// landlock's re-exec, as the other handed fds.
func kernelChannel() (*os.File, error) {
	if _, ok := os.LookupEnv(child.EnvFDs); !ok {
		return nil, nil
	}
	if os.Getenv(envChannelTaken) == "1" {
		if err := connpass.IsChannel(child.ChannelFD); err != nil {
			return nil, fmt.Errorf("the kernel's channel: %w", err)
		}
		return os.NewFile(child.ChannelFD, "kernel-channel"), nil
	}
	ch, _, err := child.Channel(false)
	if err != nil {
		return nil, err
	}
	os.Setenv(envChannelTaken, "1")
	return ch, nil
}

// dropNetDir closes the sockets' folder lnk handed (netDirEnv) to a
// proxy it also handed its socket: that proxy keeps no way to list it.
func dropNetDir() error {
	v, ok := os.LookupEnv(netDirEnv)
	if !ok {
		return nil
	}
	os.Unsetenv(netDirEnv)
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 {
		return fmt.Errorf("%s=%q is no handed fd", netDirEnv, v)
	}
	return unix.Close(fd)
}

// openNetDir opens ~/.lnk/agents/.net, or takes it from the run before
// landlock's re-exec.
func openNetDir(home string) (*os.File, error) {
	if v := os.Getenv(netDirEnv); v != "" {
		fd, err := strconv.Atoi(v)
		var st unix.Stat_t
		if err != nil || unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
			return nil, fmt.Errorf("%s=%q is no open folder", netDirEnv, v)
		}
		unix.CloseOnExec(fd)
		return os.NewFile(uintptr(fd), filepath.Join(home, ".lnk", "agents", ".net")), nil
	}
	return netbroker.OpenNetDir(home)
}

// confineFiles applies landlock (netbroker.ConfineRules): read and write
// beneath the sockets' folder, read of the resolver's and CA files, TCP to
// any port. Started already confined (landlock.BornConfined: lnk started
// it from a thread under these rules), it confines its own thread again
// rather than executing itself a second time.
func confineFiles(netDir int, degraded bool) error {
	rules, fds := netbroker.ConfineRules(netDir)
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	if _, err := landlock.Restrict(rules...); err != nil {
		if !degraded || !errors.Is(err, landlock.ErrUnsupported) {
			return fmt.Errorf("landlock: %w (--degraded runs without it)", err)
		}
		fmt.Fprintf(os.Stderr, "lnk-netbroker: degraded: no landlock: %s\n", err)
	}
	return nil
}

// checkChannelFD refuses a channel fd (given as flag) that is not a
// SOCK_SEQPACKET socket (0: none), before anything else is done.
func checkChannelFD(name string, fd int) error {
	if fd == 0 {
		return nil
	}
	if fd < 3 {
		return fmt.Errorf("%s %d is one of stdin, stdout or stderr", name, fd)
	}
	if err := connpass.IsChannel(fd); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// channel is the channel at fd (nil for 0), its fd closed once the
// connection holds its own.
func channel(name string, fd int) (*net.UnixConn, error) {
	if fd == 0 {
		return nil, nil
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	ch, err := connpass.Channel(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return ch, nil
}

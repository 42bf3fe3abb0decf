package probe

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net"
	"net/netip"
	"os"
	"slices"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/helpers/netbroker"
)

// Host is what the check set up outside for the probes to reach, and the
// host's own facts they compare against.
type Host struct {
	TCPPort   int               // a listener on the host's 127.0.0.1
	UDPPort   int               // a UDP socket on the host's 127.0.0.1, read by Outside.Settle
	UDPToken  string            // what the UDP probe sends, so a stray datagram is not counted
	Abstract  string            // a listening abstract unix socket's name
	LnkPid    int               // the checking lnk's pid, which must not be visible
	HostNet   bool              // [network] mode = "host"
	RelayPort int               // the relay's port, 0 without one
	OwnAddr   string            // a listener on one of this machine's own addresses other than loopback (addr:port), "" if it has none
	NS        map[string]uint64 // the host's namespaces' inodes (/proc/self/ns/<name>), those the kernel has
	Sid       int               // the checking lnk's session
	MaxProcs  int               // the sandbox's bound on its processes, 0 where it has none
	MaxMemory int64             // the sandbox's bound on its memory, 0 where it has none
	NoMemory  string            // why it has none
}

// Namespaces are those the sandbox must have of its own (bubblewrap's
// --unshare-user, -pid, -ipc, -uts, -cgroup and -net).
var Namespaces = []string{"user", "pid", "ipc", "uts", "cgroup", "net"}

// Outside is what the check opens on the host for the probes to reach:
// a TCP listener and a UDP socket on 127.0.0.1, a TCP listener on one of
// this machine's own addresses (which the sandbox must reach neither
// directly nor through its proxy), and an abstract unix socket. Close it
// when the probes are done.
type Outside struct {
	Host
	tcp, ab, own net.Listener
	udp          *net.UDPConn
}

// Listen opens what the probes reach for and reads the host's facts.
func Listen() (*Outside, error) {
	o := &Outside{Host: Host{LnkPid: os.Getpid(), NS: map[string]uint64{}}}
	var err error
	if o.tcp, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		return nil, err
	}
	o.TCPPort = o.tcp.Addr().(*net.TCPAddr).Port
	if o.udp, err = net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}); err != nil {
		o.Close()
		return nil, err
	}
	o.UDPPort = o.udp.LocalAddr().(*net.UDPAddr).Port
	o.UDPToken = "lnk-check-" + random()
	o.Abstract = "lnk-check-" + random()
	if o.ab, err = net.Listen("unix", "@"+o.Abstract); err != nil {
		o.Close()
		return nil, err
	}
	if a, ok := ownAddr(); ok {
		if o.own, err = net.Listen("tcp", netip.AddrPortFrom(a, 0).String()); err != nil {
			o.Close()
			return nil, err
		}
		o.OwnAddr = o.own.Addr().String()
		go acceptAll(o.own)
	}
	go acceptAll(o.tcp)
	go acceptAll(o.ab)
	for _, n := range Namespaces {
		ino, err := nsInode("/proc/self/ns/" + n)
		if errors.Is(err, os.ErrNotExist) {
			continue // a kernel without that namespace: its probe is skipped
		}
		if err != nil {
			o.Close()
			return nil, err
		}
		o.NS[n] = ino
	}
	if o.Sid, err = unix.Getsid(0); err != nil {
		o.Close()
		return nil, err
	}
	return o, nil
}

// Close closes what Listen opened.
func (o *Outside) Close() {
	if o.tcp != nil {
		o.tcp.Close()
	}
	if o.ab != nil {
		o.ab.Close()
	}
	if o.own != nil {
		o.own.Close()
	}
	if o.udp != nil {
		o.udp.Close()
	}
}

// Settle judges, once the probes have run, what only the host sees: a
// UDP datagram the probe sent arriving on the host's 127.0.0.1 (landlock
// has no UDP rule; only the sandbox's own network stops it). Sending on
// loopback queues the datagram before send returns, so by the time the
// sandbox has ended every datagram that got through is waiting here.
func (o *Outside) Settle(rs []Result) {
	arrived := 0
	buf := make([]byte, 256)
	o.udp.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	for {
		n, _, err := o.udp.ReadFromUDP(buf)
		if err != nil {
			break
		}
		if string(buf[:n]) == o.UDPToken {
			arrived++
		}
	}
	for i := range rs {
		if rs[i].Kind != "udp" || rs[i].Got == "skipped" || rs[i].Got == Broken {
			continue // a probe that never ran stays broken, which fails the check
		}
		switch {
		case arrived > 0:
			rs[i].Got, rs[i].Detail = Open, "a datagram arrived on the host's 127.0.0.1"
		case rs[i].Got == udpSent:
			rs[i].Got, rs[i].Detail = Closed, "sent, none arrived"
		default:
			rs[i].Got = Closed // the send itself was refused; Detail says how
		}
	}
}

// ownAddr is one of this machine's own addresses (as the proxy lists
// them: netbroker.WatchOwnAddrs) that a service bound to 0.0.0.0 or ::
// answers on and a probe can name: a public, private or CGNAT one
// (netbroker.Classify), never loopback or link-local (which needs a
// zone), IPv4 first. False if there is none, or none is known.
func ownAddr() (netip.Addr, bool) {
	w, err := netbroker.WatchOwnAddrs()
	if err != nil {
		return netip.Addr{}, false
	}
	all := w.Addrs()
	w.Close()
	all = slices.DeleteFunc(all, func(a netip.Addr) bool {
		switch netbroker.Classify(a) { // the proxy's one classifier
		case netbroker.Public, netbroker.Private, netbroker.CGNAT:
			return false
		}
		return true
	})
	if len(all) == 0 {
		return netip.Addr{}, false
	}
	slices.SortFunc(all, func(a, b netip.Addr) int {
		if a.Is4() != b.Is4() {
			if a.Is4() {
				return -1
			}
			return 1
		}
		return a.Compare(b)
	})
	return all[0], true
}

func acceptAll(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		c.Close()
	}
}

func random() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// nsInode is the inode of namespace file p: two processes are in one
// namespace exactly when theirs are the same.
func nsInode(p string) (uint64, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return 0, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, errors.New("no inode for " + p)
	}
	return st.Ino, nil
}

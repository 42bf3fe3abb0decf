package netbroker

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/landlock"
	"lnk.dev/lnk/internal/ownerdir"
)

// NewSecret makes a proxy's secret: 32 random bytes, hex.
func NewSecret() string {
	var b [32]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Options are what [Start] needs besides the grants.
type Options struct {
	// Home is the owner's HOME; the socket goes in
	// Home/.lnk/agents/.net/<agent id>/ (or a one-run folder).
	Home string
	// NetDir, if set, is ~/.lnk/agents/.net already opened (see
	// [OpenNetDir]), for a process confined before it starts the proxy.
	// Start borrows it; the caller closes it after Close.
	NetDir *os.File
	// Config carries the hooks (Resolver, Log, Routes, limits); its
	// Rules are made from the grants by Start.
	Config Config
	// Sealed, if it names any secret, serves their routes
	// (/_link/s/<Secret>/sealed/<NAME>/…) as Config.Routes.
	Sealed *SealedOptions
	// Listener, if set, is the proxy's socket made by its starter
	// ([Listen]; socket activation): Start serves it, makes no folder
	// or socket, and Close removes neither (the starter does).
	Listener net.Listener
	// Socket, if set, is the proxy's own socket, made by [ListenIn]
	// before the process confined itself (its seccomp filter lets it
	// make no unix socket): Start serves it and Close removes it, as if
	// Start had made it; should Start fail, the caller removes it.
	Socket *Socket
	// Relay, if set, is the channel on which the sandbox's first stage
	// hands its listener on 127.0.0.1 (relay.go): Start serves that
	// listener too, once handed, and Close closes the channel.
	Relay *net.UnixConn
	// Placeholders, with Sealed, are the placeholders its starter chose
	// and told the sandbox ([NewPlaceholder]): one per sealed name, in
	// place of fresh ones.
	Placeholders map[string]string
}

// Running is a started proxy: its socket, its folder, and Close.
type Running struct {
	*Proxy
	// Socket is the unix socket's path, mode 0600 in a 0700 folder.
	Socket string
	// Dir is the folder holding it.
	Dir string
	// Secret is the proxy's own secret: the SOCKS5 password, and the
	// path secret of its sealed routes. Only its sandbox is told it.
	Secret string
	// Placeholders are the sealed secrets' placeholders, by name.
	Placeholders map[string]string
	sock         *Socket // nil for a socket its starter made
	served       chan error
	ln           net.Listener
	relay        *net.UnixConn
	relayDone    chan struct{} // closed once serveRelay returned
}

// Start starts the proxy for one sandbox with grants c: it makes the
// socket's folder without following a link anywhere under Home/.lnk,
// binds the socket (0600) and serves it until Close ([Listen] says
// where). A run with no agent (c.AgentID empty) gets a one-run folder
// that Close removes. With Options.Listener it serves that instead.
func Start(c *Grants, o Options) (*Running, error) {
	rules, err := RulesFrom(c)
	if err != nil {
		return nil, err
	}
	cfg := o.Config
	cfg.Rules = rules
	// A local model's ports come with the grants, which name them: never
	// a port the grants don't also let through.
	for _, port := range c.LocalModelPorts {
		if !slices.Contains(c.LocalhostPorts, port) {
			return nil, fmt.Errorf("netbroker: local model port %d is not a granted localhost port", port)
		}
		if !slices.Contains(cfg.LocalModelPorts, port) {
			cfg.LocalModelPorts = append(cfg.LocalModelPorts, port)
		}
	}
	if cfg.SOCKSSecret == "" {
		cfg.SOCKSSecret = NewSecret()
	}
	var sealed *Sealed
	if o.Sealed != nil && len(o.Sealed.Names) > 0 {
		if cfg.Routes != nil {
			return nil, errors.New("netbroker: both Config.Routes and sealed secrets")
		}
		if sealed, err = sealedRoutes(c.AgentID, cfg.SOCKSSecret, o.Sealed); err != nil {
			return nil, err
		}
		cfg.Routes = sealed
	}
	p, err := New(cfg)
	if err != nil {
		return nil, err
	}
	if sealed != nil {
		bindSealed(sealed, p) // before Serve: no request reads it sooner
	}
	r := &Running{Proxy: p, Secret: cfg.SOCKSSecret, served: make(chan error, 1), relayDone: make(chan struct{})}
	if sealed != nil {
		if o.Placeholders != nil {
			if err := takePlaceholders(sealed, o.Placeholders); err != nil {
				return nil, err
			}
		}
		r.Placeholders = sealed.Placeholders
	}
	ln := o.Listener
	if ln == nil {
		sock := o.Socket
		if sock == nil {
			netDir := o.NetDir
			if netDir == nil {
				if netDir, err = OpenNetDir(o.Home); err != nil {
					return nil, err
				}
				defer netDir.Close()
			}
			if sock, err = listenIn(netDir, o.Home, c.AgentID); err != nil {
				return nil, err
			}
		}
		if ln, err = net.FileListener(sock.File); err != nil {
			if o.Socket == nil { // else its maker removes it
				sock.Remove()
			}
			return nil, fmt.Errorf("netbroker: %w", err)
		}
		sock.File.Close() // ln holds its own copy
		r.sock, r.Socket, r.Dir = sock, sock.Path, sock.Dir
	}
	r.ln = ln
	go func() { r.served <- p.Serve(ln) }()
	if r.relay = o.Relay; r.relay != nil {
		go r.serveRelay(r.relay)
	} else {
		close(r.relayDone)
	}
	return r, nil
}

// takePlaceholders puts the starter's placeholders ph in s's place:
// one for each of its names, of [NewPlaceholder]'s form, nothing more.
func takePlaceholders(s *Sealed, ph map[string]string) error {
	if len(ph) != len(s.Placeholders) {
		return errors.New("netbroker: the placeholders told are not one per sealed secret")
	}
	for n := range s.Placeholders {
		v, ok := ph[n]
		prefix := "lnk-sealed-" + strings.ToLower(n) + "-"
		if !ok || len(v) != len(prefix)+32 || !strings.HasPrefix(v, prefix) || !allHex(v[len(prefix):]) {
			return fmt.Errorf("netbroker: no placeholder of the right form told for %s", n)
		}
	}
	s.Placeholders = ph
	return nil
}

func allHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if !(s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f') {
			return false
		}
	}
	return true
}

// Close stops the proxy, removes the socket it made, and a one-run
// folder; a socket its starter made (Options.Listener) is the starter's.
func (r *Running) Close() error {
	r.Proxy.Close()
	if r.relay != nil {
		r.relay.Close() // a listener never handed is waited for no longer
	}
	<-r.served
	<-r.relayDone
	if r.sock != nil {
		r.sock.Remove()
	}
	return nil
}

func isAgentID(s string) bool {
	if len(s) != 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !(s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f') {
			return false
		}
	}
	return true
}

// OpenNetDir opens (making them 0700 if missing) ~/.lnk/agents/.net,
// never following a link below home.
func OpenNetDir(home string) (*os.File, error) {
	d, err := ownerdir.Open(home, ".lnk", "agents", ".net")
	if err != nil {
		return nil, fmt.Errorf("netbroker: %w", err)
	}
	return d, nil
}

// NetDirEnv names the fd of ~/.lnk/agents/.net handed to lnk-netbroker
// (by lnk, or across its own landlock re-exec): a proxy confined before
// it starts can no longer open it through HOME.
const NetDirEnv = "LNK_NETBROKER_NETDIR_FD"

// ResolverFiles are what Go's own resolver reads.
var ResolverFiles = []string{"/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf", "/etc/host.conf", "/etc/services"}

// CAFiles are where Go's crypto/x509 finds the system's CAs on Linux,
// read by landlock's leave for a sealed secret's https.
var CAFiles = []string{"/etc/ssl/certs", "/etc/pki/tls/certs", "/etc/ssl/cert.pem", "/etc/ssl/ca-bundle.pem",
	"/etc/pki/tls/cacert.pem", "/etc/pki/ca-trust/extracted/pem", "/usr/share/ca-certificates"}

// ConfineRules are the proxy's landlock rules, the same wherever they
// are applied (lnk-netbroker on itself, or lnk on the thread it starts
// lnk-netbroker from): read and write beneath the sockets' folder netDir,
// read of ResolverFiles and CAFiles (those present), TCP to any port.
// A negative netDir leaves the sockets' folder out: a proxy handed its
// socket (--listen-fd) needs no folder, and so reads no agent's ID.
// The caller closes fds once the rules are enforced.
func ConfineRules(netDir int) (rules []landlock.Rule, fds []int) {
	rules = []landlock.Rule{landlock.AnyTCP()}
	if netDir >= 0 {
		rules = append(rules, landlock.Beneath(netDir, landlock.Read|landlock.Write))
	}
	for _, p := range append(ResolverFiles[:len(ResolverFiles):len(ResolverFiles)], CAFiles...) {
		fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		fds = append(fds, fd)
		rules = append(rules, landlock.Beneath(fd, landlock.Read))
	}
	return rules, fds
}

// Package service is Link Memory's one process for all of one owner's
// sandboxed agents: it listens on run/memory.sock in its folder
// (~/Link/Agents/.memory/<owner>, 0700), takes a session only from a
// process of its own uid (SO_PEERCRED), binds each session to the one
// agent its first line names (Hello), refuses one naming an agent it
// doesn't serve, serves that agent's MCP server (services/memory/server)
// for the rest of the session, and ends Idle after its last session. A
// need line for an agent it doesn't serve makes it retire: no new
// session, and an end once its sessions end (its landlock domain can't
// grow to hold a new agent's folders; the next session's service does).
// Dial is the client's side: it starts the service at the first session
// and refuses a socket another uid serves.
//
// # Security
//
// Holds every served agent's handles and index; a session reaches only
// the agent it named as it opened, never another, whatever it sends
// after. Trusts a peer of its own uid (Link, or what runs outside every
// sandbox as the owner) to name the agent; nobody else is served. Each
// refusal is logged once with its reason.
package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerfile"
	"lnk.dev/lnk/internal/peercred"
	"lnk.dev/lnk/services/memory"
	"lnk.dev/lnk/services/memory/memsock"
	"lnk.dev/lnk/services/memory/server"
)

// SocketName is the socket's name in the service's run/ folder.
const SocketName = memsock.SocketName

// helloTimeout bounds how long a session may take to name its agent.
const helloTimeout = 10 * time.Second

// Service serves its agents on one socket.
type Service struct {
	// Agents is every agent served, by ID.
	Agents map[string]*memory.Agent
	// Idle is how long the service waits after its last session ends (or
	// from its start, with none) before Serve returns.
	Idle time.Duration
	// Log takes one line for each refusal and failure.
	Log io.Writer

	mu       sync.Mutex
	sessions int
	last     time.Time
	stop     func() // ends Serve: its owner's stop (StopLine)
	retire   func() // takes no new session (a need line's)
	retiring bool
}

// ErrServed is Listen's answer where a service already takes sessions
// on the socket.
var ErrServed = errors.New("another memory service of this owner already listens")

// Listen makes run/ (0700) in the service's folder dir and listens on
// run/memory.sock (0600), replacing a socket left there, never a link or
// another kind of file, nor one a service still listens on (ErrServed).
func Listen(dir *os.File) (*net.UnixListener, error) {
	run, err := ownerfile.MakeDir(int(dir.Fd()), "run", unix.O_RDONLY, ownerfile.PrivateDir)
	if err != nil {
		return nil, fmt.Errorf("the memory service's run folder: %w", err)
	}
	defer unix.Close(run)
	var st unix.Stat_t
	switch err := unix.Fstatat(run, SocketName, &st, unix.AT_SYMLINK_NOFOLLOW); {
	case err == nil && st.Mode&unix.S_IFMT == unix.S_IFSOCK:
		// A service still taking sessions keeps its socket: two first
		// sessions at once start two services, and the later one ends
		// here, its sessions going to the one already listening.
		if served(run) {
			return nil, ErrServed
		}
		if err := unix.Unlinkat(run, SocketName, 0); err != nil {
			return nil, err
		}
	case err == nil:
		return nil, fmt.Errorf("run/%s is not a socket; Link leaves it as it is\nhint: remove it by hand, then start the agent again (lnk agent start)", SocketName)
	}
	path, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", run))
	if err != nil {
		return nil, err
	}
	old := unix.Umask(0o177)
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path + "/" + SocketName, Net: "unix"})
	unix.Umask(old)
	if err != nil {
		return nil, err
	}
	return l, nil
}

// Serve takes sessions on l until ctx ends or the service has had no
// session for Idle.
func (s *Service) Serve(ctx context.Context, l *net.UnixListener) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.mu.Lock()
	s.last = time.Now()
	s.stop = func() { cancel(); l.Close() }
	s.retire = func() { l.Close() }
	s.mu.Unlock()
	go s.watchIdle(ctx, cancel, l)
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		c, err := l.AcceptUnix()
		if err != nil {
			s.mu.Lock()
			retiring := s.retiring
			s.mu.Unlock()
			if ctx.Err() != nil || retiring {
				// Retiring: the sessions open end as they will (wg).
				return nil
			}
			return err
		}
		s.begin()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer s.end()
			s.session(ctx, c)
		}()
	}
}

// watchIdle closes l once no session has been open for Idle.
func (s *Service) watchIdle(ctx context.Context, cancel func(), l *net.UnixListener) {
	tick := time.NewTicker(s.Idle / 4)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			l.Close()
			return
		case <-tick.C:
			s.mu.Lock()
			idle := s.sessions == 0 && time.Since(s.last) >= s.Idle
			s.mu.Unlock()
			if idle {
				cancel()
				l.Close()
				return
			}
		}
	}
}

func (s *Service) begin() { s.mu.Lock(); s.sessions++; s.mu.Unlock() }

func (s *Service) end() {
	s.mu.Lock()
	s.sessions--
	s.last = time.Now()
	s.mu.Unlock()
}

// session checks the peer and the first line, then serves the one agent
// it names until the peer or ctx ends it.
func (s *Service) session(ctx context.Context, c *net.UnixConn) {
	defer c.Close()
	if err := s.checkPeer(c); err != nil {
		s.logf("refused a session: %v", err)
		return
	}
	c.SetReadDeadline(time.Now().Add(helloTimeout))
	line, err := readHello(c)
	if err == nil && string(line) == StopLine {
		// Its owner's lnk agent memory stop: every session ends, the
		// index stays where it is.
		s.logf("stopped by its owner (lnk agent memory stop)")
		fmt.Fprint(c, "stopping\n")
		s.mu.Lock()
		stop := s.stop
		s.mu.Unlock()
		if stop != nil {
			stop()
		}
		return
	}
	if err == nil && len(line) >= len(NeedPrefix) && string(line[:len(NeedPrefix)]) == NeedPrefix {
		s.need(c, line)
		return
	}
	if err == nil {
		var id string
		if id, err = ParseHello(line); err == nil {
			a, ok := s.Agents[id]
			if !ok {
				s.logf("refused a session for agent %s: not an agent this service serves", id)
				fmt.Fprintf(c, "refused: agent %s is not served here\n", id)
				return
			}
			c.SetReadDeadline(time.Time{})
			srv := &server.Server{Agent: a, Log: s.Log}
			if err := srv.MCP().Run(ctx, &mcp.IOTransport{Reader: c, Writer: c}); err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				s.logf("agent %s: session ended: %v", id, err)
			}
			return
		}
	}
	s.logf("refused a session: %v", err)
	fmt.Fprintf(c, "refused: %v\n", err)
}

// need answers a need line: "served" for an agent this service serves;
// for another, the service retires (its landlock domain holds only the
// folders of the agents it started with, and can't grow): it takes no
// new session, and ends once the sessions it has end. Which agents the
// next service holds is what Link reads from the owner's settings as it
// starts one, never what a session names.
func (s *Service) need(c *net.UnixConn, line []byte) {
	id, err := ParseNeed(line)
	if err != nil {
		s.logf("refused a session: %v", err)
		fmt.Fprintf(c, "refused: %v\n", err)
		return
	}
	if _, ok := s.Agents[id]; ok {
		fmt.Fprint(c, "served\n")
		return
	}
	s.mu.Lock()
	retire, already := s.retire, s.retiring
	s.retiring = true
	s.mu.Unlock()
	if !already {
		s.logf("retiring: a session needs agent %s, whose folders this service's sandbox does not hold; the sessions open go on, and the next session is served by a new service holding every agent of the owner", id)
	}
	if retire != nil {
		retire()
	}
	fmt.Fprint(c, "retiring\n")
}

// checkPeer refuses a peer not of this process's uid, as the kernel says.
func (s *Service) checkPeer(c *net.UnixConn) error {
	_, err := peercred.SameUser(c)
	return err
}

func (s *Service) logf(format string, args ...any) {
	if s.Log != nil {
		memory.LogLine(s.Log, format, args...)
	}
}

// served reports whether something accepts a connection on the socket in
// run: a connection refused, or any other failure, leaves the socket to
// be replaced.
func served(run int) bool {
	c, err := net.Dial("unix", fmt.Sprintf("/proc/self/fd/%d/%s", run, SocketName))
	if err != nil {
		return false
	}
	c.Close()
	return true
}

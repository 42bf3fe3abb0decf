package kernel

import (
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// Each start's sandbox: lnk sandbox run --agent binds the start's folder
// capabilities into bubblewrap, then hands the kernel bubblewrap's pidfd
// (Attach), and waits on Watch. The kernel so knows which process runs
// with a start's capabilities, kills it through that pidfd when the start
// ends (a stop of its agent, its connection's end, the kernel's stop) and
// answers the watch, so lnk says why.

// sandboxRec is one start's sandbox, made at the start.
type sandboxRec struct {
	conn  *conn // the connection that made the start, which alone attaches and watches
	agent string
	// unconfined: the start's command runs with no sandbox (an agent's
	// sandbox off): pid is the command itself.
	unconfined bool
	pid        int      // bubblewrap, once attached
	pidfd      *os.File // pins it; nil before Attach
	ended      chan struct{}
	reason     string // why the start ended, set before ended closes
}

// sandboxes are the running starts' sandboxes, by start.
type sandboxes struct {
	mu sync.Mutex
	m  map[uint64]*sandboxRec
}

// begin records a new start of agent, made on c.
func (s *sandboxes) begin(start uint64, agent string, c *conn, unconfined bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[uint64]*sandboxRec{}
	}
	s.m[start] = &sandboxRec{conn: c, agent: agent, unconfined: unconfined, ended: make(chan struct{})}
}

// get returns start's record if c made the start, else nil.
func (s *sandboxes) get(start uint64, c *conn) *sandboxRec {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.m[start]
	if r == nil || r.conn != c {
		return nil
	}
	return r
}

// attach gives start (made on c, not yet attached) its sandbox's pidfd,
// which it takes; false if it cannot, and then pidfd is closed.
func (s *sandboxes) attach(start uint64, c *conn, pid int, pidfd *os.File) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.m[start]
	if r == nil || r.conn != c || r.pidfd != nil {
		pidfd.Close()
		return false
	}
	r.pid, r.pidfd = pid, pidfd
	return true
}

// connOf is the connection that made start, nil when it has ended.
func (s *sandboxes) connOf(start uint64) *conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.m[start]; r != nil {
		return r.conn
	}
	return nil
}

// pid is start's sandbox's pid, 0 before it is attached.
func (s *sandboxes) pid(start uint64) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.m[start]; r != nil {
		return r.pid
	}
	return 0
}

// unconfined reports whether start's command runs with no sandbox.
func (s *sandboxes) unconfined(start uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.m[start]
	return r != nil && r.unconfined
}

// ofAgent lists agent's starts and the connection each was made on.
func (s *sandboxes) ofAgent(agent string) map[uint64]*conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[uint64]*conn{}
	for start, r := range s.m {
		if r.agent == agent {
			out[start] = r.conn
		}
	}
	return out
}

// end forgets start: its sandbox, if attached, is killed through its
// pidfd (SIGKILL to bubblewrap; its pid namespace dies with it: its
// child, the namespace's pid 1, has --die-with-parent), and its watch
// is answered with why. It returns the killed sandbox's pid, or 0 if
// none was alive.
func (s *sandboxes) end(start uint64, why string) int {
	s.mu.Lock()
	r := s.m[start]
	delete(s.m, start)
	s.mu.Unlock()
	if r == nil {
		return 0
	}
	killed := 0
	if r.pidfd != nil {
		if unix.PidfdSendSignal(int(r.pidfd.Fd()), unix.SIGKILL, nil, 0) == nil {
			killed = r.pid
		}
		r.pidfd.Close()
	}
	r.reason = why
	close(r.ended)
	return killed
}

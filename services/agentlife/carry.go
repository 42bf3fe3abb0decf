package agentlife

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/ownerdir"
	"lnk.dev/lnk/internal/ownerfile"
	"lnk.dev/lnk/services/harness/endpoint"
)

// Link Harness in its sandbox listens in a network of its own, whose
// 127.0.0.1 is not the machine's. For the whole of each start the
// supervisor serves the agent's first port on the machine's 127.0.0.1
// and carries each connection to the harness's endpoint.sock, in its
// home (0700). The socket is opened through the held home never through
// a link, and taken only when it is a socket of the owner's: the harness
// can't make the supervisor connect anywhere else. The harness still
// proves it holds the key on each connection (services/harness/endpoint).

// carrier is one start's port served.
type carrier struct {
	l    net.Listener
	home *os.File // the harness's home
	wg   sync.WaitGroup
	mu   sync.Mutex
	open map[net.Conn]bool
}

// carryPort serves 127.0.0.1:port for agent a's Link Harness.
func carryPort(home string, a *caps.Agent, port int) (*carrier, error) {
	hd, err := ownerdir.Open(home, "Link", "Agents", a.Name, "Harnesses", caps.LinkHarness)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp4", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		hd.Close()
		return nil, fmt.Errorf("serving agent %s's port %d: %w", a.Name, port, err)
	}
	c := &carrier{l: l, home: hd, open: map[net.Conn]bool{}}
	c.wg.Add(1)
	go c.serve()
	return c, nil
}

func (c *carrier) serve() {
	defer c.wg.Done()
	for {
		conn, err := c.l.Accept()
		if err != nil {
			return
		}
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			c.carry(conn)
		}()
	}
}

// carry joins conn to the harness's socket until either side closes.
func (c *carrier) carry(conn net.Conn) {
	defer conn.Close()
	in, err := c.dial()
	if err != nil {
		return // the client sees its connection closed unanswered, and tries again
	}
	defer in.Close()
	c.track(conn, true)
	defer c.track(conn, false)
	done := make(chan struct{}, 2)
	go func() { io.Copy(in, conn); in.(*net.UnixConn).CloseWrite(); done <- struct{}{} }()
	go func() { io.Copy(conn, in); conn.(*net.TCPConn).CloseWrite(); done <- struct{}{} }()
	<-done
	<-done
}

func (c *carrier) track(conn net.Conn, on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if on {
		c.open[conn] = true
	} else {
		delete(c.open, conn)
	}
}

// dial connects to endpoint.sock in the held home: opened O_PATH
// through no link, a socket of the owner's, reached by its descriptor.
func (c *carrier) dial() (net.Conn, error) {
	fd, err := ownerfile.Open(int(c.home.Fd()), endpoint.SocketName, unix.O_PATH, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFSOCK || st.Uid != uint32(os.Geteuid()) {
		return nil, errors.New("endpoint.sock is not a socket of the owner's")
	}
	return net.DialUnix("unix", nil, &net.UnixAddr{Name: "/proc/self/fd/" + strconv.Itoa(fd), Net: "unix"})
}

// close stops serving the port and ends the connections carried.
func (c *carrier) close() {
	if c == nil {
		return
	}
	c.l.Close()
	c.mu.Lock()
	for conn := range c.open {
		conn.Close()
	}
	c.mu.Unlock()
	c.wg.Wait()
	c.home.Close()
}

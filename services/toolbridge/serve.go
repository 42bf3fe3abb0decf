package toolbridge

import (
	"bufio"
	"bytes"
	"context"
	"crypto/subtle"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/connpass"
)

// SessionHeader carries a session's id, as streamable HTTP does.
const SessionHeader = "Mcp-Session-Id"

// Server serves a Bridge on a listener (the sandbox's bridge socket,
// ~/.lnk/sandbox/bridge/<sandbox>.sock, reached through its proxy's mcp
// route): one HTTP/1.1 POST per connection to /mcp/<tool>, or to
// /_link/s/<secret>/mcp/<tool> when Secret is set (compared in constant
// time, never logged).
type Server struct {
	Bridge *Bridge
	Secret string
}

// Serve answers connections until l is closed, each on a goroutine of
// its own (see [workers]).
func (sv *Server) Serve(l net.Listener) error {
	w := workers{next: make(chan net.Conn)}
	defer close(w.next) // the worker kept waiting ends
	for {
		c, err := l.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		select {
		case w.next <- c:
		default:
			go sv.work(&w, c)
		}
	}
}

// workers keep one goroutine that served a connection waiting for the
// next: a request's goroutine grows its stack (a copy) to what a call
// needs, which a new goroutine for each of one client's calls did at
// every call. One at most waits (the rest end with their connection),
// so the goroutines after any number of connections are as many as
// before them.
type workers struct {
	next    chan net.Conn // unbuffered: taken only by the worker waiting
	waiting atomic.Bool
}

func (sv *Server) work(w *workers, c net.Conn) {
	for {
		sv.serveConn(c)
		if !w.waiting.CompareAndSwap(false, true) {
			return // another waits already
		}
		var ok bool
		if c, ok = <-w.next; !ok {
			return
		}
		w.waiting.Store(false)
	}
}

func (sv *Server) serveConn(c net.Conn) {
	defer c.Close()
	sv.Bridge.init()
	sv.Bridge.procs.Begin()
	defer sv.Bridge.procs.End()
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	br := readers.Get().(*bufio.Reader)
	br.Reset(c)
	defer func() { br.Reset(nil); readers.Put(br) }()
	req, err := http.ReadRequest(br)
	if err != nil {
		writeReply(c, text(http.StatusBadRequest, "not an HTTP request"))
		return
	}
	tool, ok := sv.route(req.URL.Path)
	switch {
	case ok && !fromThisMachine(req):
		sv.Bridge.log(tool, "", "refused: its Host or Origin is not this machine's loopback (DNS rebinding)")
		writeReply(c, text(http.StatusForbidden, "refused: a request whose Host or Origin is not this machine's loopback (127.0.0.1, as $LNK_TOOL_<NAME> names it)"))
		return
	case !ok:
		writeReply(c, text(http.StatusNotFound, "not a tool's route: POST /mcp/<tool>"))
		return
	case req.Method == http.MethodDelete:
		sv.Bridge.Terminate(tool, req.Header.Get(SessionHeader))
		writeReply(c, Reply{Status: http.StatusOK})
		return
	case req.Method != http.MethodPost:
		// No stream from server to client: what a server sends unasked
		// stays outside.
		writeReply(c, text(http.StatusMethodNotAllowed, "only POST: a server's own messages stay outside"))
		return
	}
	body, err := readBody(req)
	if err != nil {
		writeReply(c, text(http.StatusBadRequest, "reading the body: "+err.Error()))
		return
	}
	c.SetReadDeadline(time.Time{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &closeWatch{c: c, cancel: cancel}
	defer w.stop()
	r := sv.Bridge.Handle(context.WithValue(ctx, watchKey{}, w), tool, req.Header.Get(SessionHeader), body)
	if r.Status == 0 {
		return // the client left
	}
	writeReply(c, r)
}

func (sv *Server) route(path string) (string, bool) {
	rest := path
	if sv.Secret != "" {
		p, ok := strings.CutPrefix(path, "/_link/s/")
		if !ok {
			return "", false
		}
		secret, after, ok := strings.Cut(p, "/")
		if !ok || subtle.ConstantTimeCompare([]byte(secret), []byte(sv.Secret)) != 1 {
			return "", false
		}
		rest = "/" + after
	}
	tool, ok := strings.CutPrefix(rest, "/mcp/")
	if !ok || tool == "" || strings.Contains(tool, "/") {
		return "", false
	}
	return tool, true
}

// readers are the request readers of the bridge's connections: one
// request each, small and many, so the buffers are kept rather than
// made and cleared for each.
var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 4<<10) }}

// readBody reads a request's body, at most MaxBody+1 bytes (one more
// than allowed, so Handle sees it is over), sized by its Content-Length
// where it has one.
func readBody(req *http.Request) ([]byte, error) {
	if req.ContentLength >= 0 && req.ContentLength <= MaxBody {
		// The body reader ends at its Content-Length: read just that, into
		// a slice of its size.
		b := make([]byte, req.ContentLength)
		_, err := io.ReadFull(req.Body, b)
		return b, err
	}
	n := int64(512)
	if req.ContentLength > 0 {
		n = min(req.ContentLength, MaxBody) + 1
	}
	buf := bytes.NewBuffer(make([]byte, 0, n))
	_, err := buf.ReadFrom(io.LimitReader(req.Body, MaxBody+1))
	return buf.Bytes(), err
}

// writeReply writes r's status line, headers and body in one write: one
// writev(2) of the head and the body as they are, so a large answer is
// not copied once more behind its head.
func writeReply(c net.Conn, r Reply) {
	ctype := "application/json"
	if len(r.Body) > 0 && r.Body[0] != '{' {
		ctype = "text/plain; charset=utf-8"
	}
	b := make([]byte, 0, 160)
	b = append(b, "HTTP/1.1 "...)
	b = strconv.AppendInt(b, int64(r.Status), 10)
	b = append(b, ' ')
	b = append(b, http.StatusText(r.Status)...)
	b = append(b, "\r\nContent-Length: "...)
	b = strconv.AppendInt(b, int64(len(r.Body)), 10)
	b = append(b, "\r\nConnection: close\r\n"...)
	if len(r.Body) > 0 {
		b = append(append(append(b, "Content-Type: "...), ctype...), "\r\n"...)
	}
	if r.SessionID != "" {
		b = append(append(append(append(b, SessionHeader...), ": "...), r.SessionID...), "\r\n"...)
	}
	b = append(b, "\r\n"...)
	c.SetWriteDeadline(time.Now().Add(30 * time.Second))
	bufs := net.Buffers{b, r.Body}
	bufs.WriteTo(socketOf(c))
}

// socketOf is the socket under a passed connection's wrappers (its slot,
// its replayed head), which takes net.Buffers as one writev: through a
// wrapper each part would be a write of its own.
func socketOf(c net.Conn) net.Conn {
	if sc, ok := c.(*slotConn); ok {
		c = sc.Conn
	}
	if pc, ok := c.(*connpass.Conn); ok {
		return pc.Conn
	}
	return c
}

// closeWatch cancels a request's context when its client closes the
// connection. On a unix socket a half-close (the client shut its writing
// after the request) is not a close: it shows as POLLRDHUP alone, a close
// as POLLHUP. Over TCP, which is how a sandbox reaches its proxy
// (127.0.0.1:3128, the connection passed on as it was accepted), a close
// shows as POLLRDHUP alone too, as a half-close does; there, as the spec
// says of macOS's proxy reached over TCP, POLLRDHUP counts as closing it.
//
// It looks only once started ([watchClient]): the bridge waits on a
// request's context only where it may wait long (a session starting, the
// owner being asked). A call relayed goes on whether its client stays or
// not, so one answered at once sets no timer (a timer sooner than the
// poller's next wakes it: a write, a wake-up and a poll a call).
type closeWatch struct {
	c      net.Conn
	cancel context.CancelFunc

	mu      sync.Mutex
	stopped bool
	t       *time.Timer // nil until started
}

type watchKey struct{}

// watchClient starts watching whether the client of ctx's request
// closes, from watchEvery on; ctx is then cancelled when it does. A
// context of no connection's (a caller of Handle's own) is left as it is.
func watchClient(ctx context.Context) {
	if w, ok := ctx.Value(watchKey{}).(*closeWatch); ok {
		w.start()
	}
}

func (w *closeWatch) start() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped || w.t != nil {
		return
	}
	rc, ok := w.c.(syscall.Conn)
	if !ok {
		return
	}
	raw, err := rc.SyscallConn()
	if err != nil {
		return
	}
	closed := int16(unix.POLLHUP | unix.POLLERR)
	raw.Control(func(fd uintptr) {
		if d, err := unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_DOMAIN); err == nil && (d == unix.AF_INET || d == unix.AF_INET6) {
			closed |= unix.POLLRDHUP // TCP: a close looks as a half-close does
		}
	})
	look := func() {
		hup := false
		raw.Control(func(fd uintptr) {
			pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLRDHUP}}
			if n, _ := unix.Poll(pfd, 0); n > 0 && pfd[0].Revents&closed != 0 {
				hup = true
			}
		})
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.stopped {
			return
		}
		if hup {
			w.cancel()
			return
		}
		w.t.Reset(watchEvery)
	}
	w.t = time.AfterFunc(watchEvery, look)
}

func (w *closeWatch) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	if w.t != nil {
		w.t.Stop()
	}
}

// watchEvery is how often a waiting request looks whether its client closed.
const watchEvery = 20 * time.Millisecond

package toolbridge

import (
	"bufio"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
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

// Serve answers connections until l is closed.
func (sv *Server) Serve(l net.Listener) error {
	for {
		c, err := l.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		go sv.serveConn(c)
	}
}

func (sv *Server) serveConn(c net.Conn) {
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReaderSize(c, 64<<10)
	req, err := http.ReadRequest(br)
	if err != nil {
		writeReply(c, text(http.StatusBadRequest, "not an HTTP request"))
		return
	}
	tool, ok := sv.route(req.URL.Path)
	switch {
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
	body, err := io.ReadAll(io.LimitReader(req.Body, MaxBody+1))
	if err != nil {
		writeReply(c, text(http.StatusBadRequest, "reading the body: "+err.Error()))
		return
	}
	c.SetReadDeadline(time.Time{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := watchClose(c, cancel)
	defer stop()
	r := sv.Bridge.Handle(ctx, tool, req.Header.Get(SessionHeader), body)
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

func writeReply(c net.Conn, r Reply) {
	ctype := "application/json"
	if len(r.Body) > 0 && r.Body[0] != '{' {
		ctype = "text/plain; charset=utf-8"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\nContent-Length: %d\r\nConnection: close\r\n", r.Status, http.StatusText(r.Status), len(r.Body))
	if len(r.Body) > 0 {
		fmt.Fprintf(&b, "Content-Type: %s\r\n", ctype)
	}
	if r.SessionID != "" {
		fmt.Fprintf(&b, "%s: %s\r\n", SessionHeader, r.SessionID)
	}
	b.WriteString("\r\n")
	c.SetWriteDeadline(time.Now().Add(30 * time.Second))
	io.WriteString(c, b.String())
	c.Write(r.Body)
}

// watchClose calls cancel when the client closes the connection. A
// half-close (the client shut its writing after the request) is not a
// close: on a unix socket it shows as POLLRDHUP alone, a close as POLLHUP.
func watchClose(c net.Conn, cancel context.CancelFunc) (stop func()) {
	rc, ok := c.(syscall.Conn)
	if !ok {
		return func() {}
	}
	raw, err := rc.SyscallConn()
	if err != nil {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			hup := false
			raw.Control(func(fd uintptr) {
				pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLRDHUP}}
				if n, _ := unix.Poll(pfd, 0); n > 0 && pfd[0].Revents&(unix.POLLHUP|unix.POLLERR) != 0 {
					hup = true
				}
			})
			if hup {
				cancel()
				return
			}
		}
	}()
	return func() { close(done) }
}

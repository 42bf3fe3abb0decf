package netbroker

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"lnk.dev/lnk/internal/connpass"
	"lnk.dev/lnk/internal/testenv"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func TestPerMinute(t *testing.T) {
	echo := echoServer(t, "127.0.0.1:0")
	port := portOf(t, echo)
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	tp := startProxy(t, Grants{LocalhostPorts: []uint16{port}, Internet: InternetGrants{PerMinute: 2}},
		func(c *Config) { c.Now = clock.now })
	req := fmt.Sprintf("CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\n", port)
	for i := 0; i < 2; i++ {
		if resp, _, _, _ := tp.ask(t, req); resp.StatusCode != 200 {
			t.Fatalf("request %d: %s", i+1, resp.Status)
		}
	}
	resp, body, _, _ := tp.ask(t, req)
	if resp.StatusCode != 429 || !strings.Contains(body, "per_minute of 2") {
		t.Fatalf("third request: %s %q", resp.Status, body)
	}
	clock.add(30 * time.Second) // a minute's 2 refill one in 30 s
	if resp, _, _, _ := tp.ask(t, req); resp.StatusCode != 200 {
		t.Fatalf("after 30 s: %s", resp.Status)
	}
}

// A client that never finishes its headers is answered 408 and cut off,
// while another client is served meanwhile.
func TestSlowClientDoesNotHoldOthers(t *testing.T) {
	echo := echoServer(t, "127.0.0.1:0")
	port := portOf(t, echo)
	tp := startProxy(t, Grants{LocalhostPorts: []uint16{port}}, func(c *Config) { c.HeaderTimeout = 3 * time.Second })
	slow := tp.dial(t)
	io.WriteString(slow, "CONNECT 127.0.0.1:") // and nothing more
	if resp, _, _, _ := tp.ask(t, fmt.Sprintf("CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\n", port)); resp.StatusCode != 200 {
		t.Fatalf("the other client: %s", resp.Status)
	}
	got, _ := io.ReadAll(slow) // the proxy closes it; the dial's deadline is 30 s
	if !strings.HasPrefix(string(got), "HTTP/1.1 408") {
		t.Fatalf("the slow client got %q", got)
	}
}

// Past MaxConns open connections, the next is answered 429.
func TestBoundedConnections(t *testing.T) {
	echo := echoServer(t, "127.0.0.1:0")
	port := portOf(t, echo)
	tp := startProxy(t, Grants{LocalhostPorts: []uint16{port}}, func(c *Config) { c.MaxConns = 1 })
	// The first holds its slot: its tunnel answered, so it was taken.
	if resp, _, _, _ := tp.ask(t, fmt.Sprintf("CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\n", port)); resp.StatusCode != 200 {
		t.Fatalf("first: %s", resp.Status)
	}
	resp, body, _, _ := tp.ask(t, fmt.Sprintf("CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\n", port))
	if resp.StatusCode != 429 || resp.Header.Get("X-Lnk-Refused") != KindBusy {
		t.Fatalf("second: %s %q", resp.Status, body)
	}
}

// A connection that has sent nothing yet holds its slot as any does: a
// sandbox can't open more than MaxConns by never sending a request.
func TestIdleConnectionsAreBounded(t *testing.T) {
	tp := startProxy(t, Grants{}, func(c *Config) { c.MaxConns = 2 })
	tp.dial(t)
	tp.dial(t)                        // two that send nothing
	time.Sleep(50 * time.Millisecond) // both accepted
	resp, body, _, _ := tp.ask(t, "GET http://example.com/ HTTP/1.1\r\nHost: example.com\r\n\r\n")
	if resp.StatusCode != 429 || resp.Header.Get("X-Lnk-Refused") != KindBusy {
		t.Fatalf("a third beside two idle ones: %s %q, want 429", resp.Status, body)
	}
}

// A request under /_link/ goes to the routes' handler with its body, and
// is never forwarded.
func TestRoutes(t *testing.T) {
	tp := startProxy(t, Grants{}, func(c *Config) {
		c.Routes = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			fmt.Fprintf(w, "%s %s %s", r.Method, r.URL.Path, b)
		})
	})
	resp, body, _, _ := tp.ask(t, "POST /_link/s/abc/sealed/X/v1 HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n\r\nhello")
	if resp.StatusCode != 200 || body != "POST /_link/s/abc/sealed/X/v1 hello" {
		t.Fatalf("route: %s %q", resp.Status, body)
	}
	ev := tp.log.waitFor(t, func(e Event) bool { return e.Kind == "route" })
	if strings.Contains(fmt.Sprint(ev), "abc") {
		t.Fatalf("the log holds the route's secret: %+v", ev)
	}
}

func TestStartMakesItsFolder(t *testing.T) {
	home := testenv.Home(t)
	id := strings.Repeat("0f", 16)
	r, err := Start(&Grants{AgentID: id}, Options{Home: home, Config: Config{Log: func(Event) {}}})
	if err != nil {
		t.Fatal(err)
	}
	want := r.Socket
	if filepath.Dir(want) != filepath.Join(home, ".lnk", "agents", ".net", id) || !strings.HasPrefix(filepath.Base(want), "proxy-") {
		t.Fatalf("socket %s, want %s", r.Socket, want)
	}
	for _, p := range []string{filepath.Join(home, ".lnk"), filepath.Join(home, ".lnk", "agents"), filepath.Dir(want)} {
		if st, err := os.Lstat(p); err != nil || st.Mode().Perm() != 0o700 || !st.IsDir() {
			t.Fatalf("%s: %v %v", p, err, st.Mode())
		}
	}
	if st, err := os.Lstat(want); err != nil || st.Mode().Perm() != 0o600 || st.Mode().Type() != os.ModeSocket {
		t.Fatalf("%s: %v %v", want, err, st.Mode())
	}
	// A second sandbox of the same agent has a socket of its own, which
	// outlives the first's Close.
	r2, err := Start(&Grants{AgentID: id}, Options{Home: home, Config: Config{Log: func(Event) {}}})
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	if _, err := os.Lstat(want); !os.IsNotExist(err) {
		t.Fatalf("socket left after Close: %v", err)
	}
	if _, err := os.Lstat(r2.Socket); err != nil || r2.Socket == want {
		t.Fatalf("the second sandbox's socket: %v", err)
	}
	r2.Close()

	// A run with no agent gets a one-run folder, removed by Close.
	r, err = Start(&Grants{}, Options{Home: home, Config: Config{Log: func(Event) {}}})
	if err != nil {
		t.Fatal(err)
	}
	dir := r.Dir
	if !strings.HasPrefix(filepath.Base(dir), "run-") {
		t.Fatalf("one-run folder %s", dir)
	}
	r.Close()
	if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Fatalf("one-run folder left after Close: %v", err)
	}
}

func TestStartRefusesALinkedFolder(t *testing.T) {
	home := testenv.Home(t)
	elsewhere := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".lnk", "agents"), 0o700)
	if err := os.Symlink(elsewhere, filepath.Join(home, ".lnk", "agents", ".net")); err != nil {
		t.Fatal(err)
	}
	if r, err := Start(&Grants{AgentID: strings.Repeat("0f", 16)}, Options{Home: home}); err == nil {
		r.Close()
		t.Fatal("Start followed a link to its folder")
	}
	if _, err := Start(&Grants{AgentID: "../../x"}, Options{Home: home}); err == nil {
		t.Fatal("Start took an agent id that is a path")
	}
	if _, err := Start(&Grants{NetworkMode: "host"}, Options{Home: home}); err == nil {
		t.Fatal("Start made a proxy for [network] mode = host")
	}
}

// A tool call's connection is passed to the tool bridge with every byte
// read of it, and the bridge answers on it; one declared over 8 MB is
// refused before it.
func TestToolRoute(t *testing.T) {
	recv, send, err := connpass.Pair()
	if err != nil {
		t.Fatal(err)
	}
	rc, _ := connpass.Channel(recv)
	sc, _ := connpass.Channel(send)
	recv.Close()
	send.Close()
	t.Cleanup(func() { rc.Close(); sc.Close() })
	go func() {
		r := connpass.NewReceiver(rc)
		for {
			c, err := r.Receive()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				req, err := http.ReadRequest(bufio.NewReader(c))
				if err != nil {
					return
				}
				b, _ := io.ReadAll(req.Body)
				fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n%s %s", req.URL.Path, b)
			}()
		}
	}()
	tp := startProxy(t, Grants{}, func(c *Config) {
		c.ToolBridge = sc
	})
	resp, body, c, _ := tp.ask(t, "POST /_link/s/sek/mcp/notes HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 7\r\n\r\n{\"a\":1}")
	if resp.StatusCode != 200 || body != `/_link/s/sek/mcp/notes {"a":1}` {
		t.Fatalf("tool route: %s %q", resp.Status, body)
	}
	c.Close()
	resp, _, _, _ = tp.ask(t, fmt.Sprintf("POST /_link/s/sek/mcp/notes HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %d\r\n\r\n", MaxRouteBody+1))
	if resp.StatusCode != 413 {
		t.Fatalf("oversized tool call: %s", resp.Status)
	}
	ev := tp.log.waitFor(t, func(e Event) bool { return e.Kind == "route" && e.Decision == "allow" })
	if ev.Reason != "passed to the tool bridge" || ev.Up == 0 {
		t.Errorf("the pass's log line: %+v", ev)
	}
	if strings.Contains(fmt.Sprintf("%+v", ev), "sek") {
		t.Fatalf("the log holds the route's secret: %+v", ev)
	}
}

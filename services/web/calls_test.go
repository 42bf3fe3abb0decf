package web

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// countingTransport counts the tools/call requests its connection read:
// under the gate, what the gate let be read.
type countingTransport struct {
	mcp.Transport
	calls atomic.Int32
}

func (t *countingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	return &countingConn{c, t}, err
}

type countingConn struct {
	mcp.Connection
	t *countingTransport
}

func (c *countingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if r, ok := m.(*jsonrpc.Request); ok && r.Method == "tools/call" {
		c.t.calls.Add(1)
	}
	return m, err
}

// TestSeventeenthCallWaits: 17 calls sent at once to pages that hold
// their answer: 16 are read and reach the host, the 17th is not read
// until one is answered; then it is, and all 17 are answered.
func TestSeventeenthCallWaits(t *testing.T) {
	w := newWorld(t)
	if w == nil {
		return
	}
	w.res.set("pub.example.com", publicHost)
	release := make(chan struct{})
	var arrived atomic.Int32
	w.mux.HandleFunc("/hold", func(rw http.ResponseWriter, r *http.Request) {
		arrived.Add(1)
		select {
		case <-release:
		case <-r.Context().Done():
		}
		rw.Header().Set("Content-Type", "text/plain")
		io.WriteString(rw, "held")
	})
	tool, _ := w.tool(Config{})
	ct, st := mcp.NewInMemoryTransports()
	counted := &countingTransport{Transport: st}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go tool.MCP().Run(ctx, Gate(counted, MaxCalls))
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var wg sync.WaitGroup
	var answered atomic.Int32
	for i := 0; i < MaxCalls+1; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fetch", Arguments: map[string]any{"url": "http://pub.example.com/hold"}})
			if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "held") {
				t.Errorf("a call: %v %+v", err, res)
			}
			answered.Add(1)
		}()
	}
	waitFor(t, func() bool { return arrived.Load() == MaxCalls }, "16 calls at the host")
	// The 17th is in the client's pipe, unread, however long it waits.
	time.Sleep(300 * time.Millisecond)
	if got := counted.calls.Load(); got != MaxCalls || arrived.Load() != MaxCalls {
		t.Fatalf("%d calls read and %d at the host with 16 unanswered, want 16 and 16", got, arrived.Load())
	}
	release <- struct{}{} // one answered: the 17th is read
	waitFor(t, func() bool { return counted.calls.Load() == MaxCalls+1 && arrived.Load() == MaxCalls+1 }, "the 17th call read once one was answered")
	close(release)
	wg.Wait()
	if answered.Load() != MaxCalls+1 {
		t.Fatalf("%d calls answered, want 17", answered.Load())
	}
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestTwoConversionsAtOnce: with two pages being made markdown, a third
// waits (here until its call's time ends, with the reason); once one is
// done it goes ahead.
func TestTwoConversionsAtOnce(t *testing.T) {
	tool, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	tool.convert <- struct{}{}
	tool.convert <- struct{}{}
	ctx, cancel := context.WithTimeoutCause(context.Background(), 200*time.Millisecond, refusef("the call's time ran out"))
	defer cancel()
	var p Page
	if err := tool.toMarkdown(ctx, []byte("<p>third</p>"), nil, &p); err == nil || !strings.Contains(err.Error(), "time ran out") {
		t.Fatalf("a third conversion with two under way: %v", err)
	}
	<-tool.convert
	if err := tool.toMarkdown(context.Background(), []byte("<p>third</p>"), nil, &p); err != nil || !strings.Contains(p.Text, "third") {
		t.Fatalf("once one is done: %v %+v", err, p)
	}
}

// TestHTTPSProxy: with a proxy in the tool's environment, the proxy
// connects (it is asked for the name, and reaches the host itself),
// while a name that resolves here to a private address is refused here
// and never reaches the proxy. The proxy itself, on loopback, is the
// owner's: dialled though loopback is never fetched.
func TestHTTPSProxy(t *testing.T) {
	w := newWorld(t)
	if w == nil {
		return
	}
	w.res.set("pub.example.com", publicHost)
	w.res.set("inside.example.com", "10.9.0.2")
	var mu sync.Mutex
	var asked []string
	proxy := &http.Server{Handler: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.Method+" "+r.Host)
		mu.Unlock()
		if r.Method != http.MethodConnect {
			http.Error(rw, "CONNECT only", http.StatusMethodNotAllowed)
			return
		}
		host, port, _ := net.SplitHostPort(r.Host)
		if host != "pub.example.com" {
			http.Error(rw, "unknown", http.StatusBadGateway)
			return
		}
		up, err := net.Dial("tcp", net.JoinHostPort(publicHost, port)) // the proxy resolves for itself
		if err != nil {
			http.Error(rw, err.Error(), http.StatusBadGateway)
			return
		}
		rw.WriteHeader(http.StatusOK)
		c, buf, _ := rw.(http.Hijacker).Hijack()
		go func() { io.Copy(up, buf); up.Close() }()
		io.Copy(c, up)
		c.Close()
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go proxy.Serve(ln)
	t.Cleanup(func() { proxy.Close() })
	pu, _ := url.Parse("http://" + ln.Addr().String())
	tool, _ := w.tool(Config{Proxy: func(*url.URL) (*url.URL, error) { return pu, nil }})
	if p := fetched(t, tool, "https://pub.example.com/page"); p.Title != "A test page" {
		t.Fatalf("through the proxy: %+v", p)
	}
	refused(t, tool, "https://inside.example.com/page", "private network")
	refused(t, tool, "https://10.9.0.2/page", "private network")
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 1 || asked[0] != "CONNECT pub.example.com:443" {
		t.Fatalf("the proxy was asked %q, want one CONNECT pub.example.com:443", asked)
	}
}

package web

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestCancelledCallsFreeTheirPlace: a client that cancels every call it
// makes (the go-sdk then sends notifications/cancelled) cannot use up the
// 16 places: after 16 cancelled calls to pages that hold, a 17th is
// still read and answered.
func TestCancelledCallsFreeTheirPlace(t *testing.T) {
	w := newWorld(t)
	if w == nil {
		return
	}
	w.res.set("pub.example.com", publicHost)
	var arrived atomic.Int32
	w.mux.HandleFunc("/hold", func(rw http.ResponseWriter, r *http.Request) {
		arrived.Add(1)
		<-r.Context().Done()
	})
	w.mux.HandleFunc("/quick", func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/plain")
		io.WriteString(rw, "quick")
	})
	tool, _ := w.tool(Config{})
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go tool.MCP().Run(ctx, Gate(st, MaxCalls))
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for i := 0; i < MaxCalls; i++ {
		cctx, ccancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			cs.CallTool(cctx, &mcp.CallToolParams{Name: "fetch", Arguments: map[string]any{"url": "http://pub.example.com/hold"}})
		}()
		waitFor(t, func() bool { return arrived.Load() == int32(i+1) }, "the held call at the host")
		ccancel()
		<-done
	}
	qctx, qcancel := context.WithTimeout(ctx, 20*time.Second)
	defer qcancel()
	res, err := cs.CallTool(qctx, &mcp.CallToolParams{Name: "fetch", Arguments: map[string]any{"url": "http://pub.example.com/quick"}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "quick") {
		t.Fatalf("a call after 16 cancelled ones: %v %+v", err, res)
	}
}

// TestOneIDTwiceHoldsTwoPlaces: over the raw protocol, 16 held calls,
// then 20 more under ids already open, then 14 under new ids: at most 16
// are ever at the host at once, however the server answers the repeats.
func TestOneIDTwiceHoldsTwoPlaces(t *testing.T) {
	w := newWorld(t)
	if w == nil {
		return
	}
	w.res.set("pub.example.com", publicHost)
	var arrived atomic.Int32
	release := make(chan struct{})
	w.mux.HandleFunc("/hold", func(rw http.ResponseWriter, r *http.Request) {
		arrived.Add(1)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	tool, _ := w.tool(Config{})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go io.Copy(io.Discard, outR)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go tool.MCP().Run(ctx, Gate(&mcp.IOTransport{Reader: inR, Writer: outW}, MaxCalls))
	send := func(s string) bool { _, err := io.WriteString(inW, s+"\n"); return err == nil }
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	call := func(id int) bool {
		return send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"fetch","arguments":{"url":"http://pub.example.com/hold"}}}`, id))
	}
	for id := 1; id <= MaxCalls; id++ {
		call(id)
	}
	waitFor(t, func() bool { return arrived.Load() == MaxCalls }, "16 held calls at the host")
	go func() {
		for i := 0; i < 20; i++ {
			if !call(1 + i%MaxCalls) {
				return
			}
		}
		for id := MaxCalls + 1; id <= 30; id++ {
			if !call(id) {
				return
			}
		}
	}()
	time.Sleep(500 * time.Millisecond)
	if n := arrived.Load(); n != MaxCalls {
		t.Fatalf("%d calls at the host at once, want %d", n, MaxCalls)
	}
	close(release)
	inW.Close()
}

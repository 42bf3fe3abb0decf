package mcpstdio

import (
	"bufio"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/internal/stdpipe"
)

// BenchmarkTransport times serve's side of one call's messages — a
// tools/call request read and the answer to a 4 KiB read written — on
// Link's transport (link) against the go-sdk's mcp.IOTransport (base) over
// the same pipes, interleaved, with the client's side in the same
// goroutine.
func BenchmarkTransport(b *testing.B) {
	text := strings.Repeat("0123456789abcde\n", 256)
	ok, _ := json.Marshal(map[string]any{"path": "4k.txt", "version": "v1", "line": 1, "lines": 256, "text": text})
	result, err := json.Marshal(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(ok)}}})
	if err != nil {
		b.Fatal(err)
	}
	req := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"read","arguments":{"path":"4k.txt"}}}` + "\n")
	type side struct {
		conn   mcp.Connection
		client func() // writes req, reads the answer's line
	}
	open := func(link bool) side {
		inChild, in, err := stdpipe.ForChild(false) // the client writes inChild, serve reads in
		if err != nil {
			b.Fatal(err)
		}
		outChild, out, err := stdpipe.ForChild(true) // serve writes out, the client reads outChild
		if err != nil {
			b.Fatal(err)
		}
		var t mcp.Transport = &mcp.IOTransport{Reader: in, Writer: out}
		if link {
			t = New(in, out)
		}
		conn, err := t.Connect(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		br := bufio.NewReaderSize(outChild, 64<<10)
		b.Cleanup(func() { conn.Close(); inChild.Close(); outChild.Close() })
		return side{conn, func() {
			if _, err := inChild.Write(req); err != nil {
				b.Fatal(err)
			}
			msg, err := conn.Read(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			r := msg.(*jsonrpc.Request)
			if err := conn.Write(context.Background(), &jsonrpc.Response{ID: r.ID, Result: result}); err != nil {
				b.Fatal(err)
			}
			if line, err := br.ReadSlice('\n'); err != nil || len(line) < len(result) {
				b.Fatalf("the answer: %v", err)
			}
		}}
	}
	link, base := open(true), open(false)
	var lt, bt time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		link.client()
		lt += time.Since(start)
		start = time.Now()
		base.client()
		bt += time.Since(start)
	}
	b.ReportMetric(float64(lt.Nanoseconds())/float64(b.N), "link-ns/op")
	b.ReportMetric(float64(bt.Nanoseconds())/float64(b.N), "base-ns/op")
	b.ReportMetric(float64(lt)/float64(bt), "x-baseline")
}

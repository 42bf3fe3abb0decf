package toolbridge

import (
	"bufio"
	"bytes"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/connpass"
	"lnk.dev/lnk/internal/testenv"
)

// A tools/call's time split by where it goes, each round timing the same
// call four ways in turn: through the proxy's route and the bridge (what
// a sandboxed client does), to the bridge's socket alone, straight on
// stdio (the baseline), and the client's own transport alone — the same
// client posting to a stub that answers at once on a connection of its
// own, as the spec's one request per connection asks. The stdio baseline
// has no transport of its own to pay, so transport-p50-ns is the part of
// what the route adds that any streamable-HTTP client pays (a connection,
// an HTTP request written and an answer read), and not Link's.
func BenchmarkToolsCallSplit(b *testing.B) {
	for _, sv := range servers {
		b.Run("server="+sv.name, func(b *testing.B) {
			br := newBenchRoute(b, map[string]caps.Tool{"test": {Allow: []string{"echo"}}}, sv.tiny, Settings{})
			sid := br.session(b)
			d := newDirect(b, sv.tiny)
			dir := filepath.Dir(br.proxy)
			stubSock, stubChannel := stubServer(b, filepath.Join(dir, "stub.sock"))
			ways := []struct {
				name string
				call func() (string, error)
			}{
				{"link", func() (string, error) { _, body, err := br.post(sid, echoCall); return body, err }},
				{"bridge-alone", (&benchRoute{proxy: br.r.Socket, route: br.route}).caller(sid)},
				{"base", func() (string, error) { return d.call(echoCall) }},
				{"transport", (&benchRoute{proxy: stubSock, route: br.route}).caller(sid)},
				{"transport-via-proxy", (&benchRoute{proxy: benchProxy(b, testenv.Home(b), stubChannel), route: br.route}).caller(sid)},
			}
			times := make([][]time.Duration, len(ways))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for w, way := range ways {
					t0 := time.Now()
					body, err := way.call()
					times[w] = append(times[w], time.Since(t0))
					if err != nil || !strings.Contains(body, `"id":7`) {
						b.Fatalf("%s: %v %s", way.name, err, body)
					}
				}
			}
			p := make([]time.Duration, len(ways))
			for w, way := range ways {
				p[w] = p50(times[w])
				b.ReportMetric(float64(p[w].Nanoseconds()), way.name+"-p50-ns")
			}
			link, base, transport, viaProxy := p[0], p[2], p[3], p[4]
			b.ReportMetric(float64((link - base).Microseconds()), "added-p50-us")
			b.ReportMetric(float64((link - base - transport).Microseconds()), "added-less-transport-p50-us")
			b.ReportMetric(float64((viaProxy - transport).Microseconds()), "proxy-route-p50-us")
			b.ReportMetric(float64(link)/float64(base), "x-baseline")
		})
	}
}

func (br *benchRoute) caller(sid string) func() (string, error) {
	return func() (string, error) { _, body, err := br.post(sid, echoCall); return body, err }
}

// stubServer answers each connection's one request at once with an empty
// JSON-RPC result: what a client's transport costs with no bridge behind.
// It listens on sock, and takes connections passed on the channel it
// returns (the proxy's end) as the bridge does.
func stubServer(b *testing.B, sock string) (string, *os.File) {
	ln, err := net.Listen("unix", sock)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ln.Close() })
	ch, send, err := connpass.ReceivingPair()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ch.Close() })
	reply := []byte("HTTP/1.1 200 OK\r\nContent-Length: 36\r\nConnection: close\r\nContent-Type: application/json\r\n\r\n" + `{"jsonrpc":"2.0","id":7,"result":{}}`)
	answer := func(c net.Conn) {
		defer c.Close()
		r := bufio.NewReader(c)
		req, err := http.ReadRequest(r)
		if err != nil {
			return
		}
		n, _ := strconv.Atoi(req.Header.Get("Content-Length"))
		var body bytes.Buffer
		body.ReadFrom(&limited{r, n})
		c.Write(reply)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go answer(c)
		}
	}()
	go func() {
		r := connpass.NewReceiver(ch)
		for {
			c, err := r.Receive()
			if err != nil {
				return
			}
			go answer(c)
		}
	}()
	return sock, send
}

type limited struct {
	r *bufio.Reader
	n int
}

func (l *limited) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, net.ErrClosed
	}
	if len(p) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= n
	return n, err
}

package netbroker

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// smokescreenVersion is the release Link is compared with. It is built
// beside the project, never inside it: scripts/bench.sh runs `go
// install` into LNK_BENCH_CACHE where it is missing (or LNK_SMOKESCREEN
// names a binary built elsewhere).
const smokescreenVersion = "v0.1.0"

// smokescreenBin returns the smokescreen binary; the benchmark is
// skipped, saying why ("not measured: …"), where there is none.
func smokescreenBin(b *testing.B) string {
	if p := os.Getenv("LNK_SMOKESCREEN"); p != "" {
		return p
	}
	why := "LNK_BENCH_CACHE is unset (scripts/bench.sh builds it there)"
	if cache := os.Getenv("LNK_BENCH_CACHE"); cache != "" {
		bin := filepath.Join(cache, "smokescreen-"+smokescreenVersion, "smokescreen")
		fi, err := os.Stat(bin)
		if err == nil && fi.Mode().IsRegular() {
			return bin
		}
		why = fmt.Sprintf("%s is missing: scripts/bench.sh could not build it (go install github.com/stripe/smokescreen@%s; its log says why)", bin, smokescreenVersion)
	}
	fmt.Printf("%s: smokescreen not measured: %s\n", b.Name(), why)
	b.Skip("smokescreen not measured: " + why)
	return ""
}

func lastLine(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}

// smokescreen runs smokescreen on loopback allowing 127.0.0.1:port
// alone, and returns its address and pid once it accepts connections.
func smokescreen(b *testing.B, port uint16) (string, int) {
	bin := smokescreenBin(b)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, lport, _ := net.SplitHostPort(addr)
	cmd := exec.Command(bin, "--listen-ip", "127.0.0.1", "--listen-port", lport,
		"--allow-address", fmt.Sprintf("127.0.0.1:%d", port), "--unsafe-allow-private-ranges",
		"--statsd-address", "127.0.0.1:9") // discard: nothing listens there
	stderr := &limitedBuffer{left: 64 << 10}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for deadline := time.Now().Add(30 * time.Second); ; {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return addr, cmd.Process.Pid
		}
		if time.Now().After(deadline) {
			b.Fatalf("smokescreen did not listen on %s within 30 s: %s", addr, stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// limitedBuffer keeps the first bytes written to it and drops the rest,
// so a chatty log can't grow without bound.
type limitedBuffer struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	left int
}

func (l *limitedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return lastLine(l.buf.Bytes())
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.left > 0 {
		n := min(l.left, len(p))
		l.buf.Write(p[:n])
		l.left -= n
	}
	return len(p), nil
}

// connectVia opens a CONNECT tunnel to 127.0.0.1:port through the HTTP
// proxy at network/addr.
func connectVia(network, addr string, port uint16) (net.Conn, error) {
	c, err := net.Dial(network, addr)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(c, "CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", port, port)
	br := bufio.NewReaderSize(c, 64)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		c.Close()
		return nil, fmt.Errorf("CONNECT through %s: %v %v", addr, resp, err)
	}
	if br.Buffered() > 0 { // the tunnel's first bytes came with the answer
		return &bufferedConn{Conn: c, br: br}, nil
	}
	return c, nil
}

// bufferedConn reads on through the reader that read the CONNECT answer.
type bufferedConn struct {
	net.Conn
	br *bufio.Reader
}

func (c *bufferedConn) Read(b []byte) (int, error) { return c.br.Read(b) }

// childCPU is a process's CPU time so far, from /proc.
func childCPU(pid int) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+s) * time.Second / 100 // USER_HZ
}

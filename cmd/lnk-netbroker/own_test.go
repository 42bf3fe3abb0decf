package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"lnk.dev/lnk/helpers/netbroker"
	"lnk.dev/lnk/internal/landlock"
	"lnk.dev/lnk/internal/testenv"
)

// The real binary, under its seccomp filter (which refuses netlink
// sockets), in a network namespace of the test's own where an interface
// holds this "machine's" public IPv4 and global IPv6 addresses and the
// owner's services listen on 0.0.0.0 and ::. CONNECT, absolute-form GET
// and SOCKS5 to either address, the IPv4-mapped form, an address added
// after the proxy started and one on an interface added after it are
// each refused and logged with their reason; a granted loopback port
// (the control) is reached through the same proxy, and the owner's
// service answers when dialled directly.
func TestBrokerRefusesOwnAddresses(t *testing.T) {
	testenv.Require(t, landlock.ABI() >= 1, "landlock")
	if !testenv.InNetns(t) {
		return
	}
	const own4, own6, later, newIface = "198.51.100.5", "2001:db8:5::5", "198.51.100.9", "198.51.103.7"
	if err := testenv.AddInterface("lnkown0"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{own4 + "/24", own6 + "/64"} {
		if err := testenv.AddAddr("lnkown0", netip.MustParsePrefix(p)); err != nil {
			t.Fatal(err)
		}
	}
	var hits atomic.Int32
	for _, addr := range []string{"[::]:80", "[::]:443"} { // dual-stack: 0.0.0.0 and :: at once
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits.Add(1)
			io.WriteString(w, "owner's service")
		})}
		go srv.Serve(ln)
		t.Cleanup(func() { srv.Close() })
	}
	control, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { control.Close() })
	go func() {
		for {
			c, err := control.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	controlPort := uint16(control.Addr().(*net.TCPAddr).Port)

	home := testenv.Home(t)
	grants, _ := json.Marshal(netbroker.Grants{Internet: netbroker.InternetGrants{On: true}, LocalhostPorts: []uint16{controlPort}})
	cmd := exec.Command(testenv.Bin(t, "lnk-netbroker"), "--home", home)
	cmd.Stdin = bytes.NewReader(grants)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &testenv.SyncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	out := bufio.NewReader(stdout)
	socket, err := out.ReadString('\n')
	if err != nil {
		t.Fatalf("no socket on stdout: %v; stderr: %s", err, stderr)
	}
	socket = strings.TrimSpace(socket)
	line, _ := out.ReadString('\n')
	var told netbroker.Told
	if err := json.Unmarshal([]byte(line), &told); err != nil {
		t.Fatalf("what the proxy tells: %q: %v", line, err)
	}
	if strings.Contains(stderr.String(), "degraded") {
		t.Fatalf("the proxy runs degraded: %s", stderr)
	}

	dial := func() net.Conn {
		c, err := net.Dial("unix", socket)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.SetDeadline(time.Now().Add(30 * time.Second))
		return c
	}
	ask := func(req string) (int, string) {
		c := dial()
		io.WriteString(c, req)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("%q: %v", req, err)
		}
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	socks := func(a netip.Addr, port uint16) byte {
		c := dial()
		c.Write([]byte{5, 1, 2})
		sel := make([]byte, 2)
		io.ReadFull(c, sel)
		c.Write(append([]byte{1, 3, 'l', 'n', 'k', byte(len(told.Secret))}, told.Secret...))
		st := make([]byte, 2)
		if _, err := io.ReadFull(c, st); err != nil || st[1] != 0 {
			t.Fatalf("SOCKS5 authentication: %v %v", st, err)
		}
		typ := byte(1)
		if a.Is6() {
			typ = 4
		}
		c.Write(append(append([]byte{5, 1, 0, typ}, a.AsSlice()...), byte(port>>8), byte(port)))
		rep := make([]byte, 4)
		if _, err := io.ReadFull(c, rep); err != nil {
			t.Fatalf("SOCKS5 to %s: %v", a, err)
		}
		return rep[1]
	}

	if code, body := ask(fmt.Sprintf("CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\n", controlPort)); code != 200 {
		t.Fatalf("the control, a granted loopback port: %d %q; stderr: %s", code, body, stderr)
	}
	if code := socks(netip.MustParseAddr("127.0.0.1"), controlPort); code != 0 {
		t.Fatalf("the control over SOCKS5: reply %#x", code)
	}
	if err := testenv.AddAddr("lnkown0", netip.MustParsePrefix(later+"/32")); err != nil {
		t.Fatal(err)
	}
	// A new interface, after the proxy started, with an address of its own.
	if err := testenv.AddInterface("lnkown1"); err != nil {
		t.Fatal(err)
	}
	if err := testenv.AddAddr("lnkown1", netip.MustParsePrefix(newIface+"/24")); err != nil {
		t.Fatal(err)
	}
	for _, req := range []string{
		"CONNECT " + own4 + ":443 HTTP/1.1\r\n\r\n",
		"GET http://" + own4 + "/ HTTP/1.1\r\nHost: " + own4 + "\r\n\r\n",
		"CONNECT [" + own6 + "]:443 HTTP/1.1\r\n\r\n",
		"GET http://[" + own6 + "]/ HTTP/1.1\r\nHost: [" + own6 + "]\r\n\r\n",
		"CONNECT [::ffff:" + own4 + "]:443 HTTP/1.1\r\n\r\n",
		"CONNECT " + later + ":443 HTTP/1.1\r\n\r\n",
		"CONNECT " + newIface + ":443 HTTP/1.1\r\n\r\n",
	} {
		if code, body := ask(req); code != 403 || !strings.Contains(body, "address of this machine's own: never reachable") {
			t.Errorf("%q: %d %q", strings.SplitN(req, "\r\n", 2)[0], code, body)
		}
	}
	for _, a := range []string{own4, own6, "::ffff:" + own4, later, newIface} {
		if code := socks(netip.MustParseAddr(a), 443); code != 2 {
			t.Errorf("SOCKS5 to %s: reply %#x, want 0x02 (not allowed)", a, code)
		}
	}
	if hits.Load() != 0 {
		t.Fatalf("the owner's service was reached %d times through the proxy", hits.Load())
	}
	deadline := time.Now().Add(20 * time.Second)
	for strings.Count(stderr.String(), "address of this machine's own: never reachable") < 12 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := strings.Count(stderr.String(), `"decision":"refuse","rule":"address","reason":`); n != 12 {
		t.Fatalf("%d refusals logged, want 12:\n%s", n, stderr)
	}
	resp, err := http.Get("http://" + own4 + "/")
	if err != nil {
		t.Fatalf("the owner's service does not answer directly: %v", err)
	}
	resp.Body.Close()
}

// ownFilterEnv marks the child of TestOwnAddrsNeededBeforeTheFilter.
const ownFilterEnv = "LNK_NETBROKER_OWN_FILTER_CHILD"

// The proxy's own filter refuses the netlink socket the addresses are
// listed on, so they must be learned before it is loaded; and a proxy
// started once it is loaded, which cannot learn them, refuses to start
// rather than run with none. An rtnetlink socket opened before the
// filter (the control) is still read after it.
func TestOwnAddrsNeededBeforeTheFilter(t *testing.T) {
	if os.Getenv(ownFilterEnv) == "1" {
		before, err := netbroker.WatchOwnAddrs()
		if err != nil {
			t.Fatalf("before the filter: %v", err)
		}
		if err := loadFilter(); err != nil {
			t.Fatalf("seccomp: %v", err)
		}
		if _, err := before.AnyOwn(netip.MustParseAddr("127.0.0.1")); err != nil {
			t.Fatalf("the socket opened before the filter, read after it: %v", err)
		}
		rules, err := netbroker.RulesFrom(&netbroker.Grants{Internet: netbroker.InternetGrants{On: true}})
		if err != nil {
			t.Fatal(err)
		}
		p, err := netbroker.New(netbroker.Config{Rules: rules})
		if err == nil || !strings.Contains(err.Error(), "listing this machine's addresses") {
			t.Fatalf("a proxy started under the filter: %v, %v; want its refusal to start", p, err)
		}
		return
	}
	testenv.Require(t, runtime.GOARCH == "amd64", "amd64 (the only embedded filter)")
	cmd := exec.Command(os.Args[0], "-test.run=^TestOwnAddrsNeededBeforeTheFilter$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), ownFilterEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS") {
		t.Fatalf("the child under the filter: %v\n%s", err, out)
	}
}

// Through a real sandbox (lnk sandbox run --internet) in a network
// namespace of the test's own, curl asks the proxy for the owner's
// service on this "machine's" public address, by HTTP and by SOCKS5:
// both are refused, and the wire's log has each refusal with its reason.
func TestSandboxedCurlRefusedOwnAddress(t *testing.T) {
	if !testenv.InNetns(t) {
		return
	}
	curl, home, port := sandboxedCurl(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "granted-server") })
	if err := testenv.AddInterface("lnkown0"); err != nil {
		t.Fatal(err)
	}
	if err := testenv.AddAddr("lnkown0", netip.MustParsePrefix("198.51.100.5/24")); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "0.0.0.0:80")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "owner's service") })}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	script := fmt.Sprintf(`creds=${ALL_PROXY#socks5h://}
echo "control=$(curl -s -m 20 http://127.0.0.1:%d/)"
echo "http=$(curl -s -m 20 http://198.51.100.5/)"
curl -s -m 20 --socks5-hostname "$creds" http://198.51.100.5/; echo "socks-exit=$?"
`, port)
	out, log := sandboxRun(t, home, "--internet", "--port", fmt.Sprint(port), "--command", curl, "--", "/bin/sh", "-c", script)
	for _, want := range []string{"control=granted-server\n", "http=lnk: refused: 198.51.100.5 is an address of this machine's own: never reachable from a sandbox", "socks-exit=97\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in the sandbox's output:\n%s", want, out)
		}
	}
	if strings.Contains(out, "owner's service") {
		t.Fatalf("the sandbox reached the owner's service:\n%s", out)
	}
	for _, want := range []string{
		`"kind":"refuse","request":"net http","route":"198.51.100.5:80","reason":"address: 198.51.100.5 is an address of this machine's own: never reachable from a sandbox"`,
		`"kind":"refuse","request":"net socks","route":"198.51.100.5:80","reason":"address: 198.51.100.5 is an address of this machine's own: never reachable from a sandbox"`,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("no %s in the wire's log:\n%s", want, log)
		}
	}
}

package bucket

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/internal/refusal"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/internal/testenv/s3peer"
)

// The owner's network, in a namespace of the test's own: its end (this
// machine's own address there) and a test host's, private by class.
var (
	lanOurs = netip.MustParsePrefix("10.77.0.1/24")
	lanHost = netip.MustParsePrefix("10.77.0.7/24")
)

// nasName is the endpoint name the test's DNS answers with lanHost.
const nasName = "nas.lnk-test.example"

// TestPrivateHostBucket, with an S3 server over TLS at a private test
// address (10.77.0.7:443) that the test's DNS names nasName:
//   - without --private-host the owner's bucket there is refused at push
//     and pull, the hint the command that allows it, nothing stored;
//   - added with it, it pushes and pulls through Link's proxy, the mark
//     read back from ~/.lnk/agents/<id> (600) and shown by List, never in
//     rclone.conf;
//   - even so, an answer of loopback or of this machine's own address is
//     refused, and the proxy tunnels to nasName:443 alone;
//   - the same conf received (as a move places it) is refused again: a
//     received bucket reaches only the internet.
func TestPrivateHostBucket(t *testing.T) {
	if !testenv.InNetns(t) {
		return
	}
	hosts, err := testenv.NewHosts("lnkbkt1", []testenv.AddrPair{{Ours: lanOurs, Theirs: lanHost}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := hosts.Listen("tcp", lanHost.Addr().String()+":443")
	if err != nil {
		t.Fatal(err)
	}
	cert, caPEM := selfSigned(t, nasName)
	p := s3peer.Serve(t, testBucket, ln, &cert)
	a, files := testAgent(t)
	dns := startDNS(t, map[string][]netip.Addr{nasName: {lanHost.Addr()}})
	a.Resolver = dns.resolver()
	h, err := a.rcloneHome()
	if err != nil {
		t.Fatal(err)
	}
	h.Close()
	a.caCert = filepath.Join(h.Name(), "test-ca.pem")
	if err := os.WriteFile(a.caCert, caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	backupFiles(t, files)
	ctx := context.Background()
	ep := "https://" + nasName
	add := func(private bool) {
		t.Helper()
		if _, err := a.Add(ctx, New{Name: "nas", Endpoint: ep, S3Bucket: testBucket, PrivateHost: private,
			KeyID: s3peer.KeyID, SecretKey: value(t, s3peer.Secret)}); err != nil {
			t.Fatal(err)
		}
	}
	marks := filepath.Join(a.Home, ".lnk", "agents", a.ID, PrivateFile)
	refusedPrivate := func(when string) {
		t.Helper()
		_, err := a.Push(ctx, files, "nas")
		var ref *refusal.Refusal
		if !errors.Is(err, ErrEndpointReach) || !errors.As(err, &ref) || !strings.Contains(ref.Reason, "resolves to a private network address (10.77.0.7)") {
			t.Fatalf("%s: a push: %v; want refused as a private address", when, err)
		}
		if want := "lnk agent bucket add helper nas --s3 " + ep + " --bucket " + testBucket + " --private-host"; !strings.Contains(ref.Hint, want) {
			t.Fatalf("%s: the hint %q; want it to name %q", when, ref.Hint, want)
		}
		if _, err := a.PullBackup(ctx, "link", "nas"); !errors.Is(err, ErrEndpointReach) {
			t.Fatalf("%s: a pull: %v; want refused", when, err)
		}
		if keys := p.Keys(t, testBucket); len(keys) != 0 {
			t.Fatalf("%s: the server holds %v", when, keys)
		}
	}

	add(false)
	refusedPrivate("without --private-host")

	if err := a.Remove("nas"); err != nil {
		t.Fatal(err)
	}
	add(true)
	got, err := os.ReadFile(marks)
	if err != nil || string(got) != "nas "+ep+"\n" {
		t.Fatalf("the mark read back: %q, %v", got, err)
	}
	if fi, err := os.Stat(marks); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the mark's file: %v, %v; want mode 600", fi, err)
	}
	conf, err := a.ReadConf()
	if err != nil || strings.Contains(strings.ToLower(string(conf)), "private") {
		t.Fatalf("rclone.conf holds the mark, or cannot be read: %v", err)
	}
	if l, err := a.List(); err != nil || len(l) != 1 || !l[0].PrivateHost {
		t.Fatalf("List: %+v, %v; want nas marked", l, err)
	}
	if _, err := a.Push(ctx, files, "nas"); err != nil {
		t.Fatalf("with --private-host, a push: %v", err)
	}
	stored := p.Keys(t, testBucket)
	if len(stored) == 0 {
		t.Fatal("with --private-host, nothing was pushed")
	}
	pulled, err := a.PullBackup(ctx, "link", "nas")
	if err != nil {
		t.Fatalf("with --private-host, a pull: %v", err)
	}
	pulled.Close()

	// Loopback and this machine's own address stay refused.
	for _, c := range []struct{ addr, why string }{
		{"127.0.0.1", "resolves to a loopback address (127.0.0.1)"},
		{lanOurs.Addr().String(), "resolves to an address of this machine's own (" + lanOurs.Addr().String() + ")"},
	} {
		dns.set(nasName, lanHost.Addr(), netip.MustParseAddr(c.addr))
		if _, err := a.Push(ctx, files, "nas"); !errors.Is(err, ErrEndpointReach) || !strings.Contains(err.Error(), c.why) {
			t.Fatalf("with --private-host, answered %s too: %v; want refused, %q", c.addr, err, c.why)
		}
	}
	dns.set(nasName, lanHost.Addr())

	// The proxy tunnels to the endpoint's host and port alone.
	cf, f, err := a.load()
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	rt, err := a.openRoute(ctx, cf.entries[0])
	cf.destroy()
	if err != nil {
		t.Fatal(err)
	}
	if code := proxyConnect(t, rt.proxy, nasName+":443"); code != 200 {
		t.Fatalf("CONNECT %s:443: %d; want 200", nasName, code)
	}
	for _, target := range []string{nasName + ":444", lanHost.Addr().String() + ":443", "other.lnk-test.example:443"} {
		if code := proxyConnect(t, rt.proxy, target); code != 403 {
			t.Fatalf("CONNECT %s: %d; want 403", target, code)
		}
	}
	rt.Close()

	// The same conf, received: the mark is the owner's, not the conf's.
	if _, err := a.PutConf(conf); err != nil {
		t.Fatal(err)
	}
	clear(conf)
	if got, err := os.ReadFile(marks); err != nil || len(got) != 0 {
		t.Fatalf("after a receive, the marks: %q, %v; want none", got, err)
	}
	if l, err := a.List(); err != nil || len(l) != 1 || l[0].PrivateHost {
		t.Fatalf("List after a receive: %+v, %v; want nas unmarked", l, err)
	}
	before := len(p.Keys(t, testBucket))
	_, err = a.Push(ctx, files, "nas")
	if !errors.Is(err, ErrEndpointReach) || !strings.Contains(err.Error(), "10.77.0.7") {
		t.Fatalf("the received bucket: %v; want refused", err)
	}
	if n := len(p.Keys(t, testBucket)); n != before {
		t.Fatalf("the received bucket's refused push stored %d objects", n-before)
	}
}

// proxyConnect asks the route's proxy to CONNECT to target and returns
// its status.
func proxyConnect(t *testing.T, proxy, target string) int {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(proxy, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Write([]byte("CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("CONNECT %s: %v", target, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestPrivateHostMarkLeavesWithTheAgent: an agent leaving (DeleteConf)
// takes its --private-host marks away with its rclone.conf; a bucket
// added without the flag at the same name takes a mark away too, and
// one of another name keeps its own (the control).
func TestPrivateHostMarkLeavesWithTheAgent(t *testing.T) {
	a, _ := testAgent(t)
	ctx := context.Background()
	add := func(name string, private bool) {
		t.Helper()
		if _, err := a.Add(ctx, New{Name: name, Endpoint: "https://" + nasName, S3Bucket: testBucket, PrivateHost: private,
			KeyID: s3peer.KeyID, SecretKey: value(t, s3peer.Secret)}); err != nil {
			t.Fatal(err)
		}
	}
	marks := filepath.Join(a.Home, ".lnk", "agents", a.ID, PrivateFile)
	add("nas", true)
	add("nas2", true)
	if err := a.Remove("nas"); err != nil {
		t.Fatal(err)
	}
	add("nas", false)
	if got, err := os.ReadFile(marks); err != nil || string(got) != "nas2 https://"+nasName+"\n" {
		t.Fatalf("the marks: %q, %v; want nas2's alone", got, err)
	}
	if err := a.DeleteConf(); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(marks); err != nil || len(got) != 0 {
		t.Fatalf("after the agent left, the marks: %q, %v; want none", got, err)
	}
}

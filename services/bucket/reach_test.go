package bucket

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"math/big"
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

// testName is the endpoint name the tests' own DNS server answers for;
// no resolver but theirs is ever asked it.
const testName = "s3.lnk-test.example"

// receiveBucket gives a, as a receive does, a bucket at endpoint whose
// rclone.conf came from elsewhere: written by Add, read as a move reads
// it, narrowed as a receive narrows it (which keeps a name of more than
// one label), and put back.
func receiveBucket(t *testing.T, a *Agent, name, endpoint string) {
	t.Helper()
	if _, err := a.Add(context.Background(), New{Name: name, Endpoint: endpoint, S3Bucket: testBucket,
		KeyID: s3peer.KeyID, SecretKey: value(t, s3peer.Secret)}); err != nil {
		t.Fatal(err)
	}
	data, err := a.ReadConf()
	if err != nil {
		t.Fatal(err)
	}
	if err := a.DeleteConf(); err != nil {
		t.Fatal(err)
	}
	kept, dropped, err := NarrowReceived(data)
	if err != nil || len(dropped) != 0 || kept == nil {
		t.Fatalf("a receive left %s out (%v, %v): nothing to test at push", endpoint, dropped, err)
	}
	if _, err := a.PutConf(kept); err != nil {
		t.Fatal(err)
	}
}

// TestReceivedNameToLoopbackRefusedNothingSent: a received bucket whose
// endpoint is a name the DNS answers with 127.0.0.1, where an S3 server
// of the test's really listens, is refused at push and at pull: rclone
// never starts, the server's store is read back empty, no pull folder
// is left; so is a name that does not resolve, and the owner's endpoint
// at a NAT64 form of 127.0.0.1 (no loopback here). The control: the owner's
// bucket at http://127.0.0.1:PORT, the same server, pushes and pulls.
func TestReceivedNameToLoopbackRefusedNothingSent(t *testing.T) {
	a, files := testAgent(t)
	p := s3peer.Start(t, testBucket)
	port := strings.TrimPrefix(p.URL, "http://127.0.0.1")
	dns := startDNS(t, map[string][]netip.Addr{testName: {netip.MustParseAddr("127.0.0.1")}})
	a.Resolver = dns.resolver()
	h, err := a.rcloneHome()
	if err != nil {
		t.Fatal(err)
	}
	h.Close()
	rec := h.Name()
	a.Rclone = recordingRclone(t, rec)
	backupFiles(t, files)
	ctx := context.Background()

	for _, c := range []struct{ host, why string }{
		{testName, "resolves to a loopback address (127.0.0.1)"},
		{"gone.lnk-test.example", "does not resolve"},
	} {
		receiveBucket(t, a, "far", "https://"+c.host+port)
		_, err := a.Push(ctx, files, "far")
		if !errors.Is(err, ErrEndpointReach) || !strings.Contains(err.Error(), c.why) {
			t.Fatalf("a push to %s: %v; want refused, %q", c.host, err, c.why)
		}
		var ref *refusal.Refusal
		if !errors.As(err, &ref) || !strings.Contains(ref.Hint, "lnk agent bucket add helper far --s3 ") {
			t.Fatalf("a push to %s: %v; want a refusal whose hint names lnk agent bucket add", c.host, err)
		}
		if _, err := a.PullBackup(ctx, "link", "far"); !errors.Is(err, ErrEndpointReach) || !strings.Contains(err.Error(), c.why) {
			t.Fatalf("a pull from %s: %v; want refused, %q", c.host, err, c.why)
		}
		if b, err := os.ReadFile(filepath.Join(rec, "cmdline")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("rclone ran for a refused endpoint: %q", b)
		}
		if keys := p.Keys(t, testBucket); len(keys) != 0 {
			t.Fatalf("the server holds %v after a refused push", keys)
		}
		if d := pullDirs(t, a); len(d) != 0 {
			t.Fatalf("a refused pull left %v", d)
		}
		if err := a.DeleteConf(); err != nil {
			t.Fatal(err)
		}
	}

	// An IPv6 form that only carries 127.0.0.1 (NAT64) is no loopback
	// of this machine's: the owner's own such endpoint is refused too.
	if _, err := a.Add(ctx, New{Name: "nat64", Endpoint: "http://[64:ff9b::7f00:1]" + port, S3Bucket: testBucket,
		KeyID: s3peer.KeyID, SecretKey: value(t, s3peer.Secret)}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Push(ctx, files, "nat64"); !errors.Is(err, ErrEndpointReach) || !strings.Contains(err.Error(), "is a loopback address") {
		t.Fatalf("a push to a NAT64 form of 127.0.0.1: %v; want refused", err)
	}
	if b, err := os.ReadFile(filepath.Join(rec, "cmdline")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("rclone ran for a refused endpoint: %q", b)
	}

	addPeer(t, a, p, "mine", false)
	if _, err := a.Push(ctx, files, "mine"); err != nil {
		t.Fatalf("the control, the owner's loopback bucket: %v", err)
	}
	if len(p.Keys(t, testBucket)) == 0 {
		t.Fatal("the control pushed nothing")
	}
	pulled, err := a.PullBackup(ctx, "link", "mine")
	if err != nil {
		t.Fatalf("the control, the owner's loopback bucket: %v", err)
	}
	pulled.Close()
}

// Addresses of the test's own network namespace (InNetns) and of its
// test hosts beside it (testenv.NewHosts): public by class, on no
// network but the two namespaces the test made.
var (
	ourAddr  = netip.MustParsePrefix("198.51.100.1/24")
	hostAddr = netip.MustParsePrefix("198.51.100.7/24")
)

// selfSigned is a certificate for name, and its PEM (the CA rclone is
// told to trust).
func selfSigned(t *testing.T, name string) (tls.Certificate, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), DNSNames: []string{name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// TestEndpointPinnedThroughTheProxy, in a network namespace of the
// test's own with an S3 server over TLS at a test host's address
// (198.51.100.7:443) that the test's DNS names testName:
//   - the control: a bucket at https://testName pushes and pulls, rclone
//     reaching it through Link's proxy alone (the store read back);
//   - a mixed answer (the host's address and 127.0.0.1), and an answer
//     of this namespace's own address, refuse the name whole: rclone
//     never starts, nothing more is stored;
//   - the proxy of an open route tunnels to testName:443 only: CONNECT to
//     the host's address itself, to another port of the name, and to
//     loopback is refused (each refusal kept once, with its reason),
//     and the name answered with 127.0.0.1 after the check still
//     reaches the address checked (no second lookup: no rebinding).
func TestEndpointPinnedThroughTheProxy(t *testing.T) {
	if !testenv.InNetns(t) {
		return
	}
	hosts, err := testenv.NewHosts("lnkbkt0", []testenv.AddrPair{{Ours: ourAddr, Theirs: hostAddr}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := hosts.Listen("tcp", hostAddr.Addr().String()+":443")
	if err != nil {
		t.Fatal(err)
	}
	cert, caPEM := selfSigned(t, testName)
	p := s3peer.Serve(t, testBucket, ln, &cert)
	a, files := testAgent(t)
	dns := startDNS(t, map[string][]netip.Addr{testName: {hostAddr.Addr()}})
	a.Resolver = dns.resolver()
	h, err := a.rcloneHome()
	if err != nil {
		t.Fatal(err)
	}
	h.Close()
	rec := h.Name()
	a.Rclone = recordingRclone(t, rec)
	a.caCert = filepath.Join(h.Name(), "test-ca.pem")
	if err := os.WriteFile(a.caCert, caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	backupFiles(t, files)
	ctx := context.Background()
	receiveBucket(t, a, "far", "https://"+testName)

	if _, err := a.Push(ctx, files, "far"); err != nil {
		t.Fatalf("the control, a public name through the proxy: %v", err)
	}
	stored := p.Keys(t, testBucket)
	if len(stored) == 0 {
		t.Fatal("the control pushed nothing")
	}
	pulled, err := a.PullBackup(ctx, "link", "far")
	if err != nil {
		t.Fatalf("the control, a pull through the proxy: %v", err)
	}
	pulled.Close()
	environ, _ := os.ReadFile(filepath.Join(rec, "environ"))
	for _, kv := range bytes.FieldsFunc(environ, func(r rune) bool { return r == 0 || r == '\n' }) {
		k, v, _ := strings.Cut(string(kv), "=")
		if (k == "HTTPS_PROXY" || k == "HTTP_PROXY") && !strings.HasPrefix(v, "http://127.0.0.1:") {
			t.Fatalf("rclone's %s is %q; want Link's proxy on loopback", k, v)
		}
	}
	if !bytes.Contains(environ, []byte("HTTPS_PROXY=http://127.0.0.1:")) {
		t.Fatal("rclone was not told of Link's proxy")
	}
	runs := func() int {
		b, _ := os.ReadFile(filepath.Join(rec, "cmdline"))
		return bytes.Count(b, []byte("\n"))
	}
	ran := runs()

	writeFile(t, files, "after.txt", []byte("never sent"))
	for _, c := range []struct {
		addrs []netip.Addr
		why   string
	}{
		{[]netip.Addr{hostAddr.Addr(), netip.MustParseAddr("127.0.0.1")}, "resolves to a loopback address (127.0.0.1)"},
		{[]netip.Addr{netip.MustParseAddr("::1"), hostAddr.Addr()}, "resolves to a loopback address (::1)"},
		{[]netip.Addr{hostAddr.Addr(), ourAddr.Addr()}, "resolves to an address of this machine's own (" + ourAddr.Addr().String() + ")"},
	} {
		dns.set(testName, c.addrs...)
		_, err := a.Push(ctx, files, "far")
		if !errors.Is(err, ErrEndpointReach) || !strings.Contains(err.Error(), c.why) {
			t.Fatalf("answered %v: %v; want refused, %q", c.addrs, err, c.why)
		}
		if _, err := a.PullBackup(ctx, "link", "far"); !errors.Is(err, ErrEndpointReach) {
			t.Fatalf("a pull, answered %v: %v", c.addrs, err)
		}
		if p.Holds(t, testBucket, []byte("never sent")) || len(p.Keys(t, testBucket)) != len(stored) {
			t.Fatalf("answered %v: the server now holds %v", c.addrs, p.Keys(t, testBucket))
		}
		if n := runs(); n != ran {
			t.Fatalf("answered %v: rclone ran %d times more", c.addrs, n-ran)
		}
	}

	// The proxy itself.
	dns.set(testName, hostAddr.Addr())
	c, f, err := a.load()
	if err != nil {
		t.Fatal(err)
	}
	defer c.destroy()
	f.Close()
	rt, err := a.openRoute(ctx, c.entries[0])
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if rt.proxy == "" || rt.port == 443 || rt.port == 0 {
		t.Fatalf("the route: proxy %q, port %d; want a proxy of its own", rt.proxy, rt.port)
	}
	dns.set(testName, netip.MustParseAddr("127.0.0.1"))
	connect := func(target string) int {
		t.Helper()
		conn, err := net.Dial("tcp", strings.TrimPrefix(rt.proxy, "http://"))
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
	if code := connect(testName + ":443"); code != 200 {
		t.Fatalf("CONNECT %s:443, its name answered with 127.0.0.1 since the check: %d; want 200, to the address checked", testName, code)
	}
	refused := []string{hostAddr.Addr().String() + ":443", testName + ":444", "127.0.0.1:443", "other.lnk-test.example:443"}
	for _, target := range append(refused, refused[0]) { // the first twice, as rclone's retries ask
		if code := connect(target); code != 403 {
			t.Fatalf("CONNECT %s: %d; want 403", target, code)
		}
	}
	err = rt.errRefused(c.entries[0])
	if !errors.Is(err, ErrEndpointReach) {
		t.Fatalf("the route's refusals: %v", err)
	}
	for _, target := range refused {
		if n := strings.Count(err.Error(), "connect "+target+":"); n != 1 {
			t.Fatalf("CONNECT %s named %d times in %v; want once", target, n, err)
		}
	}
	if strings.Contains(err.Error(), "connect "+testName+":443:") {
		t.Fatalf("the allowed CONNECT was kept as a refusal: %v", err)
	}
}

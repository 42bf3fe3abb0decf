package netbroker

import (
	"bufio"
	"context"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/helpers/keybroker"
	"lnk.dev/lnk/helpers/keybroker/secrets"
	"lnk.dev/lnk/internal/brokerproc"
	"lnk.dev/lnk/internal/sealedgrant"
	"lnk.dev/lnk/internal/secret"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/internal/wire"
)

// sealedGrant is one sealed secret a test keeps in secrets.toml: its
// value goes to example.com (publicAddr in the test's namespace), in
// the headers named (the default, Authorization, when none is).
type sealedGrant struct {
	name, value string
	headers     []string
}

// sealedProxy is a proxy made by Start for agent "main", its sealed
// secrets' values handed by a real lnk-keybroker over the netbroker's
// channel, as `lnk sandbox run` wires them; the upstream CA is pool.
type sealedProxy struct {
	running *Running
	told    Told
	log     *eventLog
}

func startSealedProxy(t *testing.T, pool *x509.CertPool, grants ...sealedGrant) *sealedProxy {
	t.Helper()
	bin := testenv.Bin(t, "lnk-keybroker")
	home := testenv.Home(t)
	id := strings.Repeat("cd", 16)
	var names []string
	for _, g := range grants {
		v, err := secret.FromString(g.value)
		if err != nil {
			t.Fatal(err)
		}
		if err := secrets.Create(home, g.name, v, "example.com", g.headers...); err != nil {
			t.Fatal(err)
		}
		if err := secrets.Grant(home, g.name, id); err != nil {
			t.Fatal(err)
		}
		names = append(names, g.name)
	}
	files, err := keybroker.StartFiles(home)
	if err != nil {
		t.Fatal(err)
	}
	proc, err := brokerproc.Start(brokerproc.Options{Path: bin, Files: files, Log: os.Stderr})
	for _, f := range files {
		f.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proc.Kill)
	kc, err := wire.NewClient(proc.Chan)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kc.Close() })
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "net"), os.NewFile(uintptr(fds[1]), "key")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	served, err := keybroker.NewClient(kc).NetChannel(ctx, id, theirs)
	theirs.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(served) != len(names) {
		t.Fatalf("the channel serves %v, want the agent's %v", served, names)
	}
	nc, err := wire.NewClient(ours)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	sp := &sealedProxy{log: &eventLog{}}
	opts := &SealedOptions{Names: names, Source: sealedgrant.NewNetClient(nc), RootCAs: pool}
	sp.running, err = Start(&Grants{AgentID: id, AgentName: "main"}, Options{Home: home, Sealed: opts,
		Config: Config{Resolver: mapResolver{"example.com": addrs(publicAddr)}, Own: ownList{}, Log: sp.log.add}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sp.running.Close() })
	sp.told = sp.running.Told()
	return sp
}

// do sends one request on the route of sealed secret name, as a
// sandboxed client would (head lines "K: V", body), and returns the
// answer with its body's bytes as they came: nothing decoded.
func (sp *sealedProxy) do(t *testing.T, method, name, pathQuery string, head []string, body string) (*http.Response, []byte) {
	t.Helper()
	c, err := net.Dial("unix", sp.running.Socket)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "%s /_link/s/%s/sealed/%s%s HTTP/1.1\r\nHost: 127.0.0.1\r\n", method, sp.told.Secret, name, pathQuery)
	for _, h := range head {
		b.WriteString(h + "\r\n")
	}
	fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n%s", len(body), body)
	io.WriteString(c, b.String())
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%s %s: %v", method, pathQuery, err)
	}
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", method, pathQuery, err)
	}
	return resp, got
}

// noSecretsLogged fails t if the proxy's log holds a value or its secret.
func (sp *sealedProxy) noSecretsLogged(t *testing.T, values ...string) {
	t.Helper()
	for _, e := range sp.log.all() {
		line := fmt.Sprintf("%+v", e)
		for _, v := range append(values, sp.told.Secret) {
			if strings.Contains(line, v) {
				t.Errorf("the log holds a secret: %s", line)
			}
		}
	}
}

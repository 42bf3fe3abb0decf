package netbroker

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
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

// A proxy made by Start with sealed secrets, its values from a real
// lnk-keybroker over the channel the keybroker took (NetChannel), as
// `lnk sandbox run` wires them: the secret's own host, over https at a
// public address, gets the value; the client is told only the
// placeholder (Told), and gets it back where the host echoed the value;
// a secret granted to the agent but not named to the proxy has no route;
// the log holds neither the value nor the proxy's secret.
func TestStartSealedWithKeybroker(t *testing.T) {
	if !inNetns(t) {
		return
	}
	home := testenv.Home(t)
	id := strings.Repeat("ab", 16)
	for name, host := range map[string]string{"API_KEY": "example.com", "UNNAMED": "example.com"} {
		v, _ := secret.FromString(realKey)
		if err := secrets.Create(home, name, v, host); err != nil {
			t.Fatal(err)
		}
		if err := secrets.Grant(home, name, id); err != nil {
			t.Fatal(err)
		}
	}
	var upstreamSaw atomic.Value
	pool := httpsAt(t, publicAddr+":443", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		upstreamSaw.Store(r.Host + " " + r.Header.Get("Authorization"))
		fmt.Fprintf(w, "echo %s", r.Header.Get("Authorization"))
	}))

	files, err := keybroker.StartFiles(home)
	if err != nil {
		t.Fatal(err)
	}
	proc, err := brokerproc.Start(brokerproc.Options{Path: testenv.Bin(t, "lnk-keybroker"), Files: files, Log: os.Stderr})
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
	_, err = keybroker.NewClient(kc).NetChannel(ctx, id, theirs)
	theirs.Close()
	if err != nil {
		t.Fatal(err)
	}
	nc, err := wire.NewClient(ours)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })

	log := &eventLog{}
	r, err := Start(&Grants{AgentID: id, AgentName: "main"}, Options{Home: home,
		Sealed: &SealedOptions{Names: []string{"API_KEY"}, Source: sealedgrant.NewNetClient(nc), RootCAs: pool},
		Config: Config{Resolver: mapResolver{"example.com": addrs(publicAddr)}, Own: ownList{}, Log: log.add}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	told := r.Told()
	placeholder := told.Placeholders["API_KEY"]
	if told.Secret == "" || !strings.HasPrefix(placeholder, "lnk-sealed-api_key-") || len(told.Placeholders) != 1 || strings.Contains(fmt.Sprint(told), realKey) {
		t.Fatalf("told %+v", told)
	}
	ask := func(path string) (*http.Response, string) {
		c, err := net.Dial("unix", r.Socket)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(30 * time.Second))
		fmt.Fprintf(c, "GET /_link/s/%s/sealed/%s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n\r\n", told.Secret, path, placeholder)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp, body := ask("API_KEY/v1/models")
	if resp.StatusCode != 200 || body != "echo Bearer "+placeholder {
		t.Fatalf("the route: %s %q", resp.Status, body)
	}
	if got, _ := upstreamSaw.Load().(string); got != "example.com Bearer "+realKey {
		t.Fatalf("the secret's host saw %q", got)
	}
	if resp, _ := ask("UNNAMED/v1/models"); resp.StatusCode != 404 {
		t.Fatalf("a secret not named to the proxy: %s", resp.Status)
	}
	for _, e := range log.all() {
		if s := fmt.Sprintf("%+v", e); strings.Contains(s, realKey) || strings.Contains(s, told.Secret) {
			t.Fatalf("the log holds a secret: %s", s)
		}
	}
}

package toolbridge

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"lnk.dev/lnk/internal/secret"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/toolbridge/tooldef"
)

// sharedRig is two sandboxes' bridges under one HOME, the test tool
// shared, and its hub a real lnk-toolhub.
type sharedRig struct {
	*rig
	other *rig
	mark  string
}

func newSharedRig(t *testing.T) *sharedRig {
	r := newRig(t, askNone, Settings{Sessions: 8, Starts: 4})
	var b [8]byte
	rand.Read(b[:])
	sr := &sharedRig{rig: r, mark: hex.EncodeToString(b[:])}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	d := &tooldef.Definition{Name: "test", Command: []string{self, "-lnk-mark=" + sr.mark}, Env: map[string]*secret.Value{}, Shared: true}
	for _, kv := range []string{"LNK_TEST_MCP_SERVER=1", "PATH=/usr/bin:/bin"} {
		k, v, _ := strings.Cut(kv, "=")
		d.Env[k], _ = secret.FromString(v)
	}
	if err := r.store.Save(d); err != nil {
		t.Fatal(err)
	}
	hubs := Hubs{Dir: filepath.Join(r.home, ".lnk"), Bin: testenv.Bin(t, "lnk-toolhub")}
	r.bridge.Hubs = hubs
	o := &rig{t: t, home: r.home, store: r.store, sock: filepath.Join(r.home, "bridge2.sock")}
	o.bridge = &Bridge{Agent: "bob", Grants: askNone, Defs: r.store, Settings: Settings{Sessions: 8, Starts: 4}, Hubs: hubs}
	l, err := net.Listen("unix", o.sock)
	if err != nil {
		t.Fatal(err)
	}
	go (&Server{Bridge: o.bridge}).Serve(l)
	t.Cleanup(func() {
		l.Close()
		o.bridge.Close()
		for _, pid := range sr.hubPids() {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		waitFor(t, "the hub's server to be gone", func() bool { return len(sr.marked()) == 0 })
	})
	sr.other = o
	return sr
}

func (sr *sharedRig) procs(has string) []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !strings.Contains(string(b)+"\x00", has) {
			continue
		}
		if st, _ := os.ReadFile("/proc/" + e.Name() + "/stat"); strings.Contains(string(st), ") Z ") {
			continue
		}
		var pid int
		fmt.Sscan(e.Name(), &pid)
		pids = append(pids, pid)
	}
	return pids
}

func (sr *sharedRig) marked() []int { return sr.procs("-lnk-mark=" + sr.mark + "\x00") }
func (sr *sharedRig) hubPids() []int {
	return sr.procs("--dir\x00" + filepath.Join(sr.home, ".lnk") + "\x00")
}

// Two sandboxes, three sessions each, through one hub to one server: every
// call uses the same id ("c-7"), and every answer is its own session's.
func TestSharedToolTwoSandboxesOneServerNoCrossedAnswers(t *testing.T) {
	sr := newSharedRig(t)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for bi, r := range []*rig{sr.rig, sr.other} {
		for si := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sid, err := r.tryInit()
				if err != nil {
					errs <- err
					return
				}
				for ci := range 5 {
					want := fmt.Sprintf("b%d-s%d-c%d", bi, si, ci)
					st, body := r.call(sid, "echo", want)
					if st != 200 || !strings.Contains(body, `"text":"`+want+`"`) || !strings.Contains(body, `"id":"c-7"`) {
						errs <- fmt.Errorf("%s got %d %s", want, st, body)
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := len(sr.marked()); n != 1 {
		t.Errorf("%d server processes, want one shared", n)
	}
	// Bridges that started hubs at once leave one: the others lose the
	// lock and exit.
	waitFor(t, "one hub", func() bool { return len(sr.hubPids()) == 1 })
	// The bridge's rules still hold before the hub: an ungranted tool never
	// reaches it.
	if st, _, _ := sr.post("other", "", initBody); st != 403 {
		t.Errorf("an ungranted tool: %d", st)
	}
}

// tryInit is initSession, safe off the test's goroutine.
func (r *rig) tryInit() (string, error) {
	st, sid, body := r.post("test", "", initBody)
	if st != 200 || sid == "" {
		return "", fmt.Errorf("initialize: %d %q %s", st, sid, body)
	}
	if st, _, body := r.post("test", sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); st != 202 {
		return "", fmt.Errorf("initialized: %d %s", st, body)
	}
	return sid, nil
}

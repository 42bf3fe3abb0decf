package fs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"lnk.dev/lnk/helpers/fsbroker"
	"lnk.dev/lnk/internal/brokerproc"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/internal/wire"
)

// rawBroker starts the real broker and speaks to it record by record.
func rawBroker(t *testing.T, tr tree) (*brokerproc.Proc, int) {
	t.Helper()
	p, err := brokerproc.Start(brokerproc.Options{Path: testenv.Bin(t, "lnk-fsbroker"), Log: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Kill()
		p.Chan.Close()
	})
	return p, int(p.Chan.Fd())
}

func record(t *testing.T, spec wire.Spec, id uint64, body any) wire.Record {
	t.Helper()
	b, err := wire.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	return wire.Record{Kind: wire.KindRequest, Type: spec.Type, ID: id, Body: b}
}

// rawHello sends the hello with tr's home folder and checks the answer.
func rawHello(t *testing.T, tr tree, fd int) fsbroker.HelloReply {
	t.Helper()
	home, err := OpenDir(tr.home)
	if err != nil {
		t.Fatal(err)
	}
	defer home.Close()
	h := fsbroker.Hello{Roots: []fsbroker.HelloRoot{{Name: "home", Write: true}}}
	must(t, wire.WriteRecord(fd, record(t, fsbroker.SpecHello, 1, &h), []*os.File{home}))
	rec, files, err := wire.ReadRecord(fd)
	if err != nil {
		t.Fatal(err)
	}
	wire.CloseFiles(files)
	if rec.Kind != wire.KindReply {
		t.Fatalf("hello answered with kind %d: %s", rec.Kind, rec.Body)
	}
	var rep fsbroker.HelloReply
	must(t, wire.Unmarshal(rec.Body, &rep))
	return rep
}

// wantExit waits for the broker to close the channel and exit.
func wantExit(t *testing.T, p *brokerproc.Proc, fd int, code int) {
	t.Helper()
	for {
		_, files, err := wire.ReadRecord(fd)
		wire.CloseFiles(files)
		if errors.Is(err, wire.ErrClosed) {
			break
		}
	}
	select {
	case <-p.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the broker closed the channel but did not exit within 30 s")
	}
	if got := exitCode(p); got != code {
		t.Fatalf("the broker exited with %d (%v), want %d", got, p.Err(), code)
	}
}

func exitCode(p *brokerproc.Proc) int {
	var ee interface{ ExitCode() int }
	if errors.As(p.Err(), &ee) {
		return ee.ExitCode()
	}
	return 0
}

func TestBrokerIsConfinedBeforeItServes(t *testing.T) {
	tr := newTree(t)
	p, fd := rawBroker(t, tr)
	rep := rawHello(t, tr, fd)
	testenv.Require(t, rep.LandlockABI > 0, "landlock")
	if !rep.Seccomp {
		t.Fatal("the broker answered its hello without seccomp")
	}
	// One request served: the broker's server is up (its channel moved
	// off fd 3) before its fds are looked at.
	must(t, wire.WriteRecord(fd, record(t, fsbroker.SpecStat, 2, &fsbroker.PathReq{Root: "home", Path: "."}), nil))
	if rec, files, err := wire.ReadRecord(fd); err != nil || rec.Kind != wire.KindReply {
		wire.CloseFiles(files)
		t.Fatalf("stat answered kind %d (%s), %v", rec.Kind, rec.Body, err)
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.Pid()))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"NoNewPrivs:\t1", "Seccomp:\t2"} {
		if !strings.Contains(string(status), want) {
			t.Errorf("the serving broker's status lacks %q", want)
		}
	}
	// The broker is undumpable: its /proc files are root's. Its fds can
	// then be listed by root alone; as its owner, that it is out of reach
	// is what the test can see.
	var env syscall.Stat_t
	if err := syscall.Stat(fmt.Sprintf("/proc/%d/environ", p.Pid()), &env); err != nil || env.Uid != 0 {
		t.Fatalf("the serving broker is dumpable: /proc/%d/environ is uid %d's (%v)", p.Pid(), env.Uid, err)
	}
	if os.Geteuid() != 0 {
		if _, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", p.Pid())); !errors.Is(err, os.ErrPermission) {
			t.Errorf("the undumpable broker's fds are readable by its owner: %v", err)
		}
		return
	}
	// The broker holds its root and its channel, nothing it was not handed.
	sockets := 0
	for fd, target := range fdsOf(t, p.Pid()) {
		switch {
		case fd <= 2:
		case strings.HasPrefix(target, "socket:"):
			sockets++ // the channel (internal/wire dups it off fd 3)
		case target == tr.home:
		case cloexec(fmt.Sprint(p.Pid()), fd) && !strings.HasPrefix(target, "/") || strings.HasPrefix(target, "/sys/fs/cgroup/"):
			// the runtime's own (its poller, the cgroup files for GOMAXPROCS)
		default:
			t.Errorf("the broker holds fd %d → %s, which it was not handed", fd, target)
		}
	}
	if sockets != 1 {
		t.Errorf("the broker holds %d sockets, want its one channel", sockets)
	}
}

func TestViolationsCloseTheBroker(t *testing.T) {
	huge := strings.Repeat("a", wire.MaxRecord)
	cases := []struct {
		name string
		send func(t *testing.T, fd int)
	}{
		{"unknown type", func(t *testing.T, fd int) {
			must(t, wire.WriteRecord(fd, record(t, wire.Spec{Type: 99}, 2, &fsbroker.Empty{}), nil))
		}},
		{"extra field", func(t *testing.T, fd int) {
			r := record(t, fsbroker.SpecOpen, 2, &fsbroker.OpenReq{Root: "home", Path: "x"})
			r.Body = []byte(`{"root":"home","path":"x","follow":true}`)
			must(t, wire.WriteRecord(fd, r, nil))
		}},
		{"missing field", func(t *testing.T, fd int) {
			r := record(t, fsbroker.SpecOpen, 2, &fsbroker.Empty{})
			r.Body = []byte(`{"root":"home"}`)
			must(t, wire.WriteRecord(fd, r, nil))
		}},
		{"second hello", func(t *testing.T, fd int) {
			null, _ := os.Open(os.DevNull)
			defer null.Close()
			must(t, wire.WriteRecord(fd, record(t, fsbroker.SpecHello, 2, &fsbroker.Hello{Roots: []fsbroker.HelloRoot{{Name: "x"}}}), []*os.File{null}))
		}},
		{"an fd where none belongs", func(t *testing.T, fd int) {
			null, _ := os.Open(os.DevNull)
			defer null.Close()
			must(t, wire.WriteRecord(fd, record(t, fsbroker.SpecStat, 2, &fsbroker.PathReq{Root: "home", Path: "x"}), []*os.File{null}))
		}},
		{"oversized record", func(t *testing.T, fd int) {
			sendRaw(t, fd, append(make([]byte, wire.HeaderSize), huge...), 0)
		}},
		{"more fds than the cap (MSG_CTRUNC)", func(t *testing.T, fd int) {
			null, _ := os.Open(os.DevNull)
			defer null.Close()
			b, _ := wire.AppendRecord(nil, record(t, fsbroker.SpecStat, 2, &fsbroker.PathReq{Root: "home", Path: "x"}))
			b[6] = wire.MaxFDs + 6
			sendRaw(t, fd, b, wire.MaxFDs+6, int(null.Fd()))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTree(t)
			p, fd := rawBroker(t, tr)
			rawHello(t, tr, fd)
			tc.send(t, fd)
			wantExit(t, p, fd, 1)
		})
	}
}

func TestARequestBeforeTheHelloIsRefused(t *testing.T) {
	tr := newTree(t)
	p, fd := rawBroker(t, tr)
	must(t, wire.WriteRecord(fd, record(t, fsbroker.SpecOpen, 1, &fsbroker.OpenReq{Root: "home", Path: "x"}), nil))
	rec, files, err := wire.ReadRecord(fd)
	wire.CloseFiles(files)
	if err != nil || rec.Kind != wire.KindError {
		t.Fatalf("got kind %d, %v: want an error answer", rec.Kind, err)
	}
	wantExit(t, p, fd, 2)
}

func TestKillMidRequestFailsEveryCaller(t *testing.T) {
	tr := newTree(t)
	c, p := startBroker(t, tr)
	ctx := context.Background()
	data := make([]byte, 1<<20) // big enough that writes are often in flight
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	started := make(chan struct{}, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprint("f", i)
			for n := 0; ; n++ {
				_, err := c.Write(ctx, "home", name, data, WriteOptions{})
				if n == 0 {
					started <- struct{}{}
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := 0; i < 8; i++ {
		<-started
	}
	p.Kill()
	wg.Wait() // every caller returns: a hang here is the test failing
	close(errs)
	for err := range errs {
		if !errors.Is(err, wire.ErrClosed) {
			t.Errorf("a caller got %v, want wire.ErrClosed", err)
		}
	}
	if _, err := c.Read(ctx, "home", "f0"); !errors.Is(err, wire.ErrClosed) {
		t.Fatalf("a call after the broker died: %v, want wire.ErrClosed", err)
	}
}

func TestUnknownArgumentsRefused(t *testing.T) {
	tr := newTree(t)
	p, err := brokerproc.Start(brokerproc.Options{Path: testenv.Bin(t, "lnk-fsbroker"), Args: []string{"--follow-links"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Kill()
		p.Chan.Close()
	})
	fd := int(p.Chan.Fd())
	home, err := OpenDir(tr.home)
	must(t, err)
	defer home.Close()
	must(t, wire.WriteRecord(fd, record(t, fsbroker.SpecHello, 1, &fsbroker.Hello{Roots: []fsbroker.HelloRoot{{Name: "home"}}}), []*os.File{home}))
	rec, files, err := wire.ReadRecord(fd)
	wire.CloseFiles(files)
	if err != nil || rec.Kind != wire.KindError || !strings.Contains(string(rec.Body), "usage") {
		t.Fatalf("got kind %d %s, %v: want a usage refusal", rec.Kind, rec.Body, err)
	}
	wantExit(t, p, fd, 2)
}

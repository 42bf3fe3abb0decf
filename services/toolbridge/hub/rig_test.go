package hub

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/internal/secret"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/toolbridge/tooldef"
)

// rig is a HOME with one shared tool whose server is this test binary.
type rig struct {
	t    testing.TB
	dir  string // ~/.lnk
	mark string // on the command line of the server and its children alone
	def  *tooldef.Definition
	key  string
}

func newRig(t testing.TB, env ...string) *rig {
	home := testenv.Home(t)
	dir := filepath.Join(home, ".lnk")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	var b [8]byte
	rand.Read(b[:])
	r := &rig{t: t, dir: dir, mark: hex.EncodeToString(b[:])}
	r.define(append(env, "LNK_TEST_HUB_SERVER=1", "PATH="+os.Getenv("PATH"))...)
	return r
}

// define saves the tool (again) and computes its key.
func (r *rig) define(env ...string) {
	exe, err := os.Executable()
	if err != nil {
		r.t.Fatal(err)
	}
	d := &tooldef.Definition{Name: "shared", Command: []string{exe, "-lnk-mark=" + r.mark}, Env: map[string]*secret.Value{}, Shared: true}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		s, err := secret.FromString(v)
		if err != nil {
			r.t.Fatal(err)
		}
		d.Env[k] = s
	}
	if err := (tooldef.Store{Home: filepath.Dir(r.dir)}).Save(d); err != nil {
		r.t.Fatal(err)
	}
	key, err := Key(r.dir, d)
	if err != nil {
		r.t.Fatal(err)
	}
	r.def, r.key = d, key
}

func (r *rig) paths() Paths { return PathsOf(r.dir, "shared", r.key) }

// run runs a hub in this process until the test ends; the channel gets
// what Run returned. The session it returns was dialled while the hub
// started, so it is one from the hub's first moment (an idle hub stops
// only once it is closed).
func (r *rig) run(idle time.Duration) (<-chan error, *conn) {
	ctx, cancel := context.WithCancel(context.Background())
	done, finished := make(chan error, 1), make(chan struct{})
	go func() {
		done <- Run(ctx, Config{Dir: r.dir, Name: "shared", Key: r.key, Idle: idle})
		close(finished)
	}()
	r.t.Cleanup(func() {
		cancel()
		select {
		case <-finished:
		case <-time.After(30 * time.Second):
			r.t.Error("the hub never stopped")
		}
	})
	var first *conn
	waitFor(r.t, "the hub to listen", func() bool {
		c, err := net.Dial("unix", r.paths().Socket)
		if err == nil {
			first = r.wrap(c)
		}
		return err == nil
	})
	return done, first
}

// conn is one session on the hub's socket.
type conn struct {
	t  testing.TB
	c  net.Conn
	br *bufio.Reader
}

func (r *rig) dial() *conn {
	c, err := net.Dial("unix", r.paths().Socket)
	if err != nil {
		r.t.Fatal(err)
	}
	return r.wrap(c)
}

func (r *rig) wrap(c net.Conn) *conn {
	r.t.Cleanup(func() { c.Close() })
	c.SetReadDeadline(time.Now().Add(60 * time.Second))
	return &conn{t: r.t, c: c, br: bufio.NewReaderSize(c, 64<<10)}
}

func (c *conn) send(format string, a ...any) {
	if _, err := fmt.Fprintf(c.c, format+"\n", a...); err != nil {
		c.t.Fatal(err)
	}
}

// next reads one message.
func (c *conn) next() (map[string]json.RawMessage, error) {
	line, err := readLine(c.br, MaxLine+IDRoom)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return nil, fmt.Errorf("%v: %s", err, line)
	}
	return m, nil
}

func (c *conn) initialize(id int) json.RawMessage {
	c.send(`{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, id)
	m, err := c.next()
	if err != nil || string(m["id"]) != fmt.Sprint(id) || m["result"] == nil {
		c.t.Fatalf("initialize: %v %v", m, err)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return m["result"]
}

// call sends a tools/call and returns its first text.
func (c *conn) call(id int, tool, text string) string {
	c.send(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{"text":%q}}}`, id, tool, text)
	for {
		m, err := c.next()
		if err != nil {
			c.t.Fatal(err)
		}
		if m["method"] != nil {
			continue
		}
		return resultText(c.t, m)
	}
}

func resultText(t testing.TB, m map[string]json.RawMessage) string {
	var res struct {
		Content []struct{ Text string } `json:"content"`
	}
	if err := json.Unmarshal(m["result"], &res); err != nil || len(res.Content) == 0 {
		t.Fatalf("not a tool's result: %s %s", m["result"], m["error"])
	}
	return res.Content[0].Text
}

func waitFor(t testing.TB, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// marked lists the live processes whose command line holds the rig's
// mark: the server and what it started (readable by their owner even in a
// user namespace, unlike their environment).
func (r *rig) marked() []string {
	ents, _ := os.ReadDir("/proc")
	var pids []string
	for _, e := range ents {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && strings.Contains(string(b), "-lnk-mark="+r.mark+"\x00") {
			if st, _ := os.ReadFile("/proc/" + e.Name() + "/stat"); !strings.Contains(string(st), ") Z ") {
				pids = append(pids, e.Name())
			}
		}
	}
	return pids
}

func (r *rig) readLog() string {
	b, _ := os.ReadFile(r.paths().Log)
	return string(b)
}

func newReader(c net.Conn) *bufio.Reader { return bufio.NewReaderSize(c, 64<<10) }

func itoa(n int) string { return fmt.Sprint(n) }

func atoi(s string) int {
	var n int
	fmt.Sscan(s, &n)
	return n
}

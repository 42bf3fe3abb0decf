package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"lnk.dev/lnk/internal/landlock"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/harness/builtin"
)

// The ports the test run inside the sandbox is told: the built-in
// model's, granted, and another server's, not granted. Zero outside.
var (
	insideModelPort   = flag.Int("lnk.model-port", 0, "inside the sandbox: the built-in model's port, granted")
	insideRefusedPort = flag.Int("lnk.refused-port", 0, "inside the sandbox: a server's port not granted")
)

// TestInSandbox: the client in a real sandbox (lnk sandbox run:
// bubblewrap, landlock, seccomp, the real lnk-netbroker), as Link
// Harness runs: with the default client it reaches the built-in model
// on the machine's loopback through $HTTP_PROXY and gets its call; the
// sandbox's own loopback has no model (a client that goes around the
// proxy reaches nothing); a port not granted is the proxy's refusal.
// The test binary runs itself inside, told the ports by its flags.
func TestInSandbox(t *testing.T) {
	if *insideModelPort != 0 {
		inSandbox(t)
		return
	}
	_, err := exec.LookPath("bwrap")
	testenv.Require(t, err == nil, "bubblewrap (bwrap)")
	testenv.Require(t, landlock.ABI() > 0, "landlock")
	out, err := exec.Command("bwrap", "--unshare-all", "--ro-bind", "/", "/", "true").CombinedOutput()
	testenv.Require(t, err == nil, "unprivileged user namespaces for bwrap ("+strings.TrimSpace(string(out))+")")
	lnk := testenv.Bin(t, "lnk")
	testenv.Bin(t, "lnk-init")
	testenv.Bin(t, "lnk-netbroker")
	testenv.Home(t)

	var asked atomic.Int32
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		builtin.Handler(builtin.Options{}).ServeHTTP(w, r)
	}))
	defer model.Close()
	other := newProvider(t, loadRecorded(t, "openai/whole_text.http"))
	mport, oport := portOf(t, model.Listener.Addr().String()), portOf(t, other.Listener.Addr().String())

	self, err := filepath.Abs(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(lnk, "sandbox", "run", "--port", fmt.Sprint(mport), "--read", filepath.Dir(self), "--command", self, "--",
		self, "-test.run=^TestInSandbox$", "-test.count=1", "-test.v", "-test.timeout=2m",
		fmt.Sprintf("-lnk.model-port=%d", mport), fmt.Sprintf("-lnk.refused-port=%d", oport))
	var outb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &outb, &outb
	cmd.WaitDelay = 20 * time.Second
	err = cmd.Run()
	if err != nil || !strings.Contains(outb.String(), "--- PASS: TestInSandbox") {
		t.Fatalf("inside the sandbox: %v\n%s", err, outb.String())
	}
	if asked.Load() != 1 {
		t.Errorf("the model was asked %d times, want 1", asked.Load())
	}
	if n := len(other.requests()); n != 0 {
		t.Errorf("the port not granted was reached %d times", n)
	}
}

// inSandbox is TestInSandbox's part inside the sandbox.
func inSandbox(t *testing.T) {
	if os.Getenv("LNK_SANDBOX") != "1" || os.Getenv("HTTP_PROXY") == "" {
		t.Fatalf("not in a sandbox with a proxy: LNK_SANDBOX=%q HTTP_PROXY=%q", os.Getenv("LNK_SANDBOX"), os.Getenv("HTTP_PROXY"))
	}
	base := fmt.Sprintf("http://127.0.0.1:%d/v1", *insideModelPort)
	c, err := New(Endpoint{Format: FormatOpenAI, BaseURL: base, Model: builtin.ModelName, Key: "placeholder"})
	if err != nil {
		t.Fatal(err)
	}
	req := Request{Messages: []Message{{Role: User, Text: "run ls work"}}, Tools: []Tool{{Name: "run__command",
		Schema: json.RawMessage(`{"type":"object","properties":{"argv":{"type":"array","items":{"type":"string"}}},"required":["argv"]}`)}}}
	got, err := c.Complete(context.Background(), req, nil)
	if err != nil || len(got.ToolCalls) != 1 || string(got.ToolCalls[0].Arguments) != `{"argv":["ls","work"]}` {
		t.Fatalf("through the proxy: %+v, %v", got, err)
	}

	// A client that goes around the proxy finds no model on the
	// sandbox's own loopback.
	direct := &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: 10 * time.Second}
	_, err = mustNew(t, Endpoint{Format: FormatOpenAI, BaseURL: base, Model: "m", HTTPClient: direct}).Complete(context.Background(), req, nil)
	var me *Error
	if !errors.As(err, &me) || me.Kind != KindOff {
		t.Errorf("around the proxy: got %v, want off", err)
	}

	c, err = New(Endpoint{Format: FormatOpenAI, BaseURL: fmt.Sprintf("http://127.0.0.1:%d/v1", *insideRefusedPort), Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Complete(context.Background(), req, nil)
	if !errors.As(err, &me) || me.Kind != KindRefused || !strings.Contains(me.Message, "hint:") {
		t.Errorf("a port not granted: got %v, want the proxy's refusal with its hint", err)
	}
}

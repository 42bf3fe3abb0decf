package serve

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/services/harness/builtin"
	"lnk.dev/lnk/services/harness/config"
	"lnk.dev/lnk/services/harness/model"
)

// TestPortIsLNKPort: the endpoint listens at the agent's first port,
// $LNK_PORT: a config.json naming another is refused before anything
// listens, saying both; the same config with $LNK_PORT its own port (the
// positive control) serves on 127.0.0.1 there.
func TestPortIsLNKPort(t *testing.T) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	c := &config.Config{AgentID: strings.Repeat("e5", 16), Owner: "ana", Name: "main", Key: config.NewKey(), Port: port, AgentDir: agentDir(t, "words"),
		Model: config.Model{Format: "openai", BaseURL: "http://127.0.0.1:9/v1", Model: builtin.ModelName, Key: "placeholder"}}
	none := func(*config.Config) model.Client { return nil }
	// Bounded, so a harness that served anyway ends the test failing.
	refusedCtx, stop := context.WithTimeout(context.Background(), 5*time.Second)
	defer stop()
	err = runWith(refusedCtx, []*config.Config{c}, strconv.Itoa(port+1), Options{}, none)
	if err == nil || !strings.Contains(err.Error(), "is not $LNK_PORT "+strconv.Itoa(port+1)) {
		t.Fatalf("a config.json naming another port than $LNK_PORT: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- Run(ctx, []*config.Config{c}, strconv.Itoa(port), Options{}) }()
	defer func() {
		cancel()
		if err := <-errc; err != nil {
			t.Error(err)
		}
	}()
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		conn, err := net.Dial("tcp4", "127.0.0.1:"+strconv.Itoa(port))
		if err == nil {
			conn.Close()
			return
		}
		if time.Now().After(end) {
			t.Fatalf("nothing listens at $LNK_PORT %d: %v", port, err)
		}
	}
}

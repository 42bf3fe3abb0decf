package agentlife

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/internal/ownerdir"
	"lnk.dev/lnk/services/harness/builtin"
	"lnk.dev/lnk/services/harness/config"
	"lnk.dev/lnk/services/harness/endpoint"
)

// BenchmarkAgentStartToListening: `lnk agent start` (a supervisor in the
// background; the harness in its sandbox, its folders from the running
// kernel) until the harness says it listens on its LNK_PORT, in parts:
// lnk agent start's own return (start-ns/op), the harness's first line in
// its log (first-line-ns/op), its listening line (link-ns/op); beside the
// same harness under bare bwrap with the same namespaces, to its
// listening line (base-ns/op). The stop after each start is not counted.
func BenchmarkAgentStartToListening(b *testing.B) {
	w := newWorld(b, "bench", "listen")
	var start, first, listening time.Duration
	for i := 0; i < b.N; i++ {
		off := len(w.log())
		t0 := time.Now()
		w.mustLnk("agent", "start", w.agent)
		start += time.Since(t0)
		w.waitFor("the harness's first line", func() bool { return strings.Contains(w.log()[off:], "harness "+w.mark) })
		first += time.Since(t0)
		w.waitFor("the harness listening", func() bool { return strings.Contains(w.log()[off:], "listening on") })
		listening += time.Since(t0)
		b.StopTimer()
		w.mustLnk("agent", "stop", w.agent)
		b.StartTimer()
	}
	var base time.Duration
	port := freePorts(b, 1)
	for i := 0; i < b.N; i++ {
		base += bareListening(b, w.self, w.mark, port)
	}
	n := float64(b.N)
	b.ReportMetric(float64(start.Nanoseconds())/n, "start-ns/op")
	b.ReportMetric(float64(first.Nanoseconds())/n, "first-line-ns/op")
	b.ReportMetric(float64(listening.Nanoseconds())/n, "link-ns/op")
	b.ReportMetric(float64(base.Nanoseconds())/n, "base-ns/op")
	b.ReportMetric(float64(listening)/float64(base), "x-baseline")
}

// bareListening runs the harness under bare bubblewrap (the namespaces
// Link's sandbox unshares, the host's files read-only: the test binary is the harness, under /tmp) until it says it
// listens, and ends it.
func bareListening(b *testing.B, self, mark string, port int) time.Duration {
	b.Helper()
	c := exec.Command("bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
		"--unshare-all", "--die-with-parent", "--", self, "agentlife-harness", mark, "bare")
	c.Env = append(os.Environ(), "LNK_PORT="+strconv.Itoa(port))
	out, err := c.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	if err := c.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { c.Process.Kill(); c.Wait() }()
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "listening on") {
			return time.Since(t0)
		}
	}
	b.Fatalf("the bare harness never listened: %v", sc.Err())
	return 0
}

// BenchmarkAgentSendRoundTrip: `lnk agent send NAME hello` to an agent
// running Link Harness with the built-in model and no tool call, from the
// send's start to its answer on stdout (link-ns/op), in parts: the same
// message through the owner's client in this process, the proof and the
// carried port included but no lnk start (client-ns/op), and the
// built-in model's own answer to a chat completion sent straight to it
// (model-ns/op, the baseline).
func BenchmarkAgentSendRoundTrip(b *testing.B) {
	w := linkWorld(b, "bench")
	w.mustLnk("agent", "start", w.agent)
	w.send("hello") // the first turn opens the thread
	d, err := ownerdir.Open(w.home, ".lnk", "agents", w.agent)
	if err != nil {
		b.Fatal(err)
	}
	br, err := config.ReadBridge(int(d.Fd()))
	d.Close()
	if err != nil {
		b.Fatal(err)
	}
	cl, err := endpoint.NewClient(br)
	if err != nil {
		b.Fatal(err)
	}
	rec, err := builtin.ReadRecord(w.home)
	if err != nil {
		b.Fatal(err)
	}
	var send, client, model time.Duration
	body := `{"model":"link-builtin","stream":true,"messages":[{"role":"user","content":"hello"}]}`
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		w.send("hello")
		send += time.Since(t0)
		t0 = time.Now()
		if _, err := cl.Send(context.Background(), "main", "hello", nil); err != nil {
			b.Fatal(err)
		}
		client += time.Since(t0)
		t0 = time.Now()
		resp, err := http.Post(rec.URL+"/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		model += time.Since(t0)
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(float64(send.Nanoseconds())/n, "link-ns/op")
	b.ReportMetric(float64(client.Nanoseconds())/n, "client-ns/op")
	b.ReportMetric(float64(model.Nanoseconds())/n, "model-ns/op")
	b.ReportMetric(float64(send)/float64(model), "x-baseline")
}

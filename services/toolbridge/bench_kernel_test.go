package toolbridge

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/internal/connpass"
	"lnk.dev/lnk/internal/secret"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/kernel/client"
	"lnk.dev/lnk/kernel/proto"
	"lnk.dev/lnk/services/toolbridge/tooldef"
)

// newKernelBenchRoute is benchRoute as an agent's run has it: a real
// kernel (lnk kernel run) whose start has its confined tool bridge
// (lnk-toolbridge, the kernel's child) and its proxy (lnk-netbroker),
// the tool's server started by the kernel at the bridge's request.
func newKernelBenchRoute(b testing.TB, tiny bool) *benchRoute {
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	d := &tooldef.Definition{Name: "test", Command: []string{self}, Env: map[string]*secret.Value{}}
	d.Env["LNK_TEST_MCP_SERVER"], _ = secret.FromString("1")
	if tiny {
		d.Command = []string{"/bin/sh", "-c", tinyServer}
		d.Env = map[string]*secret.Value{}
	}
	return kernelRoute(b, testenv.Home(b), d)
}

// kernelRoute is the route of an agent's start whose tool "test" is d,
// through the kernel's confined bridge and its proxy.
func kernelRoute(b testing.TB, home string, d *tooldef.Definition) *benchRoute {
	d.Env["PATH"], _ = secret.FromString("/usr/bin:/bin")
	if err := (tooldef.Store{Home: home}).Save(d); err != nil {
		b.Fatal(err)
	}
	lnk := func(args ...string) {
		cmd := exec.Command(testenv.Bin(b, "lnk"), args...)
		cmd.Env = append(os.Environ(), "HOME="+home)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("lnk %v: %v\n%s", args, err, out)
		}
	}
	lnk("agent", "create", "bench")
	lnk("agent", "allow", "bench", "--tool", "test", "--allow", "echo")
	lnk("kernel", "start")
	b.Cleanup(func() { lnk("kernel", "stop") })
	c, err := client.Connect(home)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var st proto.StartReply
	if _, err := c.Call(ctx, proto.Start, &proto.StartRequest{Agent: "bench", Folders: []proto.Folder{}, Compile: true}, &st); err != nil {
		b.Fatal(err)
	}
	if _, err := c.Call(ctx, proto.RunAsk, &proto.RunAskRequest{Agent: "bench", Start: st.Start, Wait: "1m", Desktop: []string{}}, &proto.Empty{}); err != nil {
		b.Fatal(err)
	}
	var br proto.RunBridgeReply
	if _, err := c.Call(ctx, proto.RunBridge, &proto.RunBridgeRequest{Agent: "bench", Start: st.Start}, &br); err != nil {
		b.Fatal(err)
	}
	lr, lw, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	recv, send, err := connpass.Pair()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { lr.Close(); send.Close() })
	var pr proto.RunProxyReply
	_, err = c.Call(ctx, proto.RunProxy, &proto.RunProxyRequest{Agent: "bench", Start: st.Start}, &pr, lw, recv)
	lw.Close()
	recv.Close()
	if err != nil {
		b.Fatal(err)
	}
	return &benchRoute{proxy: pr.Socket, route: br.Route + "test"}
}

// A tools/call through the proxy's route and the kernel's confined
// bridge (an agent's run), and the same call to the same server straight
// on stdio, alternating, each round timed: p50 of both, and what the
// route adds.
func BenchmarkToolsCallThroughKernelBridgeVsDirect(b *testing.B) {
	for _, sv := range servers {
		b.Run("server="+sv.name, func(b *testing.B) {
			br := newKernelBenchRoute(b, sv.tiny)
			sid := br.session(b)
			d := newDirect(b, sv.tiny)
			var link, base []time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				if _, body, err := br.post(sid, echoCall); err != nil || !strings.Contains(body, sv.want) {
					b.Fatalf("%v %s", err, body)
				}
				t1 := time.Now()
				if line, err := d.call(echoCall); err != nil || !strings.Contains(line, sv.want) {
					b.Fatalf("%v %s", err, line)
				}
				link, base = append(link, t1.Sub(t0)), append(base, time.Since(t1))
			}
			l, s := p50(link), p50(base)
			b.ReportMetric(float64(l.Nanoseconds()), "link-p50-ns")
			b.ReportMetric(float64(s.Nanoseconds()), "base-p50-ns")
			b.ReportMetric(float64((l - s).Microseconds()), "added-p50-us")
			b.ReportMetric(float64(l)/float64(s), "x-baseline")
		})
	}
}

package builtin

import (
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"
)

// BenchmarkAnswerStreamed times the built-in's answer in words (no tool
// call), streamed, from the request's send to [DONE] read, through a
// real loopback HTTP server and a client keeping its connection: the
// "model's own answer time" the harness's overhead is measured against
// (issue #25, Speed). p50-ns/op is the median of the turns.
func BenchmarkAnswerStreamed(b *testing.B) {
	url := serve(b, Options{})
	body := request(true, allTools, system("You are an agent of Link."), user("hello, how are you today?"))
	client := &http.Client{}
	one := func() time.Duration {
		start := time.Now()
		resp, err := client.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		raw, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || !strings.HasSuffix(string(raw), "data: [DONE]\n\n") {
			b.Fatalf("%d %v %s", resp.StatusCode, err, raw)
		}
		return time.Since(start)
	}
	one()
	b.ResetTimer()
	var ds []time.Duration
	for i := 0; i < max(b.N, 31); i++ {
		ds = append(ds, one())
	}
	b.StopTimer()
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	b.ReportMetric(float64(ds[len(ds)/2].Nanoseconds()), "p50-ns/op")
}

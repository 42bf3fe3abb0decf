package webhook

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	scheme "lnk.dev/lnk/helpers/keybroker/webhook"
)

// BenchmarkWebhookPosts measures signed posts to 202 on loopback (each
// checked by lnk-webhook, its id kept in hooks-seen.json, handed to a
// harness that takes it at once), beside a plain Go HTTP handler that
// reads the body and answers 202, in the same run with the same clients.
// x-baseline is the webhook's rate over the plain handler's (issue #27:
// at least 0.5).
func BenchmarkWebhookPosts(b *testing.B) {
	r := newRig(b, DefaultLimits)
	body := []byte(`{"ref":"refs/heads/main","after":"0123456789abcdef"}`)
	key := r.key(b, r.secret)
	defer key.Destroy()
	var next atomic.Int64
	webhookReq := func(base string) *http.Request {
		id := "bench-" + strconv.FormatInt(next.Add(1), 10)
		ts := time.Now().Unix()
		req, _ := http.NewRequest(http.MethodPost, base+"/h/"+r.hook.ID, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("webhook-id", id)
		req.Header.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
		req.Header.Set("webhook-signature", scheme.Sign(key, id, ts, body))
		return req
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	plain := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		io.Copy(io.Discard, http.MaxBytesReader(w, req.Body, 1<<20))
		w.WriteHeader(http.StatusAccepted)
	})}
	go plain.Serve(ln)
	defer plain.Close()
	plainBase := "http://" + ln.Addr().String()

	const clients = 64
	run := func(base string) (rate float64, p50 time.Duration) {
		var mu sync.Mutex
		var lat []time.Duration
		var wg sync.WaitGroup
		var left atomic.Int64
		left.Store(int64(b.N))
		start := time.Now()
		for range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for left.Add(-1) >= 0 {
					req := webhookReq(base)
					t0 := time.Now()
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					d := time.Since(t0)
					if resp.StatusCode != http.StatusAccepted {
						b.Errorf("%s: %d", base, resp.StatusCode)
						return
					}
					mu.Lock()
					lat = append(lat, d)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		el := time.Since(start)
		slices.Sort(lat)
		if len(lat) == 0 {
			return 0, 0
		}
		return float64(len(lat)) / el.Seconds(), lat[len(lat)/2]
	}
	b.ResetTimer()
	wRate, wP50 := run(r.base)
	b.StopTimer()
	pRate, pP50 := run(plainBase)
	b.ReportMetric(wRate, "webhook-posts/s")
	b.ReportMetric(float64(wP50.Nanoseconds()), "webhook-p50-ns")
	b.ReportMetric(pRate, "plain-posts/s")
	b.ReportMetric(float64(pP50.Nanoseconds()), "plain-p50-ns")
	b.ReportMetric(wRate/max(pRate, 1e-9), "x-baseline")
}

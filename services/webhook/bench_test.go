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
// reads the body and answers 202, in the same run with the same clients:
// 64 at once, the most the listener takes, for its ids are made durable
// by group commit (one fsynced write for the posts taken meanwhile).
// x-baseline is the webhook's rate over the plain handler's, turn by
// turn (issue #27: at least 0.5); each figure is the median of the
// turns, with its range (-min, -max). posts/write is how many posts'
// ids each write of the record (an append and its fdatasync) held.
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
	run := func(base string, n int) (rate float64, p50 time.Duration) {
		var mu sync.Mutex
		var lat []time.Duration
		var wg sync.WaitGroup
		var left atomic.Int64
		left.Store(int64(n))
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
	// Interleaved turns, the order swapped at each, so that the load of
	// the machine falls on both alike; medians and ranges reported.
	const turns = 5
	per := max(b.N/turns, 1)
	writes0 := r.l.seen.writes.Load()
	var wRates, pRates, ratios, wP50s, pP50s []float64
	b.ResetTimer()
	for turn := range turns {
		var wr, pr float64
		var wl, pl time.Duration
		if turn%2 == 0 {
			wr, wl = run(r.base, per)
			pr, pl = run(plainBase, per)
		} else {
			pr, pl = run(plainBase, per)
			wr, wl = run(r.base, per)
		}
		wRates, pRates, ratios = append(wRates, wr), append(pRates, pr), append(ratios, wr/max(pr, 1e-9))
		wP50s, pP50s = append(wP50s, float64(wl.Nanoseconds())), append(pP50s, float64(pl.Nanoseconds()))
	}
	b.StopTimer()
	b.ReportMetric(float64(turns*per)/float64(max(r.l.seen.writes.Load()-writes0, 1)), "posts/write")
	report := func(xs []float64, unit string) {
		slices.Sort(xs)
		b.ReportMetric(xs[len(xs)/2], unit)
		b.ReportMetric(xs[0], unit+"-min")
		b.ReportMetric(xs[len(xs)-1], unit+"-max")
	}
	report(wRates, "webhook-posts/s")
	report(wP50s, "webhook-p50-ns")
	report(pRates, "plain-posts/s")
	report(pP50s, "plain-p50-ns")
	report(ratios, "x-baseline")
}

package proof

import (
	"crypto/hmac"
	"crypto/sha256"
	"testing"
	"time"
)

// BenchmarkCheck times a proof check beside a bare HMAC-SHA256 of the
// same bytes, in the same run.
func BenchmarkCheck(b *testing.B) {
	c, _ := NewChecker(key, ctx())
	ch := NewChallenge()
	ans := c.Answer(ch)
	msg := append(append([]byte{}, c.ctx...), ch[:]...)
	base := func(n int) time.Duration {
		start := time.Now()
		for i := 0; i < n; i++ {
			m := hmac.New(sha256.New, key)
			m.Write(msg)
			m.Sum(nil)
		}
		return time.Since(start)
	}
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if !c.Check(ch, ans[:]) {
			b.Fatal("refused")
		}
	}
	link := time.Since(start)
	b.StopTimer()
	bare := base(b.N)
	linkNs := float64(link.Nanoseconds()) / float64(b.N)
	baseNs := float64(bare.Nanoseconds()) / float64(b.N)
	b.ReportMetric(linkNs, "link-ns/op")
	b.ReportMetric(baseNs, "base-ns/op")
	b.ReportMetric(linkNs/baseNs, "x-baseline")
	b.ReportMetric(1e9/linkNs, "checks/s")
}

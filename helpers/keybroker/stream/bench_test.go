package stream

import (
	"bytes"
	"io"
	"slices"
	"testing"
	"time"

	"filippo.io/age"
)

const (
	benchSize  = 1 << 30 // 1 GiB, as the issue asks
	benchChunk = 1 << 20 // Link and age take turns every MiB
)

// sealingSource is a Reader of ciphertext made as it is read: it writes
// plaintext into a sealing writer whose output it buffers, and counts the
// time it spent sealing, so a benchmark can take it out of the opening
// time. It lets a benchmark open 1 GiB without holding it.
type sealingSource struct {
	w       io.WriteCloser
	out     *bytes.Buffer
	chunk   []byte
	left    int
	sealing time.Duration
}

func (s *sealingSource) Read(p []byte) (int, error) {
	for s.out.Len() == 0 {
		start := time.Now()
		if s.left == 0 {
			if s.w == nil {
				return 0, io.EOF
			}
			err := s.w.Close()
			s.w = nil
			s.sealing += time.Since(start)
			if err != nil {
				return 0, err
			}
			continue
		}
		n := min(s.left, len(s.chunk))
		_, err := s.w.Write(s.chunk[:n])
		s.left -= n
		s.sealing += time.Since(start)
		if err != nil {
			return 0, err
		}
	}
	return s.out.Read(p)
}

func plainChunk() []byte { return bytes.Repeat([]byte("lnk!"), benchChunk/4) }

// BenchmarkSeal1GiB seals 1 GiB with Link's stream and 1 GiB with age (the
// same construction: X25519, ChaCha20-Poly1305, 64 KiB records) on the
// same data, on one goroutine, taking turns every MiB so both see the
// same machine.
func BenchmarkSeal1GiB(b *testing.B) {
	pub, _ := keyPair(b)
	id, _ := age.GenerateX25519Identity()
	chunk := plainChunk()
	var link, base time.Duration
	var pairs []float64
	for i := 0; i < b.N; i++ {
		start := time.Now()
		lw, err := NewWriter(io.Discard, pub)
		if err != nil {
			b.Fatal(err)
		}
		link += time.Since(start)
		start = time.Now()
		aw, err := age.Encrypt(io.Discard, id.Recipient())
		if err != nil {
			b.Fatal(err)
		}
		base += time.Since(start)
		turn := func(w io.Writer, d *time.Duration) time.Duration {
			start := time.Now()
			w.Write(chunk)
			t := time.Since(start)
			*d += t
			return t
		}
		for left, k := benchSize, 0; left > 0; left, k = left-len(chunk), k+1 {
			// Who goes first changes every turn, so neither always
			// finds the chunk in cache.
			var lt, at time.Duration
			if k%2 == 0 {
				lt = turn(lw, &link)
				at = turn(aw, &base)
			} else {
				at = turn(aw, &base)
				lt = turn(lw, &link)
			}
			pairs = append(pairs, float64(at)/float64(lt))
		}
		start = time.Now()
		if err := lw.Close(); err != nil {
			b.Fatal(err)
		}
		link += time.Since(start)
		start = time.Now()
		if err := aw.Close(); err != nil {
			b.Fatal(err)
		}
		base += time.Since(start)
	}
	report(b, link, base)
	reportPairs(b, pairs)
}

// BenchmarkOpen1GiB opens 1 GiB with each, taking turns every MiB; the
// ciphertext is made as it is read, and that sealing time is taken out.
func BenchmarkOpen1GiB(b *testing.B) {
	pub, priv := keyPair(b)
	id, _ := age.GenerateX25519Identity()
	chunk := plainChunk()
	var link, base time.Duration
	var pairs []float64
	for i := 0; i < b.N; i++ {
		var lout, aout bytes.Buffer
		lw, _ := NewWriter(&lout, pub)
		aw, _ := age.Encrypt(&aout, id.Recipient())
		lsrc := &sealingSource{w: lw, out: &lout, chunk: chunk, left: benchSize}
		asrc := &sealingSource{w: aw, out: &aout, chunk: chunk, left: benchSize}
		start := time.Now()
		lr, err := NewReader(lsrc, priv)
		if err != nil {
			b.Fatal(err)
		}
		link += time.Since(start)
		start = time.Now()
		ar, err := age.Decrypt(asrc, id)
		if err != nil {
			b.Fatal(err)
		}
		base += time.Since(start)
		buf := make([]byte, benchChunk)
		var ln, an int64
		// A turn's time less the sealing its source did meanwhile.
		turn := func(r io.Reader, src *sealingSource, d *time.Duration, got *int64, who string) time.Duration {
			sealing := src.sealing
			start := time.Now()
			n, err := io.ReadFull(r, buf)
			t := time.Since(start)
			*d += t
			*got += int64(n)
			if err != nil && *got != benchSize {
				b.Fatalf("%s opened %d bytes: %v", who, *got, err)
			}
			return t - (src.sealing - sealing)
		}
		for k := 0; ln < benchSize || an < benchSize; k++ {
			var lt, at time.Duration
			if k%2 == 0 {
				lt = turn(lr, lsrc, &link, &ln, "Link")
				at = turn(ar, asrc, &base, &an, "age")
			} else {
				at = turn(ar, asrc, &base, &an, "age")
				lt = turn(lr, lsrc, &link, &ln, "Link")
			}
			if lt > 0 && at > 0 {
				pairs = append(pairs, float64(at)/float64(lt))
			}
		}
		// Both must see the end: Link's final-record check included.
		start = time.Now()
		if n, err := lr.Read(buf); n != 0 || err != io.EOF {
			b.Fatalf("Link after 1 GiB: %d %v", n, err)
		}
		link += time.Since(start)
		start = time.Now()
		if n, err := ar.Read(buf); n != 0 || err != io.EOF {
			b.Fatalf("age after 1 GiB: %d %v", n, err)
		}
		base += time.Since(start)
		link -= lsrc.sealing
		base -= asrc.sealing
	}
	report(b, link, base)
	reportPairs(b, pairs)
}

// report gives MB/s for Link and age, and Link's speed as a multiple of
// age's (above 1 is faster).
func report(b *testing.B, link, base time.Duration) {
	mb := float64(benchSize) * float64(b.N) / 1e6
	linkMBs := mb / link.Seconds()
	baseMBs := mb / base.Seconds()
	b.ReportMetric(linkMBs, "link-MB/s")
	b.ReportMetric(baseMBs, "age-MB/s")
	b.ReportMetric(linkMBs/baseMBs, "x-baseline")
	b.ReportMetric(0, "ns/op")
}

// reportPairs gives the median, over the turns, of age's time for a MiB
// over Link's for the same MiB next to it: a turn the machine's other
// work interrupted moves a total, not the median.
func reportPairs(b *testing.B, pairs []float64) {
	if len(pairs) == 0 {
		return
	}
	slices.Sort(pairs)
	b.ReportMetric(pairs[len(pairs)/2], "x-median-turn")
}

package stream

import (
	"bytes"
	"io"
	"testing"
	"time"

	"filippo.io/age"
)

const benchSize = 1 << 30 // 1 GiB, as the issue asks

// sealingSource is a Reader of ciphertext made as it is read: it writes
// plaintext into a sealing writer whose output it buffers. It lets a
// benchmark open 1 GiB without holding it, on one goroutine.
type sealingSource struct {
	w     io.WriteCloser
	out   *bytes.Buffer
	chunk []byte
	left  int
}

func (s *sealingSource) Read(p []byte) (int, error) {
	for s.out.Len() == 0 {
		if s.left == 0 {
			if s.w == nil {
				return 0, io.EOF
			}
			if err := s.w.Close(); err != nil {
				return 0, err
			}
			s.w = nil
			continue
		}
		n := min(s.left, len(s.chunk))
		if _, err := s.w.Write(s.chunk[:n]); err != nil {
			return 0, err
		}
		s.left -= n
	}
	return s.out.Read(p)
}

// sealWith pushes size bytes through a sealing writer into io.Discard.
func sealWith(b *testing.B, w io.WriteCloser, size int) {
	chunk := bytes.Repeat([]byte("lnk!"), RecordSize/4)
	for left := size; left > 0; left -= len(chunk) {
		if _, err := w.Write(chunk[:min(left, len(chunk))]); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkSeal1GiB seals 1 GiB with Link's stream and with age (the
// same construction: X25519, ChaCha20-Poly1305, 64 KiB records) on the
// same data, one goroutine each.
func BenchmarkSeal1GiB(b *testing.B) {
	pub, _ := keyPair(b)
	id, _ := age.GenerateX25519Identity()
	var link, base time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		w, err := NewWriter(io.Discard, pub)
		if err != nil {
			b.Fatal(err)
		}
		sealWith(b, w, benchSize)
		link += time.Since(start)
		start = time.Now()
		aw, err := age.Encrypt(io.Discard, id.Recipient())
		if err != nil {
			b.Fatal(err)
		}
		sealWith(b, aw, benchSize)
		base += time.Since(start)
	}
	report(b, link, base)
}

// BenchmarkOpen1GiB opens 1 GiB sealed as it is read, with each tool, and
// subtracts each tool's own sealing time measured in the same run.
func BenchmarkOpen1GiB(b *testing.B) {
	pub, priv := keyPair(b)
	id, _ := age.GenerateX25519Identity()
	chunk := bytes.Repeat([]byte("lnk!"), RecordSize/4)
	var link, base time.Duration
	for i := 0; i < b.N; i++ {
		var out bytes.Buffer
		start := time.Now()
		w, _ := NewWriter(io.Discard, pub)
		sealWith(b, w, benchSize)
		linkSeal := time.Since(start)
		start = time.Now()
		w, _ = NewWriter(&out, pub)
		src := &sealingSource{w: w, out: &out, chunk: chunk, left: benchSize}
		r, err := NewReader(src, priv)
		if err != nil {
			b.Fatal(err)
		}
		if n, err := io.Copy(io.Discard, r); err != nil || n != benchSize {
			b.Fatalf("opened %d bytes: %v", n, err)
		}
		link += time.Since(start) - linkSeal

		out.Reset()
		start = time.Now()
		aw, _ := age.Encrypt(io.Discard, id.Recipient())
		sealWith(b, aw, benchSize)
		ageSeal := time.Since(start)
		start = time.Now()
		aw, _ = age.Encrypt(&out, id.Recipient())
		asrc := &sealingSource{w: aw, out: &out, chunk: chunk, left: benchSize}
		ar, err := age.Decrypt(asrc, id)
		if err != nil {
			b.Fatal(err)
		}
		if n, err := io.Copy(io.Discard, ar); err != nil || n != benchSize {
			b.Fatalf("age opened %d bytes: %v", n, err)
		}
		base += time.Since(start) - ageSeal
	}
	report(b, link, base)
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

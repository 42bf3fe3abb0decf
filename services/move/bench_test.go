package move_test

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/testenv"
)

// benchMB is the size of the files moved: 1 GiB as the issue asks, or
// LNK_BENCH_MOVE_MB.
func benchMB() int {
	if v, err := strconv.Atoi(os.Getenv("LNK_BENCH_MOVE_MB")); err == nil && v > 0 {
		return v
	}
	return 1024
}

// benchFileKB is the size of each small file moved: 1 MiB, or
// LNK_BENCH_MOVE_FILE_KB, so that a run can move many top-level names
// (each one a journaled step of the receive's placing).
func benchFileKB() int {
	if v, err := strconv.Atoi(os.Getenv("LNK_BENCH_MOVE_FILE_KB")); err == nil && v > 0 && v <= 1024 {
		return v
	}
	return 1024
}

// BenchmarkStateSendReceiveBesideTar moves an agent whose files folder
// holds benchMB MiB (files of benchFileKB, and one over 8 MB, copied aside)
// with the real binaries, `lnk agent state-send | lnk agent receive`
// joined by a pipe, and copies the same files with `tar c | tar x`, in
// turns in the same run. It reports each rate and the move's as a
// multiple of tar's (rate-x-tar; the target is at least 0.5x),
// from the medians of the turns.
func BenchmarkStateSendReceiveBesideTar(b *testing.B) {
	lnk := testenv.Bin(b, "lnk")
	from := testenv.Home(b)
	if _, err := caps.CreateAgent(from, "main"); err != nil {
		b.Fatal(err)
	}
	files := caps.Layout{Home: from}.FilesDir("main")
	mb, kb := benchMB(), benchFileKB()
	chunk := make([]byte, 1<<20)
	rand.Read(chunk)
	for i := 0; i < (mb-12)*1024/kb; i++ {
		if err := os.WriteFile(filepath.Join(files, fmt.Sprintf("f%06d.bin", i)), chunk[:kb<<10], 0o600); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(files, "big.bin"), bytes.Repeat(chunk, 12), 0o600); err != nil {
		b.Fatal(err)
	}
	env := func(home string) []string { return []string{"HOME=" + home, "PATH=/usr/local/bin:/usr/bin:/bin"} }
	run := func(c *exec.Cmd) {
		if out, err := c.CombinedOutput(); err != nil {
			b.Fatalf("%v: %v: %s", c.Args, err, out)
		}
	}
	pause := exec.Command(lnk, "agent", "pause", "main")
	pause.Env = env(from)
	run(pause)
	pipe := func(a, z *exec.Cmd) {
		r, w, err := os.Pipe()
		if err != nil {
			b.Fatal(err)
		}
		var ea, ez bytes.Buffer
		a.Stdout, a.Stderr, z.Stdin, z.Stderr = w, &ea, r, &ez
		if err := a.Start(); err != nil {
			b.Fatal(err)
		}
		if err := z.Start(); err != nil {
			b.Fatal(err)
		}
		w.Close()
		r.Close()
		if err := a.Wait(); err != nil {
			b.Fatalf("%v: %v: %s", a.Args, err, ea.String())
		}
		if err := z.Wait(); err != nil {
			b.Fatalf("%v: %v: %s", z.Args, err, ez.String())
		}
	}
	var moves, tars []time.Duration
	for i := 0; i < b.N; i++ {
		for turn := 0; turn < 2; turn++ {
			dst, err := os.MkdirTemp("", "lnk-bench-move-")
			if err != nil {
				b.Fatal(err)
			}
			os.Chmod(dst, 0o700)
			if (turn+i)%2 == 0 {
				keyOut := exec.Command(lnk, "key", "new", "--out", filepath.Join(dst, "k.key"))
				keyOut.Env = env(dst)
				pub, err := keyOut.Output()
				if err != nil {
					b.Fatal(err)
				}
				send := exec.Command(lnk, "agent", "state-send", "main", "--to", string(bytes.TrimSpace(pub)))
				send.Env = env(from)
				recv := exec.Command(lnk, "agent", "receive", "--key", filepath.Join(dst, "k.key"))
				recv.Env = env(dst)
				start := time.Now()
				pipe(send, recv)
				moves = append(moves, time.Since(start))
			} else {
				c := exec.Command("tar", "c", "-C", files, ".")
				x := exec.Command("tar", "x", "-C", dst)
				start := time.Now()
				pipe(c, x)
				tars = append(tars, time.Since(start))
			}
			os.RemoveAll(dst)
		}
	}
	m, t := median(moves), median(tars)
	bytesMoved := float64(mb) * (1 << 20)
	b.ReportMetric(float64(m.Nanoseconds()), "link-ns/op")
	b.ReportMetric(float64(t.Nanoseconds()), "base-ns/op")
	b.ReportMetric(bytesMoved/m.Seconds()/1e6, "move-MB/s")
	b.ReportMetric(bytesMoved/t.Seconds()/1e6, "tar-MB/s")
	b.ReportMetric(t.Seconds()/m.Seconds(), "rate-x-tar")
	b.ReportMetric(m.Seconds()/t.Seconds(), "x-baseline")
	b.ReportMetric(float64(mb), "MiB")
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

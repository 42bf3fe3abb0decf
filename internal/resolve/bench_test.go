package resolve

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	pathrs "github.com/cyphar/filepath-securejoin/pathrs-lite"
	"golang.org/x/sys/unix"
)

// BenchmarkOpenDepth8 opens a file 8 components below the held folder for
// reading and closes it, each way in the same run, interleaved in rounds
// so the machine's load falls on all of them alike:
//
//	base-ns/op        plain open(2) of the absolute path (the baseline)
//	resolve-ns/op     the resolver's open, the step every operation shares:
//	                  the name checked, then one openat2 (RESOLVE_BENEATH,
//	                  NO_SYMLINKS, NO_MAGICLINKS, NO_XDEV) for reading
//	link-ns/op        Root.OpenFd, the read's open: the resolver's open,
//	                  then fstat to refuse anything but a regular file
//	                  before it is read (the broker's open)
//	link-file-ns/op   Root.Open: the same made an *os.File
//	fallback-ns/op    Root.Open with the per-component walk forced
//	osroot-ns/op      Go's os.Root.Open
//	securejoin-ns/op  filepath-securejoin OpenatInRoot + Reopen(O_RDONLY)
//	syscall-ns/op     one getppid(2): what each system call costs here, since
//	                  the resolver's open is openat2 + fstat against open(2)
//	base-fstat-ns/op  open(2) + fstat(2) of the absolute path: what any
//	                  open that refuses a FIFO or a device before reading
//	                  must do at the least
//
// x-baseline is resolve/base (the target is ≤ 1.2): the resolver's open
// against open(2), one system call each. The read's open makes two,
// openat2 and fstat, and is set against open(2)+fstat: x-base-fstat is
// link/base-fstat, and x-read-open is link/base (what a read's open
// costs over a bare open(2), the fstat included); x-osroot and
// x-securejoin are link-file (an *os.File, as each of those returns) over
// each: below 1 means Link is faster.
func BenchmarkOpenDepth8(b *testing.B) {
	dir := b.TempDir()
	rel := "d1/d2/d3/d4/d5/d6/d7/file.txt"
	abs := filepath.Join(dir, rel)
	must(b, os.MkdirAll(filepath.Dir(abs), 0o700))
	must(b, os.WriteFile(abs, []byte(strings.Repeat("x", 4096)), 0o600))
	r := openRoot(b, dir)
	fb := r.forceFallback()
	osr, err := os.OpenRoot(dir)
	must(b, err)
	defer osr.Close()
	sjRoot, err := os.Open(dir)
	must(b, err)
	defer sjRoot.Close()

	ways := []struct {
		metric string
		op     func()
	}{
		{"base-ns/op", func() {
			fd, err := unix.Open(abs, unix.O_RDONLY|unix.O_CLOEXEC, 0)
			if err != nil {
				b.Fatal(err)
			}
			unix.Close(fd)
		}},
		{"resolve-ns/op", func() {
			fd, err := r.resolve("open", rel, readFlags)
			if err != nil {
				b.Fatal(err)
			}
			unix.Close(fd)
		}},
		{"link-ns/op", func() {
			fd, _, err := r.OpenFd(rel, 0)
			if err != nil {
				b.Fatal(err)
			}
			unix.Close(fd)
		}},
		{"link-file-ns/op", func() {
			f, _, err := r.Open(rel, 0)
			if err != nil {
				b.Fatal(err)
			}
			f.Close()
		}},
		{"fallback-ns/op", func() {
			f, _, err := fb.Open(rel, 0)
			if err != nil {
				b.Fatal(err)
			}
			f.Close()
		}},
		{"osroot-ns/op", func() {
			f, err := osr.Open(rel)
			if err != nil {
				b.Fatal(err)
			}
			f.Close()
		}},
		{"securejoin-ns/op", func() {
			h, err := pathrs.OpenatInRoot(sjRoot, rel)
			if err != nil {
				b.Fatal(err)
			}
			f, err := pathrs.Reopen(h, unix.O_RDONLY)
			h.Close()
			if err != nil {
				b.Fatal(err)
			}
			f.Close()
		}},
		{"syscall-ns/op", func() { unix.Getppid() }},
		{"base-fstat-ns/op", func() {
			fd, err := unix.Open(abs, unix.O_RDONLY|unix.O_CLOEXEC, 0)
			if err != nil {
				b.Fatal(err)
			}
			var st unix.Stat_t
			unix.Fstat(fd, &st)
			unix.Close(fd)
		}},
	}
	// Each way runs in rounds of 10, interleaved; a way's figure is the
	// median of its rounds, so a burst of load from elsewhere on the
	// machine lands in a few rounds of every way rather than in one way.
	rounds := make([][]float64, len(ways))
	const round = 10
	b.ResetTimer()
	for done := 0; done < b.N; done += round {
		for i, w := range ways {
			start := time.Now()
			for range round {
				w.op()
			}
			rounds[i] = append(rounds[i], float64(time.Since(start).Nanoseconds())/round)
		}
	}
	b.StopTimer()
	ns := make([]float64, len(ways))
	for i, w := range ways {
		sort.Float64s(rounds[i])
		ns[i] = rounds[i][len(rounds[i])/2]
		b.ReportMetric(ns[i], w.metric)
	}
	b.ReportMetric(ns[1]/ns[0], "x-baseline")
	b.ReportMetric(ns[2]/ns[8], "x-base-fstat")
	b.ReportMetric(ns[2]/ns[0], "x-read-open")
	b.ReportMetric(ns[3]/ns[5], "x-osroot")
	b.ReportMetric(ns[3]/ns[6], "x-securejoin")
	b.ReportMetric(0, "ns/op") // the per-way figures above are the ones to read
}

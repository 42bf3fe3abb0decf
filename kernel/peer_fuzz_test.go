package kernel

import (
	"testing"

	"lnk.dev/lnk/internal/peercred"
	"lnk.dev/lnk/internal/procstat"
)

// FuzzPeerProc feeds /proc/PID/status and /proc/PID/stat texts, which a
// peer partly writes (its command's name may hold any byte, ')' and line
// breaks included), to the readers the kernel uses: they never panic and
// a parent is never negative (internal/procstat's FuzzParse also checks
// that a name playing at being the fields after it moves no field).
func FuzzPeerProc(f *testing.F) {
	f.Add([]byte("Name:\tlnk\nNoNewPrivs:\t0\nSeccomp:\t0\n"), []byte("42 (lnk) S 7 42 42 0 -1"))
	f.Add([]byte("Name:\tx\nNoNewPrivs:\t1\nSeccomp:\t2\nSeccomp_filters:\t1\n"), []byte("9 (a) b) S 1 9 9"))
	f.Add([]byte("NoNewPrivs:\t1\n"), []byte("5 (x\nNoNewPrivs:\t0\n) R 3"))
	f.Fuzz(func(t *testing.T, status, stat []byte) {
		peercred.ParseConfinement(status)
		if s, err := procstat.Parse(stat); err == nil && s.PPID < 0 {
			t.Fatalf("parent %d", s.PPID)
		}
	})
}

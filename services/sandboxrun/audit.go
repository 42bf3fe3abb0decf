package sandboxrun

import (
	"time"

	"lnk.dev/lnk/internal/audit"
	"lnk.dev/lnk/internal/ownerdir"
)

// Audit appends es to home's ~/.lnk/log/audit.log (folders made 0700
// where missing, never through a link), each stamped now: what a run
// logs itself (a refusal of its own, a notice, the kernel gone).
func Audit(home string, es ...audit.Entry) error {
	if len(es) == 0 {
		return nil
	}
	dir, err := ownerdir.Open(home, ".lnk", audit.DirName)
	if err != nil {
		return err
	}
	l, err := audit.Open(dir, audit.Options{})
	if err != nil {
		dir.Close()
		return err
	}
	defer l.Close()
	for _, e := range es {
		e.Time = time.Now()
		if err := l.Write(e); err != nil {
			return err
		}
	}
	return nil
}

package cli

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/audit"
)

// brokerLog is a broker's stderr, for lnk-keybroker and lnk-askbroker
// the run starts: each line the broker says (prefix taken off) becomes
// the audit-log line entry makes of it. A line the audit log can't take
// (its folder refused, say) goes to lnk's own stderr with the reason,
// never nowhere. done closes once the broker's last line is written.
func brokerLog(comp *caps.Compiled, prefix string, entry func(line string) audit.Entry) (w *os.File, done chan struct{}, err error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	done = make(chan struct{})
	go func() {
		defer close(done)
		defer r.Close()
		copyBrokerLog(r, comp.Home, prefix, entry, os.Stderr)
	}()
	return w, done, nil
}

// copyBrokerLog writes each line of r to the audit log beneath home, or,
// where that log can't be opened, to fallback with why.
func copyBrokerLog(r io.Reader, home, prefix string, entry func(line string) audit.Entry, fallback io.Writer) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), 64<<10)
	var log *audit.Log
	var openErr error
	for sc.Scan() {
		line := strings.TrimPrefix(sc.Text(), prefix)
		if log == nil && openErr == nil {
			if log, openErr = openAuditLog(home); openErr == nil {
				defer log.Close()
			}
		}
		e := entry(line)
		if openErr != nil {
			fmt.Fprintf(fallback, "lnk: not in the audit log (%v): %s%s\n", openErr, prefix, line)
			continue
		}
		e.Time = time.Now()
		if err := log.Write(e); err != nil {
			fmt.Fprintf(fallback, "lnk: not in the audit log (%v): %s%s\n", err, prefix, line)
		}
	}
}

package kernel

import (
	"bufio"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/audit"
)

// A start's broker says its events (a call through the tool bridge, a
// request through the proxy) as lines on its stderr, a pipe the kernel
// reads; the kernel writes each to the audit log itself, with the
// start's agent (brokerLog's entry), so a broker cannot write a line
// for another agent or one that breaks the log's form.
//
// The kernel reads that pipe at most once per logHoldoff: a broker busy
// with calls wakes the kernel once per holdoff, never once per call, so
// no call's path pays for a wake of the kernel's. A line waits in the
// pipe meanwhile, which the kernel holds: written before the broker
// answers the call (lnk-toolbridge writes its line, then the answer),
// it is read and logged even if the broker is killed right after. The
// read end is a blocking fd read on a thread of its own, never the
// runtime's poller, which would wake the kernel at every write even
// while the reader holds off. When the start ends or the broker dies
// (hurry), the holdoff is cut short: what is left is read at once,
// before the caller learns the start has ended.

// logHoldoff is how long the kernel lets a broker's lines gather in
// its pipe between two reads.
const logHoldoff = 100 * time.Millisecond

// brokerLog is a pipe for a start's broker's stderr: each line it says
// (prefix taken off) becomes the audit-log line entry makes of it, or,
// where entry makes none, a kernel line saying it; the last such line
// (why it did not start) is kept for the run's lifeline.
func (k *Kernel) brokerLog(run *startRun, name, prefix string, entry func(line []byte) (audit.Entry, bool)) func() (*os.File, error) {
	return func() (*os.File, error) {
		var fds [2]int
		if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil { // blocking: see above
			return nil, err
		}
		r := os.NewFile(uintptr(fds[0]), "broker-log")
		w := os.NewFile(uintptr(fds[1]), "broker-stderr")
		said := &brokerSaid{done: make(chan struct{}), hurry: make(chan struct{})}
		run.mu.Lock()
		if run.said == nil {
			run.said = map[string]*brokerSaid{}
		}
		run.said[name] = said
		run.mu.Unlock()
		go func() {
			defer close(said.done)
			defer r.Close()
			sc := bufio.NewScanner(&heldOff{f: r, hurry: said.hurry})
			sc.Buffer(make([]byte, 4096), 1<<20)
			for sc.Scan() {
				line := []byte(strings.TrimPrefix(sc.Text(), prefix))
				if e, ok := entry(line); ok {
					k.record(e)
					continue
				}
				k.record(audit.Entry{Kind: audit.KindKernel, Route: name, Reason: prefix + string(line)})
				said.last = string(line) // read after done closes
			}
		}()
		return w, nil
	}
}

// heldOff reads f at most once per logHoldoff, until hurry closes.
type heldOff struct {
	f     *os.File
	hurry <-chan struct{}
	last  time.Time
}

func (h *heldOff) Read(p []byte) (int, error) {
	if d := logHoldoff - time.Since(h.last); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-h.hurry:
			t.Stop()
		}
	}
	n, err := h.f.Read(p)
	h.last = time.Now()
	return n, err
}

// brokerSaid is the last line a start's broker said that was no event
// of its log; last is read once done has closed. Closing hurry (once)
// has its reader read what is left without holding off.
type brokerSaid struct {
	done  chan struct{}
	last  string
	hurry chan struct{}
	once  sync.Once
}

func (s *brokerSaid) rush() { s.once.Do(func() { close(s.hurry) }) }

// lastSaid is what the broker name of r said last, once its stderr has
// ended (bounded: a broker's stderr a child of its still holds is not
// waited for).
func (r *startRun) lastSaid(name string) string {
	r.mu.Lock()
	said := r.said[name]
	r.mu.Unlock()
	if said == nil {
		return ""
	}
	said.rush()
	select {
	case <-said.done:
		return said.last
	case <-time.After(2 * time.Second):
		return ""
	}
}

// drainLogs waits, bounded, until the stderr of each of r's brokers
// (stopped already) has been read to its end: their last lines are in
// the audit log before the start's end is said.
func (r *startRun) drainLogs() {
	r.mu.Lock()
	var all []*brokerSaid
	for _, s := range r.said {
		all = append(all, s)
	}
	r.mu.Unlock()
	deadline := time.After(2 * time.Second)
	for _, s := range all {
		s.rush()
		select {
		case <-s.done:
		case <-deadline:
			return
		}
	}
}

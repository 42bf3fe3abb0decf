package runtool

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"lnk.dev/lnk/internal/procstat"
)

// Supervise is a background command's supervisor, a process of its own
// outside every sandbox (`lnk-run-tool supervise`): handed the record's
// lock (taken: it holds it for its whole life), the output file, the
// working folder and a pipe to say it started, it starts the sandbox,
// records its group, copies its output into the file up to
// background_output, and ends the whole group at its leader's exit, at
// background_timeout or on SIGTERM (a stop), then records the ending.
// Its caller locks the OS thread first: the sandbox's PR_SET_PDEATHSIG
// is that thread's, so the sandbox dies with the supervisor however it
// dies.
func (a *Agent) Supervise(id string, lock, out, dir, ready *os.File) (err error) {
	defer lock.Close()
	say := func(msg string) {
		if ready != nil {
			io.WriteString(ready, msg+"\n")
			ready.Close()
			ready = nil
		}
	}
	defer func() {
		if err != nil {
			say("the supervisor: " + err.Error())
		}
		say("the supervisor ended before starting the sandbox")
	}()
	if !validID(id) {
		return fmt.Errorf("id %q is not a background command's ID", id)
	}
	comp, err := a.grants()
	if err != nil {
		return err
	}
	lim := comp.Limits.Run
	s, err := a.openStore()
	if err != nil {
		return err
	}
	defer s.Close()
	r, err := s.read(id)
	if err != nil {
		return err
	}
	if r.State != StateStarting {
		return fmt.Errorf("background command %s is %s, not starting", id, r.State)
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	defer pr.Close()
	g, err := a.startGroup(comp, r.Argv, int(dir.Fd()), pw) // closes pw
	if err != nil {
		return a.recordEnd(s, r, EndFailed, -1, 0, false, err)
	}
	if g.pgid == 0 { // it ended before it ran: what lnk would have said is why
		code := g.end()
		msg, _ := io.ReadAll(io.LimitReader(pr, 4096))
		return a.recordEnd(s, r, EndFailed, code, 0, false, fmt.Errorf("the sandbox did not start: %s", strings.TrimSpace(string(msg))))
	}
	lead, err := procstat.Read(g.pgid)
	self, serr := procstat.Read(os.Getpid())
	if err != nil || serr != nil {
		code := g.end()
		return a.recordEnd(s, r, EndFailed, code, 0, false, fmt.Errorf("reading the group's and the supervisor's start: %v %v", err, serr))
	}
	r.State, r.Group, r.Supervisor = StateRunning, Proc{PID: g.pgid, Start: lead.Start}, Proc{PID: os.Getpid(), Start: self.Start}
	if err := s.write(r); err != nil {
		g.end()
		return err
	}
	say("ok")
	w := &fileCap{f: out, max: lim.BackgroundOutput}
	copied := make(chan struct{})
	go func() { io.Copy(w, pr); close(copied) }()
	timer := time.NewTimer(lim.BackgroundTimeout)
	defer timer.Stop()
	reason := EndExited
	select {
	case <-g.done:
	case <-timer.C:
		reason = EndTimeout
	case <-stop:
		reason = EndStopped
	}
	code := g.end()
	pr.SetReadDeadline(time.Now().Add(waitDelay))
	<-copied
	out.Sync()
	return a.recordEnd(s, r, reason, code, w.total, w.total > w.max, w.err)
}

// recordEnd writes r's ending once, then its record, ended.
func (a *Agent) recordEnd(s *store, r *Record, reason string, code int, total int64, cut bool, cause error) error {
	r.State, r.Reason, r.Code, r.Output, r.Cut, r.Ended = StateEnded, reason, code, total, cut, time.Now().UTC()
	if cause != nil {
		r.Error = cause.Error()
	}
	if err := s.writeEnding(r); err != nil {
		return err
	}
	if err := s.write(r); err != nil {
		return err
	}
	return cause
}

// fileCap writes the first max bytes to f and counts the rest, which it
// drops: a background command's output, kept to background_output. A
// write error stops the writing, never the reading (the command is not
// blocked on a full pipe).
type fileCap struct {
	f     *os.File
	max   int64
	total int64
	err   error
}

func (w *fileCap) Write(p []byte) (int, error) {
	n := len(p)
	room := w.max - w.total
	w.total += int64(n)
	if room > 0 && w.err == nil {
		if int64(len(p)) > room {
			p = p[:room]
		}
		if _, err := w.f.Write(p); err != nil {
			w.err = fmt.Errorf("writing its output: %w", err)
		}
	}
	return n, nil
}

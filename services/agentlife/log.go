package agentlife

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/logtail"
	"lnk.dev/lnk/internal/ownerfile"
)

// LogName is the log's name for an agent: its harness's, "harness" when
// it names none.
func LogName(a *caps.Agent) string {
	if a.Harness != "" {
		return a.Harness
	}
	return "harness"
}

// logRule is what a log must be: a regular file of the owner's, 0600 or
// stricter, with no other hard link (one to another file would have the
// harness's output appended there).
var logRule = ownerfile.Rule{Type: unix.S_IFREG, Forbid: 0o077, OneLink: true}

// openAppend opens the log file in dirfd for appending (made 0600 where
// missing), never through a link, refused unless it passes logRule.
// O_NONBLOCK: a fifo put there fails at once (no reader), never hangs.
// Read too, for openLog's look at its last byte; the descriptor never
// leaves the supervisor (the harness writes to a pipe).
func openAppend(dirfd int, dir, file string) (*os.File, error) {
	fd, err := ownerfile.Open(dirfd, file, unix.O_RDWR|unix.O_APPEND|unix.O_CREAT|unix.O_NONBLOCK, 0o600)
	if err != nil {
		return nil, fmt.Errorf("the log %s/%s is refused: %w", dir, file, err)
	}
	if err := ownerfile.Check(fd, logRule); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("the log %s/%s is refused: %w", dir, file, err)
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), dir+"/"+file), nil
}

// openLog opens ~/.lnk/agents/<agent>/logs/<name>.log as openAppend does,
// rotated first where it has reached MaxLog, and records its size now in
// <name>.start, atomically: where this start begins, for lnk agent logs.
// It is written through the rotLog it returns (rotate.go); warn says a
// failure to rotate.
func openLog(home, agent, name string, warn func(string)) (*rotLog, error) {
	d, err := logsDir(home, agent)
	if err != nil {
		return nil, err
	}
	l, err := openLogIn(d, name, warn)
	if err != nil {
		d.Close()
	}
	return l, err
}

func openLogIn(d *os.File, name string, warn func(string)) (*rotLog, error) {
	dirfd := int(d.Fd())
	f, err := openAppend(dirfd, d.Name(), name+".log")
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err == nil && st.Size() >= MaxLog {
		// Rotated before the start: its lines all go to the new file.
		if _, err = rotateFile(dirfd, name, f); err == nil {
			f.Close()
			if f, err = openAppend(dirfd, d.Name(), name+".log"); err != nil {
				return nil, err
			}
		}
	}
	if err == nil {
		err = endTornLine(f)
	}
	if err == nil {
		st, err = f.Stat()
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("the log %s: %w", f.Name(), err)
	}
	start := logtail.Start{Offset: st.Size()}
	if err := ownerfile.WriteAtomic(dirfd, name+".start", []byte(start.String()), ownerfile.Write{Mode: 0o600}); err != nil {
		f.Close()
		return nil, fmt.Errorf("recording the start in %s/%s.start: %w", d.Name(), name, err)
	}
	return &rotLog{dir: d, name: name, f: f, start: start, record: true, warn: warn}, nil
}

// endTornLine ends with a newline a log whose last line has none: what a
// supervisor killed mid-copy left (its copy ends wherever the pipe's read
// did). So this start's first line begins a line of its own, at the
// offset recorded, never glued to the torn one.
func endTornLine(f *os.File) error {
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return err
	}
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, st.Size()-1); err != nil {
		return err
	}
	if last[0] == '\n' {
		return nil
	}
	_, err = f.Write([]byte{'\n'})
	return err
}

// appendLine appends line, one of the supervisor's own written outside
// a start's log (between starts, or from the way in's goroutines), to the
// log through the same bounded writer as a start's output (rotLog): where
// it would pass MaxLog the log is rotated first, and <name>.start, where
// the last start began, follows that start's lines into <name>.log.1. A
// start file that cannot be read (a link, not the owner's, malformed)
// leaves the log unrotated and the line dropped past the bound, said on
// warn; none at all (no start yet) is left none.
func appendLine(home, agent, name, line string, warn func(string)) error {
	d, err := logsDir(home, agent)
	if err != nil {
		return err
	}
	f, err := openAppend(int(d.Fd()), d.Name(), name+".log")
	if err != nil {
		d.Close()
		return err
	}
	l := &rotLog{dir: d, name: name, f: f, record: true, lines: true, warn: warn}
	b, err := ownerfile.ReadFile(int(d.Fd()), name+".start", logRule, logtail.MaxStartFile)
	switch {
	case errors.Is(err, unix.ENOENT):
		l.record, err = false, nil
	case err == nil:
		if l.start, err = logtail.ParseStart(b); err != nil {
			err = fmt.Errorf("%s/%s.start: %w", d.Name(), name, err)
		}
	}
	if err != nil {
		l.startErr = err
	}
	defer l.Close()
	l.Write([]byte(line))
	return nil
}

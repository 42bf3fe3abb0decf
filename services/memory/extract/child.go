package extract

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Limits of the child.
const (
	Wall   = 30 * time.Second
	CPU    = 30      // seconds
	Memory = 1 << 30 // bytes of address space
)

// Child is the child's side (lnk-memory extract docx): it limits itself,
// reads the document from in and writes its text to out.
func Child(in io.Reader, out io.Writer) error {
	for _, l := range []struct {
		res int
		max uint64
	}{{unix.RLIMIT_CPU, CPU}, {unix.RLIMIT_AS, Memory}, {unix.RLIMIT_CORE, 0}} {
		if err := unix.Setrlimit(l.res, &unix.Rlimit{Cur: l.max, Max: l.max}); err != nil {
			return fmt.Errorf("setrlimit %d: %w", l.res, err)
		}
	}
	doc, err := io.ReadAll(io.LimitReader(in, MaxDocument+1))
	if err != nil {
		return err
	}
	text, err := Docx(doc)
	if err != nil {
		return err
	}
	_, err = io.WriteString(out, text)
	return err
}

// Run extracts doc's text in a child, exe extract docx (exe is this
// program), with no environment, within Wall, its output cut at MaxText
// (and refused past it). A child that fails, crashes or runs past its
// limits is that document's error alone.
func Run(ctx context.Context, exe string, doc []byte) (string, error) {
	if len(doc) > MaxDocument {
		return "", fmt.Errorf("%d bytes, more than the %d a document may have", len(doc), MaxDocument)
	}
	ctx, cancel := context.WithTimeout(ctx, Wall)
	defer cancel()
	var out, errb limited
	out.max, errb.max = MaxText+1, 4096
	cmd := &exec.Cmd{Path: exe, Args: []string{exe, "extract", "docx"}, Env: []string{}, Dir: "/",
		Stdin: bytes.NewReader(doc), Stdout: &out, Stderr: &errb,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}}
	if err := cmd.Start(); err != nil {
		return "", err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		return "", fmt.Errorf("its text was not out within %s", Wall)
	}
	if err != nil {
		return "", fmt.Errorf("extracting failed: %v: %s", err, bytes.TrimSpace(errb.b.Bytes()))
	}
	if out.b.Len() > MaxText {
		return "", ErrTooMuchText
	}
	return out.b.String(), nil
}

// limited keeps at most max bytes and drops the rest.
type limited struct {
	b   bytes.Buffer
	max int
}

func (l *limited) Write(p []byte) (int, error) {
	if room := l.max - l.b.Len(); room > 0 {
		l.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

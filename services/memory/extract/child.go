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

	"lnk.dev/lnk/services/memory/filter"
)

// Limits of the child.
const (
	Wall   = 30 * time.Second
	CPU    = 30      // seconds
	Memory = 1 << 30 // bytes of data (RLIMIT_DATA)
)

// Kinds are the documents a child reads, by the name it is run with.
var kinds = map[string]func([]byte) (string, error){"docx": Docx, "pdf": Pdf}

// Child is the child's side (lnk-memory extract KIND): it limits itself,
// loads its seccomp filter (no exec, no socket), reads the document from
// in and writes its text to out.
func Child(kind string, in io.Reader, out io.Writer) error {
	parse, ok := kinds[kind]
	if !ok {
		return fmt.Errorf("%q is no kind of document extracted here (docx, pdf)", kind)
	}
	// The memory bound is RLIMIT_DATA, not RLIMIT_AS: the Go runtime
	// reserves more address space than 1 GiB before main runs (reserved,
	// never backed), so an address-space bound set here would refuse the
	// runtime's next mapping, however small, while RLIMIT_DATA counts the
	// private writable memory the parse really takes.
	for _, l := range []struct {
		res int
		max uint64
	}{{unix.RLIMIT_CPU, CPU}, {unix.RLIMIT_DATA, Memory}, {unix.RLIMIT_CORE, 0}} {
		if err := unix.Setrlimit(l.res, &unix.Rlimit{Cur: l.max, Max: l.max}); err != nil {
			return fmt.Errorf("setrlimit %d: %w", l.res, err)
		}
	}
	if err := filter.Child(); err != nil {
		return fmt.Errorf("confining the extractor: %w", err)
	}
	doc, err := io.ReadAll(io.LimitReader(in, MaxDocument+1))
	if err != nil {
		return err
	}
	text, err := parse(doc)
	if err != nil {
		return err
	}
	_, err = io.WriteString(out, text)
	return err
}

// Run extracts doc's text in a child, exe extract KIND (exe is this
// program), with no environment, within Wall, its output cut at MaxText
// (and refused past it). A child that fails, crashes or runs past its
// limits is that document's error alone.
func Run(ctx context.Context, exe, kind string, doc []byte) (string, error) {
	if _, ok := kinds[kind]; !ok {
		return "", fmt.Errorf("%q is no kind of document extracted here (docx, pdf)", kind)
	}
	if len(doc) > MaxDocument {
		return "", fmt.Errorf("%d bytes, more than the %d a document may have", len(doc), MaxDocument)
	}
	ctx, cancel := context.WithTimeout(ctx, Wall)
	defer cancel()
	var out, errb limited
	out.max, errb.max = MaxText+1, 4096
	cmd := &exec.Cmd{Path: exe, Args: []string{exe, "extract", kind}, Env: []string{}, Dir: "/",
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

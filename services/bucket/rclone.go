package bucket

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"

	"lnk.dev/lnk/internal/secret"
	"lnk.dev/lnk/internal/textsafe"
)

// ErrNoRclone is returned when no rclone program is found.
var ErrNoRclone = errors.New("rclone is not installed (scripts/install-deps.sh installs it; on Debian: apt-get install rclone)")

// maxStderr is the most of rclone's stderr kept for an error.
const maxStderr = 64 << 10

// childPath is the rclone child's PATH: the system's, never the owner's.
const childPath = "PATH=/usr/local/bin:/usr/bin:/bin"

// runner runs rclone for one agent: its config handed as fd 3, an
// environment of its own, and every secret of the call kept out of what
// it returns.
type runner struct {
	program string   // rclone's path
	home    string   // the child's HOME: ~/.lnk/agents/<agent id>/rclone
	conf    *os.File // rclone.conf, opened as the owner's, or nil
	hide    [][]byte // secrets to replace in anything returned
	caCert  string   // tests only: --ca-cert, a test server's CA
}

// findRclone is program, or rclone as PATH finds it.
func findRclone(program string) (string, error) {
	if program != "" {
		return program, nil
	}
	p, err := exec.LookPath("rclone")
	if err != nil {
		return "", ErrNoRclone
	}
	return p, nil
}

// run runs rclone with args (never a secret among them), stdin as its
// stdin, confined to rw (confine.go), and returns its stdout; a failure is rclone's stderr, with each
// secret replaced, in one error.
func (r *runner) run(ctx context.Context, stdin io.Reader, rw reach, args ...string) ([]byte, error) {
	full := []string{"--config", "/dev/null"}
	if r.conf != nil {
		full[1] = "/dev/fd/3"
	}
	full = append(full, "--ask-password=false", "--log-level", "NOTICE")
	if r.caCert != "" {
		full = append(full, "--ca-cert", r.caCert)
	}
	cmd := exec.CommandContext(ctx, r.program, append(full, args...)...)
	// Built from nothing: no proxy variable of the owner's (only Link's
	// own proxy, route.go), no AWS_* or RCLONE_* of the owner's, no
	// secret of any kind reaches the child.
	cmd.Env = append([]string{childPath, "HOME=" + r.home, "XDG_CONFIG_HOME=" + r.home, "XDG_CACHE_HOME=" + r.home, "LANG=C.UTF-8", "TZ=UTC"}, rw.env...)
	cmd.Dir = r.home
	if r.conf != nil {
		cmd.ExtraFiles = []*os.File{r.conf}
	}
	if stdin == nil {
		stdin = bytes.NewReader(nil) // a pipe: exec opens no /dev/null on the confined thread
	}
	cmd.Stdin = stdin
	var out bytes.Buffer
	errb := &capped{max: maxStderr}
	cmd.Stdout, cmd.Stderr = &out, errb
	err := r.startConfined(cmd, rw)
	if err == nil {
		err = cmd.Wait()
	}
	if err != nil {
		msg := r.redact(errb.b.Bytes())
		if ctx.Err() != nil {
			return nil, fmt.Errorf("rclone %s: %w", args[0], ctx.Err())
		}
		return nil, &RcloneError{Verb: args[0], Stderr: msg, Err: err}
	}
	return out.Bytes(), nil
}

// redact is b with every secret of the call replaced by [secret].
func (r *runner) redact(b []byte) string {
	for _, s := range r.hide {
		if len(s) > 0 {
			b = bytes.ReplaceAll(b, s, []byte(secret.Redacted))
		}
	}
	return string(b)
}

// RcloneError is rclone's failure: the command, what it wrote to stderr
// (secrets replaced), and how it ended.
type RcloneError struct {
	Verb   string
	Stderr string
	Err    error
}

func (e *RcloneError) Error() string {
	return "rclone " + e.Verb + " failed: " + lastLines(e.Stderr, 3) + " (" + e.Err.Error() + ")"
}

func (e *RcloneError) Unwrap() error { return e.Err }

// datePrefix is how rclone starts each log line.
var datePrefix = regexp.MustCompile(`^\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2} `)

// lastLines is the last n distinct non-empty lines of s joined on one
// line, each without rclone's date prefix or a control character.
func lastLines(s string, n int) string {
	var keep []string
	seen := map[string]bool{}
	for _, l := range strings.Split(s, "\n") {
		// A file's name in it is the agent's to choose: no control
		// character of it reaches the owner's terminal.
		l = strings.TrimSpace(textsafe.Line(datePrefix.ReplaceAllString(strings.TrimSpace(l), "")))
		if l == "" || seen[l] {
			continue
		}
		seen[l] = true
		keep = append(keep, l)
	}
	if len(keep) > n {
		keep = keep[len(keep)-n:]
	}
	if len(keep) == 0 {
		return "no message"
	}
	return strings.Join(keep, " / ")
}

// capped keeps the first max bytes written to it.
type capped struct {
	b   bytes.Buffer
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.b.Len(); room > 0 {
		c.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/logtail"
	"lnk.dev/lnk/internal/ownerfile"
)

// lnk agent logs NAME [--follow] [--harness NAME]: the harness's log,
// ~/.lnk/agents/<agent>/logs/<harness>.log, appended from outside the
// sandbox by the agent's supervisor, shown from the offset the last start
// recorded in <harness>.start (security.txt, "Its log is out of its
// reach"). The folder and the files are opened through no link
// (internal/ownerfile); a log that is a link or not a regular file is
// refused. Reading and cleaning are internal/logtail's.

// followPoll is how often --follow looks for what is new.
const followPoll = 250 * time.Millisecond

func init() {
	register("agent", func() *cobra.Command {
		var follow bool
		var harness string
		c := &cobra.Command{
			Use:               "logs NAME",
			Short:             "Show the agent's log since its last start (--follow for what comes next)",
			Args:              cobra.ExactArgs(1),
			ValidArgsFunction: completeAgents,
			RunE: func(c *cobra.Command, args []string) error {
				ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt, syscall.SIGTERM)
				defer stop()
				return showLogs(ctx, c.OutOrStdout(), c.ErrOrStderr(), os.Getenv("HOME"), args[0], harness, follow)
			},
		}
		c.Flags().BoolVarP(&follow, "follow", "f", false, "keep showing what is appended, until Ctrl-C")
		c.Flags().StringVar(&harness, "harness", "", "the harness whose log to show (default: the agent's harness, or \"harness\")")
		return c
	})
}

// showLogs writes agent's log to out.
func showLogs(ctx context.Context, out, errw io.Writer, home, agent, harness string, follow bool) error {
	a, err := caps.LoadAgent(home, agent)
	if err != nil {
		return agentErr(err, agent)
	}
	name := harness
	if name == "" {
		name = a.Harness
	}
	if name == "" {
		name = "harness"
	}
	if err := caps.CheckName(name); err != nil {
		return Usage(fmt.Sprintf("--harness %q is not a harness's name", name), "lnk agent show "+agent+" names its harness")
	}
	real, err := filepath.EvalSymlinks(home)
	if err != nil {
		return fmt.Errorf("HOME: %w", err)
	}
	dirPath := caps.Layout{Home: real}.LogsDir(agent)
	dir, err := ownerfile.OpenPath(dirPath, unix.O_PATH|unix.O_DIRECTORY)
	if errors.Is(err, unix.ENOENT) {
		return Fail(ExitMissing, fmt.Errorf("agent %s has no logs folder (%s): it has not started", agent, dirPath), "lnk agent list shows the agents; its logs folder is made when it is created or starts")
	}
	if err == nil {
		err = ownerfile.Check(dir, ownerfile.PrivateDir)
		if err != nil {
			unix.Close(dir)
		}
	}
	if err != nil {
		return Refused(fmt.Errorf("refused %s: %v", dirPath, err), "it must be your own folder, mode 0700, reached through no link: remove the link, then lnk agent restart "+agent+" makes it again")
	}
	defer unix.Close(dir)
	logName := name + ".log"
	f, err := ownerfile.OpenFile(dir, logName, logRule)
	switch {
	case errors.Is(err, unix.ENOENT):
		return Fail(ExitMissing, fmt.Errorf("agent %s has no log %s yet", agent, filepath.Join(dirPath, logName)), "a log begins at the agent's first start; lnk agent logs "+agent+" --harness NAME shows another harness's")
	case err != nil:
		return Refused(fmt.Errorf("refused the log %s: %v (a log that is a link, not a regular file, another user's or writable by others is never read)", filepath.Join(dirPath, logName), err),
			"remove it (mv it aside to keep it), then lnk agent restart "+agent+" begins a new log, which lnk agent logs "+agent+" shows")
	}
	// Every file read, closed at the end: one read to its end stays open
	// until Follow has gone on in the next.
	files := []*os.File{f}
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	start, found, err := readStart(dir, name)
	if err != nil {
		return Refused(fmt.Errorf("refused %s: %v", filepath.Join(dirPath, name+".start"), err), "remove it, then lnk agent restart "+agent+" records a new one; lnk agent logs "+agent+" shows the log's end meanwhile")
	}
	if !found {
		fmt.Fprintf(errw, "lnk: agent %s: no start recorded for %s: showing the log's end\n", agent, logName)
	}
	r := logtail.New(f, start.Offset)
	if start.Prev {
		// The log was rotated since the start: its first lines are in
		// the previous file, read first.
		prev, err := ownerfile.OpenFile(dir, logName+".1", logRule)
		switch {
		case errors.Is(err, unix.ENOENT):
			fmt.Fprintf(errw, "lnk: agent %s: the start's first lines were in %s.1, which is gone: showing %s from its start\n", agent, logName, logName)
			r = logtail.New(f, 0)
		case err != nil:
			return Refused(fmt.Errorf("refused the log's previous file %s: %v (a log that is a link, not a regular file, another user's or writable by others is never read)", filepath.Join(dirPath, logName+".1"), err),
				"remove it (mv it aside to keep it); lnk agent logs "+agent+" then shows the log from its start")
		default:
			files = append(files, prev)
			if same, err := sameFile(prev, f); err != nil {
				return err
			} else if same {
				// Rotated between the log's opening and the start's
				// reading: the file opened is the previous one now.
				if f, err = ownerfile.OpenFile(dir, logName, logRule); err != nil {
					return Refused(fmt.Errorf("refused the log %s: %v", filepath.Join(dirPath, logName), err), "remove it (mv it aside to keep it), then lnk agent restart "+agent+" begins a new log")
				}
				files = append(files, f)
			}
			if r, err = logtail.NewJoined(prev, start.Offset, f); err != nil {
				return err
			}
		}
	}
	r.Truncated = func() {
		fmt.Fprintf(errw, "lnk: the log %s was cut short or replaced: reading it from its start\n", logName)
	}
	held := f
	r.Rotated = func() (*os.File, error) {
		next, err := rotated(dir, logName, held)
		if next != nil {
			files = append(files, next)
			held = next
		}
		return next, err
	}
	w := bufio.NewWriter(out)
	if err := r.Tail(w, logtail.Lines, !follow); err != nil {
		return err
	}
	if err := w.Flush(); err != nil || !follow {
		return err
	}
	if err := r.Follow(ctx, w, followPoll); err != nil {
		return err
	}
	return w.Flush()
}

// logRule is what lnk agent logs reads: a regular file of the owner's
// that no one else may write.
var logRule = ownerfile.Rule{Type: unix.S_IFREG, Forbid: 0o022}

// readStart reads <name>.start, where the last start began, and whether
// there is one (none: the log from its start, offset 0). A start file
// that is a link, not a regular file, not the owner's or malformed is an
// error: the offset is what keeps lines from before the start out.
func readStart(dir int, name string) (logtail.Start, bool, error) {
	b, err := ownerfile.ReadFile(dir, name+".start", logRule, logtail.MaxStartFile)
	if errors.Is(err, unix.ENOENT) {
		return logtail.Start{}, false, nil
	}
	if err != nil {
		return logtail.Start{}, false, err
	}
	s, err := logtail.ParseStart(b)
	return s, err == nil, err
}

// sameFile says whether a and b are one file.
func sameFile(a, b *os.File) (bool, error) {
	var sa, sb unix.Stat_t
	if err := unix.Fstat(int(a.Fd()), &sa); err != nil {
		return false, err
	}
	if err := unix.Fstat(int(b.Fd()), &sb); err != nil {
		return false, err
	}
	return sa.Dev == sb.Dev && sa.Ino == sb.Ino, nil
}

// rotated returns the log's file at logName where it is no longer held
// (the supervisor rotated it: held is <logName>.1 now), opened as the
// log is; nil while held is still the log, or no log is there yet.
func rotated(dir int, logName string, held *os.File) (*os.File, error) {
	var at, fd unix.Stat_t
	if err := unix.Fstatat(dir, logName, &at, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil, nil
		}
		return nil, err
	}
	if err := unix.Fstat(int(held.Fd()), &fd); err != nil {
		return nil, err
	}
	if at.Dev == fd.Dev && at.Ino == fd.Ino {
		return nil, nil
	}
	next, err := ownerfile.OpenFile(dir, logName, logRule)
	if err != nil {
		return nil, fmt.Errorf("refused the log %s, new since a rotation: %w", logName, err)
	}
	return next, nil
}

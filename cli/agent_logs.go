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
	f, err := ownerfile.OpenFile(dir, logName, ownerfile.Rule{Type: unix.S_IFREG, Forbid: 0o022})
	switch {
	case errors.Is(err, unix.ENOENT):
		return Fail(ExitMissing, fmt.Errorf("agent %s has no log %s yet", agent, filepath.Join(dirPath, logName)), "a log begins at the agent's first start; lnk agent logs "+agent+" --harness NAME shows another harness's")
	case err != nil:
		return Refused(fmt.Errorf("refused the log %s: %v (a log that is a link, not a regular file, another user's or writable by others is never read)", filepath.Join(dirPath, logName), err),
			"remove it (mv it aside to keep it), then lnk agent restart "+agent+" begins a new log, which lnk agent logs "+agent+" shows")
	}
	defer f.Close()
	start, err := readStart(dir, name)
	if err != nil {
		return Refused(fmt.Errorf("refused %s: %v", filepath.Join(dirPath, name+".start"), err), "remove it, then lnk agent restart "+agent+" records a new one; lnk agent logs "+agent+" shows the log's end meanwhile")
	}
	if start < 0 {
		fmt.Fprintf(errw, "lnk: agent %s: no start recorded for %s: showing the log's end\n", agent, logName)
		start = 0
	}
	r := logtail.New(f, start)
	r.Truncated = func() {
		fmt.Fprintf(errw, "lnk: the log %s was cut short or replaced: reading it from its start\n", logName)
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

// readStart reads <name>.start, the log's size when the last start
// began; -1 when there is none. A start file that is a link, not a
// regular file, not the owner's or malformed is an error: the offset is
// what keeps lines from before the start out.
func readStart(dir int, name string) (int64, error) {
	b, err := ownerfile.ReadFile(dir, name+".start", ownerfile.Rule{Type: unix.S_IFREG, Forbid: 0o022}, logtail.MaxStartFile)
	if errors.Is(err, unix.ENOENT) {
		return -1, nil
	}
	if err != nil {
		return 0, err
	}
	return logtail.ParseStart(b)
}

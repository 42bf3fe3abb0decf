package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"lnk.dev/lnk/helpers/askbroker"
	"lnk.dev/lnk/internal/audit"
	"lnk.dev/lnk/internal/textsafe"
)

// lnk sandbox log [--follow] [--json] [--lines N]: the audit log, made
// safe to print (internal/audit bounds what is read; internal/textsafe
// strips what a terminal would obey).

func init() {
	register("sandbox", func() *cobra.Command {
		var follow, asJSON bool
		var lines int
		c := &cobra.Command{
			Use:   "log",
			Short: "Show the audit log: every grant, capability use, refusal and question",
			Args:  cobra.NoArgs,
			RunE: func(c *cobra.Command, _ []string) error {
				if lines < 1 {
					return Usage("--lines must be at least 1")
				}
				home, err := homeDir()
				if err != nil {
					return err
				}
				if !asJSON {
					printWaitingQuestions(c.OutOrStdout(), home)
				}
				dir, err := audit.OpenDirFromHome(home)
				if errors.Is(err, unix.ENOENT) {
					fmt.Fprintln(c.ErrOrStderr(), "the audit log is empty: no kernel has run yet")
					return nil
				}
				if err != nil {
					return Refused(fmt.Errorf("audit log: %w", err), "look at ~/.lnk/log yourself: Link never follows a link there")
				}
				defer dir.Close()
				tail, fl, err := audit.Tail(dir, lines)
				if err != nil {
					return Refused(fmt.Errorf("audit log: %w", err))
				}
				defer fl.Close()
				out := c.OutOrStdout()
				for _, l := range tail {
					printLogLine(out, []byte(l), asJSON)
				}
				if !follow {
					return nil
				}
				tick := time.NewTicker(200 * time.Millisecond)
				defer tick.Stop()
				for {
					if err := fl.Poll(func(l []byte) { printLogLine(out, l, asJSON) }); err != nil {
						return Refused(fmt.Errorf("audit log: %w", err))
					}
					select {
					case <-c.Context().Done():
						return nil
					case <-tick.C:
					}
				}
			},
		}
		c.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing lines as they are written")
		c.Flags().BoolVar(&asJSON, "json", false, "print the JSON lines as kept, for journald or a SIEM")
		c.Flags().IntVarP(&lines, "lines", "n", 200, "how many of the last lines to show")
		return c
	})
}

// printLogLine prints one line of the log: as JSON (cleaned of anything
// a terminal would obey), or as words.
func printLogLine(w io.Writer, l []byte, asJSON bool) {
	if asJSON {
		fmt.Fprintln(w, textsafe.Line(string(l)))
		return
	}
	var e audit.Entry
	if err := json.Unmarshal(l, &e); err != nil {
		fmt.Fprintln(w, "(unreadable line) "+textsafe.Line(string(l)))
		return
	}
	var b strings.Builder
	b.WriteString(e.Time.Local().Format("2006-01-02 15:04:05"))
	fmt.Fprintf(&b, " %-8s", logValue(string(e.Kind)))
	field := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, " %s=%s", k, logValue(v))
		}
	}
	field("agent", e.Agent)
	if e.Start != 0 {
		field("start", fmt.Sprint(e.Start))
	}
	field("request", e.Request)
	field("cap", e.Cap)
	field("rights", e.Rights)
	field("route", e.Route)
	if e.Peer != nil {
		field("peer", fmt.Sprintf("uid %d pid %d", e.Peer.UID, e.Peer.PID))
	}
	if e.Count != 0 {
		field("count", fmt.Sprint(e.Count))
	}
	if e.Reason != "" {
		b.WriteString(" — " + e.Reason)
	}
	fmt.Fprintln(w, textsafe.Line(b.String()))
}

// logValue is a field's value as the words show it: cleaned
// (textsafe.Line), and quoted (strconv.Quote) when it holds a space, a
// quote, a backslash, '=', '—' or a rune Go does not print as itself, so
// a value (an agent's or a tool's name, a route: others' text) can never
// read as another field, nor as the reason after " — ". A value of none
// of those shows bare.
func logValue(v string) string {
	v = textsafe.Line(v)
	if v == "" || strings.IndexFunc(v, func(r rune) bool {
		return unicode.IsSpace(r) || r == '"' || r == '\\' || r == '=' || r == '—' || !strconv.IsPrint(r)
	}) >= 0 {
		return strconv.Quote(v)
	}
	return v
}

// printWaitingQuestions shows the questions waiting for the owner atop
// the log (tools-and-asking.txt "A waiting question"), with the command
// that answers them. A store that is not there yet has none.
func printWaitingQuestions(w io.Writer, home string) {
	if _, err := os.Lstat(filepath.Join(home, ".lnk", "questions")); err != nil {
		return
	}
	st, err := askbroker.OpenStore(home)
	if err != nil {
		fmt.Fprintf(w, "waiting questions: %v\n\n", err)
		return
	}
	defer st.Close()
	ws, err := st.List()
	if err != nil || len(ws) == 0 {
		return
	}
	fmt.Fprintf(w, "%d question(s) waiting for you (lnk ask show ID shows one whole; lnk sandbox answer ID yes|no):\n", len(ws))
	askbroker.PrintWaiting(w, ws, time.Now())
	fmt.Fprintln(w)
}

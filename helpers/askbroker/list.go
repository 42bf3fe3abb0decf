package askbroker

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"lnk.dev/lnk/internal/textsafe"
)

// PrintWaiting prints the waiting questions as a table, for `lnk ask
// list` and atop `lnk sandbox log`; every field is cleaned again, since
// the store is only as clean as whoever wrote it.
func PrintWaiting(w io.Writer, ws []Waiting, now time.Time) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tWAITS\tSANDBOX\tAGENT\tWHAT\tCALL")
	for _, q := range ws {
		call, _, more := strings.Cut(q.Call, "\n")
		if more || q.Cut {
			call += " …"
		}
		left := q.Deadline.Sub(now).Round(time.Second)
		if left < 0 {
			left = 0
		}
		agent := q.Agent
		if agent == "" {
			agent = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", q.ID, left, textsafe.Line(q.Sandbox), textsafe.Line(agent), textsafe.Line(q.What), textsafe.Line(call))
	}
	tw.Flush()
}

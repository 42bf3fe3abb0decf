package cli

import (
	"fmt"
	"io"
	"strings"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/ownerdir"
	"lnk.dev/lnk/internal/textsafe"
	"lnk.dev/lnk/services/harness/prompt"
)

// showInstructions prints agent name's standing instructions and notes as
// Link Harness reads them at each message: through its own folder's
// handle, never through a link, each at most prompt.MaxFile; a file left
// out (a link, a pipe) is said, not followed.
func showInstructions(w io.Writer, home, name string, asJSON bool) error {
	if _, err := caps.LoadAgent(home, name); err != nil {
		return agentErr(err, name)
	}
	dir, err := ownerdir.Open(home, "Link", "Agents", name, "Agent")
	if err != nil {
		return Refused(fmt.Errorf("agent %s's own folder: %w", name, err), "lnk agent show "+name+" shows where it is")
	}
	defer dir.Close()
	var left []string
	src, err := prompt.Open(dir, prompt.Options{Logf: func(format string, args ...any) {
		left = append(left, strings.TrimPrefix(fmt.Sprintf(format, args...), "prompt: "))
	}})
	if err != nil {
		return err
	}
	defer src.Close()
	p, err := src.Read()
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(w, struct {
			Instructions string   `json:"instructions"`
			Notes        string   `json:"notes"`
			LeftOut      []string `json:"left_out,omitempty"`
		}{p.Instructions, p.Notes, left})
	}
	for _, f := range []struct{ head, file, text string }{
		{"Instructions", prompt.InstructionsFile, p.Instructions},
		{"Notes", prompt.NotesFile, p.Notes},
	} {
		fmt.Fprintf(w, "%s (Agent/%s)\n", f.head, f.file)
		if strings.TrimSpace(f.text) == "" {
			fmt.Fprintln(w, "  (none)")
		} else {
			// What the agent noted is its words: cleaned of every
			// control and escape before it reaches the owner's terminal.
			text := string(textsafe.Clean([]byte(f.text)))
			for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
				fmt.Fprintln(w, "  "+l)
			}
		}
	}
	for _, l := range left {
		fmt.Fprintln(w, "left out: "+textsafe.Line(l))
	}
	return nil
}

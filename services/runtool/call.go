package runtool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"lnk.dev/lnk/internal/refusal"
	"lnk.dev/lnk/internal/resolve"
)

// Result is one run call's end.
type Result struct {
	Code     int // the command's exit status (128+N for signal N)
	Output   []byte
	Total    int64 // bytes it printed, kept or not
	Cut      bool  // Output holds only the first [tool.run] output bytes
	TimedOut bool
	Timeout  time.Duration // the call's timeout: [tool.run] timeout less a tenth
}

// Refusal is a call the tool refused before any sandbox started, with
// the reason the caller sees: Link's one refusal shape.
type Refusal = refusal.Refusal

// Run runs one command in a sandbox of its own made from the agent's
// sandbox file, and ends everything it started before answering:
// the group is stopped at its leader's exit, at the timeout ([tool.run]
// timeout less a tenth) and when ctx ends.
func (a *Agent) Run(ctx context.Context, c Call) (*Result, error) {
	comp, err := a.grants()
	if err != nil {
		return nil, err
	}
	if err := checkCommand(c.Argv, comp.Commands); err != nil {
		return nil, &Refusal{Reason: err.Error(), Hint: "lnk agent allow " + a.Name + " --command " + c.Argv[0]}
	}
	dir, err := a.openFolder(c.Folder)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	g, err := a.startGroup(comp, c.Argv, dir.Fd(), w) // closes w
	if err != nil {
		return nil, err
	}
	out := &capped{max: comp.Limits.Run.Output}
	copied := make(chan struct{})
	go func() { io.Copy(out, r); close(copied) }()
	limit := comp.Limits.Run.Timeout - comp.Limits.Run.Timeout/10
	tctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	code, stopped := g.wait(tctx)
	// Every writer is gone with the group; one outside it that took the
	// pipe is not waited for past waitDelay.
	r.SetReadDeadline(time.Now().Add(waitDelay))
	<-copied
	res := &Result{Code: code, Output: out.buf, Total: out.total, Cut: out.cut(), Timeout: limit}
	if stopped && ctx.Err() != nil {
		return res, fmt.Errorf("the call was cancelled: its command was stopped")
	}
	res.TimedOut = stopped
	return res, nil
}

// openFolder opens the working folder beneath the agent's files folder,
// each folder on the way from the one before and never through a link.
func (a *Agent) openFolder(folder string) (*resolve.Root, error) {
	home, err := resolve.OpenRoot(a.FilesDir())
	if err != nil {
		return nil, fmt.Errorf("the agent's files folder: %w", err)
	}
	if folder == "" {
		return home, nil
	}
	defer home.Close()
	dir, err := home.OpenDir(folder)
	if errors.Is(err, resolve.ErrLink) {
		return nil, &Refusal{Reason: fmt.Sprintf("folder %q is reached through a link, which run never follows", folder), Hint: "name the folder itself, inside the files folder"}
	}
	if err != nil {
		return nil, &Refusal{Reason: fmt.Sprintf("folder %q: %v", folder, err), Hint: "name a folder inside the files folder"}
	}
	return dir, nil
}

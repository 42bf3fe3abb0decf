// Command lnk-webhook checks the signatures of one webhook's posts for
// the agent's listener, which starts it once, at that webhook's first
// post, and keeps it. Checks arrive on its stdin, each a frame of
// helpers/keybroker/webhookcheck holding the post's signature headers
// and body and the webhook's secrets as the listener read them for it;
// each verdict goes back as one line on stdout, numbered as its check.
// It calls nothing: before it reads a byte, landlock takes every file
// right and TCP from it and seccomp refuses exec and every socket. It
// never holds the harness's endpoint or key, holds its one webhook's
// secrets as the last check came with them (webhookcheck.Keeper), and its
// verdict only says a status and the post's id. A frame it can't read ends it: the listener starts another.
package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"lnk.dev/lnk/helpers/keybroker/webhookcheck"
	"lnk.dev/lnk/internal/landlock"
	"lnk.dev/lnk/internal/seccomp"
)

// policy: no exec, no socket of any family.
var policy = seccomp.Policy{Exec: false, Sockets: seccomp.SocketsNone}

func main() {
	// Landlock first: on a kernel that needs it, Restrict runs this
	// program again, and nothing has been read yet.
	if _, err := landlock.Restrict(); err != nil {
		fail("landlock: %v", err)
	}
	if err := seccomp.ConfineBroker(policy); err != nil {
		fail("seccomp: %v", err)
	}
	fr := webhookcheck.NewFrameReader(os.Stdin)
	out := bufio.NewWriterSize(os.Stdout, 4096)
	var keep webhookcheck.Keeper
	defer keep.Destroy()
	for {
		seq, raw, req, err := fr.Next()
		if err != nil {
			out.Flush() // the verdicts of the checks before it
			if errors.Is(err, io.EOF) {
				return // the listener closed the pipe between checks
			}
			fail("%v", err)
		}
		v := keep.Check(raw, req, time.Now())
		if err := webhookcheck.WriteVerdict(out, seq, v); err != nil {
			fail("writing a verdict: %v", err)
		}
		// Verdicts of checks that arrived together go back together;
		// none waits for a check not yet sent.
		if fr.Buffered() > 0 {
			continue
		}
		if err := out.Flush(); err != nil {
			fail("writing a verdict: %v", err)
		}
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "lnk-webhook: "+format+"\n", args...)
	os.Exit(1)
}

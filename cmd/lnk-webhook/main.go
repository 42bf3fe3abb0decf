// Command lnk-webhook checks one webhook post's signature: the webhook's
// secrets on its stdin, the post (helpers/webhookcheck's frame) on fd 3,
// and its verdict, one JSON line, on stdout. It calls nothing: before it
// reads a byte, landlock takes every file right and TCP from it and
// seccomp refuses exec and every socket. It never holds the harness's
// endpoint or key, and its verdict only says a status and the post's id.
package main

import (
	"encoding/json"
	"fmt"
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
	s, err := webhookcheck.ReadSecrets(os.Stdin)
	if err != nil {
		fail("%v", err)
	}
	defer s.Destroy()
	req, err := webhookcheck.ReadRequest(os.NewFile(3, "request"))
	if err != nil {
		answer(webhookcheck.Verdict{Status: 400, Reason: err.Error()})
		return
	}
	answer(webhookcheck.Check(s, req, time.Now()))
}

func answer(v webhookcheck.Verdict) {
	if err := json.NewEncoder(os.Stdout).Encode(v); err != nil {
		os.Exit(1)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "lnk-webhook: "+format+"\n", args...)
	os.Exit(1)
}

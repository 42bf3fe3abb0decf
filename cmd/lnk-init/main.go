// Command lnk-init is the sandbox's first stage, built static
// (CGO_ENABLED=0) so it starts fast and needs no library inside the
// sandbox. bubblewrap runs it as `lnk-init --plan-fd N [--relay-fd R]
// [--lifeline-fd M]`; it confines itself by the plan (landlock, seccomp,
// NO_NEW_PRIVS) and execs the command. With a relay in the plan it first
// hands the proxy its listener on the channel R; M (where lnk waits
// beside the sandbox) ends it all once lnk is gone. The logic is
// internal/initstage.
package main

import (
	"fmt"
	"os"
	"strconv"

	"lnk.dev/lnk/internal/initstage"
)

func main() {
	err := run(os.Args[1:])
	fmt.Fprintf(os.Stderr, "lnk-init: %v\n", err)
	os.Exit(126)
}

const usage = "usage: lnk-init --plan-fd N [--relay-fd R] [--lifeline-fd M] (lnk sandbox run starts it)"

// run parses the fds, in that order, each an fd above 2 given once, and
// runs the first stage. It returns only on failure.
func run(args []string) error {
	fds := map[string]int{"--plan-fd": -1, "--relay-fd": -1, "--lifeline-fd": -1}
	order := []string{"--plan-fd", "--relay-fd", "--lifeline-fd"}
	seen := map[int]bool{}
	next := 0
	for len(args) > 0 {
		for next < len(order) && order[next] != args[0] {
			next++
		}
		if next == len(order) || len(args) < 2 {
			return fmt.Errorf("%s", usage)
		}
		fd, err := strconv.Atoi(args[1])
		if err != nil || fd < 3 || seen[fd] {
			return fmt.Errorf("bad %s %q", args[0], args[1])
		}
		seen[fd] = true
		fds[args[0]] = fd
		args = args[2:]
		next++
	}
	if fds["--plan-fd"] < 0 {
		return fmt.Errorf("%s", usage)
	}
	return initstage.Run(fds["--plan-fd"], fds["--lifeline-fd"], fds["--relay-fd"])
}

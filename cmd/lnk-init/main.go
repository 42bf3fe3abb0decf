// Command lnk-init is the sandbox's first stage, built static
// (CGO_ENABLED=0) so it starts fast and needs no library inside the
// sandbox. bubblewrap runs it as `lnk-init --plan-fd N`; it confines
// itself by the plan (landlock, seccomp, NO_NEW_PRIVS) and execs the
// command; --lifeline-fd M (where lnk waits beside the sandbox) ends it
// all once lnk is gone. `lnk-init relay SOCKET` is the proxy relay it
// starts. The
// logic is internal/initstage.
package main

import (
	"fmt"
	"os"
	"strconv"

	"lnk.dev/lnk/internal/initstage"
)

func main() {
	var err error
	switch {
	case (len(os.Args) == 3 || len(os.Args) == 5 && os.Args[3] == "--lifeline-fd") && os.Args[1] == "--plan-fd":
		fd, perr := strconv.Atoi(os.Args[2])
		if perr != nil || fd < 3 {
			err = fmt.Errorf("bad --plan-fd %q", os.Args[2])
			break
		}
		life := -1
		if len(os.Args) == 5 {
			if life, perr = strconv.Atoi(os.Args[4]); perr != nil || life < 3 || life == fd {
				err = fmt.Errorf("bad --lifeline-fd %q", os.Args[4])
				break
			}
		}
		err = initstage.Run(fd, life)
	case len(os.Args) == 3 && os.Args[1] == initstage.RelayArg:
		err = initstage.RunRelay(os.Args[2])
	default:
		err = fmt.Errorf("usage: lnk-init --plan-fd N [--lifeline-fd M] | lnk-init relay SOCKET (lnk sandbox run starts it)")
	}
	fmt.Fprintf(os.Stderr, "lnk-init: %v\n", err)
	os.Exit(126)
}

//go:build lnkattack

package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/helpers/netbroker"
)

// asks is what prepareAttack read: agentID/NAME, one a line.
var asks []string

// prepareAttack reads, before the broker confines itself, the test's
// instructions: the agentID/NAME pairs, one a line, of
// ~/.lnk/agents/.net/attack. The test's harness, not the attack: what
// the attacker learns once confined is only what it can reach then.
// They outlast landlock's re-exec (a kernel without TSYNC, the kernel's
// child confining itself) in the environment: the harness's, never read
// by the attack.
func prepareAttack(home string) {
	if v, ok := os.LookupEnv(asksEnv); ok {
		asks = strings.Fields(v)
		return
	}
	b, err := os.ReadFile(filepath.Join(home, ".lnk", "agents", ".net", "attack"))
	if err != nil {
		say("read the instructions", err)
	}
	asks = strings.Fields(string(b))
	os.Setenv(asksEnv, strings.Join(asks, " "))
}

// asksEnv carries the instructions across landlock's re-exec.
const asksEnv = "LNK_ATTACK_ASKS"

// attack is the attacker a test runs inside a real, confined
// lnk-netbroker (built with -tags lnkattack only for attack_test.go):
// after landlock, seccomp and the rest, as code that took the proxy over
// would. It lists the sockets' folder (~/.lnk/agents/.net: every agent's
// ID), connects to the kernel's socket (~/.lnk/run/kernel.sock), asks
// the keybroker's channel for each pair prepareAttack read, says each
// outcome on stderr as "attack: WHAT: ok|ERROR", and ends the process.
func attack(home string, sealed *netbroker.SealedOptions) {
	_, err := os.ReadDir(filepath.Join(home, ".lnk", "agents", ".net"))
	say("list agents", err)
	sock := filepath.Join(home, ".lnk", "run", "kernel.sock")
	c, err := net.DialTimeout("unixpacket", sock, 5*time.Second)
	if err == nil {
		c.Close()
	}
	say("dial kernel", err)
	for _, ask := range asks {
		id, name, _ := strings.Cut(ask, "/")
		if sealed == nil {
			say("secret "+ask, errors.New("no keybroker channel"))
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		v, _, err := sealed.Source.SealedGrant(ctx, id, name)
		cancel()
		if err == nil {
			v.Destroy()
		}
		say("secret "+ask, err)
	}
	fmt.Fprintln(os.Stderr, "attack: done")
	os.Exit(0)
}

func say(what string, err error) {
	var e unix.Errno
	switch {
	case err == nil:
		fmt.Fprintf(os.Stderr, "attack: %s: ok\n", what)
	case errors.As(err, &e):
		fmt.Fprintf(os.Stderr, "attack: %s: %s\n", what, unix.ErrnoName(e))
	default:
		fmt.Fprintf(os.Stderr, "attack: %s: %v\n", what, err)
	}
}

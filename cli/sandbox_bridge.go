package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerfile"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/audit"
	"lnk.dev/lnk/kernel/sandbox"
	"lnk.dev/lnk/services/sandboxrun"
)

// sandboxBridge is one sandbox's tool bridge: the kernel's confined
// child (lnk-toolbridge, kernel/start_bridge.go), started on the run's
// start in the kernel, which starts its tools' servers at its request.
// lnk holds only its route and parses nothing the sandbox sends.
type sandboxBridge struct {
	route string // the kernel's confined bridge's route (lnk-toolbridge)
}

// startBridge has the kernel start the bridge when grants comp name
// tools and reach them through a proxy; nil when not. kr is the run's
// start in the kernel: every run that reaches a tool has one.
func startBridge(comp *caps.Compiled, degraded bool, kr *sandboxrun.Brokers) (*sandboxBridge, error) {
	if len(comp.Tools) == 0 {
		return nil, nil
	}
	if !sandbox.NeedsProxy(comp) { // [network] mode = "host": no proxy, no route
		fmt.Fprintln(os.Stderr, `lnk: tools: not reachable with [network] mode = "host" (they are reached through the proxy)`)
		return nil, nil
	}
	if kr == nil {
		// Fail closed: no bridge runs in lnk.
		return nil, fmt.Errorf("tool bridge: the run has no start of the kernel's to start its bridge on")
	}
	route, err := kr.Bridge(degraded)
	if err != nil {
		return nil, kernelErr(err)
	}
	return &sandboxBridge{route: route}, nil
}

// hook is the bridge as the sandbox is told of it (the kernel hands the
// proxy the bridge's channel itself); nil for no bridge.
func (sb *sandboxBridge) hook() (*sandbox.ToolBridge, error) {
	if sb == nil {
		return nil, nil
	}
	return &sandbox.ToolBridge{Route: sb.route}, nil
}

// Close lets go of the bridge: it ends with the run's start.
func (sb *sandboxBridge) Close() {}

// openAuditLog opens ~/.lnk/log/audit.log for appending (the kernel may
// append beside; each line is one O_APPEND write), never through a link.
func openAuditLog(home string) (*audit.Log, error) {
	h, err := unix.Open(home, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(h)
	fd, err := ownerfile.OpenDir(h, ".lnk", unix.O_PATH)
	if err != nil {
		return nil, err
	}
	if err := ownerfile.Check(fd, ownerfile.PrivateDir); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("~/.lnk: %w", err)
	}
	lnk := os.NewFile(uintptr(fd), filepath.Join(home, ".lnk"))
	defer lnk.Close()
	dir, err := audit.OpenDir(lnk, true)
	if err != nil {
		return nil, err
	}
	return audit.Open(dir, audit.Options{})
}

package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerfile"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/helpers/askbroker"
	"lnk.dev/lnk/helpers/askbroker/askproc"
	"lnk.dev/lnk/internal/audit"
	"lnk.dev/lnk/internal/settings"
	"lnk.dev/lnk/kernel/sandbox"
	"lnk.dev/lnk/services/toolbridge"
)

// sandboxBridge is one sandbox's tool bridge, run in lnk for the
// sandbox's life: its calls asked through a confined lnk-askbroker (the
// kernel's child for an agent's run, kernel/start_ask.go; else one this
// run starts, askproc), each call a line of the audit log.
type sandboxBridge struct {
	run    *toolbridge.Running
	asker  *askbroker.Remote
	endAsk func()
	log    *audit.Log
	asked  chan struct{} // closed once the ask broker's log is all written (lnk's own)
}

// startBridge starts the bridge when grants comp name tools and reach
// them through a proxy; nil when not. kr (nil: none) is the agent's
// start in the kernel, which starts its ask broker.
func startBridge(comp *caps.Compiled, degraded bool, kr *kernelRun) (*sandboxBridge, error) {
	if len(comp.Tools) == 0 {
		return nil, nil
	}
	if !sandbox.NeedsProxy(comp) { // [network] mode = "host": no proxy, no route
		fmt.Fprintln(os.Stderr, `lnk: tools: not reachable with [network] mode = "host" (they are reached through the proxy)`)
		return nil, nil
	}
	lockForChildren() // the bridge's processes' parent thread (sandbox_run.go)
	sb := &sandboxBridge{}
	ok := false
	defer func() {
		if !ok {
			sb.Close()
		}
	}()
	// The limits are Link's settings (~/.lnk/settings.toml), never
	// anything a sandbox can write.
	set, err := settings.Load(comp.Home)
	if err != nil {
		return nil, Fail(ExitFailure, err, "fix ~/"+settings.File+" (its keys: ask_wait, tool_sessions, tool_idle, tool_starts)")
	}
	if sb.log, err = openAuditLog(comp.Home); err != nil {
		return nil, fmt.Errorf("tool bridge: the audit log: %w", err)
	}
	if kr != nil {
		if sb.asker, sb.endAsk, err = kr.ask(set.AskWait, degraded); err != nil {
			return nil, err
		}
	} else {
		var p *askproc.Procs
		if p, sb.asked, err = startAsking(comp, set.AskWait, degraded); err != nil {
			return nil, err
		}
		sb.asker, sb.endAsk = p.Asker, p.Close
	}
	name := toolbridge.SandboxName(comp.AgentName)
	logged := toolbridge.AuditLog(sb.log, name)
	b := &toolbridge.Bridge{Agent: comp.AgentName, Grants: comp.Tools, Defs: ownDefs(comp),
		Asker:      &toolbridge.OwnerAsker{Broker: sb.asker, Sandbox: name},
		Log:        func(e toolbridge.Event) { e.Agent = comp.LogName(); logged(e) }, // a harness's run is logged as its own
		OnRefusal:  func() { sb.asker.CountRefusal(name) },
		Settings:   toolbridge.Settings{Sessions: set.ToolSessions, Idle: set.ToolIdle, Starts: set.ToolStarts},
		AdaptProcs: true}
	if sb.run, err = toolbridge.Start(comp.Home, name, b); err != nil {
		return nil, err
	}
	ok = true
	return sb, nil
}

// hook is the bridge as the proxy reaches it: a new channel to pass its
// tool calls' connections on; nil for no bridge.
func (sb *sandboxBridge) hook() (*sandbox.ToolBridge, error) {
	if sb == nil {
		return nil, nil
	}
	ch, err := sb.run.ProxyChannel()
	if err != nil {
		return nil, fmt.Errorf("tool bridge: the proxy's channel: %w", err)
	}
	return &sandbox.ToolBridge{Channel: ch, Route: sb.run.Route()}, nil
}

// Close ends the bridge's sessions and the ask broker, and lets go of
// the log.
func (sb *sandboxBridge) Close() {
	if sb == nil {
		return
	}
	if sb.run != nil {
		sb.run.Close()
	}
	if sb.endAsk != nil {
		sb.endAsk()
	}
	if sb.asked != nil {
		select { // its last lines reach the audit log
		case <-sb.asked:
		case <-time.After(5 * time.Second):
		}
	}
	if sb.log != nil {
		sb.log.Close()
	}
}

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

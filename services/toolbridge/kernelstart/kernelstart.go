// Package kernelstart is what lnk kernel run starts for a start's
// confined tool bridge (lnk-toolbridge, which may execute nothing): the
// kernel's [kernel.ToolServers], over the one launcher
// (services/toolbridge/launch) and a shared tool's hub launcher. It is a
// package of its own so that the bridge's binary, which links
// services/toolbridge, never links the kernel.
//
// # Security
//
// Holds: nothing between calls. May: read a tool's definition (never
// through a link), start its server (in /, its definition's environment
// alone, a process group of its own), start or dial a shared tool's hub.
// Trusts: the kernel, which has checked the tool against the start's
// compiled grants before it asks.
package kernelstart

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"syscall"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/beside"
	"lnk.dev/lnk/kernel"
	"lnk.dev/lnk/services/owntools"
	"lnk.dev/lnk/services/toolbridge"
	"lnk.dev/lnk/services/toolbridge/hub"
	"lnk.dev/lnk/services/toolbridge/launch"
	"lnk.dev/lnk/services/toolbridge/tooldef"
)

// Servers is the kernel's [kernel.ToolServers]: lnk kernel run
// starts the servers a start's confined bridge (lnk-toolbridge) asks for
// through the one launcher (package launch), and dials shared tools'
// hubs, once the kernel has checked the tool against the start's grants.
type Servers struct {
	HubBin string // lnk-toolhub ("": beside this program)
}

var _ kernel.ToolServers = Servers{}

// Start starts the server of home's tool, not a shared one, from its
// definition read now (never through a link): in /, with the
// definition's environment alone, in a process group of its own.
func (Servers) Start(home, tool string, own kernel.OwnTools) (*kernel.ToolServer, error) {
	store := owntools.Store{Home: home}
	if own.AgentID != "" {
		bin, err := beside.Dir()
		if err != nil {
			return nil, err
		}
		store.Bin, store.Own, store.PATH = bin, caps.Agent{ID: own.AgentID, Name: own.AgentName}, own.Path
	}
	def, err := store.Load(tool)
	if err != nil {
		return nil, err
	}
	defer def.Destroy()
	if def.Shared {
		return nil, fmt.Errorf("tool %s is shared: its sessions are its hub's (tool-dial)", tool)
	}
	cmd, err := launch.Command(def, def.Environ())
	if err != nil {
		return nil, err
	}
	var ours, theirs []*os.File
	closeAll := func(fs []*os.File) {
		for _, f := range fs {
			f.Close()
		}
	}
	for i := 0; i < 3; i++ {
		r, w, err := os.Pipe()
		if err != nil {
			closeAll(ours)
			closeAll(theirs)
			return nil, err
		}
		if i == 0 { // stdin: the server reads
			ours, theirs = append(ours, w), append(theirs, r)
		} else {
			ours, theirs = append(ours, r), append(theirs, w)
		}
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = theirs[0], theirs[1], theirs[2]
	err = cmd.Start()
	closeAll(theirs)
	if err != nil {
		closeAll(ours)
		return nil, fmt.Errorf("starting %s: %w", def.Command[0], err)
	}
	pid := cmd.Process.Pid
	return &kernel.ToolServer{Stdin: ours[0], Stdout: ours[1], Stderr: ours[2], Pid: pid,
		Digest: def.Digest(), URL: def.URL != "",
		Stop: func() {
			// The leader is not yet waited for, so its group's id is
			// still its own.
			syscall.Kill(-pid, syscall.SIGKILL)
			cmd.Wait()
		}}, nil
}

// Dial connects to the hub of home's shared tool, starting it if none
// listens, within ctx.
func (s Servers) Dial(ctx context.Context, home, tool string) (*os.File, string, error) {
	def, err := tooldef.Store{Home: home}.Load(tool)
	if err != nil {
		return nil, "", err
	}
	defer def.Destroy()
	if !def.Shared {
		return nil, "", fmt.Errorf("tool %s is not shared: it has a server of its own (tool-start)", tool)
	}
	bin := s.HubBin
	if bin == "" {
		if bin, err = beside.Program("lnk-toolhub"); err != nil {
			return nil, "", err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, toolbridge.DefaultSettings.StartWait)
	defer cancel()
	c, err := hub.Launcher{Bin: bin, Systemd: hub.SystemdUser()}.Dial(ctx, filepath.Join(home, ".lnk"), def)
	if err != nil {
		return nil, "", err
	}
	defer c.Close()
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return nil, "", errors.New("the hub's connection is no unix socket")
	}
	f, err := uc.File()
	if err != nil {
		return nil, "", err
	}
	return f, def.Digest(), nil
}

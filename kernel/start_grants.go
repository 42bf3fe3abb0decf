package kernel

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/audit"
	"lnk.dev/lnk/internal/wire"
	"lnk.dev/lnk/kernel/proto"
)

// A start of no agent is lnk sandbox run's with flag grants or a sandbox
// file, when its run needs a broker (a proxy, a tool's ask broker): the
// kernel compiles the grants itself from what the owner gave (the flags,
// or the file's path, and the folder relative paths start from), with
// the same caps routines and rules as lnk's own compile, which must
// agree; grants its folders as capabilities of a start whose agent is ""
// (no agent folder, no agent key, no sealed secret); and starts the
// run's brokers as its children, as for an agent's start. lnk gets only
// the folders' handles and the brokers' channels. A run of flag grants
// that needs no broker never comes here: lnk execs bubblewrap itself.

// startGrants is handleStart for a start of no agent.
func (k *Kernel) startGrants(ctx context.Context, c *call, req *proto.StartRequest) (*proto.StartReply, []*os.File, error) {
	refuse := func(code, why string) error {
		k.refuse(audit.Entry{Peer: &c.conn.peer, Request: "start", Reason: why})
		return wire.Errorf(code, "%s", why)
	}
	if req.Agent != "" || req.AgentID != "" || len(req.Folders) > 0 || req.Compile || req.Harness != "" || req.Profile != "" {
		return nil, nil, refuse(proto.CodeRefused, "a start of grants names no agent, agent ID, folders, harness or profile")
	}
	comp, err := compileGrants(k.opts.Home, req.Grants)
	if err != nil {
		return nil, nil, refuse(proto.CodeRefused, "grants: "+err.Error())
	}
	for _, f := range comp.Folders {
		req.Folders = append(req.Folders, proto.Folder{Path: f.Path, Read: f.Access.Read || f.Access.Write, Write: f.Access.Write})
	}
	return k.begin(ctx, c, req, comp, comp.Hidden, nil)
}

// compileGrants compiles a start of no agent's grants: exactly one of
// the flags (strictly decoded) and the file.
func compileGrants(home string, g *proto.RunGrants) (*caps.Compiled, error) {
	switch {
	case (len(g.Flags) > 0) == (g.File != ""):
		return nil, errors.New("a start of grants takes the flags or a file, exactly one")
	case g.File != "":
		return caps.CompileFile(home, g.Dir, g.File)
	}
	var fl caps.Grants
	dec := json.NewDecoder(bytes.NewReader(g.Flags))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&fl); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("more than one set of flags")
	}
	return caps.CompileFlags(home, g.Dir, fl)
}

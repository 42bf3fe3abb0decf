// Package owntools defines Link's own tools of a sandboxed agent, which
// Link hands only to that agent's harness: run-<agent id> (Link Run,
// lnk-run-tool serve), file-<agent id> (Link File, lnk-file-tool
// serve) and scheduler-<agent id> (Link Scheduler, lnk-scheduler-tool
// serve). Run and file serve outside every sandbox and only start
// sandboxes made from the agent's sandbox file: neither reads nor runs
// anything of the agent's itself. The scheduler confines itself to
// writing the agent's jobs (Agent/schedule) and nothing else. With the agent's sandbox off neither is defined: they
// run code only in a sandbox (security.txt "Run and file").
//
// No added tool can take these names (tooldef.CheckName reserves run-…
// and file-…) and no grant can name them (caps.ErrOwnTool): a harness
// gets them from here alone.
//
// # Security
//
// Holds nothing secret: each definition's environment is HOME and PATH,
// for the server to find the agent and lnk. Trusts the agent's record
// (its ID) and the folder Link's binaries are in.
package owntools

import (
	"errors"
	"os"
	"path/filepath"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/secret"
	"lnk.dev/lnk/services/toolbridge/tooldef"
)

// For are agent a's own run and file tools, their servers in bin (the
// folder holding lnk-run-tool and lnk-file-tool, beside lnk), or none
// when sandboxed is false (the agent's sandbox is off).
func For(home, bin string, a caps.Agent, sandboxed bool) ([]*tooldef.Definition, error) {
	if !sandboxed {
		return nil, nil
	}
	return forPath(home, bin, a, envOr("PATH", "/usr/local/bin:/usr/bin:/bin"))
}

// forPath is For with the servers' PATH given: the kernel, which starts
// them, and its confined bridge, which digests their definitions, must
// make the same.
func forPath(home, bin string, a caps.Agent, path string) ([]*tooldef.Definition, error) {
	if a.ID == "" || a.Name == "" || !filepath.IsAbs(bin) || !filepath.IsAbs(home) {
		return nil, errors.New("owntools: an agent with no ID or name, or a relative folder")
	}
	var defs []*tooldef.Definition
	for _, t := range []struct{ name, server string }{{"run-", "lnk-run-tool"}, {"file-", "lnk-file-tool"}, {"scheduler-", "lnk-scheduler-tool"}} {
		env := map[string]*secret.Value{}
		for k, v := range map[string]string{"HOME": home, "PATH": path} {
			s, err := secret.FromString(v)
			if err != nil {
				return nil, err
			}
			env[k] = s
		}
		defs = append(defs, &tooldef.Definition{
			Name:    t.name + a.ID,
			Command: []string{filepath.Join(bin, t.server), "serve", "--agent", a.Name},
			Env:     env,
		})
	}
	return defs, nil
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

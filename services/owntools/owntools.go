// Package owntools defines Link's own tools of a sandboxed agent, which
// Link hands only to that agent's harness: run-<agent id> (Link Run,
// lnk-run-tool serve), file-<agent id> (Link File, lnk-file-tool serve),
// memory-<agent id> (Link Memory, lnk-memory connect: a session on the
// owner's one memory service, which it starts at need) and
// scheduler-<agent id> (Link Scheduler, lnk-scheduler-tool serve). Run
// and file serve outside every sandbox and only start sandboxes made from
// the agent's sandbox file: neither reads nor runs anything of the
// agent's itself; memory's service runs in a landlock and seccomp
// confinement of its own; the scheduler confines itself to writing the
// agent's jobs (Agent/schedule) and nothing else. With the agent's
// sandbox off none is defined: run and file run code only in a sandbox
// (security.txt "Run and file"), and memory serves only sandboxed agents
// (security.txt "Memory").
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

// For are agent a's own run, file and memory tools, their servers in bin
// (the folder holding lnk-run-tool, lnk-file-tool and lnk-memory, beside
// lnk), or none
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
	for _, t := range []struct{ name, server, verb string }{
		{"run-", "lnk-run-tool", "serve"}, {"file-", "lnk-file-tool", "serve"}, {"memory-", "lnk-memory", "connect"},
		{"scheduler-", "lnk-scheduler-tool", "serve"},
	} {
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
			Command: []string{filepath.Join(bin, t.server), t.verb, "--agent", a.Name},
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

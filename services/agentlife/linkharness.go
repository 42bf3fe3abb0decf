package agentlife

import (
	"fmt"
	"path/filepath"
	"strings"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/ownerdir"
	"lnk.dev/lnk/kernel/sandbox"
	"lnk.dev/lnk/services/harness/config"
)

// Link Harness is the harness of an agent whose agent.toml names no
// [start] command: lnk-harness, beside lnk, in the agent's sandbox as
// Link Harness runs in it (caps.CompileLinkHarness). Before each start
// the supervisor writes its config.json (0600, in its home
// ~/Link/Agents/<agent>/Harnesses/link, 0700) with a fresh endpoint key,
// and the same key in ~/.lnk/agents/<agent>/bridge.json (0600) for the
// owner's client: both through internal/ownerfile, never through a link.

// HarnessProgram is Link Harness's program, beside lnk.
const HarnessProgram = "lnk-harness"

// BuiltinModel is the name the built-in model answers to.
const BuiltinModel = caps.BuiltinModelName

// placeholderKey is the model key Link Harness holds: with keys on the
// wire the proxy adds the real one outside the sandbox; a local model
// needs none.
const placeholderKey = "link-placeholder"

// linkHarnessArgv is the command that runs Link Harness for agent a, and
// writes its config.json and bridge.json with a fresh key first.
func linkHarnessArgv(home, lnk string, a *caps.Agent, ports *caps.PortBlock) ([]string, error) {
	c, err := HarnessConfig(home, a, ports)
	if err != nil {
		return nil, err
	}
	l := caps.Layout{Home: home}
	hh := l.HarnessHome(a.Name, caps.LinkHarness)
	hd, err := ownerdir.Open(home, "Link", "Agents", a.Name, "Harnesses", caps.LinkHarness)
	if err != nil {
		return nil, fmt.Errorf("Link Harness's home: %w", err)
	}
	defer hd.Close()
	if err := config.Write(int(hd.Fd()), c); err != nil {
		return nil, fmt.Errorf("writing %s: %w", filepath.Join(hh, config.File), err)
	}
	bd, err := ownerdir.Open(home, ".lnk", "agents", a.Name)
	if err != nil {
		return nil, err
	}
	defer bd.Close()
	if err := config.WriteBridge(int(bd.Fd()), config.BridgeFor(c)); err != nil {
		return nil, fmt.Errorf("writing ~/.lnk/agents/%s/%s: %w", a.Name, config.BridgeFile, err)
	}
	prog := filepath.Join(filepath.Dir(lnk), HarnessProgram)
	return []string{lnk, "sandbox", "run", "--agent", a.Name, "--link-harness", "--", prog, filepath.Join(hh, config.File)}, nil
}

// HarnessConfig is agent a's Link Harness config.json for a start on
// ports, with a fresh key.
func HarnessConfig(home string, a *caps.Agent, ports *caps.PortBlock) (*config.Config, error) {
	if ports == nil {
		return nil, fmt.Errorf("agent %s has no block of ports for Link Harness's endpoint", a.Name)
	}
	l := caps.Layout{Home: home}
	m := config.Model{Format: "openai", Model: BuiltinModel, Key: placeholderKey}
	switch {
	case a.Model == nil || a.Model.Format == caps.ModelBuiltin:
		if a.Model == nil || a.Model.BaseURL == "" {
			return nil, fmt.Errorf("agent %s's built-in model has no address: lnk agent start %s starts it and records it", a.Name, a.Name)
		}
		m.BaseURL = a.Model.BaseURL
	default:
		m = config.Model{Format: a.Model.Format, BaseURL: a.Model.BaseURL, Model: a.Model.Model, Key: placeholderKey}
	}
	var fallback *config.Model
	if a.Model != nil && a.Model.Fallback != nil {
		f := a.Model.Fallback
		fallback = &config.Model{Format: f.Format, BaseURL: f.BaseURL, Model: f.Model, Key: placeholderKey}
	}
	tools := map[string]string{}
	if !a.NoSandbox {
		for _, t := range []string{"run-", "file-", "memory-", "scheduler-"} {
			tools[t+a.ID] = sandbox.ToolEnvName(t + a.ID)
		}
	}
	comp, err := caps.CompileAgent(home, a.Name)
	if err != nil {
		return nil, err
	}
	c := &config.Config{
		AgentID: a.ID, Owner: a.Owner, Name: a.Name, Key: config.NewKey(), Port: ports.First,
		AgentDir: l.OwnDir(a.Name), Model: m, Fallback: fallback, Tools: tools, Strangers: strangersOf(comp.Strangers, a.ID, tools),
		Models: comp.Models,
	}
	return c, c.Check()
}

// strangersOf is [tools] strangers (caps has refused run, the scheduler
// and a tool the agent has none of) as Link Harness names its tools:
// Link's own file and memory by their <prefix>-<agent id>, any other as
// granted; one Link Harness has no route to is left out, as it would be
// for the owner.
func strangersOf(names []string, id string, tools map[string]string) []string {
	var out []string
	for _, n := range names {
		switch lower := strings.ToLower(n); lower {
		case "file", "memory":
			n = lower + "-" + id
		}
		if _, ok := tools[n]; ok {
			out = append(out, n)
		}
	}
	return out
}

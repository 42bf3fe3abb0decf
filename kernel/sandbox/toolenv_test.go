package sandbox

import (
	"testing"

	"lnk.dev/lnk/caps"
)

// $LNK_TOOL_<NAME> is set for each granted tool only with a relay and the
// bridge's route; two names spelling one variable give it to the first
// in sorted order.
func TestToolEnvNamesEachGrantedTool(t *testing.T) {
	tools := map[string]caps.Tool{"github": {}, "my-tool.v2": {}, "a_b": {}, "a-b": {}}
	env := map[string]string{}
	addToolEnv(env, 3128, "/_link/s/abc/mcp/", tools)
	want := map[string]string{
		"LNK_TOOL_GITHUB":     "http://127.0.0.1:3128/_link/s/abc/mcp/github",
		"LNK_TOOL_MY_TOOL_V2": "http://127.0.0.1:3128/_link/s/abc/mcp/my-tool.v2",
		"LNK_TOOL_A_B":        "http://127.0.0.1:3128/_link/s/abc/mcp/a-b",
	}
	if len(env) != len(want) {
		t.Fatalf("env %v, want %v", env, want)
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s = %q, want %q", k, env[k], v)
		}
	}
	for _, c := range []struct {
		relay uint16
		route string
	}{{0, "/_link/s/abc/mcp/"}, {3128, ""}} {
		env := map[string]string{}
		addToolEnv(env, c.relay, c.route, tools)
		if len(env) != 0 {
			t.Errorf("relay %d route %q: %v", c.relay, c.route, env)
		}
	}
}

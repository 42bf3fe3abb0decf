package sandbox_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/helpers/netbroker"
	"lnk.dev/lnk/kernel/sandbox"
)

// netGrantCases are one of each network grant caps compiles, alone and
// together, and the two the proxy refuses.
var netGrantCases = []struct {
	name string
	c    caps.Compiled
}{
	{"nothing", caps.Compiled{}},
	{"agent", caps.Compiled{AgentID: strings.Repeat("ab", 16), AgentName: "my-bot"}},
	{"any internet host", caps.Compiled{Internet: caps.Internet{On: true}}},
	{"internet hosts", caps.Compiled{Internet: caps.Internet{On: true, Hosts: []string{"api.example.test", "*.cdn.example.test", "192.0.2.7"}}}},
	{"per minute", caps.Compiled{Internet: caps.Internet{On: true, PerMinute: 30}}},
	{"tcp", caps.Compiled{Internet: caps.Internet{TCP: []string{"git.example.test:22", "[2001:db8::1]:5432"}}}},
	{"lan hosts", caps.Compiled{LANHosts: []string{"printer.lan", "*.home.lan"}}},
	{"localhost ports", caps.Compiled{LocalhostPorts: []uint16{5432, 8080}}},
	{"all of them", caps.Compiled{AgentID: strings.Repeat("0f", 16), AgentName: "main",
		Internet:        caps.Internet{On: true, Hosts: []string{"api.example.test"}, PerMinute: 5, TCP: []string{"db.example.test:5432"}},
		LANHosts:        []string{"nas.lan"},
		LocalhostPorts:  []uint16{11434},
		LocalModelPorts: []uint16{11434},
		Folders:         []caps.Folder{{Path: "/nowhere"}}, Tools: map[string]caps.Tool{"notes": {}}, Home: "/home/someone"}},
	{"network mode host", caps.Compiled{NetworkMode: "host", AllLocalhost: true}},
	{"all localhost without host mode", caps.Compiled{AllLocalhost: true}},
}

// Every network grant caps compiles reaches the proxy's rules unchanged
// through NetGrants and the JSON lnk-netbroker reads (ReadGrants,
// strict): the rules (or the refusal) are those of the same grants read
// by their JSON names from caps.Compiled itself, as lnk-netbroker read
// them when it took caps.Compiled whole.
func TestNetGrantsReachTheRulesUnchanged(t *testing.T) {
	for _, tc := range netGrantCases {
		t.Run(tc.name, func(t *testing.T) {
			// Before: caps.Compiled's own JSON, every field of it, read
			// by name (unknown fields ignored here only).
			whole, err := json.Marshal(&tc.c)
			if err != nil {
				t.Fatal(err)
			}
			var before netbroker.Grants
			if err := json.Unmarshal(whole, &before); err != nil {
				t.Fatal(err)
			}
			wantRules, wantErr := netbroker.RulesFrom(&before)

			// After: what NewProxy writes, read as lnk-netbroker reads it.
			sent, err := json.Marshal(sandbox.NetGrants(&tc.c))
			if err != nil {
				t.Fatal(err)
			}
			g, err := netbroker.ReadGrants(json.NewDecoder(bytes.NewReader(sent)))
			if err != nil {
				t.Fatalf("lnk-netbroker refuses what lnk sends: %v\n%s", err, sent)
			}
			if !reflect.DeepEqual(*g, before) {
				t.Errorf("grants sent %+v, caps.Compiled has %+v", *g, before)
			}
			gotRules, gotErr := netbroker.RulesFrom(g)
			if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
				t.Fatalf("RulesFrom: %v, want %v", gotErr, wantErr)
			}
			if !reflect.DeepEqual(gotRules, wantRules) {
				t.Errorf("rules %+v, want %+v", gotRules, wantRules)
			}
			for _, never := range []string{`"home":`, `"folders":`, `"tools":`, "/nowhere"} {
				if bytes.Contains(sent, []byte(never)) {
					t.Errorf("the proxy is sent %q: %s", never, sent)
				}
			}
		})
	}
	// The case with every grant fills every field of netbroker.Grants:
	// a field added there and not to NetGrants fails here.
	all := sandbox.NetGrants(&netGrantCases[8].c)
	host := sandbox.NetGrants(&netGrantCases[9].c)
	for _, g := range []reflect.Value{reflect.ValueOf(*all), reflect.ValueOf(all.Internet)} {
		for i := 0; i < g.NumField(); i++ {
			f := g.Type().Field(i)
			if f.Name == "NetworkMode" || f.Name == "AllLocalhost" {
				continue // set in the host-mode case, below
			}
			if g.Field(i).IsZero() {
				t.Errorf("NetGrants leaves Grants.%s unset", f.Name)
			}
		}
	}
	if host.NetworkMode != "host" || !host.AllLocalhost {
		t.Errorf("NetGrants of host mode: %+v", host)
	}
}

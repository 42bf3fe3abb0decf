package netbroker

import (
	"strings"
	"testing"

	"lnk.dev/lnk/internal/testenv"
)

// A local model's port given in the grants (Link Harness's model, from
// its start's compiled grants) reaches the proxy's config, served for
// inference only; one the grants don't also let through refuses the
// start.
func TestStartTakesLocalModelPortsFromGrants(t *testing.T) {
	home := testenv.Home(t)
	id := strings.Repeat("0e", 16)
	r, err := Start(&Grants{AgentID: id, LocalhostPorts: []uint16{4242, 4343}, LocalModelPorts: []uint16{4242}}, Options{Home: home, Config: Config{Log: func(Event) {}}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := r.Proxy.cfg.LocalModelPorts; len(got) != 1 || got[0] != 4242 {
		t.Fatalf("the proxy's local model ports: %v", got)
	}
	if _, err := Start(&Grants{AgentID: id, LocalModelPorts: []uint16{4242}}, Options{Home: home, Config: Config{Log: func(Event) {}}}); err == nil || !strings.Contains(err.Error(), "not a granted localhost port") {
		t.Fatalf("a model port not granted: %v", err)
	}
}

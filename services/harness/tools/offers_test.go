package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestOfferCaps128CallsDescription2KiBSchema16KiB: a tool's 130 calls
// are offered as its first 128; a description past 2 KiB is cut there; a
// schema past 16 KiB leaves its call out; each said in the log.
func TestOfferCaps128CallsDescription2KiBSchema16KiB(t *testing.T) {
	var calls []*mcp.Tool
	long := call("a-long")
	long.Description = strings.Repeat("d", 3000)
	big := &mcp.Tool{Name: "a-big", InputSchema: json.RawMessage(`{"type":"object","description":"` + strings.Repeat("s", 16<<10) + `"}`)}
	fits := &mcp.Tool{Name: "a-fits", InputSchema: json.RawMessage(`{"type":"object","description":"` + strings.Repeat("s", 16<<10-50) + `"}`)}
	calls = append(calls, long, big, fits)
	for i := 0; i < 127; i++ {
		calls = append(calls, call(fmt.Sprintf("c%03d", i)))
	}
	p := startPeer(t, peerOpts{tools: calls, pageSize: 1000})
	log := &logBuf{}
	s := newSet(t, "", Settings{}, log, Tool{Name: "many", URL: p.URL})
	tt := s.Begin(context.Background(), Scope{Thread: "t"})
	defer tt.End()
	offers := tt.Offers()
	if len(offers) != MaxCalls {
		t.Fatalf("%d offers, want %d\n%s", len(offers), MaxCalls, log)
	}
	byName := map[string]int{}
	for i, o := range offers {
		byName[o.Name] = i
	}
	if i, ok := byName["many__a-long"]; !ok || len(offers[i].Description) != MaxDescription {
		t.Fatalf("long's description: %d bytes, want %d", len(offers[i].Description), MaxDescription)
	}
	if _, ok := byName["many__a-big"]; ok {
		t.Fatal("a call with a schema past 16 KiB was offered")
	}
	if i, ok := byName["many__a-fits"]; !ok || len(offers[i].Schema) > MaxSchema {
		t.Fatal("a schema just under 16 KiB was left out (the positive control)")
	}
	// Listed by name: a-big (left out), a-fits, a-long, c000…c125 are
	// the 128 offered; c126 is past them.
	if _, ok := byName["many__c125"]; !ok {
		t.Fatalf("c125 (the 128th call offered) not offered: %v", offerNames(tt))
	}
	if _, ok := byName["many__c126"]; ok {
		t.Fatal("a 129th call was offered")
	}
	for _, want := range [][]string{{"many", "1 calls past", "at most 128"}, {"a-long", "description cut", "2048"}, {"a-big", "left out", "16 KiB"}} {
		if !log.has(want...) {
			t.Errorf("the log doesn't say %q:\n%s", want, log)
		}
	}
}

// TestOfferCap128KiBInAll: calls whose schemas together pass 128 KiB are
// offered until the next would pass it; Link's own tools count first.
func TestOfferCap128KiBInAll(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","description":"` + strings.Repeat("s", 15<<10) + `"}`)
	var calls []*mcp.Tool
	for i := 0; i < 10; i++ {
		calls = append(calls, &mcp.Tool{Name: fmt.Sprintf("c%d", i), InputSchema: schema})
	}
	other := startPeer(t, peerOpts{tools: calls})
	own := startPeer(t, peerOpts{tools: []*mcp.Tool{call("command")}})
	log := &logBuf{}
	s := newSet(t, "ab12", Settings{}, log, Tool{Name: "aaa", URL: other.URL}, Tool{Name: "run-ab12", URL: own.URL})
	tt := s.Begin(context.Background(), Scope{})
	defer tt.End()
	names := offerNames(tt)
	total := 0
	for _, o := range tt.Offers() {
		total += len(o.Name) + len(o.Description) + len(o.Schema)
	}
	if total > MaxOffers {
		t.Fatalf("offers hold %d bytes, past %d", total, MaxOffers)
	}
	if names[0] != "run__command" {
		t.Fatalf("Link's own run is not offered first: %v", names)
	}
	if len(names) != 1+8 { // 8 calls of ~15 KiB fit in 128 KiB with run's
		t.Fatalf("offered %v", names)
	}
	if !log.has("aaa__c8", "128 KiB") || !log.has("aaa__c9", "128 KiB") {
		t.Fatalf("the cut calls aren't said:\n%s", log)
	}
	n := len(log.lines)
	s.Begin(context.Background(), Scope{}).End()
	if len(log.lines) != n {
		t.Fatalf("the same cut said again at the next turn:\n%s", log)
	}
}

// TestOfferNames64DashesFirstOfTwo: <tool>__<call>; a call whose name is longer than 64 or
// holds a character a provider doesn't take is left out, never cut; a
// tool with "--" or ending "-" isn't offered; of two equal names the
// first; a tool can't take Link's own names.
func TestOfferNames64DashesFirstOfTwo(t *testing.T) {
	long := strings.Repeat("x", MaxName-len("good__"))
	calls := []*mcp.Tool{call("ok"), call(long), call(long + "y"), call("dot.ted")}
	// A go-sdk server keeps one call a name; the page is made to name "ok" twice.
	good := startPeer(t, peerOpts{tools: calls, listHook: func(r *mcp.ListToolsResult) {
		dup := call("ok")
		dup.Description = "the second ok"
		r.Tools = append(r.Tools, dup)
	}})
	bad := startPeer(t, peerOpts{tools: []*mcp.Tool{call("c")}})
	log := &logBuf{}
	s := newSet(t, "ab12", Settings{}, log,
		Tool{Name: "good", URL: good.URL},
		Tool{Name: "two--dashes", URL: bad.URL},
		Tool{Name: "ends-", URL: bad.URL},
		Tool{Name: "has__sep", URL: bad.URL},
		Tool{Name: "ends_", URL: bad.URL},
		Tool{Name: "run", URL: bad.URL},
		Tool{Name: "memory-zz99", URL: bad.URL},
	)
	tt := s.Begin(context.Background(), Scope{})
	defer tt.End()
	got := offerNames(tt)
	want := []string{"good__ok", "good__" + long}
	if !slices.Equal(got, want) {
		t.Fatalf("offered %v, want %v\n%s", got, want, log)
	}
	for _, n := range []string{"two--dashes", "ends-", "has__sep", "ends_", `"run"`, "memory-zz99"} {
		if !log.has(n, "not offered") {
			t.Errorf("the log doesn't say %s is not offered:\n%s", n, log)
		}
	}
	if d := tt.Offers()[0].Description; d != "the call ok" {
		t.Errorf("of two calls named ok, the offered one says %q, not the first's", d)
	}
	if !log.has(long+"y", "longer than a provider takes") || !log.has("dot.ted", "character") || !log.has(`"ok"`, "the first is") {
		t.Errorf("the log doesn't say each call left out:\n%s", log)
	}
	if r, _, _ := bad.counts(); r != 0 {
		t.Fatalf("a tool not offered was contacted %d times", r)
	}
}

// TestOwnToolsShortNames: run-<id>, file-<id>, memory-<id> of this agent
// are offered as run, file, memory; another agent's are not offered.
func TestOwnToolsShortNames(t *testing.T) {
	p := startPeer(t, peerOpts{tools: []*mcp.Tool{call("x")}})
	log := &logBuf{}
	s := newSet(t, "ab12", Settings{}, log,
		Tool{Name: "run-ab12", URL: p.URL}, Tool{Name: "file-ab12", URL: p.URL},
		Tool{Name: "memory-ab12", URL: p.URL}, Tool{Name: "run-cd34", URL: p.URL})
	tt := s.Begin(context.Background(), Scope{})
	defer tt.End()
	got := offerNames(tt)
	slices.Sort(got)
	if want := []string{"file__x", "memory__x", "run__x"}; !slices.Equal(got, want) {
		t.Fatalf("offered %v, want %v\n%s", got, want, log)
	}
}

// TestToolURLRefused: a tool whose variable names anything but http:// on
// loopback is not offered, and the one beside it on loopback is.
func TestToolURLRefused(t *testing.T) {
	p := startPeer(t, peerOpts{tools: []*mcp.Tool{call("x")}})
	log := &logBuf{}
	s := newSet(t, "", Settings{}, log,
		Tool{Name: "far", URL: "http://192.0.2.1/_link/tool/far"},
		Tool{Name: "tls", URL: "https://127.0.0.1/_link/tool/tls"},
		Tool{Name: "near", URL: p.URL})
	tt := s.Begin(context.Background(), Scope{})
	defer tt.End()
	if got := offerNames(tt); !slices.Equal(got, []string{"near__x"}) {
		t.Fatalf("offered %v", got)
	}
	if !log.has(`"far"`, "not this machine's loopback") || !log.has(`"tls"`, "not an http://") {
		t.Fatalf("log:\n%s", log)
	}
}

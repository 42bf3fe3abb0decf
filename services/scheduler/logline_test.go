package scheduler

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/testenv"
)

// TestRefusalLoggedOnOneLine: what the model wrote reaches a refusal's
// log line only as one printable line: a cron line whose fields a \r or
// LS separates (Fields takes them as spaces), naming no time, is refused
// and logged once, on one line, with no \r or LS in it. The control: the
// same cron line with spaces is refused and logged the same, and a cron
// line that names a time is scheduled, logging nothing.
func TestRefusalLoggedOnOneLine(t *testing.T) {
	home := testenv.Home(t)
	if _, err := caps.CreateAgent(home, "ada"); err != nil {
		t.Fatal(err)
	}
	st, err := OpenStore(home, "ada")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	log := &testenv.SyncBuffer{}
	srv := &Server{Store: st, Limits: caps.DefaultLimits.Scheduler, Zone: time.UTC, Log: log}
	ct, stt := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ss, err := srv.MCP().Connect(ctx, stt, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	add := func(cron string) bool {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"text": "x", "cron": cron}, Meta: in("main", 0)})
		if err != nil {
			t.Fatal(err)
		}
		return res.IsError
	}
	for i, cron := range []string{"0 0 31 2\r*", "0 0 31\u20282 *", "0 0 31 2 *"} {
		if !add(cron) {
			t.Fatalf("cron %q was scheduled", cron)
		}
		lines := strings.Split(strings.TrimSuffix(log.String(), "\n"), "\n")
		if len(lines) != i+1 {
			t.Fatalf("after %q the log holds %d lines: %q", cron, len(lines), log.String())
		}
		if l := lines[i]; strings.ContainsAny(l, "\r\u2028") || !strings.Contains(l, "refused add") || !strings.Contains(l, "names no time") {
			t.Errorf("cron %q logged as %q", cron, l)
		}
	}
	if add("0 9 * * 1") || strings.Count(log.String(), "\n") != 3 {
		t.Fatalf("a cron line naming a time: refused, or logged %q", log.String())
	}
}

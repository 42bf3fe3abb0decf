package tools

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Settings are the spec's numbers, settable so tests need not wait them.
type Settings struct {
	StartTimeout time.Duration // 30 s: a tool slower to start or list is left out of the turn
	BarFor       time.Duration // 5 min: a tool that never listed, after failing, is left out this long
	MaxPages     int           // 16: pages of a list read
	MemoryIdle   time.Duration // 10 min: memory's session ended once unused this long
	MemoryMax    time.Duration // 1 h: memory's session ended this long after it started
	// ListEvery is how long a tool's list is offered before it is listed
	// again (1 min); negative: at every turn.
	ListEvery time.Duration
}

// DefaultSettings are the spec's.
func DefaultSettings() Settings {
	return Settings{
		StartTimeout: 30 * time.Second,
		BarFor:       5 * time.Minute,
		MaxPages:     16,
		MemoryIdle:   10 * time.Minute,
		MemoryMax:    time.Hour,
		ListEvery:    time.Minute,
	}
}

// Config is what a [Set] is made from.
type Config struct {
	AgentID  string // shortens Link's own tools' names (run-<id> → run)
	Tools    []Tool // in the order offered; see FromConfig
	Settings Settings
	// HTTP is the client sessions use: nil, [DefaultClient] (through $HTTP_PROXY).
	HTTP *http.Client
	Logf func(format string, args ...any)
	Now  func() time.Time
}

// Set is the harness's tools, shared by every turn: each tool's list of
// calls and memory's session are all it keeps between turns.
type Set struct {
	set   Settings
	http  *http.Client
	logf  func(string, ...any)
	now   func() time.Time
	tools []*toolState // in offer order

	mem *memorySession // memory's kept session; nil without a memory tool

	ending sync.WaitGroup // sessions being ended after their turns

	saidMu sync.Mutex
	said   map[string]bool // lines logOnce wrote
}

// logOnce logs a line the first time only: a cut every turn makes again
// (the 128 KiB of offers) is said once, not at every message.
func (s *Set) logOnce(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	s.saidMu.Lock()
	defer s.saidMu.Unlock()
	if s.said == nil {
		s.said = map[string]bool{}
	}
	if s.said[line] || len(s.said) > 4096 {
		return
	}
	s.said[line] = true
	s.logf("%s", line)
}

// toolState is one tool and what is known of it.
type toolState struct {
	name, short, url string

	mu       sync.Mutex
	listed   bool      // it listed once
	offers   []offer   // what it listed, offered
	listedAt time.Time // when offers were listed
	barUntil time.Time // left out of every turn until then
}

// New checks each tool's name and URL (a tool failing either is left
// out, logged) and makes the Set; nothing is started until a turn.
func New(c Config) (*Set, error) {
	z := DefaultSettings()
	st := c.Settings
	if st.StartTimeout <= 0 {
		st.StartTimeout = z.StartTimeout
	}
	if st.BarFor <= 0 {
		st.BarFor = z.BarFor
	}
	if st.MaxPages <= 0 {
		st.MaxPages = z.MaxPages
	}
	if st.MemoryIdle <= 0 {
		st.MemoryIdle = z.MemoryIdle
	}
	if st.MemoryMax <= 0 {
		st.MemoryMax = z.MemoryMax
	}
	switch {
	case st.ListEvery == 0:
		st.ListEvery = z.ListEvery
	case st.ListEvery < 0:
		st.ListEvery = 0 // listed again at every turn
	}
	s := &Set{set: st, http: c.HTTP, logf: c.Logf, now: c.Now}
	if s.logf == nil {
		s.logf = func(string, ...any) {}
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.http == nil {
		h, err := DefaultClient()
		if err != nil {
			return nil, err
		}
		s.http = h
	}
	shorts := map[string]bool{}
	var owns, others []*toolState
	for _, t := range c.Tools {
		short, own := shortName(t.Name, c.AgentID)
		why := toolNameRefusal(short)
		if why == "" && !own && ownPrefixed(short) {
			why = "its name is one of Link's own tools', which only Link's own take"
		}
		if why == "" && shorts[short] {
			why = "another tool is offered under that name (the first is)"
		}
		if why == "" {
			if err := checkURL(t.URL); err != nil {
				why = "its URL is refused: " + err.Error()
			}
		}
		if why != "" {
			s.logf("tools: %q not offered: %s", t.Name, why)
			continue
		}
		shorts[short] = true
		ts := &toolState{name: t.Name, short: short, url: t.URL}
		if own {
			owns = append(owns, ts)
		} else {
			others = append(others, ts)
		}
		if own && short == "memory" {
			s.mem = &memorySession{set: s, tool: ts}
		}
	}
	s.tools = append(owns, others...)
	return s, nil
}

// ownPrefixed reports a name that is, or starts as, one of Link's own
// tools' (memory, memory-…): only Link's own of this agent take those.
func ownPrefixed(name string) bool {
	l := strings.ToLower(name)
	for _, p := range linkOwn {
		if l == p || strings.HasPrefix(l, p+"-") || strings.HasPrefix(l, p+"_") {
			return true
		}
	}
	return false
}

// Close ends memory's session and waits for every turn's sessions to
// have ended.
func (s *Set) Close() error {
	if s.mem != nil {
		s.mem.end("the harness stops")
	}
	s.ending.Wait()
	return nil
}

// Wait waits until every session a turn ended has told its tool.
func (s *Set) Wait() { s.ending.Wait() }

// refresh lists t when its list is older than ListEvery (or it never
// listed), unless it is barred; it answers whether t is offered in this
// turn, and its offers.
func (s *Set) refresh(ctx context.Context, t *toolState) ([]offer, bool) {
	t.mu.Lock()
	now := s.now()
	if now.Before(t.barUntil) {
		t.mu.Unlock()
		return nil, false
	}
	if t.listed && now.Sub(t.listedAt) < s.set.ListEvery {
		o := t.offers
		t.mu.Unlock()
		return o, true
	}
	t.mu.Unlock()

	calls, note, err := s.list(ctx, t)

	t.mu.Lock()
	defer t.mu.Unlock()
	if err != nil {
		if t.listed {
			s.logf("tools: %s: %v; offered what it listed before", t.short, err)
			t.listedAt = s.now() // not listed again at once by every turn
			return t.offers, true
		}
		t.barUntil = s.now().Add(s.set.BarFor)
		s.logf("tools: %s left out of every turn for %v: %v, and it never listed its calls", t.short, s.set.BarFor, err)
		return nil, false
	}
	if note != "" {
		s.logf("tools: %s: %s", t.short, note)
	}
	t.offers = toolOffers(t.short, calls, s.logf)
	t.listed = true
	t.listedAt = s.now()
	return t.offers, true
}

// sessionFor opens a session with t for a call.
func (s *Set) sessionFor(ctx context.Context, t *toolState) (*mcp.ClientSession, error) {
	return s.connect(ctx, t.url)
}

// errLeftOut is a call to a tool left out of the turn.
func errLeftOut(tool string, why error) error {
	return fmt.Errorf("the tool %s is left out of this turn: %v", tool, why)
}

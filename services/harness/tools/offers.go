package tools

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/services/harness/model"
)

// The caps on what the tools offer (security.txt "Link Harness").
const (
	MaxCalls       = 128       // calls of one tool
	MaxDescription = 2 << 10   // bytes of a call's description; the rest cut
	MaxSchema      = 16 << 10  // bytes of a call's schema; past it the call is left out
	MaxOffers      = 128 << 10 // bytes of every call together; past it calls are left out
)

// offer is one call as the model is offered it, and where it goes.
type offer struct {
	model.Tool        // Name is <tool>__<call>
	tool       string // the tool's offered name
	call       string // the call's name as the tool listed it
}

// size is what an offer costs of MaxOffers: its name, description and schema.
func (o offer) size() int { return len(o.Name) + len(o.Description) + len(o.Schema) }

// toolOffers makes one tool's listed calls offers, each cut said in
// logf: the first MaxCalls, names checked, descriptions cut, schemas
// capped. The tool's own name was checked before (toolNameRefusal).
func toolOffers(tool string, calls []*mcp.Tool, logf func(string, ...any)) []offer {
	var out []offer
	seen := map[string]bool{}
	for i, c := range calls {
		if c == nil {
			continue
		}
		if len(out) == MaxCalls {
			logf("tools: %s: %d calls past the first %d left out (a tool offers at most %d)", tool, len(calls)-i, MaxCalls, MaxCalls)
			break
		}
		full := tool + Sep + c.Name
		if why := callNameRefusal(c.Name, full); why != "" {
			logf("tools: %s: call %q left out: %s", tool, c.Name, why)
			continue
		}
		if seen[full] {
			logf("tools: %s: call %q left out: a call of that name is offered already (the first is)", tool, c.Name)
			continue
		}
		schema, why := schemaOf(c.InputSchema)
		if why != "" {
			logf("tools: %s: call %q left out: %s", tool, c.Name, why)
			continue
		}
		desc := cleanDescription(c.Description)
		if len(desc) > MaxDescription {
			logf("tools: %s: call %q: its description cut at %d bytes (of %d)", tool, c.Name, MaxDescription, len(desc))
			desc = cutUTF8(desc, MaxDescription)
		}
		seen[full] = true
		out = append(out, offer{Tool: model.Tool{Name: full, Description: desc, Schema: schema}, tool: tool, call: c.Name})
	}
	return out
}

// schemaOf is a call's input schema as JSON: a JSON object of at most
// MaxSchema bytes ({"type":"object"} for none), or why it is left out.
func schemaOf(s any) (json.RawMessage, string) {
	if s == nil {
		return json.RawMessage(`{"type":"object"}`), ""
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, "its schema is not JSON"
	}
	if len(b) > MaxSchema {
		return nil, "its schema is past 16 KiB"
	}
	if len(b) == 0 || b[0] != '{' {
		return nil, "its schema is not a JSON object"
	}
	return b, ""
}

// capTotal keeps offers, in order, while together they stay within
// MaxOffers; each one past it is left out and said.
func capTotal(offers []offer, logf func(string, ...any)) []offer {
	total := 0
	out := offers[:0:0]
	for _, o := range offers {
		if total+o.size() > MaxOffers {
			logf("tools: %s left out: every call together would pass 128 KiB", o.Name)
			continue
		}
		total += o.size()
		out = append(out, o)
	}
	return out
}

// cleanDescription keeps a description valid UTF-8 without NUL or the
// terminal's escape character.
func cleanDescription(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Map(func(r rune) rune {
		if r == 0 || r == 0x1b {
			return -1
		}
		return r
	}, s)
}

// cutUTF8 is s cut to at most n bytes at a rune's start.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

package toolbridge

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"

	"lnk.dev/lnk/caps"
)

// Question is what the bridge asks the owner before a call its rules
// don't let through: which agent, tool and call, the server's hints
// (shown, never a reason to skip asking), and a digest of the arguments,
// so the approval covers that one call, once.
type Question struct {
	Agent     string
	Tool      string
	Call      string   // a tools/call's name, or resources/read, prompts/get
	Hints     []string // readOnlyHint, destructiveHint, … as the server listed them
	Arguments string   // the arguments as sent, for the owner to read (cleaned by the asker)
	Digest    string   // sha256 of the arguments: what the approval covers
}

// Asker asks the owner; askbroker is the real one. Ask answers true only
// for an approval of this one call.
type Asker interface {
	Ask(ctx context.Context, q Question) (bool, error)
}

// A RefusalCounter is an Asker that counts toward the sandbox's pause
// some refusals it answers (askbroker's Broker counts an owner's no and
// a question unanswered). Counted reports whether the refusal its Ask
// returned with err (nil for a plain no) was counted so; the bridge
// counts toward the pause (Bridge.OnRefusal) only those it was not.
type RefusalCounter interface {
	Counted(err error) bool
}

// allowed tells whether grant lets call through without asking: --ask
// none, or --allow with the call's name.
func allowed(grant caps.Tool, call string) bool {
	return grant.AskNone || slices.Contains(grant.Allow, call)
}

// argumentsOf is what the owner is shown and the approval covers: a
// call's arguments, or the resource's uri, read as callName reads the
// call (the relay has refused params that could be read two ways).
func argumentsOf(m *message) string {
	p, _ := callParams(m.Params)
	if len(p["arguments"]) > 0 {
		return string(p["arguments"])
	}
	var uri string
	if json.Unmarshal(p["uri"], &uri); uri != "" {
		return uri
	}
	return string(m.Params)
}

func digestOf(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// hintsFromList reads the hints a tools/list answer gives for each tool.
func hintsFromList(answer []byte) map[string][]string {
	var r struct {
		Result struct {
			Tools []struct {
				Name        string          `json:"name"`
				Annotations map[string]any  `json:"annotations"`
				Meta        json.RawMessage `json:"_meta"`
			} `json:"tools"`
		} `json:"result"`
	}
	if json.Unmarshal(answer, &r) != nil {
		return nil
	}
	out := map[string][]string{}
	for _, t := range r.Result.Tools {
		for _, k := range []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} {
			if v, ok := t.Annotations[k].(bool); ok && v {
				out[t.Name] = append(out[t.Name], k)
			}
		}
	}
	return out
}

package namespace

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/services/toolbridge/launch"
	"lnk.dev/lnk/services/toolbridge/tooldef"
)

// FilteredEnv is the environment a provider starts with: Link's snapshot
// of the owner's variables with credential-named ones (TOKEN, SECRET,
// KEY, PASS, and the SSH agent) removed, and the provider's own explicit
// environment (its --env values) kept as it is.
func FilteredEnv(def *tooldef.Definition) []string {
	var env []string
	for _, kv := range def.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if slices.Contains(tooldef.Snapshot, k) && credential(k) {
			continue
		}
		env = append(env, kv)
	}
	return env
}

func credential(name string) bool {
	u := strings.ToUpper(name)
	for _, w := range []string{"TOKEN", "SECRET", "KEY", "PASS", "SSH_AUTH_SOCK"} {
		if strings.Contains(u, w) {
			return true
		}
	}
	return false
}

// stdioSession is a provider's server on stdio, through the go-sdk's
// client.
type stdioSession struct{ cs *mcp.ClientSession }

// StartStdio starts def's command in /, its own process group, with
// FilteredEnv.
func StartStdio(ctx context.Context, def *tooldef.Definition) (Session, error) {
	cmd, err := launch.Command(def, FilteredEnv(def))
	if err != nil {
		return nil, err
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "lnk-namespace", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second}, nil)
	if err != nil {
		return nil, err
	}
	return &stdioSession{cs: cs}, nil
}

func (s *stdioSession) Schemas(ctx context.Context) (map[string]Schema, error) {
	out := map[string]Schema{}
	for t, err := range s.cs.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		raw, err := json.Marshal(t.InputSchema)
		if err != nil {
			return nil, err
		}
		sch, err := schemaOf(raw)
		if err != nil {
			return nil, fmt.Errorf("tool %s: %w", t.Name, err)
		}
		out[t.Name] = sch
	}
	return out, nil
}

func (s *stdioSession) Call(ctx context.Context, tool string, args map[string]json.RawMessage) (json.RawMessage, error) {
	res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return nil, err
	}
	return json.Marshal(res)
}

func (s *stdioSession) Close() error { return s.cs.Close() }

package namespace

import (
	"encoding/json"
	"errors"
	"slices"
	"sort"
	"testing"
)

func schema(t *testing.T, s string) Schema {
	t.Helper()
	sc, err := schemaOf(json.RawMessage(s))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

var twoTargets = Action{Name: "create", Targets: []Target{{Kind: "issue", Provider: "gh", Tool: "create_issue"}, {Kind: "ticket", Provider: "jira", Tool: "create"}}}

func TestMerge(t *testing.T) {
	issue := `{"type":"object","properties":{"title":{"type":"string"},"body":{"type":"string"},"repo":{"type":"string"}},"required":["title","repo"]}`
	ticket := `{"type":"object","properties":{"title":{"type":"string"},"project":{"type":"string"}},"required":["title","project"]}`
	broadcast := twoTargets
	broadcast.Broadcast = true
	one := Action{Name: "one", Targets: twoTargets.Targets[:1]}
	for _, tc := range []struct {
		name     string
		a        Action
		props    []string
		required []string
	}{
		{"mutation: kind required, and what both require", twoTargets, []string{"body", "kind", "project", "repo", "title"}, []string{"kind", "title"}},
		{"broadcast read: kind offered, not required", broadcast, []string{"body", "kind", "project", "repo", "title"}, []string{"title"}},
		{"one target: its own schema, no kind", one, []string{"body", "repo", "title"}, []string{"repo", "title"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Merge(&tc.a, map[string]Schema{"issue": schema(t, issue), "ticket": schema(t, ticket)})
			if err != nil {
				t.Fatal(err)
			}
			var props []string
			for k := range m.Properties {
				props = append(props, k)
			}
			sort.Strings(props)
			if m.Type != "object" || !slices.Equal(props, tc.props) || !slices.Equal(m.Required, tc.required) {
				t.Errorf("merged %v required %v", props, m.Required)
			}
			if k, ok := m.Properties[KindField]; ok && string(k) != `{"description":"which of the action's targets the call is for","enum":["issue","ticket"],"type":"string"}` {
				t.Errorf("kind: %s", k)
			}
		})
	}
	clash := schema(t, `{"type":"object","properties":{"kind":{"type":"string"}}}`)
	if _, err := Merge(&twoTargets, map[string]Schema{"issue": clash, "ticket": clash}); !errors.Is(err, ErrDefinition) {
		t.Errorf("a target's own kind field beside the selector: %v", err)
	}
	if _, err := Merge(&twoTargets, map[string]Schema{"issue": clash}); !errors.Is(err, ErrDefinition) {
		t.Errorf("a target without a schema: %v", err)
	}
}

func TestSelect(t *testing.T) {
	broadcast := twoTargets
	broadcast.Broadcast = true
	one := Action{Name: "one", Targets: twoTargets.Targets[:1]}
	for _, tc := range []struct {
		name  string
		a     Action
		kind  string
		kinds []string
		err   error
	}{
		{"mutation by kind", twoTargets, "ticket", []string{"ticket"}, nil},
		{"mutation without kind", twoTargets, "", nil, ErrKindRequired},
		{"a kind naming no target", twoTargets, "wiki", nil, ErrKind},
		{"broadcast without kind reaches every target", broadcast, "", []string{"issue", "ticket"}, nil},
		{"broadcast narrowed by kind", broadcast, "issue", []string{"issue"}, nil},
		{"one target without kind", one, "", []string{"issue"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.a.Select(tc.kind)
			if !errors.Is(err, tc.err) {
				t.Fatalf("err %v, want %v", err, tc.err)
			}
			var kinds []string
			for _, g := range got {
				kinds = append(kinds, g.Kind)
			}
			if !slices.Equal(kinds, tc.kinds) {
				t.Errorf("selected %v, want %v", kinds, tc.kinds)
			}
			if tc.err == nil && got[0].Tool != tc.a.Targets[slices.IndexFunc(tc.a.Targets, func(x Target) bool { return x.Kind == kinds[0] })].Tool {
				t.Error("the target's own tool name was not kept")
			}
		})
	}
}

func TestCheckArguments(t *testing.T) {
	s := schema(t, `{"type":"object","properties":{"title":{"type":"string"},"body":{}},"required":["title"]}`)
	for _, tc := range []struct {
		args string
		err  error
	}{
		{`{"title":"x"}`, nil},
		{`{"title":"x","body":"y"}`, nil},
		{``, ErrMissing},
		{`{"body":"y"}`, ErrMissing},
		{`{"title":"x","repo":"other"}`, ErrUnlisted},
		{`{"title":"x","__proto__":{}}`, ErrUnlisted},
		{`[1]`, ErrArguments},
		{`{"title":"x"} {}`, ErrArguments},
		{`"title"`, ErrArguments},
	} {
		args, err := ParseArguments([]byte(tc.args))
		if err == nil {
			err = CheckArguments(s, args)
		}
		if !errors.Is(err, tc.err) {
			t.Errorf("%s: %v, want %v", tc.args, err, tc.err)
		}
	}
	if _, err := ParseArguments(make([]byte, MaxBody+1)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("arguments over the cap: %v", err)
	}
}

func TestDefinitionCheck(t *testing.T) {
	good := Definition{Name: "work", Actions: []Action{twoTargets}}
	if err := good.Check(); err != nil {
		t.Fatal(err)
	}
	dup := twoTargets
	dup.Targets = []Target{twoTargets.Targets[0], twoTargets.Targets[0]}
	for _, d := range []Definition{
		{Name: "work"},
		{Name: "task", Actions: []Action{twoTargets}},
		{Name: "work", Actions: []Action{{Name: "x"}}},
		{Name: "work", Actions: []Action{dup}},
		{Name: "work", Actions: []Action{{Name: "x", Targets: []Target{{Kind: "k", Provider: "../gh", Tool: "t"}}}}},
	} {
		if err := d.Check(); !errors.Is(err, ErrDefinition) {
			t.Errorf("%+v: %v", d, err)
		}
	}
}

// FuzzCheckArguments: whatever a caller sends, the checker returns, and
// what it accepts lists only the schema's fields and every one it requires.
func FuzzCheckArguments(f *testing.F) {
	for _, s := range []string{`{"title":"x"}`, `{"title":"x","repo":1}`, `{}`, `null`, `[]`, `{"title":"x"}{}`, `{"a":{"b":[1,2,{"c":null}]}}`, `{"title":1e999}`, "{\"title\":\"\\ud800\"}"} {
		f.Add([]byte(s))
	}
	s := Schema{Type: "object", Properties: map[string]json.RawMessage{"title": json.RawMessage(`{}`), "body": json.RawMessage(`{}`)}, Required: []string{"title"}}
	f.Fuzz(func(t *testing.T, raw []byte) {
		args, err := ParseArguments(raw)
		if err != nil {
			return
		}
		if err := CheckArguments(s, args); err != nil {
			if !errors.Is(err, ErrUnlisted) && !errors.Is(err, ErrMissing) {
				t.Fatalf("an untyped refusal: %v", err)
			}
			return
		}
		if _, ok := args["title"]; !ok {
			t.Fatal("accepted without a required field")
		}
		for k := range args {
			if k != "title" && k != "body" {
				t.Fatalf("accepted an unlisted field %q", k)
			}
		}
	})
}

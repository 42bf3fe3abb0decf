package namespace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	"lnk.dev/lnk/services/toolbridge"
)

// MaxBody is the bridge's cap, on a call's arguments and on an answer.
const MaxBody = toolbridge.MaxBody

// Schema is the part of a tool's input schema the namespace reads: an
// object's properties and what it requires. Each property's own schema is
// kept as the provider wrote it.
type Schema struct {
	Type       string                     `json:"type"`
	Properties map[string]json.RawMessage `json:"properties,omitempty"`
	Required   []string                   `json:"required,omitempty"`
}

// KindField is the selector a caller gives.
const KindField = "kind"

// Merge offers action as one object schema, since models' APIs refuse a
// union at a schema's top: every target's properties (the first target's
// wins where two differ), kind naming each target, and required only
// what every target requires — and kind, where the action needs it.
func Merge(a *Action, schemas map[string]Schema) (Schema, error) {
	out := Schema{Type: "object", Properties: map[string]json.RawMessage{}}
	var required map[string]bool
	for _, t := range a.Targets {
		s, ok := schemas[t.Kind]
		if !ok {
			return Schema{}, fmt.Errorf("%w: no schema discovered for %s's kind %s", ErrDefinition, a.Name, t.Kind)
		}
		if _, ok := s.Properties[KindField]; ok && len(a.Targets) > 1 {
			return Schema{}, fmt.Errorf("%w: %s's target %s has a field named kind", ErrDefinition, a.Name, t.Kind)
		}
		for k, v := range s.Properties {
			if _, ok := out.Properties[k]; !ok {
				out.Properties[k] = v
			}
		}
		req := map[string]bool{}
		for _, r := range s.Required {
			req[r] = true
		}
		if required == nil {
			required = req
		} else {
			for r := range required {
				if !req[r] {
					delete(required, r)
				}
			}
		}
	}
	if len(a.Targets) > 1 {
		var kinds []string
		for _, t := range a.Targets {
			kinds = append(kinds, t.Kind)
		}
		enum, _ := json.Marshal(map[string]any{"type": "string", "enum": kinds, "description": "which of the action's targets the call is for"})
		out.Properties[KindField] = enum
		if !a.Broadcast {
			required[KindField] = true
		}
	}
	for r := range required {
		out.Required = append(out.Required, r)
	}
	sort.Strings(out.Required)
	return out, nil
}

// ParseArguments decodes a call's arguments: one JSON object, nothing
// after it, at most MaxBody bytes. Absent arguments are an empty object.
func ParseArguments(raw []byte) (map[string]json.RawMessage, error) {
	if len(raw) > MaxBody {
		return nil, fmt.Errorf("%w: arguments of %d bytes", ErrTooLarge, len(raw))
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return map[string]json.RawMessage{}, nil
	}
	if raw[0] != '{' {
		return nil, ErrArguments
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	var args map[string]json.RawMessage
	if err := dec.Decode(&args); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrArguments, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: data after the object", ErrArguments)
	}
	if args == nil {
		args = map[string]json.RawMessage{}
	}
	return args, nil
}

// CheckArguments checks args (kind already taken out) against a target's
// own schema: a field it does not list is refused, and so is one it
// requires that is missing. A listed field's value is the provider's to
// judge.
func CheckArguments(s Schema, args map[string]json.RawMessage) error {
	var unlisted []string
	for k := range args {
		if _, ok := s.Properties[k]; !ok {
			unlisted = append(unlisted, k)
		}
	}
	if len(unlisted) > 0 {
		sort.Strings(unlisted)
		return fmt.Errorf("%w: %q", ErrUnlisted, unlisted)
	}
	for _, r := range s.Required {
		if _, ok := args[r]; !ok {
			return fmt.Errorf("%w: %q", ErrMissing, r)
		}
	}
	return nil
}

// takeKind removes kind from args and returns it ("" when absent).
func takeKind(args map[string]json.RawMessage) (string, error) {
	raw, ok := args[KindField]
	if !ok {
		return "", nil
	}
	delete(args, KindField)
	var k string
	if err := json.Unmarshal(raw, &k); err != nil || k == "" {
		return "", fmt.Errorf("%w: kind is not a name", ErrKind)
	}
	return k, nil
}

func schemaOf(raw json.RawMessage) (Schema, error) {
	var s Schema
	if len(raw) == 0 {
		return Schema{Type: "object"}, nil
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return Schema{}, err
	}
	if s.Type != "" && s.Type != "object" {
		return Schema{}, fmt.Errorf("an input schema of type %q", s.Type)
	}
	s.Required = slices.Compact(slices.Sorted(slices.Values(s.Required)))
	return s, nil
}

package builtin

import (
	"encoding/json"
	"fmt"
	"sort"
)

// schema is the part of a JSON Schema the built-in checks its own
// arguments against: an object's properties, their types, required and
// additionalProperties, an array's items and minItems. Keywords it
// doesn't know are left to the tool, which checks its arguments itself.
type schema struct {
	Type                 json.RawMessage    `json:"type"`
	Properties           map[string]*schema `json:"properties"`
	Required             []string           `json:"required"`
	AdditionalProperties json.RawMessage    `json:"additionalProperties"`
	Items                *schema            `json:"items"`
	MinItems             *int               `json:"minItems"`
	Enum                 []json.RawMessage  `json:"enum"`
}

func parseSchema(raw json.RawMessage) (*schema, error) {
	var s schema
	if len(raw) == 0 || isNull(raw) {
		return &s, nil
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("its schema does not read: %w", err)
	}
	return &s, nil
}

// types is the schema's "type": one name or a list; none means any.
func (s *schema) types() []string {
	if s == nil || len(s.Type) == 0 {
		return nil
	}
	var one string
	if json.Unmarshal(s.Type, &one) == nil {
		return []string{one}
	}
	var many []string
	json.Unmarshal(s.Type, &many)
	return many
}

func (s *schema) allows(t string) bool {
	ts := s.types()
	if len(ts) == 0 {
		return true
	}
	for _, x := range ts {
		if x == t || (x == "number" && t == "integer") {
			return true
		}
	}
	return false
}

// check says why v doesn't fit s, or nil. v is a value the built-in made:
// a string, a whole number, a []string, or a map[string]any of those.
func (s *schema) check(where string, v any) error {
	if s == nil {
		return nil
	}
	switch x := v.(type) {
	case int:
		if !s.allows("integer") && !s.allows("number") {
			return fmt.Errorf("%s is a number, the schema wants %v", where, s.types())
		}
	case string:
		if !s.allows("string") {
			return fmt.Errorf("%s is a string, the schema wants %v", where, s.types())
		}
		if len(s.Enum) > 0 {
			b, _ := json.Marshal(x)
			for _, e := range s.Enum {
				if string(e) == string(b) {
					return nil
				}
			}
			return fmt.Errorf("%s is not one of the schema's values", where)
		}
	case []string:
		if !s.allows("array") {
			return fmt.Errorf("%s is an array, the schema wants %v", where, s.types())
		}
		if s.MinItems != nil && len(x) < *s.MinItems {
			return fmt.Errorf("%s has %d items, the schema wants at least %d", where, len(x), *s.MinItems)
		}
		for i, e := range x {
			if err := s.Items.check(fmt.Sprintf("%s[%d]", where, i), e); err != nil {
				return err
			}
		}
	case map[string]any:
		if !s.allows("object") {
			return fmt.Errorf("%s is an object, the schema wants %v", where, s.types())
		}
		for _, r := range s.Required {
			if _, ok := x[r]; !ok {
				return fmt.Errorf("%s lacks %q, which the schema requires", where, r)
			}
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p, ok := s.Properties[k]
			if !ok {
				if string(s.AdditionalProperties) == "false" {
					return fmt.Errorf("%s has %q, which the schema doesn't allow", where, k)
				}
				continue
			}
			if err := p.check(where+"."+k, x[k]); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("%s is of a type the built-in never makes", where)
	}
	return nil
}

// textProperty picks the property an offered call takes free text in:
// the first of names the schema has, else its one required string, else
// names[0] when the schema lists no properties.
func (s *schema) textProperty(names ...string) string {
	if s == nil || len(s.Properties) == 0 {
		return names[0]
	}
	for _, n := range names {
		if _, ok := s.Properties[n]; ok {
			return n
		}
	}
	var strs []string
	for _, r := range s.Required {
		if p, ok := s.Properties[r]; ok && p.allows("string") {
			strs = append(strs, r)
		}
	}
	if len(strs) == 1 {
		return strs[0]
	}
	return names[0]
}

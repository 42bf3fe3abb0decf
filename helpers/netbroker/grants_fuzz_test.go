package netbroker

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// FuzzReadGrants: the grants lnk writes on lnk-netbroker's stdin are
// read strictly (a field Grants does not name is refused, a value of
// the wrong type too) and never panic; grants that are read and that
// RulesFrom takes write back to JSON that reads to the same grants and
// the same rules.
func FuzzReadGrants(f *testing.F) {
	for _, s := range []string{
		`{}`,
		`{"agent_id":"abababababababababababababababab","agent_name":"main","internet":{"on":true,"hosts":["api.example.test","*.cdn.example.test"],"per_minute":5,"tcp":["db.example.test:5432"]},"lan_hosts":["nas.lan"],"localhost_ports":[11434]}`,
		`{"network_mode":"host","all_localhost":true}`,
		`{"home":"/home/someone"}`,
		`{"internet":{"on":"yes"}}`,
		`{"localhost_ports":[70000]}`,
		`{"internet":{"tcp":["[::1]:22"]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := ReadGrants(json.NewDecoder(bytes.NewReader(b)))
		if err != nil {
			return
		}
		var fields map[string]json.RawMessage
		if json.Unmarshal(b, &fields) == nil {
			for k := range fields {
				if !grantsField(k) {
					t.Fatalf("field %q was taken, which Grants does not name", k)
				}
			}
		}
		r, err := RulesFrom(g)
		if err != nil {
			return
		}
		again, err := json.Marshal(g)
		if err != nil {
			t.Fatal(err)
		}
		g2, err := ReadGrants(json.NewDecoder(bytes.NewReader(again)))
		if err != nil {
			t.Fatalf("%s does not read back: %v", again, err)
		}
		r2, err := RulesFrom(g2)
		if err != nil || !reflect.DeepEqual(r, r2) {
			t.Fatalf("%s reads back to rules %+v, %v; want %+v", again, r2, err, r)
		}
	})
}

// grantsField reports whether k is a JSON name of Grants, as
// encoding/json matches it (case-insensitively).
func grantsField(k string) bool {
	t := reflect.TypeOf(Grants{})
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if strings.EqualFold(name, k) {
			return true
		}
	}
	return false
}

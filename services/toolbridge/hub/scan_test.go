package hub

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestParseSplicesTheIDAndRefusesTwins(t *testing.T) {
	for _, tc := range []struct {
		line, want string
		bad        bool
	}{
		{line: `{"jsonrpc":"2.0","id":7,"result":{"id":1,"s":"}\"]"}}`, want: `{"jsonrpc":"2.0","id":"a","result":{"id":1,"s":"}\"]"}}`},
		{line: ` { "result" : [1,{"x":"id"}] , "id" : 12 , "jsonrpc":"2.0" } `, want: ` { "result" : [1,{"x":"id"}] , "id" : "a" , "jsonrpc":"2.0" } `},
		{line: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, want: `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{line: `{"jsonrpc":"2.0","id":1,"id":2,"result":{}}`, bad: true},
		{line: `{"jsonrpc":"2.0","\u0069d":1,"id":2,"result":{}}`, bad: true},
		{line: `{"jsonrpc":"2.0","id":1,"result":{}`, bad: true},
		{line: `[{"jsonrpc":"2.0","id":1}]`, bad: true},
	} {
		_, id, err := parse([]byte(tc.line))
		if tc.bad {
			if err == nil {
				t.Errorf("%s: accepted", tc.line)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.line, err)
		}
		if got := withID([]byte(tc.line), id, []byte(`"a"`)); string(got) != tc.want {
			t.Errorf("%s: got %s", tc.line, got)
		}
	}
}

// FuzzParse: what parse accepts, encoding/json reads the same way (the
// same id, method and members), and the spliced id is the one a decoder
// then sees.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":7,"result":{"id":1}}`,
		`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"a\"b"}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1}}`,
		`{"id":1,"id":2}`, `[]`, `{}`, `{"a":[{"b":"]}"}],"id":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		m, id, err := parse(line)
		if err != nil {
			return
		}
		var want message
		if err := json.Unmarshal(line, &want); err != nil {
			t.Fatalf("parse accepted what json refuses: %v", err)
		}
		if m.JSONRPC != want.JSONRPC || m.Method != want.Method || !bytes.Equal(m.ID, want.ID) ||
			!bytes.Equal(m.Params, want.Params) || !bytes.Equal(m.Result, want.Result) || !bytes.Equal(m.Error, want.Error) {
			t.Fatalf("parse read %+v, json %+v", m, want)
		}
		if id.End == 0 {
			return
		}
		spliced := withID(line, id, []byte(`"lnk"`))
		var got message
		if err := json.Unmarshal(spliced, &got); err != nil || string(got.ID) != `"lnk"` {
			t.Fatalf("spliced %s: id %s, %v", spliced, got.ID, err)
		}
	})
}

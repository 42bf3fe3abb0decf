package toolbridge

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestAnswerKeepsTheServersBytesButItsID(t *testing.T) {
	line := []byte(`{"result":{"text":"id \"id\":9 stays","n":[1,2]} ,"jsonrpc":"2.0", "id" : 9 }`)
	f, err := readAnswer(line)
	if err != nil || !f.hasID || f.hasMethod || f.dup {
		t.Fatalf("%+v %v", f, err)
	}
	got := string(withID(answer{line: line, id: f.id}, json.RawMessage(`"client-1"`)))
	want := `{"result":{"text":"id \"id\":9 stays","n":[1,2]} ,"jsonrpc":"2.0", "id" : "client-1" }`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestAnswerWithTwoIDsIsDropped(t *testing.T) {
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{},"id":2}`,
		`{"jsonrpc":"2.0","id":1,"result":{},"\u0069d":2}`,
		`{"jsonrpc":"2.0","id":1,"result":{},"ID":2}`,
		`{"jsonrpc":"2.0","Method":"ping","id":1}`,
		`{"jsonrpc":"2.0","method":"ping","id":1,"method":"x"}`,
	} {
		if f, err := readAnswer([]byte(line)); err != nil || !f.dup {
			t.Errorf("%s: %+v %v", line, f, err)
		}
	}
	if _, err := readAnswer([]byte(`{"id":1} x`)); err == nil {
		t.Error("took a line with more after the object")
	}
}

// What the bridge sends a server: the method it judged, its own id, the
// params compacted onto one line, and nothing else of the client's.
func TestEncodeMessageSendsOneLineOfWhatWasJudged(t *testing.T) {
	m, err := parseMessage([]byte("{\"jsonrpc\":\"2.0\",\"id\":\"c\",\"method\":\"tools/call\",\n \"params\": {\"name\": \"echo\",\n \"arguments\": {\"text\": \"a\\nb\"}},\"result\":{\"x\":1}}"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := encodeMessage([]byte("41"), m)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a\nb"}}}`
	if string(b) != want || strings.Contains(string(b), "\n") {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
	n, _ := parseMessage([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c"}}`))
	if b, _ := encodeMessage(nil, n); string(b) != `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c"}}` {
		t.Fatalf("notification: %s", b)
	}
}

func TestMayHaveMeta(t *testing.T) {
	for params, want := range map[string]bool{
		`{"name":"echo","arguments":{"a_b":1}}`:             false,
		`{"name":"echo","_meta":{"progressToken":1}}`:       true,
		`{"name":"echo","_META":{}}`:                        true,
		`{"name":"echo","\u005fmeta":{}}`:                   true,
		`{"name":"echo","arguments":{"t":"x_mEtA"}}`:        true, // decoded, then left as it is
		`{"name":"echo_","arguments":{"t":"_met","u":"_"}}`: false,
	} {
		if got := mayHaveMeta([]byte(params)); got != want {
			t.Errorf("%s: %v, want %v", params, got, want)
		}
	}
}

// An answer the server wrote with spaces around it reaches the client as
// the object alone, so it is served as application/json.
func TestAnswerWithSpacesAroundIsTheObject(t *testing.T) {
	s := &server{waiting: map[uint64]chan answer{}}
	ch := make(chan answer, 1)
	s.waiting[3] = ch
	s.dispatch([]byte(" \t{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}} \r"))
	got := string(withID(<-ch, json.RawMessage(`"c"`)))
	if got != `{"jsonrpc":"2.0","id":"c","result":{}}` {
		t.Fatalf("%q", got)
	}
}

// Params with no line break pass byte for byte (the bytes the call was
// judged on); a method is written as json.Marshal writes it, whatever it
// holds.
func TestEncodeMessagePassesParamsAsJudged(t *testing.T) {
	m, err := parseMessage([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{ "name" : "echo", "arguments":{"t":"\u2028<x>"} }}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := encodeMessage([]byte("9"), m)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{ "name" : "echo", "arguments":{"t":"\u2028<x>"} }}`; string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
	for _, method := range []string{"tools/call", "a\"b", "x\u2028<y>&", "é", "\x01", ""} {
		got, err := jsonString(method)
		want, _ := json.Marshal(method)
		if err != nil || string(got) != string(want) {
			t.Errorf("%q: got %s, want %s", method, got, want)
		}
	}
}

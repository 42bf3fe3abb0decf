package mcpstdio

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/internal/mcptext"
)

// written is the line this transport writes for a result of one text
// (mcptext.Result) to the call id: what Link's tool servers answer.
func written(t testing.TB, id jsonrpc.ID, text string, isErr bool) []byte {
	res, err := mcptext.Result{CallToolResult: &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: isErr}}.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	line, ok := appendResponse(nil, &jsonrpc.Response{ID: id, Result: res})
	if !ok {
		t.Fatalf("no line written for %q", text)
	}
	return append(line, '\n')
}

// TestReadAnswerOfLinksTools: what Link's tool servers write for a text
// result, an error or not, to an id a number or a string, is read on the
// fast path to its text, and strictAnswer reads it the same.
func TestReadAnswerOfLinksTools(t *testing.T) {
	num, _ := jsonrpc.MakeID(float64(7))
	str, _ := jsonrpc.MakeID("call-7")
	for _, id := range []jsonrpc.ID{num, str} {
		for _, text := range []string{"", "plain", "<p>a &amp; \"b\"</p>\n\t\\ é 😀 \u2028 \x01 \xff", strings.Repeat("```\nline\n", 5000)} {
			for _, isErr := range []bool{false, true} {
				line := written(t, id, text, isErr)
				want := Answer{ID: id, Content: []Content{{"text", strings.ToValidUTF8(text, "\ufffd")}}, IsError: isErr}
				fast, ok := plainAnswer(line)
				if !ok || !reflect.DeepEqual(fast, want) {
					t.Errorf("%.40q: fast path %v %+v, want %+v", line, ok, fast, want)
				}
				if a, err := strictAnswer(line); err != nil || !reflect.DeepEqual(a, want) {
					t.Errorf("%.40q: strict %+v %v, want %+v", line, a, err, want)
				}
			}
		}
	}
}

// answerCases are answer lines the reader takes and refuses: the
// refusals each beside lines it takes that differ by the one thing
// (the positive controls), and FuzzReadAnswer's seeds.
var answerCases = []struct {
	line string
	ok   bool
}{
	{`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a"}]}}`, true},
	{` { "id" : "x", "result" : { "isError" : true, "content" : [ { "text" : "a\u0041", "type" : "text" } ] }, "jsonrpc" : "2.0" } `, true},
	{`{"jsonrpc":"2.0","id":1,"result":{"_meta":{"k":1},"content":[{"type":"image","data":"AA==","mimeType":"image/png"},{"type":"text","text":"b","annotations":{}}],"structuredContent":{}}}`, true},
	{`{"jsonrpc":"2.0","id":-9007199254740992,"result":{"content":[]}}`, true},
	{`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"no such tool","data":{"x":1}}}`, true},
	{`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a"}],"isError":false}}` + "\r\n", true},
	// refused
	{`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a"}]}} {}`, false},
	{`{"jsonrpc":"2.0","id":1,"id":2,"result":{"content":[]}}`, false},
	{`{"jsonrpc":"2.0","ID":1,"result":{"content":[]}}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":{"content":[],"Content":[{"type":"text","text":"b"}]}}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a","TEXT":"b"}]}}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a","text":"b"}]}}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":{"content":[]},"isError":true,"isError":false}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","result":{"content":[]}}`, false},
	{`{"jsonrpc":"1.0","id":1,"result":{"content":[]}}`, false},
	{`{"id":1,"result":{"content":[]}}`, false},
	{`{"jsonrpc":"2.0","result":{"content":[]}}`, false},
	{`{"jsonrpc":"2.0","id":null,"result":{"content":[]}}`, false},
	{`{"jsonrpc":"2.0","id":1.5,"result":{"content":[]}}`, false},
	{`{"jsonrpc":"2.0","id":9007199254740993,"result":{"content":[]}}`, false},
	{`{"jsonrpc":"2.0","id":{},"result":{"content":[]}}`, false},
	{`{"jsonrpc":"2.0","id":1}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":{"content":[]},"error":{"code":1,"message":"x"}}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":null}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":{}}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":{"content":null}}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":{"content":[{"text":"a"}]}}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text"}]}}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":null}]}}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a"}],"isError":null}}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a` + "\x01" + `"}]}}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a\x"}]}}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a"}]}`, false},
	{`{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"x"}}`, false},
	{`{"jsonrpc":"2.0","id":1,"error":{"code":1}}`, false},
	{`[{"jsonrpc":"2.0","id":1,"result":{"content":[]}}]`, false},
	{``, false},
}

// TestReadAnswer: each line of answerCases taken or refused as it says,
// by ReadAnswer and by strictAnswer alike.
func TestReadAnswer(t *testing.T) {
	for _, c := range answerCases {
		a, err := ReadAnswer([]byte(c.line))
		s, serr := strictAnswer([]byte(c.line))
		if (err == nil) != c.ok || (serr == nil) != c.ok {
			t.Errorf("%s: read %+v %v, strict %v; want taken %v", c.line, a, err, serr, c.ok)
		}
		if err == nil && !reflect.DeepEqual(a, s) {
			t.Errorf("%s: read %+v, strict %+v", c.line, a, s)
		}
	}
	a, err := ReadAnswer([]byte(answerCases[2].line)) // the values read, beside the mere verdicts above
	if err != nil || !reflect.DeepEqual(a.Content, []Content{{"image", ""}, {"text", "b"}}) || a.ID.Raw() != int64(1) {
		t.Errorf("read %+v %v", a, err)
	}
	a, err = ReadAnswer([]byte(answerCases[4].line))
	if err != nil || a.Error == nil || *a.Error != (RPCError{-32602, "no such tool"}) || a.Content != nil {
		t.Errorf("read %+v %v", a, err)
	}
}

// FuzzReadAnswer: a differential target. ReadAnswer (the fast path
// where it takes the line) and strictAnswer take the same lines, to
// the same answer; a line the fast path takes, strictAnswer takes to
// the same; and what strictAnswer reads is what encoding/json decodes
// from the line. Each input is tried as a line and, its text written
// raw between the quotes, in the fast path's shape. Seeds in
// testdata/fuzz/FuzzReadAnswer.
func FuzzReadAnswer(f *testing.F) {
	for _, c := range answerCases {
		f.Add([]byte(c.line), []byte(`a\n`), false)
	}
	f.Add([]byte(nil), []byte(`<p>\"a\" \ud83d\ude00 \ud83d \u00e9 é`), true)
	f.Fuzz(func(t *testing.T, line, text []byte, isErr bool) {
		tail := `}]}}`
		if isErr {
			tail = `}],"isError":true}}` + "\n"
		}
		for _, l := range [][]byte{line, []byte(answerHead + `12` + answerText + `"` + string(text) + `"` + tail)} {
			a, err := ReadAnswer(l)
			s, serr := strictAnswer(l)
			if (err == nil) != (serr == nil) || (err == nil && !reflect.DeepEqual(a, s)) {
				t.Fatalf("%q: read %+v %v, strict %+v %v", l, a, err, s, serr)
			}
			if p, ok := plainAnswer(l); ok && (serr != nil || !reflect.DeepEqual(p, s)) {
				t.Fatalf("%q: fast path %+v, strict %+v %v", l, p, s, serr)
			}
			if serr == nil {
				sameAsEncodingJSON(t, l, s)
			}
		}
	})
}

// sameAsEncodingJSON fails t where encoding/json decodes line to other
// values than a.
func sameAsEncodingJSON(t *testing.T, line []byte, a Answer) {
	var m struct {
		ID     any `json:"id"`
		Result *struct {
			Content []struct{ Type, Text string } `json:"content"`
			IsError bool                          `json:"isError"`
		} `json:"result"`
		Error *RPCError `json:"error"`
	}
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatalf("%q: taken, but encoding/json: %v", line, err)
	}
	id, err := jsonrpc.MakeID(m.ID)
	if err != nil || id != a.ID {
		t.Fatalf("%q: id %v, encoding/json %v", line, a.ID, m.ID)
	}
	if m.Error != nil {
		if a.Error == nil || *a.Error != *m.Error {
			t.Fatalf("%q: error %+v, encoding/json %+v", line, a.Error, m.Error)
		}
		return
	}
	if m.Result == nil || m.Result.IsError != a.IsError || len(m.Result.Content) != len(a.Content) {
		t.Fatalf("%q: %+v, encoding/json %+v", line, a, m.Result)
	}
	for i, c := range m.Result.Content {
		if (Content{c.Type, c.Text}) != a.Content[i] {
			t.Fatalf("%q: content %d %+v, encoding/json %+v", line, i, a.Content[i], c)
		}
	}
}

// BenchmarkReadAnswer: the answer line of a 100 KB page's text (as Link
// Web answers a page served as text) read by ReadAnswer (link) and by
// json.Unmarshal into a struct of the same fields (base).
func BenchmarkReadAnswer(b *testing.B) {
	var page strings.Builder
	for page.Len() < 100<<10 {
		page.WriteString("<h2>Section</h2><p>Some <b>text</b> with <a href=\"/p/1\">a link</a> and <code>code</code>, then more words to read.</p>\n")
	}
	id, _ := jsonrpc.MakeID(float64(3))
	line := written(b, id, page.String(), false)
	b.Run("link", func(b *testing.B) {
		b.SetBytes(int64(len(line)))
		for i := 0; i < b.N; i++ {
			if _, err := ReadAnswer(line); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("base", func(b *testing.B) {
		b.SetBytes(int64(len(line)))
		for i := 0; i < b.N; i++ {
			var m struct {
				ID     int `json:"id"`
				Result struct {
					Content []struct{ Type, Text string } `json:"content"`
					IsError bool                          `json:"isError"`
				} `json:"result"`
			}
			if err := json.Unmarshal(line, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
}

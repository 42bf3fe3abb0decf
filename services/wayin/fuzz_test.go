package wayin

import (
	"bufio"
	"bytes"
	"reflect"
	"testing"
)

// FuzzReadRequest: no request line panics the reader, a request it
// takes is one object within the limit with no negative hops, and what
// it takes reads back the same once written again.
func FuzzReadRequest(f *testing.F) {
	f.Add([]byte(`{"agent_id":"a","answer":"00","from":"schedule:j","thread":"main","text":"hi","hops":1}` + "\n"))
	f.Add([]byte(`{"agent_id":"a","agent_id":"b"}` + "\n"))
	f.Add([]byte(`{"hops":-1}` + "\n"))
	f.Add([]byte(`{"x":1}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		q, err := ReadRequest(bufio.NewReader(bytes.NewReader(data)))
		if err != nil {
			return
		}
		if q.Hops < 0 {
			t.Fatal("negative hops taken")
		}
		if i := bytes.IndexByte(data, '\n'); i < 0 || i > MaxRequest {
			t.Fatalf("a line of %d bytes taken", i)
		}
		var b bytes.Buffer
		writeLine(&b, q)
		q2, err := ReadRequest(bufio.NewReader(&b))
		if err != nil || !reflect.DeepEqual(q2, q) {
			t.Fatalf("read back: %+v %v", q2, err)
		}
	})
}

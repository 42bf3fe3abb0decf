package builtin

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func dot(a, b []float32) (s float32) {
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// The embedding's one property: texts sharing a piece of a word are near
// though they share no word; texts sharing no three letters are not.
func TestEmbedNearByPiecesOfWords(t *testing.T) {
	q := Embed("kumquats")
	if d := dot(q, Embed("a kumquat tree")); d < 0.3 {
		t.Errorf("kumquats·kumquat tree = %v, want near", d)
	}
	if d := dot(q, Embed("zebra xylophone")); d > 0.1 {
		t.Errorf("kumquats·zebra xylophone = %v, want far", d)
	}
	if d := dot(q, q); d < 0.999 || d > 1.001 {
		t.Errorf("|kumquats|² = %v, want 1", d)
	}
	if v := Embed("  ...  "); dot(v, v) != 0 {
		t.Errorf("a text with no word: %v", v)
	}
}

func TestEmbeddingsRoute(t *testing.T) {
	srv := httptest.NewServer(Handler(Options{}))
	defer srv.Close()
	post := func(body string) (*http.Response, embeddingList) {
		res, err := http.Post(srv.URL+"/v1/embeddings", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out embeddingList
		json.NewDecoder(res.Body).Decode(&out)
		return res, out
	}
	res, out := post(`{"model":"m","input":["kumquat","fig"]}`)
	if res.StatusCode != 200 || len(out.Data) != 2 || out.Data[1].Index != 1 {
		t.Fatalf("%d %+v", res.StatusCode, out)
	}
	got, _ := json.Marshal(out.Data[0].Embedding)
	want, _ := json.Marshal(Embed("kumquat"))
	if string(got) != string(want) {
		t.Errorf("the route's vector is not Embed's")
	}
	for _, bad := range []string{`{"input":[]}`, `{"input":3}`, `{"input":"x","extra":1}`, `{"input":"x","encoding_format":"int8"}`, `{"input":"x"} {}`} {
		if res, _ := post(bad); res.StatusCode != 400 {
			t.Errorf("%s: %d, want 400", bad, res.StatusCode)
		}
	}
	if res, err := http.Get(srv.URL + "/v1/embeddings"); err != nil || res.StatusCode != 405 {
		t.Errorf("GET: %v %v", res, err)
	}
}

func FuzzParseEmbeddings(f *testing.F) {
	for _, s := range []string{`{"input":"a"}`, `{"input":["a","b"],"encoding_format":"base64"}`, `{"input":[]}`, `{"input":"a","dimensions":256}`, `nul`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		req, texts, err := parseEmbeddings(b)
		if err == nil && (req == nil || len(texts) == 0 || len(texts) > maxEmbedInputs) {
			t.Fatalf("accepted %q as %v %d texts", b, req, len(texts))
		}
	})
}

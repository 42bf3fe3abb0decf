package builtin

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
	"strings"
	"unicode"
)

// EmbedDims is the length of every vector [Embed] returns.
const EmbedDims = 256

// maxEmbedInputs bounds the texts one embeddings request may carry.
const maxEmbedInputs = 2048

// Embed is the built-in model's embedding of text, for machines with no
// model and for tests: not a model of meaning. Each word (letters and
// digits, lowercased) and each of its character trigrams, the word's
// ends marked, is hashed (FNV-1a) to one of EmbedDims dimensions and
// counted; the vector is then scaled to length 1 (all zeros for a text
// with no word). So two texts are near exactly as far as they share
// words or pieces of words: "kumquats" is near "kumquat" though no word
// is shared, and a text is never near one it shares no three letters
// with. Deterministic: the same text gives the same vector everywhere.
func Embed(text string) []float32 {
	v := make([]float64, EmbedDims)
	add := func(s string) {
		h := fnv.New32a()
		h.Write([]byte(s))
		v[h.Sum32()%EmbedDims]++
	}
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		add("w:" + w)
		r := []rune("^" + w + "$")
		for i := 0; i+3 <= len(r); i++ {
			add("t:" + string(r[i:i+3]))
		}
	}
	var n float64
	for _, x := range v {
		n += x * x
	}
	out := make([]float32, EmbedDims)
	if n == 0 {
		return out
	}
	n = math.Sqrt(n)
	for i, x := range v {
		out[i] = float32(x / n)
	}
	return out
}

// embeddingsRequest is OpenAI's POST /v1/embeddings body: input is one
// string or a list of them; encoding_format "float" (the default) or
// "base64" (little-endian float32s).
type embeddingsRequest struct {
	Model          string          `json:"model"`
	Input          json.RawMessage `json:"input"`
	EncodingFormat string          `json:"encoding_format,omitempty"`
	Dimensions     int             `json:"dimensions,omitempty"`
	User           string          `json:"user,omitempty"`
}

func parseEmbeddings(body []byte) (*embeddingsRequest, []string, error) {
	var req embeddingsRequest
	d := json.NewDecoder(strings.NewReader(string(body)))
	d.DisallowUnknownFields()
	if err := d.Decode(&req); err != nil {
		return nil, nil, errors.New("the request is not an embeddings request")
	}
	if d.More() {
		return nil, nil, errors.New("the request has more than one JSON value")
	}
	if req.EncodingFormat != "" && req.EncodingFormat != "float" && req.EncodingFormat != "base64" {
		return nil, nil, fmt.Errorf("encoding_format %q is not float or base64", req.EncodingFormat)
	}
	if req.Dimensions != 0 && req.Dimensions != EmbedDims {
		return nil, nil, fmt.Errorf("dimensions must be %d", EmbedDims)
	}
	var one string
	if json.Unmarshal(req.Input, &one) == nil {
		return &req, []string{one}, nil
	}
	var many []string
	if err := json.Unmarshal(req.Input, &many); err != nil || len(many) == 0 {
		return nil, nil, errors.New("input must be a string or a non-empty list of strings")
	}
	if len(many) > maxEmbedInputs {
		return nil, nil, fmt.Errorf("input has more than %d strings", maxEmbedInputs)
	}
	return &req, many, nil
}

type embedding struct {
	Object    string `json:"object"`
	Index     int    `json:"index"`
	Embedding any    `json:"embedding"`
}

type embeddingList struct {
	Object string      `json:"object"`
	Data   []embedding `json:"data"`
	Model  string      `json:"model"`
	Usage  struct {
		PromptTokens int `json:"prompt_tokens"`
		TotalTokens  int `json:"total_tokens"`
	} `json:"usage"`
}

func (s *server) embeddings(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		s.refuse(w, r, http.StatusMethodNotAllowed, "", "method_not_allowed", fmt.Sprintf("%s is not allowed on %s: send POST", r.Method, r.URL.Path))
		return
	}
	body, err := readBody(w, r)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			s.refuse(w, r, http.StatusRequestEntityTooLarge, "", "request_too_large", fmt.Sprintf("the request body is past %d bytes", MaxBody))
			return
		}
		s.refuse(w, r, http.StatusBadRequest, "", "", "the request body could not be read")
		return
	}
	req, texts, err := parseEmbeddings(body)
	if err != nil {
		s.refuse(w, r, http.StatusBadRequest, "input", "", err.Error())
		return
	}
	out := embeddingList{Object: "list", Model: ModelName}
	n := 0
	for i, t := range texts {
		v := Embed(t)
		n += len(t)
		var e any = v
		if req.EncodingFormat == "base64" {
			b := make([]byte, 4*len(v))
			for j, x := range v {
				binary.LittleEndian.PutUint32(b[4*j:], math.Float32bits(x))
			}
			e = b // encoding/json writes a []byte as base64
		}
		out.Data = append(out.Data, embedding{Object: "embedding", Index: i, Embedding: e})
	}
	out.Usage.PromptTokens = tokens(n)
	out.Usage.TotalTokens = out.Usage.PromptTokens
	writeJSON(w, http.StatusOK, out)
}

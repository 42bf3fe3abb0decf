package builtin

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"

	"lnk.dev/lnk/internal/textsafe"
)

// ModelName is the one model the built-in lists; it answers as whatever
// model a request names.
const ModelName = "link-builtin"

// MaxBody is the largest request body read: 16 MiB; past it, 413.
const MaxBody = 16 << 20

// Options set how the model answers.
type Options struct {
	// Obedient follows an instruction found anywhere in the context
	// (system prompt, others' messages, tool answers), not only the last
	// owner message.
	Obedient bool
	// Logf, if set, gets one line for each request refused: its status
	// and why, never a word of its messages.
	Logf func(format string, args ...any)
}

// Handler serves the OpenAI chat-completions, embeddings and models routes.
func Handler(o Options) http.Handler {
	s := &server{opts: o}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/chat/completions", s.completions)
	mux.HandleFunc("/v1/embeddings", s.embeddings)
	mux.HandleFunc("/v1/models", s.models)
	mux.HandleFunc("/v1/models/{model}", s.model)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.refuse(w, r, http.StatusNotFound, "", "unknown_url", fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path))
	})
	return mux
}

type server struct{ opts Options }

func (s *server) completions(w http.ResponseWriter, r *http.Request) {
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
	req, err := ParseRequest(body)
	if err != nil {
		re := &RequestError{Message: "the request is refused"}
		errors.As(err, &re)
		s.refuse(w, r, http.StatusBadRequest, re.Param, "", re.Message)
		return
	}
	seed := sha256.Sum256(body)
	rep := answer(req, s.opts.Obedient, seed)
	c := newCompletion(req, rep, seed)
	if req.Stream {
		c.stream(w, req.StreamOptions != nil && req.StreamOptions.IncludeUsage)
		return
	}
	c.whole(w)
}

// readBody reads at most MaxBody bytes; a declared or actual length past
// it is an *http.MaxBytesError.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if r.ContentLength > MaxBody {
		return nil, &http.MaxBytesError{Limit: MaxBody}
	}
	return io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
}

func (s *server) models(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		s.refuse(w, r, http.StatusMethodNotAllowed, "", "method_not_allowed", fmt.Sprintf("%s is not allowed on %s: send GET", r.Method, r.URL.Path))
		return
	}
	writeJSON(w, http.StatusOK, modelList{Object: "list", Data: []modelEntry{builtinModel}})
}

func (s *server) model(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		s.refuse(w, r, http.StatusMethodNotAllowed, "", "method_not_allowed", fmt.Sprintf("%s is not allowed on %s: send GET", r.Method, r.URL.Path))
		return
	}
	if r.PathValue("model") != ModelName {
		s.refuse(w, r, http.StatusNotFound, "model", "model_not_found", fmt.Sprintf("The model `%s` does not exist", r.PathValue("model")))
		return
	}
	writeJSON(w, http.StatusOK, builtinModel)
}

// maxLogged is the most of a refusal's reason logged.
const maxLogged = 300

// refuse answers OpenAI's error body and logs the refusal once, its
// reason made one printable line and cut.
func (s *server) refuse(w http.ResponseWriter, r *http.Request, status int, param, code, msg string) {
	if s.opts.Logf != nil {
		s.opts.Logf("refused %s %s: %d %s", r.Method, cut(textsafe.Line(r.URL.Path), 100), status, cut(textsafe.Line(msg), maxLogged))
	}
	writeError(w, status, "invalid_request_error", param, code, msg)
}

package builtin

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
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
}

// Handler serves the OpenAI chat-completions routes.
func Handler(o Options) http.Handler {
	s := &server{opts: o}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/chat/completions", s.completions)
	mux.HandleFunc("/v1/models", s.models)
	mux.HandleFunc("/v1/models/{model}", s.model)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "invalid_request_error", "", "unknown_url",
			fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path))
	})
	return mux
}

type server struct{ opts Options }

func (s *server) completions(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, http.StatusMethodNotAllowed, "invalid_request_error", "", "method_not_allowed",
			fmt.Sprintf("%s is not allowed on %s: send POST", r.Method, r.URL.Path))
		return
	}
	body, err := readBody(w, r)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, "invalid_request_error", "", "request_too_large",
				fmt.Sprintf("the request body is past %d bytes", MaxBody))
			return
		}
		writeError(w, http.StatusBadRequest, "invalid_request_error", "", "", "the request body could not be read")
		return
	}
	req, err := ParseRequest(body)
	if err != nil {
		var re *RequestError
		errors.As(err, &re)
		writeError(w, http.StatusBadRequest, "invalid_request_error", re.Param, "", re.Message)
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
		writeError(w, http.StatusMethodNotAllowed, "invalid_request_error", "", "method_not_allowed",
			fmt.Sprintf("%s is not allowed on %s: send GET", r.Method, r.URL.Path))
		return
	}
	writeJSON(w, http.StatusOK, modelList{Object: "list", Data: []modelEntry{builtinModel}})
}

func (s *server) model(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		writeError(w, http.StatusMethodNotAllowed, "invalid_request_error", "", "method_not_allowed",
			fmt.Sprintf("%s is not allowed on %s: send GET", r.Method, r.URL.Path))
		return
	}
	if r.PathValue("model") != ModelName {
		writeError(w, http.StatusNotFound, "invalid_request_error", "model", "model_not_found",
			fmt.Sprintf("The model `%s` does not exist", r.PathValue("model")))
		return
	}
	writeJSON(w, http.StatusOK, builtinModel)
}

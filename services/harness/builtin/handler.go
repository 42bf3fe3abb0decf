package builtin

import (
	"net/http"
)

// ModelName is the one model the built-in serves and lists.
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
	return &server{opts: o}
}

type server struct{ opts Options }

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	http.Error(w, "not built yet", http.StatusNotImplemented)
}

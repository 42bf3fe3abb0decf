package localmodel

import (
	"context"
	"errors"
	"os"
	"sort"
	"strconv"
	"time"

	"lnk.dev/lnk/internal/textsafe"
	"lnk.dev/lnk/services/harness/builtin"
)

// MaxAnswer is the most read of a probe's answer: 1 MiB.
const MaxAnswer = 1 << 20

// Timeout is each probe's time limit when Options names none.
const Timeout = 500 * time.Millisecond

// The runtimes' usual ports.
const (
	OllamaPort = 11434
	LlamaPort  = 8080
)

// Model is one model found.
type Model struct {
	Runtime string `json:"runtime"`  // "ollama", "llama.cpp", "builtin"
	Name    string `json:"name"`     // the model's name as its runtime gives it
	Format  string `json:"format"`   // the wire format: "openai" (chat completions)
	BaseURL string `json:"base_url"` // e.g. http://127.0.0.1:11434/v1
	// Obedient marks a built-in serving --obedient: it follows whatever
	// it reads, for tests, never for an agent's real work.
	Obedient bool `json:"obedient,omitempty"`
}

// Options say where to look; the zero value is this machine's defaults.
type Options struct {
	Home       string // $HOME, for the built-in's record; "" leaves the built-in out
	OllamaPort int    // 0: 11434
	LlamaPort  int    // 0: 8080
	Timeout    time.Duration
}

// Skipped is a place List looked that answered, but not as a model:
// a record it refused, an answer it could not read. A port nothing
// listens on is not one.
type Skipped struct {
	Where  string `json:"where"`
	Reason string `json:"reason"`
}

// List probes each runtime and returns the models found in a fixed
// order (runtime, then name), and what it passed over and why.
func List(ctx context.Context, o Options) ([]Model, []Skipped) {
	if o.OllamaPort == 0 {
		o.OllamaPort = OllamaPort
	}
	if o.LlamaPort == 0 {
		o.LlamaPort = LlamaPort
	}
	p := newProber(o.Timeout)
	var found []Model
	var skipped []Skipped
	add := func(where string, ms []Model, err error) {
		found = append(found, ms...)
		if err != nil && !errors.Is(err, errNothing) {
			skipped = append(skipped, Skipped{Where: where, Reason: textsafe.Line(err.Error())})
		}
	}
	ms, err := p.ollama(ctx, o.OllamaPort)
	add("ollama at 127.0.0.1:"+strconv.Itoa(o.OllamaPort), ms, err)
	ms, err = p.llama(ctx, o.LlamaPort)
	add("llama.cpp at 127.0.0.1:"+strconv.Itoa(o.LlamaPort), ms, err)
	if o.Home != "" {
		ms, err = p.builtin(ctx, o.Home)
		if errors.Is(err, os.ErrNotExist) {
			err = errNothing
		}
		add("the built-in's record ~/.lnk/models/"+builtin.RecordName, ms, err)
	}
	sort.SliceStable(found, func(i, j int) bool {
		if found[i].Runtime != found[j].Runtime {
			return found[i].Runtime < found[j].Runtime
		}
		return found[i].Name < found[j].Name
	})
	return found, skipped
}

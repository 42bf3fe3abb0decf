package localmodel

import (
	"context"
	"errors"
	"time"
)

// MaxAnswer is the most read of a probe's answer: 1 MiB.
const MaxAnswer = 1 << 20

// Timeout is each probe's time limit.
const Timeout = 500 * time.Millisecond

// Model is one model found.
type Model struct {
	Runtime string `json:"runtime"`  // "ollama", "llama.cpp", "builtin"
	Name    string `json:"name"`     // the model's name as its runtime gives it
	Format  string `json:"format"`   // the wire format: "openai"
	BaseURL string `json:"base_url"` // e.g. http://127.0.0.1:11434/v1
}

// Options say where to look; the zero value is this machine's defaults.
type Options struct {
	Home       string // $HOME, for the built-in's record; "" leaves it out
	OllamaPort int    // 0: 11434
	LlamaPort  int    // 0: 8080
	Timeout    time.Duration
}

// List probes each runtime and returns the models found, in a fixed order
// (runtime, then name).
func List(ctx context.Context, o Options) ([]Model, error) { return nil, errors.New("not built yet") }

package localmodel

import (
	"encoding/json"
	"errors"
	"path"
	"strings"

	"lnk.dev/lnk/internal/textsafe"
	"lnk.dev/lnk/services/harness/builtin"
)

// The parsers of what a loopback port answers. Anything may listen
// there, another local user's program included: a name is kept only as
// one printable line (internal/textsafe) of at most maxName bytes, and
// at most maxModels of a runtime's are kept.
const (
	maxName   = 256
	maxModels = 1000
)

// cleanName is a model's name as Link prints it, or "" to leave it out.
func cleanName(s string) string {
	s = strings.TrimSpace(textsafe.Line(s))
	if len(s) > maxName {
		return ""
	}
	return s
}

// keep adds name to names when it is printable, short and room is left.
func keep(names []string, name string) []string {
	if n := cleanName(name); n != "" && len(names) < maxModels {
		return append(names, n)
	}
	return names
}

// parseOllamaTags reads Ollama's GET /api/tags: {"models": [{"name": …,
// "model": …, …}]}.
func parseOllamaTags(b []byte) ([]string, error) {
	var tags struct {
		Models *[]struct {
			Name  string `json:"name"`
			Model string `json:"model"`
		} `json:"models"`
	}
	if err := json.Unmarshal(b, &tags); err != nil {
		return nil, errors.New("answered something that isn't Ollama's JSON")
	}
	if tags.Models == nil {
		return nil, errors.New(`answered without "models": not Ollama`)
	}
	var names []string
	for _, m := range *tags.Models {
		name := m.Name
		if name == "" {
			name = m.Model
		}
		names = keep(names, name)
	}
	return names, nil
}

// openAIModels is GET /v1/models as OpenAI, llama.cpp and the built-in
// answer it.
type openAIModels struct {
	Object string `json:"object"`
	Data   []struct {
		ID      string `json:"id"`
		OwnedBy string `json:"owned_by"`
	} `json:"data"`
}

// parseLlamaModels reads llama-server's GET /v1/models: OpenAI's list,
// each of its models owned_by "llamacpp".
func parseLlamaModels(b []byte) ([]string, error) {
	var list openAIModels
	if err := json.Unmarshal(b, &list); err != nil || list.Object != "list" {
		return nil, errors.New("answered something that isn't OpenAI's list of models")
	}
	var names []string
	for _, m := range list.Data {
		if m.OwnedBy == "llamacpp" {
			names = keep(names, m.ID)
		}
	}
	return names, nil
}

// parseProps reads llama-server's GET /props: {"model_path": …, …}, the
// model named by its file's name.
func parseProps(b []byte) (string, error) {
	var props struct {
		ModelPath *string `json:"model_path"`
	}
	if err := json.Unmarshal(b, &props); err != nil || props.ModelPath == nil {
		return "", errors.New(`answered without "model_path": not llama-server`)
	}
	name := cleanName(path.Base(*props.ModelPath))
	if name == "" || name == "." || name == "/" {
		return "", errors.New("names no model file")
	}
	return name, nil
}

// parseBuiltinModels reports whether a GET /v1/models lists Link's
// built-in, owned by link.
func parseBuiltinModels(b []byte) (bool, error) {
	var list openAIModels
	if err := json.Unmarshal(b, &list); err != nil {
		return false, errors.New("answered something that isn't OpenAI's list of models")
	}
	for _, m := range list.Data {
		if m.ID == builtin.ModelName && m.OwnedBy == "link" {
			return true, nil
		}
	}
	return false, nil
}

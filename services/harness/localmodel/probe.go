package localmodel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path"
	"strconv"
	"syscall"
	"time"

	"lnk.dev/lnk/services/harness/builtin"
)

// errNothing is a port where nothing answers: not worth a line.
var errNothing = errors.New("nothing answers")

// prober sends the probes: GETs to 127.0.0.1 alone, through no proxy,
// following no redirect.
type prober struct {
	client *http.Client
}

func newProber(timeout time.Duration) *prober {
	if timeout <= 0 {
		timeout = Timeout
	}
	d := &net.Dialer{Timeout: timeout, Control: onlyLoopback}
	t := &http.Transport{
		Proxy:                  nil, // $HTTP_PROXY never carries a probe of this machine
		DialContext:            d.DialContext,
		DisableKeepAlives:      true,
		MaxResponseHeaderBytes: 64 << 10,
		ResponseHeaderTimeout:  timeout,
	}
	return &prober{client: &http.Client{
		Transport:     t,
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// onlyLoopback refuses, before connecting, any address but 127.0.0.1.
func onlyLoopback(network, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	if network != "tcp4" && network != "tcp" || host != "127.0.0.1" {
		return fmt.Errorf("a probe goes to 127.0.0.1 only, never to %s %s", network, address)
	}
	return nil
}

// get fetches http://127.0.0.1:port+p and decodes its JSON into v. A
// refused connection is errNothing; any status but 200 (a redirect
// included), an answer past MaxAnswer or one that isn't JSON is an
// error.
func (p *prober) get(ctx context.Context, port int, pth string, v any) error {
	u := "http://127.0.0.1:" + strconv.Itoa(port) + pth
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := p.client.Do(req)
	if err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) {
			return errNothing
		}
		return fmt.Errorf("GET %s: %w", pth, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s answered %s", pth, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxAnswer+1))
	if err != nil {
		return fmt.Errorf("GET %s: %w", pth, err)
	}
	if len(b) > MaxAnswer {
		return fmt.Errorf("GET %s answered more than %d bytes", pth, MaxAnswer)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("GET %s answered something that isn't its JSON: %w", pth, err)
	}
	return nil
}

func baseURL(port int) string { return "http://127.0.0.1:" + strconv.Itoa(port) + "/v1" }

// ollama reads GET /api/tags: {"models": [{"name": …, "model": …, …}]}.
func (p *prober) ollama(ctx context.Context, port int) ([]Model, error) {
	var tags struct {
		Models *[]struct {
			Name  string `json:"name"`
			Model string `json:"model"`
		} `json:"models"`
	}
	if err := p.get(ctx, port, "/api/tags", &tags); err != nil {
		return nil, err
	}
	if tags.Models == nil {
		return nil, errors.New(`GET /api/tags answered without "models": not Ollama`)
	}
	var out []Model
	for _, m := range *tags.Models {
		name := m.Name
		if name == "" {
			name = m.Model
		}
		if name != "" {
			out = append(out, Model{Runtime: "ollama", Name: name, Format: "openai", BaseURL: baseURL(port)})
		}
	}
	return out, nil
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

// llama reads llama-server's GET /v1/models (each model owned_by
// "llamacpp"), or, where that isn't served, GET /props ({"model_path": …}).
func (p *prober) llama(ctx context.Context, port int) ([]Model, error) {
	var list openAIModels
	err := p.get(ctx, port, "/v1/models", &list)
	if errors.Is(err, errNothing) {
		return nil, err
	}
	if err == nil && list.Object == "list" {
		var out []Model
		for _, m := range list.Data {
			if m.OwnedBy == "llamacpp" && m.ID != "" {
				out = append(out, Model{Runtime: "llama.cpp", Name: m.ID, Format: "openai", BaseURL: baseURL(port)})
			}
		}
		if len(out) > 0 {
			return out, nil
		}
	}
	var props struct {
		ModelPath *string `json:"model_path"`
	}
	if perr := p.get(ctx, port, "/props", &props); perr != nil || props.ModelPath == nil || *props.ModelPath == "" {
		if err == nil {
			err = errors.New("it serves /v1/models, but not a llama.cpp model (none owned_by \"llamacpp\"), and no /props")
		}
		return nil, err
	}
	return []Model{{Runtime: "llama.cpp", Name: path.Base(*props.ModelPath), Format: "openai", BaseURL: baseURL(port)}}, nil
}

// builtin reads the built-in's record and checks its port answers as
// the built-in: a record left by one that ended is passed over.
func (p *prober) builtin(ctx context.Context, home string) ([]Model, error) {
	r, err := builtin.ReadRecord(home)
	if err != nil {
		return nil, err
	}
	var list openAIModels
	if err := p.get(ctx, r.Port, "/v1/models", &list); err != nil {
		if errors.Is(err, errNothing) {
			return nil, fmt.Errorf("its record names port %d, where nothing answers: it has ended", r.Port)
		}
		return nil, err
	}
	for _, m := range list.Data {
		if m.ID == builtin.ModelName && m.OwnedBy == "link" {
			return []Model{{Runtime: "builtin", Name: builtin.ModelName, Format: "openai", BaseURL: r.URL, Obedient: r.Obedient}}, nil
		}
	}
	return nil, fmt.Errorf("port %d, which its record names, answers as another server", r.Port)
}

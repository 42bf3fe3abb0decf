package localmodel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
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

// get fetches http://127.0.0.1:port+p and hands its body to parse. A
// refused connection is errNothing; any status but 200 (a redirect
// included), an answer past MaxAnswer or one parse refuses is an error.
func (p *prober) get(ctx context.Context, port int, pth string, parse func([]byte) error) error {
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
		return fmt.Errorf("GET %s answered %d", pth, resp.StatusCode)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxAnswer+1))
	if err != nil {
		return fmt.Errorf("GET %s: %w", pth, err)
	}
	if len(b) > MaxAnswer {
		return fmt.Errorf("GET %s answered more than %d bytes", pth, MaxAnswer)
	}
	if err := parse(b); err != nil {
		return fmt.Errorf("GET %s: %w", pth, err)
	}
	return nil
}

func baseURL(port int) string { return "http://127.0.0.1:" + strconv.Itoa(port) + "/v1" }

// ollama reads GET /api/tags.
func (p *prober) ollama(ctx context.Context, port int) ([]Model, error) {
	var names []string
	err := p.get(ctx, port, "/api/tags", func(b []byte) (err error) {
		names, err = parseOllamaTags(b)
		return err
	})
	return models("ollama", port, names), err
}

// llama reads llama-server's GET /v1/models, or, where that names no
// llama.cpp model, GET /props.
func (p *prober) llama(ctx context.Context, port int) ([]Model, error) {
	var names []string
	err := p.get(ctx, port, "/v1/models", func(b []byte) (err error) {
		names, err = parseLlamaModels(b)
		return err
	})
	if errors.Is(err, errNothing) || len(names) > 0 {
		return models("llama.cpp", port, names), err
	}
	var name string
	if perr := p.get(ctx, port, "/props", func(b []byte) (err error) {
		name, err = parseProps(b)
		return err
	}); perr != nil {
		if err == nil {
			err = errors.New("it serves /v1/models, but not a llama.cpp model (none owned_by \"llamacpp\"), and no /props")
		}
		return nil, err
	}
	return models("llama.cpp", port, []string{name}), nil
}

func models(runtime string, port int, names []string) []Model {
	var out []Model
	for _, n := range names {
		out = append(out, Model{Runtime: runtime, Name: n, Format: "openai", BaseURL: baseURL(port)})
	}
	return out
}

// builtin reads the built-in's record and checks its port answers as
// the built-in: a record left by one that ended is passed over.
func (p *prober) builtin(ctx context.Context, home string) ([]Model, error) {
	r, err := builtin.ReadRecord(home)
	if err != nil {
		return nil, err
	}
	if err := p.answersAsBuiltin(ctx, r); err != nil {
		return nil, err
	}
	return []Model{{Runtime: "builtin", Name: builtin.ModelName, Format: "openai", BaseURL: r.URL, Obedient: r.Obedient}}, nil
}

// answersAsBuiltin checks that r's port lists link-builtin, owned by link.
func (p *prober) answersAsBuiltin(ctx context.Context, r builtin.Record) error {
	var ok bool
	if err := p.get(ctx, r.Port, "/v1/models", func(b []byte) (err error) {
		ok, err = parseBuiltinModels(b)
		return err
	}); err != nil {
		if errors.Is(err, errNothing) {
			return fmt.Errorf("its record names port %d, where nothing answers: it has ended", r.Port)
		}
		return err
	}
	if !ok {
		return fmt.Errorf("port %d, which its record names, answers as another server", r.Port)
	}
	return nil
}

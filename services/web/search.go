package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Result is one search result.
type Result struct {
	Title, URL, Snippet string
}

// maxSearchAnswer caps an API's answer read.
const maxSearchAnswer = 1 << 20

// Search sends query to Brave's API (BraveKey) or Tavily's (TavilyKey),
// through the same checked hops as a fetch, within the call's time, and
// gives at most count results. The key goes in a header only; no error
// it returns carries it. Each refusal and failure is logged once.
func (w *Web) Search(ctx context.Context, query string, count int) ([]Result, error) {
	rs, err := w.search(ctx, query, count)
	if err != nil {
		w.logf("search %q refused: %v", query, err)
	}
	return rs, err
}

func (w *Web) search(ctx context.Context, query string, count int) ([]Result, error) {
	key := w.cfg.BraveKey
	if key == "" {
		key = w.cfg.TavilyKey
	}
	if key == "" {
		return nil, &Refusal{Reason: "search has no API key: the tool's environment has neither BRAVE_API_KEY nor TAVILY_API_KEY",
			Hint: "lnk sandbox tool add web --env BRAVE_API_KEY -- lnk-web   (or --env TAVILY_API_KEY; the value is read from the terminal)"}
	}
	query = strings.TrimSpace(query)
	if query == "" || len(query) > 400 {
		return nil, refusef("a query is 1 to 400 bytes")
	}
	if count <= 0 || count > 20 {
		count = 10
	}
	ctx, cancel := context.WithTimeoutCause(ctx, w.cfg.timeout(), refusef("the search took longer than %s: cut", w.cfg.timeout()))
	defer cancel()
	var res []Result
	var err error
	if w.cfg.BraveKey != "" {
		res, err = w.brave(ctx, query, count)
	} else {
		res, err = w.tavily(ctx, query, count)
	}
	if err != nil {
		return nil, scrub(w.callError(ctx, err), key)
	}
	if len(res) > count {
		res = res[:count]
	}
	return res, nil
}

// scrub takes key out of err's text, whatever put it there (an API that
// echoes what it was sent).
func scrub(err error, key string) error {
	if key == "" || !strings.Contains(err.Error(), key) {
		return err
	}
	if r, ok := asRefusal(err); ok {
		return &Refusal{Reason: strings.ReplaceAll(r.Reason, key, "[key]"), Hint: strings.ReplaceAll(r.Hint, key, "[key]")}
	}
	return fmt.Errorf("%s", strings.ReplaceAll(err.Error(), key, "[key]"))
}

func (w *Web) brave(ctx context.Context, query string, count int) ([]Result, error) {
	u := w.cfg.BraveURL
	if u == "" {
		u = braveEndpoint
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u+"?"+url.Values{"q": {query}, "count": {strconv.Itoa(count)}}.Encode(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("X-Subscription-Token", w.cfg.BraveKey)
	var ans struct {
		Web struct {
			Results []struct {
				Title       string `json:"title"`
				URL         string `json:"url"`
				Description string `json:"description"`
			} `json:"results"`
		} `json:"web"`
	}
	if err := w.api(req, "Brave", &ans); err != nil {
		return nil, err
	}
	out := make([]Result, 0, len(ans.Web.Results))
	for _, r := range ans.Web.Results {
		out = append(out, Result{Title: r.Title, URL: r.URL, Snippet: r.Description})
	}
	return out, nil
}

func (w *Web) tavily(ctx context.Context, query string, count int) ([]Result, error) {
	u := w.cfg.TavilyURL
	if u == "" {
		u = tavilyEndpoint
	}
	body, _ := json.Marshal(map[string]any{"query": query, "max_results": count})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+w.cfg.TavilyKey)
	var ans struct {
		Results []struct {
			Title   string `json:"title"`
			URL     string `json:"url"`
			Content string `json:"content"`
		} `json:"results"`
	}
	if err := w.api(req, "Tavily", &ans); err != nil {
		return nil, err
	}
	out := make([]Result, 0, len(ans.Results))
	for _, r := range ans.Results {
		out = append(out, Result{Title: r.Title, URL: r.URL, Snippet: r.Content})
	}
	return out, nil
}

// api sends req through a guard (its host checked like a page's; no
// redirect followed: a key is never sent on) and decodes a 200's JSON
// into v. Another status is an error with the status alone: an API's
// words about a failed call may hold the key.
func (w *Web) api(req *http.Request, name string, v any) error {
	client := &http.Client{Transport: w.guard, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxSearchAnswer+1))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s's search API answered %s", name, resp.Status)
	}
	if len(b) > maxSearchAnswer {
		return fmt.Errorf("%s's search API answered more than %d MB", name, maxSearchAnswer>>20)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s's search API answered what is not its JSON", name)
	}
	return nil
}

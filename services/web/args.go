package web

import (
	"encoding/json"
	"strings"

	"lnk.dev/lnk/internal/jsonscan"
)

// fetchArgs and searchArgs are the calls' arguments, read strictly.
type fetchArgs struct{ URL string }

type searchArgs struct {
	Query string
	Count int
}

// members reads a call's arguments: one JSON object whose keys are each
// one of want, none twice, none in another case (encoding/json would
// match "URL" to url), every required one there. It returns each
// member's raw value by key.
func members(raw json.RawMessage, want map[string]bool) (map[string][]byte, error) {
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	if !json.Valid(raw) {
		return nil, refusef("the call's arguments are not JSON")
	}
	out := map[string][]byte{}
	folded := map[string]bool{}
	var bad *Refusal
	err := jsonscan.Members(raw, func(k string, v jsonscan.Span) {
		if bad != nil {
			return
		}
		f := strings.ToLower(k)
		switch _, known := want[k]; {
		case folded[f]:
			bad = refusef("the call's argument %q is given twice", k)
		case !known:
			bad = refusef("the call has no argument %q", k)
		}
		folded[f] = true
		out[k] = raw[v.Start:v.End]
	})
	if err != nil {
		return nil, refusef("the call's arguments are not one JSON object")
	}
	if bad != nil {
		return nil, bad
	}
	for k, required := range want {
		if _, ok := out[k]; required && !ok {
			return nil, refusef("the call lacks its argument %q", k)
		}
	}
	return out, nil
}

func decodeFetch(raw json.RawMessage) (fetchArgs, error) {
	m, err := members(raw, map[string]bool{"url": true})
	if err != nil {
		return fetchArgs{}, err
	}
	var a fetchArgs
	if json.Unmarshal(m["url"], &a.URL) != nil {
		return fetchArgs{}, refusef("the call's url is not a string")
	}
	return a, nil
}

func decodeSearch(raw json.RawMessage) (searchArgs, error) {
	m, err := members(raw, map[string]bool{"query": true, "count": false})
	if err != nil {
		return searchArgs{}, err
	}
	var a searchArgs
	if json.Unmarshal(m["query"], &a.Query) != nil {
		return searchArgs{}, refusef("the call's query is not a string")
	}
	if c, ok := m["count"]; ok && (json.Unmarshal(c, &a.Count) != nil || a.Count < 1 || a.Count > 20) {
		return searchArgs{}, refusef("the call's count is not a whole number from 1 to 20")
	}
	return a, nil
}

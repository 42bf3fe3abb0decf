package memory

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode"
)

// Limits of the reading calls' answers.
const (
	maxHits  = 20
	maxRead  = 64 << 10 // bytes of one read's answer
	maxList  = 1000     // documents in one list's answer
	maxQuery = 1024     // bytes of a search's words
	maxWords = 32
)

// Hit is one search result.
type Hit struct {
	Path, Title, Snippet string
}

// ErrNotIndexed is returned for a read of a path the index doesn't hold.
var ErrNotIndexed = errors.New("not a document memory indexed")

// Search is the documents whose text holds every one of the words in
// query (FTS5, best first). The words are taken as words only: quotes
// and FTS5's operators in query are no syntax. When the model answers
// (Agent.Embed), the chunks nearest the query by meaning (cosine of
// their vectors, at least minMeaning) are found too, and the two lists
// are blended by reciprocal rank: a document scores 1/(60+rank) in each
// list it is in (its best chunk's rank), so one both find comes first,
// and one only meaning finds is named too. While the model does not
// answer, search is by words alone.
func (a *Agent) Search(query string) ([]Hit, error) {
	match, err := matchOf(query)
	if err != nil {
		return nil, err
	}
	var qv []float32
	switch {
	case a.EmbedQuery != nil:
		// An error (the model down, or past its wait): words alone.
		if v, err := a.EmbedQuery(query); err == nil {
			qv = v
		}
	case a.Embed != nil:
		if v, err := a.Embed([]string{query}); err == nil && len(v) == 1 {
			qv = v[0]
		}
	}
	a.index.mu.Lock()
	defer a.index.mu.Unlock()
	words, err := a.index.byWords(match)
	if err != nil || qv == nil {
		return words, err
	}
	near, err := a.index.nearest(qv, maxHits*2)
	if err != nil {
		return nil, err
	}
	meaning, err := a.index.chunkHits(near)
	if err != nil {
		return nil, err
	}
	return blend(words, meaning), nil
}

// rrfK is reciprocal rank fusion's constant: ranks far down a list count
// little, and neither list's first place outweighs both lists' second.
const rrfK = 60

// blend merges two lists of documents, each best first, by reciprocal
// rank; at most maxHits.
func blend(lists ...[]Hit) []Hit {
	score := map[string]float64{}
	first := map[string]Hit{}
	var order []string
	for _, l := range lists {
		for r, h := range l {
			if _, ok := first[h.Path]; !ok {
				first[h.Path] = h
				order = append(order, h.Path)
			}
			score[h.Path] += 1 / float64(rrfK+r+1)
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return score[order[i]] > score[order[j]] })
	if len(order) > maxHits {
		order = order[:maxHits]
	}
	out := make([]Hit, len(order))
	for i, p := range order {
		out[i] = first[p]
	}
	return out
}

// byWords is the documents FTS5 finds for match, best first, one hit
// each (its best chunk's snippet).
func (x *Index) byWords(match string) ([]Hit, error) {
	// Prepared once per connection (x.stmt), reset after each search.
	st, err := x.stmt(`SELECT d.path, d.title, snippet(chunks, 0, '[', ']', '…', 16)
		FROM chunks JOIN docs d ON d.id = (chunks.rowid >> 16) WHERE chunks MATCH ? ORDER BY bm25(chunks) LIMIT ?`)
	if err != nil {
		return nil, err
	}
	defer st.ClearBindings()
	defer st.Reset()
	if err := bind(st, []any{match, maxHits * 2}); err != nil {
		return nil, err
	}
	var hits []Hit
	seen := map[string]bool{}
	for st.Step() && len(hits) < maxHits {
		h := Hit{Path: st.ColumnText(0), Title: st.ColumnText(1), Snippet: st.ColumnText(2)}
		if !seen[h.Path] {
			seen[h.Path] = true
			hits = append(hits, h)
		}
	}
	return hits, st.Err()
}

// chunkHits is each near chunk's document, in order, one hit each, its
// snippet the chunk's first words.
func (x *Index) chunkHits(near []meaningHit) ([]Hit, error) {
	st, _, err := x.conn.Prepare(`SELECT d.path, d.title, substr(c.text, 1, 160) FROM chunks c JOIN docs d ON d.id = (c.rowid >> 16) WHERE c.rowid = ?`)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	var hits []Hit
	seen := map[string]bool{}
	for _, n := range near {
		st.Reset()
		if err := bind(st, []any{n.id}); err != nil {
			return nil, err
		}
		if st.Step() {
			h := Hit{Path: st.ColumnText(0), Title: st.ColumnText(1), Snippet: st.ColumnText(2) + "…"}
			if !seen[h.Path] {
				seen[h.Path] = true
				hits = append(hits, h)
			}
		}
		if err := st.Err(); err != nil {
			return nil, err
		}
	}
	return hits, nil
}

// matchOf is an FTS5 query of query's words, each quoted, all required.
func matchOf(query string) (string, error) {
	if len(query) > maxQuery {
		return "", fmt.Errorf("the words to search for are %d bytes, more than %d", len(query), maxQuery)
	}
	words := strings.FieldsFunc(query, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
	if len(words) == 0 {
		return "", errors.New("search needs at least one word (letters or digits)")
	}
	if len(words) > maxWords {
		words = words[:maxWords]
	}
	for i, w := range words {
		words[i] = `"` + w + `"`
	}
	return strings.Join(words, " "), nil
}

// Read is the copy the index holds of the document at path, from byte
// offset, at most maxRead bytes, and the document's whole size. Only a
// document the index holds is served; nothing is read from disk.
func (a *Agent) Read(path string, offset int64) (text string, size int64, err error) {
	if offset < 0 {
		return "", 0, errors.New("offset is negative")
	}
	a.index.mu.Lock()
	defer a.index.mu.Unlock()
	st, _, err := a.index.conn.Prepare(`SELECT substr(CAST(body AS BLOB), ?, ?), length(CAST(body AS BLOB)) FROM docs WHERE path = ?`)
	if err != nil {
		return "", 0, err
	}
	defer st.Close()
	if err := bind(st, []any{offset + 1, maxRead, path}); err != nil {
		return "", 0, err
	}
	if !st.Step() {
		if err := st.Err(); err != nil {
			return "", 0, err
		}
		return "", 0, fmt.Errorf("%q: %w (search or list names what it holds)", path, ErrNotIndexed)
	}
	return strings.ToValidUTF8(string(st.ColumnRawBlob(0)), "\uFFFD"), st.ColumnInt64(1), st.Err()
}

// Listed is one document of a list: Deleted when it was forgotten at At.
type Listed struct {
	Path, Title string
	At          time.Time // changed, or deleted
	Deleted     bool
}

// List is the documents the index holds changed after since (all of them
// when since is zero), newest first, then those deleted after since.
func (a *Agent) List(since time.Time) ([]Listed, error) {
	a.index.mu.Lock()
	defer a.index.mu.Unlock()
	var out []Listed
	for _, q := range []struct {
		sql     string
		deleted bool
	}{
		{`SELECT path, title, mtime FROM docs WHERE mtime > ? ORDER BY mtime DESC LIMIT ?`, false},
		{`SELECT path, title, at FROM deleted WHERE at > ? ORDER BY at DESC LIMIT ?`, true},
	} {
		if q.deleted && since.IsZero() {
			break
		}
		st, _, err := a.index.conn.Prepare(q.sql)
		if err != nil {
			return nil, err
		}
		var after int64
		if !since.IsZero() {
			after = since.UnixNano()
		}
		if err := bind(st, []any{after, maxList}); err != nil {
			st.Close()
			return nil, err
		}
		for st.Step() {
			out = append(out, Listed{Path: st.ColumnText(0), Title: st.ColumnText(1), At: time.Unix(0, st.ColumnInt64(2)), Deleted: q.deleted})
		}
		err = st.Err()
		st.Close()
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

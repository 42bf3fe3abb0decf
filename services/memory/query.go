package memory

import (
	"errors"
	"fmt"
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
// and FTS5's operators in query are no syntax.
func (a *Agent) Search(query string) ([]Hit, error) {
	match, err := matchOf(query)
	if err != nil {
		return nil, err
	}
	a.index.mu.Lock()
	defer a.index.mu.Unlock()
	st, _, err := a.index.conn.Prepare(`SELECT d.path, d.title, snippet(chunks, 0, '[', ']', '…', 16)
		FROM chunks JOIN docs d ON d.id = (chunks.rowid >> 16) WHERE chunks MATCH ? ORDER BY bm25(chunks) LIMIT ?`)
	if err != nil {
		return nil, err
	}
	defer st.Close()
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

package memory

import (
	"encoding/binary"
	"math"
	"sort"
)

// embedBatch is how many chunks one call to the model carries.
const embedBatch = 64

// minMeaning is the least cosine a chunk needs to be a hit by meaning:
// below it a chunk shares too little with the query to be named.
const minMeaning = 0.3

// embedChunks gives every chunk without a vector one, from the model,
// a batch at a time. The model is called outside the index's lock, so a
// slow or stalled model holds no search, read or list of the agent: the
// batch's texts are read under the lock, the vectors computed without
// it, then written under it again, each only where its chunk still holds
// the text it was computed from (a refresh meanwhile may have replaced
// it). One pass runs at a time; a refresh that finds one running leaves
// its chunks to it. The model not answering leaves them without (search
// by words), to be asked at the next refresh: it is not an error of the
// index. Called without the index's lock.
func (a *Agent) embedChunks() error {
	if a.Embed == nil || !a.embedding.TryLock() {
		return nil
	}
	defer a.embedding.Unlock()
	x := a.index
	for {
		x.mu.Lock()
		ids, texts, err := x.unembedded(embedBatch)
		x.mu.Unlock()
		if err != nil || len(ids) == 0 {
			return err
		}
		vs, err := a.Embed(texts)
		if err != nil || len(vs) != len(ids) {
			return nil
		}
		x.mu.Lock()
		stored := 0
		err = x.tx(func() error {
			for i, v := range vs {
				n, err := x.putVec(ids[i], texts[i], vecBytes(v))
				if err != nil {
					return err
				}
				stored += n
			}
			return nil
		})
		x.mu.Unlock()
		if err != nil || stored == 0 {
			// Every chunk of the batch changed meanwhile: the next
			// refresh embeds them as they are now.
			return err
		}
	}
}

// unembedded is up to n chunks that have no vector, rowid and text.
func (x *Index) unembedded(n int) ([]int64, []string, error) {
	st, _, err := x.conn.Prepare(`SELECT rowid, text FROM chunks WHERE rowid NOT IN (SELECT id FROM vecs) LIMIT ?`)
	if err != nil {
		return nil, nil, err
	}
	defer st.Close()
	if err := bind(st, []any{n}); err != nil {
		return nil, nil, err
	}
	var ids []int64
	var texts []string
	for st.Step() {
		ids = append(ids, st.ColumnInt64(0))
		texts = append(texts, st.ColumnText(1))
	}
	return ids, texts, st.Err()
}

// putVec stores chunk id's vector b where the chunk still holds text,
// in the caller's transaction; it returns 1 when stored, 0 when the
// chunk is gone or holds another text now.
func (x *Index) putVec(id int64, text string, b []byte) (int, error) {
	st, err := x.stmt(`INSERT OR REPLACE INTO vecs(id, v) SELECT ?1, ?2 WHERE EXISTS (SELECT 1 FROM chunks WHERE rowid = ?1 AND text = ?3)`)
	if err != nil {
		return 0, err
	}
	defer st.ClearBindings()
	if err := st.BindInt64(1, id); err != nil {
		return 0, err
	}
	if err := st.BindBlob(2, b); err != nil {
		return 0, err
	}
	if err := st.BindText(3, text); err != nil {
		return 0, err
	}
	if err := st.Exec(); err != nil {
		return 0, err
	}
	return int(x.conn.Changes()), nil
}

func vecBytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// cosine of q (length 1) and the vector stored in b (length 1); 0 when
// their lengths differ (a vector of another model's).
func cosine(q []float32, b []byte) float64 {
	if len(b) != 4*len(q) {
		return 0
	}
	var s float64
	for i, x := range q {
		s += float64(x) * float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
	}
	return s
}

// meaningHit is a chunk near the query.
type meaningHit struct {
	id    int64
	score float64
}

// nearest is up to n chunks nearest q by cosine, at least minMeaning,
// best first. Called with the index's lock held.
func (x *Index) nearest(q []float32, n int) ([]meaningHit, error) {
	st, _, err := x.conn.Prepare(`SELECT id, v FROM vecs`)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	var hits []meaningHit
	for st.Step() {
		if c := cosine(q, st.ColumnRawBlob(1)); c >= minMeaning {
			hits = append(hits, meaningHit{st.ColumnInt64(0), c})
		}
	}
	if err := st.Err(); err != nil {
		return nil, err
	}
	sort.Slice(hits, func(i, j int) bool { return hits[i].score > hits[j].score })
	if len(hits) > n {
		hits = hits[:n]
	}
	return hits, nil
}

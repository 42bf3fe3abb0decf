package memory

import (
	"fmt"

	"github.com/ncruces/go-sqlite3"
	"strings"
	"time"
)

// Doc is one indexed document as the index keeps it.
type Doc struct {
	Path  string
	Title string
	Size  int64
	MTime int64 // nanoseconds since the epoch
	Ino   uint64
}

// known is every indexed document's Doc, by path.
func (x *Index) known() (map[string]Doc, error) {
	st, _, err := x.conn.Prepare(`SELECT path, title, size, mtime, ino FROM docs`)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	m := map[string]Doc{}
	for st.Step() {
		d := Doc{Path: st.ColumnText(0), Title: st.ColumnText(1), Size: st.ColumnInt64(2), MTime: st.ColumnInt64(3), Ino: uint64(st.ColumnInt64(4))}
		m[d.Path] = d
	}
	return m, st.Err()
}

// put replaces the document d.Path's copy and chunks with body, in the
// caller's transaction.
func (x *Index) put(d Doc, body string) error {
	id, err := x.idOf(d.Path)
	if err != nil {
		return err
	}
	if id != 0 {
		if err := x.dropChunks(id); err != nil {
			return err
		}
		if err := x.exec(`UPDATE docs SET title=?, size=?, mtime=?, ino=?, body=? WHERE id=?`, d.Title, d.Size, d.MTime, int64(d.Ino), body, id); err != nil {
			return err
		}
	} else {
		if err := x.exec(`INSERT INTO docs(path, title, size, mtime, ino, body) VALUES(?, ?, ?, ?, ?, ?)`, d.Path, d.Title, d.Size, d.MTime, int64(d.Ino), body); err != nil {
			return err
		}
		id = x.conn.LastInsertRowID()
	}
	chunks := Split(body)
	if len(chunks) >= 1<<chunkBits {
		return fmt.Errorf("%s: %d chunks, more than an index holds for one document", d.Path, len(chunks))
	}
	for k, c := range chunks {
		if err := x.exec(`INSERT INTO chunks(rowid, text) VALUES(?, ?)`, id<<chunkBits|int64(k), c); err != nil {
			return err
		}
	}
	return nil
}

// idOf is the document path's id, 0 when the index doesn't hold it.
func (x *Index) idOf(path string) (int64, error) {
	st, err := x.stmt(`SELECT id FROM docs WHERE path = ?`)
	if err != nil {
		return 0, err
	}
	defer st.Reset()
	if err := bind(st, []any{path}); err != nil {
		return 0, err
	}
	if st.Step() {
		return st.ColumnInt64(0), nil
	}
	return 0, st.Err()
}

func (x *Index) dropChunks(id int64) error {
	if err := x.exec(`DELETE FROM vecs WHERE id BETWEEN ? AND ?`, id<<chunkBits, id<<chunkBits|(1<<chunkBits-1)); err != nil {
		return err
	}
	return x.exec(`DELETE FROM chunks WHERE rowid BETWEEN ? AND ?`, id<<chunkBits, id<<chunkBits|(1<<chunkBits-1))
}

// drop forgets the document at path, keeping its path and title (the
// latest maxDeleted) for list {since}, in the caller's transaction.
func (x *Index) drop(d Doc, at time.Time) error {
	id, err := x.idOf(d.Path)
	if err != nil || id == 0 {
		return err
	}
	if err := x.dropChunks(id); err != nil {
		return err
	}
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`DELETE FROM docs WHERE id = ?`, []any{id}},
		{`INSERT INTO deleted(path, title, at) VALUES(?, ?, ?)`, []any{d.Path, d.Title, at.UnixNano()}},
		{`DELETE FROM deleted WHERE id <= (SELECT max(id) FROM deleted) - ?`, []any{maxDeleted}},
	} {
		if err := x.exec(q.sql, q.args...); err != nil {
			return err
		}
	}
	return nil
}

func (x *Index) tx(f func() error) error {
	if err := x.conn.Exec(`BEGIN IMMEDIATE`); err != nil {
		return err
	}
	if err := f(); err != nil {
		x.conn.Exec(`ROLLBACK`)
		return err
	}
	return x.conn.Exec(`COMMIT`)
}

// exec runs one statement with args bound in order (string, int64, int).
func (x *Index) exec(sql string, args ...any) error {
	st, err := x.stmt(sql)
	if err != nil {
		return err
	}
	defer st.ClearBindings()
	if err := bind(st, args); err != nil {
		return err
	}
	return st.Exec()
}

// stmt is sql prepared once per connection (each of Link's few
// statements is kept until Close).
func (x *Index) stmt(sql string) (*sqlite3.Stmt, error) {
	if st, ok := x.stmts[sql]; ok {
		return st, nil
	}
	st, _, err := x.conn.Prepare(sql)
	if err != nil {
		return nil, err
	}
	if x.stmts == nil {
		x.stmts = map[string]*sqlite3.Stmt{}
	}
	x.stmts[sql] = st
	return st, nil
}

type binder interface {
	BindText(int, string) error
	BindInt64(int, int64) error
}

func bind(st binder, args []any) error {
	for i, a := range args {
		var err error
		switch v := a.(type) {
		case string:
			err = st.BindText(i+1, v)
		case int64:
			err = st.BindInt64(i+1, v)
		case int:
			err = st.BindInt64(i+1, int64(v))
		default:
			err = fmt.Errorf("cannot bind %T", a)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// title is a document's first heading, else its name.
func title(path, body string) string {
	for _, line := range strings.SplitN(body, "\n", 40) {
		if t, ok := strings.CutPrefix(line, "# "); ok && strings.TrimSpace(t) != "" {
			return cut(strings.TrimSpace(t), 200)
		}
	}
	return path[strings.LastIndexByte(path, '/')+1:]
}

// cut is s, at most n bytes, at a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

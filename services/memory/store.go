package memory

import (
	"fmt"
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
	return func() error {
		if err := x.exec(`DELETE FROM chunks WHERE path = ?`, d.Path); err != nil {
			return err
		}
		if err := x.exec(`INSERT INTO docs(path, title, size, mtime, ino, body) VALUES(?, ?, ?, ?, ?, ?)
			ON CONFLICT(path) DO UPDATE SET title=excluded.title, size=excluded.size, mtime=excluded.mtime, ino=excluded.ino, body=excluded.body`,
			d.Path, d.Title, d.Size, d.MTime, int64(d.Ino), body); err != nil {
			return err
		}
		for _, c := range Split(body) {
			if err := x.exec(`INSERT INTO chunks(path, text) VALUES(?, ?)`, d.Path, c); err != nil {
				return err
			}
		}
		return nil
	}()
}

// drop forgets the document at path, keeping its path and title (the
// latest maxDeleted) for list {since}, in the caller's transaction.
func (x *Index) drop(d Doc, at time.Time) error {
	return func() error {
		for _, q := range []struct {
			sql  string
			args []any
		}{
			{`DELETE FROM chunks WHERE path = ?`, []any{d.Path}},
			{`DELETE FROM docs WHERE path = ?`, []any{d.Path}},
			{`INSERT INTO deleted(path, title, at) VALUES(?, ?, ?)`, []any{d.Path, d.Title, at.UnixNano()}},
			{`DELETE FROM deleted WHERE id <= (SELECT max(id) FROM deleted) - ?`, []any{maxDeleted}},
		} {
			if err := x.exec(q.sql, q.args...); err != nil {
				return err
			}
		}
		return nil
	}()
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
	st, _, err := x.conn.Prepare(sql)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := bind(st, args); err != nil {
		return err
	}
	return st.Exec()
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

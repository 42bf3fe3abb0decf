package memory

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/ncruces/go-sqlite3"
	"github.com/ncruces/go-sqlite3/ext/fts5"
)

// ErrNotLinks is returned, wrapped, for an index file whose schema is
// not exactly the one Link makes.
var ErrNotLinks = errors.New("not an index Link made")

// Index is one agent's index: one SQLite connection, used one call at a
// time.
type Index struct {
	mu    sync.Mutex
	conn  *sqlite3.Conn
	stmts map[string]*sqlite3.Stmt
}

// OpenIndex opens (or makes) the index file at path, which must be in a
// 0700 folder the caller opened and checked. It is opened in defensive
// mode with its schema untrusted, no link followed, and refused unless
// its schema is exactly Link's.
func OpenIndex(path string) (*Index, error) {
	c, err := sqlite3.OpenFlags(path, sqlite3.OPEN_READWRITE|sqlite3.OPEN_CREATE|sqlite3.OPEN_NOFOLLOW|sqlite3.OPEN_EXRESCODE)
	if err != nil {
		return nil, fmt.Errorf("memory index %s: %w", path, err)
	}
	if err := harden(c); err != nil {
		c.Close()
		return nil, fmt.Errorf("memory index %s: %w", path, err)
	}
	if err := checkSchema(c); err != nil {
		c.Close()
		return nil, fmt.Errorf("memory index %s: %w\nhint: Link leaves an index it did not make as it is: delete that folder by hand and Link makes it again", path, err)
	}
	return &Index{conn: c}, nil
}

// harden sets what an untrusted database file may not do: defensive
// mode (no writable schema, no shadow-table writes), no trusted schema
// (no function with side effects from a view or trigger), no triggers,
// no views, no load_extension, no ATTACH.
func harden(c *sqlite3.Conn) error {
	for _, s := range []struct {
		op sqlite3.DBConfig
		on bool
	}{
		{sqlite3.DBCONFIG_DEFENSIVE, true},
		{sqlite3.DBCONFIG_TRUSTED_SCHEMA, false},
		{sqlite3.DBCONFIG_ENABLE_TRIGGER, false},
		{sqlite3.DBCONFIG_ENABLE_VIEW, false},
		{sqlite3.DBCONFIG_ENABLE_LOAD_EXTENSION, false},
		{sqlite3.DBCONFIG_WRITABLE_SCHEMA, false},
	} {
		got, err := c.Config(s.op, s.on)
		if err != nil {
			return fmt.Errorf("sqlite config %d: %w", s.op, err)
		}
		if got != s.on {
			return fmt.Errorf("sqlite config %d stayed %v", s.op, got)
		}
	}
	// No ATTACH at all: the index is the one file.
	c.Limit(sqlite3.LIMIT_ATTACHED, 0)
	if err := fts5.Register(c); err != nil {
		return fmt.Errorf("fts5: %w", err)
	}
	// busy_timeout: a service retiring (memsock.Need) may still serve a
	// session of the agent while the next service opens its index; each
	// waits its turn at SQLite's file lock rather than failing.
	return c.Exec(`PRAGMA trusted_schema=OFF; PRAGMA cell_size_check=ON; PRAGMA foreign_keys=OFF; PRAGMA busy_timeout=30000`)
}

// checkSchema makes the schema in an empty file and refuses one whose
// sqlite_schema, application_id or user_version differs from what Link's
// statements make in a fresh in-memory database.
func checkSchema(c *sqlite3.Conn) error {
	got, err := schemaOf(c)
	if err != nil {
		return err
	}
	if len(got) > 0 {
		if got, err = upgrade(c, got); err != nil {
			return err
		}
	}
	if len(got) == 0 {
		if err := create(c, schema, schemaVersion); err != nil {
			return err
		}
		if got, err = schemaOf(c); err != nil {
			return err
		}
	}
	want, err := wantSchema()
	if err != nil {
		return err
	}
	if got != want {
		return fmt.Errorf("%w: its schema differs from Link's", ErrNotLinks)
	}
	var app, ver int64
	if err := one(c, `PRAGMA application_id`, &app); err != nil {
		return err
	}
	if err := one(c, `PRAGMA user_version`, &ver); err != nil {
		return err
	}
	if app != applicationID || ver != schemaVersion {
		return fmt.Errorf("%w: application id %#x version %d", ErrNotLinks, app, ver)
	}
	var ok string
	st, _, err := c.Prepare(`PRAGMA quick_check`)
	if err != nil {
		return err
	}
	defer st.Close()
	if st.Step() {
		ok = st.ColumnText(0)
	}
	if err := st.Err(); err != nil {
		return err
	}
	if ok != "ok" {
		return fmt.Errorf("%w: quick_check says %q", ErrNotLinks, ok)
	}
	return nil
}

func create(c *sqlite3.Conn, schema []string, version int) error {
	stmts := append([]string{`BEGIN`}, schema...)
	stmts = append(stmts, fmt.Sprintf(`PRAGMA application_id=%d`, applicationID), fmt.Sprintf(`PRAGMA user_version=%d`, version), `COMMIT`)
	for _, s := range stmts {
		if err := c.Exec(s); err != nil {
			c.Exec(`ROLLBACK`)
			return fmt.Errorf("making the index: %w", err)
		}
	}
	return nil
}

// upgrade empties an index of version 1 whose schema is exactly
// version 1's (its tables dropped, in one transaction) so that it is
// made again whole at this version; any other schema is left for the
// check to refuse. It returns the schema after.
func upgrade(c *sqlite3.Conn, got string) (string, error) {
	v1, err := schemaMadeBy(schemaV1, 1)
	if err != nil || got != v1 {
		return got, err
	}
	var app, ver int64
	if err := one(c, `PRAGMA application_id`, &app); err != nil {
		return "", err
	}
	if err := one(c, `PRAGMA user_version`, &ver); err != nil {
		return "", err
	}
	if app != applicationID || ver != 1 {
		return got, nil
	}
	for _, s := range []string{`BEGIN`, `DROP TABLE chunks`, `DROP TABLE docs`, `DROP TABLE deleted`, `PRAGMA user_version=0`, `COMMIT`} {
		if err := c.Exec(s); err != nil {
			c.Exec(`ROLLBACK`)
			return "", fmt.Errorf("emptying a version 1 index: %w", err)
		}
	}
	return schemaOf(c)
}

var (
	wantMu sync.Mutex
	wants  = map[int]string{}
)

// wantSchema is sqlite_schema as Link's statements make it.
func wantSchema() (string, error) { return schemaMadeBy(schema, schemaVersion) }

// schemaMadeBy is sqlite_schema as stmts make it in a fresh in-memory
// database, kept by version.
func schemaMadeBy(stmts []string, version int) (string, error) {
	wantMu.Lock()
	defer wantMu.Unlock()
	if w, ok := wants[version]; ok {
		return w, nil
	}
	c, err := sqlite3.Open(":memory:")
	if err != nil {
		return "", err
	}
	defer c.Close()
	if err := harden(c); err != nil {
		return "", err
	}
	if err := create(c, stmts, version); err != nil {
		return "", err
	}
	w, err := schemaOf(c)
	if err != nil {
		return "", err
	}
	wants[version] = w
	return w, nil
}

// schemaOf is every row of sqlite_schema, in order, as one string.
func schemaOf(c *sqlite3.Conn) (string, error) {
	st, _, err := c.Prepare(`SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_schema ORDER BY name`)
	if err != nil {
		return "", err
	}
	defer st.Close()
	var b strings.Builder
	for st.Step() {
		fmt.Fprintf(&b, "%q %q %q %q\n", st.ColumnText(0), st.ColumnText(1), st.ColumnText(2), st.ColumnText(3))
	}
	return b.String(), st.Err()
}

func one(c *sqlite3.Conn, q string, v *int64) error {
	st, _, err := c.Prepare(q)
	if err != nil {
		return err
	}
	defer st.Close()
	if !st.Step() {
		if err := st.Err(); err != nil {
			return err
		}
		return fmt.Errorf("%s answered nothing", q)
	}
	*v = st.ColumnInt64(0)
	return st.Err()
}

// Close closes the index.
func (x *Index) Close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, st := range x.stmts {
		st.Close()
	}
	return x.conn.Close()
}

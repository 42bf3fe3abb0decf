package memory

// SetBeforeOpen sets the hook run before each name a refresh opens.
func (a *Agent) SetBeforeOpen(f func(path string)) { a.beforeOpen = f }

// IndexBusy reports whether the agent's index's lock is held now.
func (a *Agent) IndexBusy() bool {
	if a.index.mu.TryLock() {
		a.index.mu.Unlock()
		return false
	}
	return true
}

// Deleted is how many deleted documents' paths the index keeps, and the
// oldest one's path.
func (a *Agent) Deleted() (int, string, error) {
	a.index.mu.Lock()
	defer a.index.mu.Unlock()
	st, _, err := a.index.conn.Prepare(`SELECT count(*), (SELECT path FROM deleted ORDER BY id LIMIT 1) FROM deleted`)
	if err != nil {
		return 0, "", err
	}
	defer st.Close()
	if !st.Step() {
		return 0, "", st.Err()
	}
	return int(st.ColumnInt64(0)), st.ColumnText(1), st.Err()
}

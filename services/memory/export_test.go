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

package memory

// SetBeforeOpen sets the hook run before each name a refresh opens.
func (a *Agent) SetBeforeOpen(f func(path string)) { a.beforeOpen = f }

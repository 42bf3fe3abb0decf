package resolve

// Fallback returns r with the per-component walk forced on, for the race
// suite and the differential fuzz; only tests see it.
func (r *Root) forceFallback() *Root {
	c := *r
	c.fallback = true
	return &c
}

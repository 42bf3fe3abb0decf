package move

// SetPlaceFault has each placing ask f before its step n, failing it
// when f returns an error; the returned func puts things back.
func SetPlaceFault(f func(n int) error) func() {
	old := placeFault
	placeFault = f
	return func() { placeFault = old }
}

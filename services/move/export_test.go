package move

// SetPlaceFault has each placing ask f before its step n, failing it
// when f returns an error; the returned func puts things back.
func SetPlaceFault(f func(n int) error) func() {
	old := placeFault
	placeFault = f
	return func() { placeFault = old }
}

// SetAsideCopied has f told each path copied aside to .sending, between
// its copy and its sending; the returned func puts things back.
func SetAsideCopied(f func(path string)) func() {
	old := asideCopied
	asideCopied = f
	return func() { asideCopied = old }
}

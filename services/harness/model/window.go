package model

// UnknownWindow is the window of a model Link doesn't know.
const UnknownWindow = 32768

// WindowTokens is a model's context window: 32,768 for a model Link
// doesn't know.
func WindowTokens(model string) int {
	return UnknownWindow
}

// EstimateTokens is the count Link plans windows with when the provider
// gives none.
func EstimateTokens(req Request) int {
	return 0
}

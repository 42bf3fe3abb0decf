package tools

import "strings"

// The naming rules of offers.
const (
	// Sep joins a tool's name and its call's: <tool>__<call>.
	Sep = "__"
	// MaxName is the longest name a provider takes (OpenAI's and
	// Anthropic's tool names: [A-Za-z0-9_-]{1,64}).
	MaxName = 64
)

// toolNameRefusal says why a tool's offered name isn't offered, or "".
func toolNameRefusal(name string) string {
	switch {
	case name == "":
		return "it has no name"
	case strings.Contains(name, "--"):
		return `its name holds "--"`
	case strings.HasSuffix(name, "-"):
		return `its name ends with "-"`
	case strings.Contains(name, Sep):
		return `its name holds "__", which ends a tool's name in an offer`
	case strings.HasSuffix(name, "_"):
		return `its name ends with "_", which would run into the "__" after it`
	case !providerChars(name):
		return "its name holds a character a provider doesn't take (only letters, digits, - and _)"
	}
	return ""
}

// callNameRefusal says why full (<tool>__<call>) isn't offered, or "".
func callNameRefusal(call, full string) string {
	switch {
	case call == "":
		return "the call has no name"
	case len(full) > MaxName:
		return "its name is longer than a provider takes (64): left out, never cut"
	case !providerChars(call):
		return "its name holds a character a provider doesn't take (only letters, digits, - and _)"
	}
	return ""
}

// providerChars reports a name of letters, digits, '-' and '_' only.
func providerChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

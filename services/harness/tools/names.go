package tools

import "lnk.dev/lnk/internal/toolname"

// The naming rules of offers (internal/toolname: the one rule every
// layer that takes a tool's name checks).
const (
	// Sep joins a tool's name and its call's: <tool>__<call>.
	Sep = toolname.Sep
	// MaxName is the longest name a provider takes (OpenAI's and
	// Anthropic's tool names: [A-Za-z0-9_-]{1,64}).
	MaxName = toolname.MaxOffered
)

// toolNameRefusal says why a tool's offered name isn't offered, or "".
func toolNameRefusal(name string) string { return toolname.ToolRefusal(name) }

// callNameRefusal says why full (<tool>__<call>) isn't offered, or "".
func callNameRefusal(call, full string) string {
	switch {
	case call == "":
		return "the call has no name"
	case len(full) > MaxName:
		return "its name is longer than a provider takes (64): left out, never cut"
	case !toolname.ProviderChars(call):
		return "its name holds a character a provider doesn't take (only letters, digits, - and _)"
	}
	return ""
}

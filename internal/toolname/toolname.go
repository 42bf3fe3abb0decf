package toolname

import (
	"fmt"
	"strings"
)

const (
	// Sep joins a tool's name and its call's in an offer: <tool>__<call>.
	Sep = "__"
	// MaxOffered is the longest offered name (<tool>__<call>) a provider
	// takes: OpenAI's and Anthropic's tool names are 1 to 64 characters.
	MaxOffered = 64
	// MaxTool is the longest tool's name: one that leaves room for Sep
	// and a call's name of one character within MaxOffered.
	MaxTool = MaxOffered - len(Sep) - 1
	// MaxModel is the longest model's name.
	MaxModel = 256
)

// ToolRefusal says why name is not a tool's name, or "" when it is.
func ToolRefusal(name string) string {
	switch {
	case name == "":
		return "it has no name"
	case len(name) > MaxTool:
		return fmt.Sprintf("its name is longer than %d bytes, so with %q and a call's name it would pass the %d a provider takes: left out, never cut", MaxTool, Sep, MaxOffered)
	case !ProviderChars(name):
		return "its name holds a character a provider doesn't take (only letters, digits, - and _)"
	case !alnum(name[0]):
		return "its name starts with - or _ (a tool's name starts with a letter or a digit)"
	case strings.Contains(name, "--"):
		return `its name holds "--"`
	case strings.HasSuffix(name, "-"):
		return `its name ends with "-"`
	case strings.Contains(name, Sep):
		return `its name holds "__", which ends a tool's name in an offer`
	case strings.HasSuffix(name, "_"):
		return `its name ends with "_", which would run into the "__" after it`
	}
	return ""
}

// CheckTool is ToolRefusal as an error that names the name.
func CheckTool(name string) error {
	if why := ToolRefusal(name); why != "" {
		return fmt.Errorf("tool %.80q is no tool's name: %s", name, why)
	}
	return nil
}

// CheckTools checks every name of a list.
func CheckTools(names []string) error {
	for _, n := range names {
		if err := CheckTool(n); err != nil {
			return err
		}
	}
	return nil
}

// ModelRefusal says why name is not a model's name, or "" when it is.
func ModelRefusal(name string) string {
	switch {
	case name == "":
		return "it is empty"
	case len(name) > MaxModel:
		return fmt.Sprintf("it is longer than %d bytes", MaxModel)
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c <= 0x20 || c >= 0x7f {
			return "it holds a space, a control character or a byte outside printable ASCII"
		}
	}
	return ""
}

// CheckModel is ModelRefusal as an error that names the name.
func CheckModel(name string) error {
	if why := ModelRefusal(name); why != "" {
		return fmt.Errorf("model %.80q is no model's name: %s", name, why)
	}
	return nil
}

// ProviderChars reports a name of letters, digits, '-' and '_' only:
// the characters a provider takes in a tool's (and a call's) name.
func ProviderChars(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !alnum(c) && c != '-' && c != '_' {
			return false
		}
	}
	return true
}

func alnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
